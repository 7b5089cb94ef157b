//! A local authoritative DNS server for tests, on 127.0.0.1 over UDP and TCP
//! (one port for both). It answers A, TXT and MX records from a table the
//! test edits while it runs, NXDOMAIN for names it does not know, and
//! SERVFAIL for names marked as failing. Point a `TestApp` at it with
//! `config.dns_nameservers = vec![dns.nameserver()]`.
//!
//! Answers carry TTL 0, so the resolver's own cache never hides a record
//! the test changed.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use hickory_resolver::proto::op::{Message, MessageType, ResponseCode};
use hickory_resolver::proto::rr::rdata::{A, MX, TXT};
use hickory_resolver::proto::rr::{Name, RData, Record, RecordType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UdpSocket};

#[derive(Debug, Default, Clone)]
struct Entry {
    a: Vec<Ipv4Addr>,
    txt: Vec<String>,
    mx: Vec<(u16, String)>,
    fail: bool,
}

#[derive(Debug, Default)]
struct Zone {
    names: HashMap<String, Entry>,
    /// Queries seen per name (lower case, no trailing dot), any type.
    queries: HashMap<String, usize>,
}

/// The running server; dropping it leaves the tasks serving until the test's
/// runtime ends.
#[derive(Clone)]
pub struct TestDns {
    addr: SocketAddr,
    zone: Arc<Mutex<Zone>>,
}

fn key(name: &str) -> String {
    name.trim_end_matches('.').to_lowercase()
}

impl TestDns {
    /// Starts an empty server.
    pub async fn start() -> TestDns {
        let zone = Arc::new(Mutex::new(Zone::default()));
        // UDP first on a free port, then TCP on the same port; another
        // process may hold that TCP port, so try again on a new one.
        let (udp, tcp) = loop {
            let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let port = udp.local_addr().unwrap().port();
            if let Ok(tcp) = TcpListener::bind(("127.0.0.1", port)).await {
                break (udp, tcp);
            }
        };
        let addr = udp.local_addr().unwrap();
        tokio::spawn(serve_udp(udp, zone.clone()));
        tokio::spawn(serve_tcp(tcp, zone.clone()));
        TestDns { addr, zone }
    }

    /// The `dns_nameservers` entry for this server (`127.0.0.1:<port>`).
    pub fn nameserver(&self) -> String {
        self.addr.to_string()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn edit(&self, name: &str, f: impl FnOnce(&mut Entry)) {
        let mut zone = self.zone.lock().unwrap();
        f(zone.names.entry(key(name)).or_default());
    }

    /// Adds an A record.
    pub fn a(&self, name: &str, ip: Ipv4Addr) {
        self.edit(name, |e| e.a.push(ip));
    }

    /// Adds a TXT record; strings longer than 255 bytes are split as a zone
    /// file would split them.
    pub fn txt(&self, name: &str, text: &str) {
        self.edit(name, |e| e.txt.push(text.to_string()));
    }

    /// Adds an MX record.
    pub fn mx(&self, name: &str, preference: u16, exchange: &str) {
        self.edit(name, |e| e.mx.push((preference, exchange.to_string())));
    }

    /// Makes every query for `name` answer SERVFAIL.
    pub fn fail(&self, name: &str) {
        self.edit(name, |e| e.fail = true);
    }

    /// Forgets every record of `name` (it answers NXDOMAIN again).
    pub fn remove(&self, name: &str) {
        self.zone.lock().unwrap().names.remove(&key(name));
    }

    /// How many queries asked about `name`.
    pub fn queries(&self, name: &str) -> usize {
        let zone = self.zone.lock().unwrap();
        zone.queries.get(&key(name)).copied().unwrap_or(0)
    }

    /// Queries asked about any name.
    pub fn total_queries(&self) -> usize {
        self.zone.lock().unwrap().queries.values().sum()
    }
}

fn answer(zone: &Mutex<Zone>, request: &[u8]) -> Option<Vec<u8>> {
    let query = Message::from_vec(request).ok()?;
    if query.metadata.message_type != MessageType::Query {
        return None;
    }
    let mut response = Message::response(query.metadata.id, query.metadata.op_code);
    response.metadata.recursion_desired = query.metadata.recursion_desired;
    response.metadata.recursion_available = true;
    response.metadata.authoritative = true;
    let Some(q) = query.queries.first().cloned() else {
        response.metadata.response_code = ResponseCode::FormErr;
        return response.to_vec().ok();
    };
    let name = q.name().clone();
    let entry = {
        let mut zone = zone.lock().unwrap();
        *zone.queries.entry(key(&name.to_ascii())).or_default() += 1;
        zone.names.get(&key(&name.to_ascii())).cloned()
    };
    response.add_query(q.clone());
    match entry {
        None => response.metadata.response_code = ResponseCode::NXDomain,
        Some(e) if e.fail => response.metadata.response_code = ResponseCode::ServFail,
        Some(e) => {
            for rdata in records(&e, q.query_type()) {
                response.add_answer(Record::from_rdata(name.clone(), 0, rdata));
            }
        }
    }
    response.to_vec().ok()
}

fn records(e: &Entry, kind: RecordType) -> Vec<RData> {
    match kind {
        RecordType::A => e.a.iter().map(|ip| RData::A(A(*ip))).collect(),
        RecordType::TXT => e
            .txt
            .iter()
            .map(|t| {
                let parts: Vec<&[u8]> = t.as_bytes().chunks(255).collect();
                RData::TXT(TXT::from_bytes(parts))
            })
            .collect(),
        RecordType::MX => {
            e.mx.iter()
                .filter_map(|(pref, host)| {
                    let exchange = Name::from_ascii(format!("{}.", key(host))).ok()?;
                    Some(RData::MX(MX::new(*pref, exchange)))
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

async fn serve_udp(socket: UdpSocket, zone: Arc<Mutex<Zone>>) {
    let mut buf = vec![0u8; 4096];
    loop {
        let Ok((n, peer)) = socket.recv_from(&mut buf).await else {
            continue;
        };
        if let Some(reply) = answer(&zone, &buf[..n]) {
            let _ = socket.send_to(&reply, peer).await;
        }
    }
}

async fn serve_tcp(listener: TcpListener, zone: Arc<Mutex<Zone>>) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let zone = zone.clone();
        tokio::spawn(async move {
            // RFC 1035 §4.2.2: each message is preceded by its length.
            loop {
                let mut len = [0u8; 2];
                if stream.read_exact(&mut len).await.is_err() {
                    return;
                }
                let mut request = vec![0u8; u16::from_be_bytes(len) as usize];
                if stream.read_exact(&mut request).await.is_err() {
                    return;
                }
                let Some(reply) = answer(&zone, &request) else {
                    return;
                };
                let mut framed = (reply.len() as u16).to_be_bytes().to_vec();
                framed.extend_from_slice(&reply);
                if stream.write_all(&framed).await.is_err() {
                    return;
                }
            }
        });
    }
}
