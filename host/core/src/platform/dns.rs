//! DNS lookups the server makes itself: TXT records (SPF, DKIM, DMARC), MX
//! records, IPv4 addresses and DNS blacklist (DNSBL) queries. One shared
//! hickory resolver, built from `dns_nameservers` (the system's resolver
//! configuration when empty), serves every area; it keeps hickory's answer
//! cache, which honours the records' TTLs.
//!
//! Lookups answer what the DNS said, telling "no such record" apart from a
//! failed lookup, so checks can word their findings; the DNSBL query folds
//! every failure into "not listed", as a blacklist check must not flag an
//! address because a list's server was slow.

use std::net::Ipv4Addr;
use std::sync::Arc;

use hickory_resolver::TokioResolver;
use hickory_resolver::net::NetError;
use hickory_resolver::proto::rr::RData;

use crate::config::Config;

// How long one query may take, and how often it is tried. Blacklist checks
// ask a dozen lists at once, so a list that does not answer costs the
// request at most `TIMEOUT x ATTEMPTS`.
use outreach_ssrf::dns::{ATTEMPTS, TIMEOUT};

/// Why a lookup produced no records.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// The name does not exist, or has no record of the type asked for.
    #[error("no such record")]
    NotFound,
    /// The lookup itself failed (time-out, SERVFAIL, refused, bad name).
    #[error("DNS lookup failed: {0}")]
    Failed(String),
}

/// One MX record, the exchange without its trailing dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mx {
    pub preference: u16,
    pub exchange: String,
}

/// What a DNSBL said about one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DnsblAnswer {
    /// An address in 127.0.0.0/8 that is a listing code (RFC 5782).
    Listed(Ipv4Addr),
    /// NXDOMAIN or no address: not on the list.
    Clean,
    /// The list refused to answer (one of the refusal codes below) or the
    /// lookup failed; read as not listed.
    Unanswered,
}

impl DnsblAnswer {
    pub fn is_listed(self) -> bool {
        matches!(self, DnsblAnswer::Listed(_))
    }
}

/// Answers in 127.0.0.0/8 that are not listings: 127.0.0.1 (never a
/// listing code by RFC 5782 §5; SURBL and URIBL answer it to blocked
/// resolvers), Spamhaus's 127.255.255.0/24 error codes (252 typing error in
/// the zone name, 254 query through a public resolver, 255 too many
/// queries) and the DBL's 127.0.1.255 (an IP address asked of a domain
/// list).
pub fn is_refusal_code(code: Ipv4Addr) -> bool {
    let [a, b, c, _] = code.octets();
    code == Ipv4Addr::new(127, 0, 0, 1)
        || (a == 127 && b == 255 && c == 255)
        || code == Ipv4Addr::new(127, 0, 1, 255)
}

/// The DNSBL query name for an IPv4 address: its octets reversed, then the
/// list's zone (`2.0.0.127.zen.spamhaus.org`).
pub fn dnsbl_ip_query(ip: Ipv4Addr, zone: &str) -> String {
    let [a, b, c, d] = ip.octets();
    format!("{d}.{c}.{b}.{a}.{zone}")
}

/// The shared resolver; cloning shares it (and its cache).
#[derive(Clone)]
pub struct Dns {
    resolver: Arc<TokioResolver>,
}

impl std::fmt::Debug for Dns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dns")
    }
}

impl Dns {
    /// The resolver `config` asks for: its `dns_nameservers` over UDP with
    /// TCP for truncated answers, or the system's configuration. A machine
    /// without a readable system configuration gets a resolver with no
    /// servers (every lookup fails) and a warning, rather than a server that
    /// does not start: DNS serves checks, not the API itself.
    pub fn from_config(config: &Config) -> anyhow::Result<Dns> {
        let servers = config.dns_nameserver_addrs()?;
        let resolver = outreach_ssrf::dns::resolver(&servers, TIMEOUT, ATTEMPTS, "DNS")
            .map_err(anyhow::Error::msg)?;
        Ok(Dns {
            resolver: Arc::new(resolver),
        })
    }

    /// The TXT records at `name`, each one's strings joined (RFC 7208 §3.3:
    /// a long SPF record arrives split into 255-byte strings).
    pub async fn txt(&self, name: &str) -> Result<Vec<String>, LookupError> {
        let lookup = self
            .resolver
            .txt_lookup(fqdn(name))
            .await
            .map_err(lookup_error)?;
        let found: Vec<String> = lookup
            .answers()
            .iter()
            .filter_map(|r| match &r.data {
                RData::TXT(txt) => Some(
                    txt.txt_data
                        .iter()
                        .map(|part| String::from_utf8_lossy(part))
                        .collect::<String>(),
                ),
                _ => None,
            })
            .collect();
        non_empty(found)
    }

    /// The MX records of `name`, most preferred first.
    pub async fn mx(&self, name: &str) -> Result<Vec<Mx>, LookupError> {
        let lookup = self
            .resolver
            .mx_lookup(fqdn(name))
            .await
            .map_err(lookup_error)?;
        let mut found: Vec<Mx> = lookup
            .answers()
            .iter()
            .filter_map(|r| match &r.data {
                RData::MX(mx) => Some(Mx {
                    preference: mx.preference,
                    exchange: mx.exchange.to_ascii().trim_end_matches('.').to_lowercase(),
                }),
                _ => None,
            })
            .collect();
        found.sort_by(|a, b| (a.preference, &a.exchange).cmp(&(b.preference, &b.exchange)));
        non_empty(found)
    }

    /// The IPv4 addresses of `name` (CNAMEs followed).
    pub async fn ipv4(&self, name: &str) -> Result<Vec<Ipv4Addr>, LookupError> {
        let lookup = self
            .resolver
            .ipv4_lookup(fqdn(name))
            .await
            .map_err(lookup_error)?;
        let found: Vec<Ipv4Addr> = lookup
            .answers()
            .iter()
            .filter_map(|r| match &r.data {
                RData::A(a) => Some(a.0),
                _ => None,
            })
            .collect();
        non_empty(found)
    }

    /// Asks a DNSBL about `query` (`dnsbl_ip_query` for address lists,
    /// `<domain>.<zone>` for domain lists). Any failure, and any answer that
    /// is not a listing code, reads as not listed.
    pub async fn dnsbl(&self, query: &str) -> DnsblAnswer {
        match self.ipv4(query).await {
            Ok(codes) => {
                let listing = codes
                    .iter()
                    .copied()
                    .find(|c| c.octets()[0] == 127 && !is_refusal_code(*c));
                // Refusal codes, and answers outside 127.0.0.0/8 (a
                // wildcard or a hijacking resolver), are no listing.
                listing.map_or(DnsblAnswer::Unanswered, DnsblAnswer::Listed)
            }
            Err(LookupError::NotFound) => DnsblAnswer::Clean,
            Err(LookupError::Failed(_)) => DnsblAnswer::Unanswered,
        }
    }
}

/// A fully qualified name, so the resolver never appends search domains.
fn fqdn(name: &str) -> String {
    format!("{}.", name.trim().trim_end_matches('.'))
}

fn lookup_error(e: NetError) -> LookupError {
    if e.is_no_records_found() || e.is_nx_domain() {
        LookupError::NotFound
    } else {
        LookupError::Failed(e.to_string())
    }
}

fn non_empty<T>(found: Vec<T>) -> Result<Vec<T>, LookupError> {
    if found.is_empty() {
        Err(LookupError::NotFound)
    } else {
        Ok(found)
    }
}
