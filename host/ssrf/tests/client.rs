//! End-to-end tests of `GuardedClient` against a tiny HTTP/1.1 server on loopback.
//!
//! The server counts accepted connections, which is how the tests prove that a
//! refused request was refused *before* connecting rather than after.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outreach_ssrf::{
    ClientOptions, GuardError, GuardPolicy, GuardedClient, GuardedRequest, Method, Url,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the handler wants done with a request.
enum Reply {
    /// Write these bytes and close.
    Raw(Vec<u8>),
    /// Keep the connection open without answering.
    Hang,
}

type Handler = dyn Fn(&str) -> Reply + Send + Sync;

struct TestServer {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    /// Every request received: head and body as text.
    requests: Arc<Mutex<Vec<String>>>,
}

impl TestServer {
    async fn start(handler: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let (acc, reqs) = (accepted.clone(), requests.clone());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                acc.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(handle(stream, handler.clone(), reqs.clone()));
            }
        });
        Self {
            addr,
            accepted,
            requests,
        }
    }

    fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{path}", self.addr)).unwrap()
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

async fn handle(mut stream: TcpStream, handler: Arc<Handler>, requests: Arc<Mutex<Vec<String>>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let length = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap())
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&buf).to_string();
    requests.lock().unwrap().push(text.clone());
    match handler(&text) {
        Reply::Raw(bytes) => {
            let _ = stream.write_all(&bytes).await;
            let _ = stream.shutdown().await;
        }
        Reply::Hang => tokio::time::sleep(Duration::from_secs(60)).await,
    }
}

fn ok(body: &str) -> Reply {
    Reply::Raw(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

fn redirect(status: u16, location: &str) -> Reply {
    Reply::Raw(
        format!("HTTP/1.1 {status} Moved\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .into_bytes(),
    )
}

fn client(policy: GuardPolicy) -> GuardedClient {
    GuardedClient::new(policy, ClientOptions::default()).unwrap()
}

fn client_with(policy: GuardPolicy, f: impl FnOnce(&mut ClientOptions)) -> GuardedClient {
    let mut options = ClientOptions::default();
    f(&mut options);
    GuardedClient::new(policy, options).unwrap()
}

/// Gives a connection attempt that should not happen time to show up.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn strict_refuses_loopback_without_connecting() {
    let server = TestServer::start(|_| ok("hello")).await;
    let client = client(GuardPolicy::strict());
    let port = server.addr.port();
    for url in [
        server.url("/"),
        Url::parse(&format!("http://2130706433:{port}/")).unwrap(),
        Url::parse(&format!("http://0177.0.0.1:{port}/")).unwrap(),
        Url::parse(&format!("http://0x7f.1:{port}/")).unwrap(),
        Url::parse(&format!("http://[::ffff:127.0.0.1]:{port}/")).unwrap(),
        // A name: refused by the resolver, again before any connection.
        Url::parse(&format!("http://localhost:{port}/")).unwrap(),
    ] {
        let err = client
            .send(GuardedRequest::get(url.clone()))
            .await
            .unwrap_err();
        assert!(err.is_blocked(), "{url}: {err}");
        assert!(
            err.to_string().starts_with("Blocked by SSRF guard: "),
            "{err}"
        );
        assert!(!err.is_transient());
    }
    settle().await;
    assert_eq!(server.accepted(), 0);
}

#[tokio::test]
async fn loopback_is_allowed_for_tests() {
    let server = TestServer::start(|_| ok("hello")).await;
    let client = client(GuardPolicy::allow_loopback_for_tests());
    let resp = client
        .send(GuardedRequest::get(server.url("/x")))
        .await
        .unwrap();
    assert_eq!(resp.status, 200);
    assert_eq!(resp.body, b"hello");
    assert_eq!(resp.final_url, server.url("/x"));
    assert_eq!(resp.header("Content-Length"), Some("5"));
    assert_eq!(server.accepted(), 1);
    assert!(server.requests()[0].starts_with("GET /x HTTP/1.1\r\n"));

    // Names go through the guarded resolver; localhost is loopback, so allowed.
    let url = Url::parse(&format!("http://localhost:{}/y", server.addr.port())).unwrap();
    let resp = client.send(GuardedRequest::get(url)).await.unwrap();
    assert_eq!(resp.body, b"hello");
}

#[tokio::test]
async fn redirects_to_internal_addresses_are_refused() {
    for target in [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[::ffff:10.0.0.1]/",
        "http://[fd00:ec2::254]/",
        "http://0xa9fea9fe/",
    ] {
        let server = TestServer::start(move |_| redirect(302, target)).await;
        let client = client(GuardPolicy::allow_loopback_for_tests());
        let err = client
            .send(GuardedRequest::get(server.url("/")))
            .await
            .unwrap_err();
        assert!(err.is_blocked(), "{target}: {err}");
        assert_eq!(server.accepted(), 1);
    }
}

#[tokio::test]
async fn redirect_to_disallowed_scheme_is_refused() {
    let server = TestServer::start(|_| redirect(302, "file:///etc/passwd")).await;
    let client = client(GuardPolicy::allow_loopback_for_tests());
    let err = client
        .send(GuardedRequest::get(server.url("/")))
        .await
        .unwrap_err();
    assert_eq!(err, GuardError::SchemeNotAllowed("file".into()));
}

#[tokio::test]
async fn redirects_are_followed_and_rewritten() {
    let target = TestServer::start(|_| ok("final")).await;
    let to_other_origin = target.url("/landing");
    let origin = TestServer::start(move |req| {
        if req.starts_with("POST /303") {
            redirect(303, "/same-origin")
        } else if req.starts_with("POST /307") {
            redirect(307, "/echo")
        } else if req.starts_with("GET /same-origin") {
            redirect(302, to_other_origin.as_str())
        } else {
            ok("echoed")
        }
    })
    .await;
    let client = client(GuardPolicy::allow_loopback_for_tests());

    // 303: POST becomes a body-less GET; the same-origin hop keeps credentials,
    // the cross-origin hop (different port) loses them.
    let mut req = GuardedRequest::new(Method::POST, origin.url("/303"));
    req.headers
        .push(("Authorization".into(), "Bearer secret".into()));
    req.headers.push(("Cookie".into(), "session=1".into()));
    req.headers.push(("X-Custom".into(), "kept".into()));
    req.body = Some(b"payload".to_vec());
    let resp = client.send(req).await.unwrap();
    assert_eq!(resp.body, b"final");
    assert_eq!(resp.final_url, target.url("/landing"));
    let seen = origin.requests();
    assert!(seen[1].starts_with("GET /same-origin"), "{}", seen[1]);
    assert!(
        seen[1]
            .to_ascii_lowercase()
            .contains("authorization: bearer secret")
    );
    assert!(!seen[1].contains("payload"));
    let landed = target.requests()[0].to_ascii_lowercase();
    assert!(!landed.contains("authorization"), "{landed}");
    assert!(!landed.contains("cookie"), "{landed}");
    assert!(landed.contains("x-custom: kept"));

    // 307: method and body are repeated.
    let mut req = GuardedRequest::new(Method::POST, origin.url("/307"));
    req.body = Some(b"payload".to_vec());
    let resp = client.send(req).await.unwrap();
    assert_eq!(resp.body, b"echoed");
    let last = origin.requests().pop().unwrap();
    assert!(
        last.starts_with("POST /echo") && last.ends_with("payload"),
        "{last}"
    );
}

#[tokio::test]
async fn redirect_limit_is_enforced() {
    let server = TestServer::start(|_| redirect(302, "/again")).await;
    let client = client_with(GuardPolicy::allow_loopback_for_tests(), |o| {
        o.max_redirects = 3
    });
    let err = client
        .send(GuardedRequest::get(server.url("/")))
        .await
        .unwrap_err();
    assert_eq!(err, GuardError::TooManyRedirects { max: 3 });
    // The first request plus three followed redirects.
    assert_eq!(server.accepted(), 4);
}

#[tokio::test]
async fn hop_check_applies_to_every_hop() {
    let target = TestServer::start(|_| ok("x")).await;
    let target_port = target.addr.port();
    let to = target.url("/");
    let origin = TestServer::start(move |_| redirect(302, to.as_str())).await;
    let origin_port = origin.addr.port();
    let client = client(GuardPolicy::allow_loopback_for_tests());
    let only_origin = move |url: &Url| {
        if url.port() == Some(origin_port) {
            Ok(())
        } else {
            Err(format!("{url} is not in the allowed hosts"))
        }
    };
    let err = client
        .send_with(GuardedRequest::get(origin.url("/")), &only_origin)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, GuardError::NotAllowed(m) if m.contains(&target_port.to_string())),
        "{err}"
    );
    assert_eq!(target.accepted(), 0);

    let err = client
        .send_with(GuardedRequest::get(target.url("/")), &only_origin)
        .await
        .unwrap_err();
    assert!(matches!(err, GuardError::NotAllowed(_)));
    settle().await;
    assert_eq!(target.accepted(), 0);
}

#[tokio::test]
async fn response_body_cap_is_enforced() {
    let big = "a".repeat(1000);
    let declared = TestServer::start(move |_| ok(&big)).await;
    let chunked = TestServer::start(|_| {
        let chunk = "b".repeat(400);
        let body = format!("190\r\n{chunk}\r\n190\r\n{chunk}\r\n190\r\n{chunk}\r\n0\r\n\r\n");
        Reply::Raw(
            format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{body}"
            )
            .into_bytes(),
        )
    })
    .await;
    let client = client_with(GuardPolicy::allow_loopback_for_tests(), |o| {
        o.max_response_bytes = 999
    });
    for server in [&declared, &chunked] {
        let err = client
            .send(GuardedRequest::get(server.url("/")))
            .await
            .unwrap_err();
        assert_eq!(err, GuardError::ResponseTooLarge { limit: 999 });
    }
    // Exactly at the cap is fine.
    let client = client_with(GuardPolicy::allow_loopback_for_tests(), |o| {
        o.max_response_bytes = 1200
    });
    let resp = client
        .send(GuardedRequest::get(chunked.url("/")))
        .await
        .unwrap();
    assert_eq!(resp.body.len(), 1200);
}

#[tokio::test]
async fn request_body_cap_is_enforced_before_connecting() {
    let server = TestServer::start(|_| ok("")).await;
    let client = client_with(GuardPolicy::allow_loopback_for_tests(), |o| {
        o.max_request_bytes = 10
    });
    let mut req = GuardedRequest::new(Method::POST, server.url("/"));
    req.body = Some(vec![0; 11]);
    let err = client.send(req).await.unwrap_err();
    assert_eq!(err, GuardError::RequestTooLarge { limit: 10 });
    settle().await;
    assert_eq!(server.accepted(), 0);
}

#[tokio::test]
async fn timeout_is_transient() {
    let server = TestServer::start(|_| Reply::Hang).await;
    let client = client(GuardPolicy::allow_loopback_for_tests());
    let mut req = GuardedRequest::get(server.url("/"));
    req.timeout = Some(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let err = client.send(req).await.unwrap_err();
    assert_eq!(err, GuardError::Timeout);
    assert!(err.is_transient());
    assert!(started.elapsed() < Duration::from_secs(5));

    // The client-wide default applies when the request sets none.
    let client = client_with(GuardPolicy::allow_loopback_for_tests(), |o| {
        o.timeout = Duration::from_millis(300)
    });
    let err = client
        .send(GuardedRequest::get(server.url("/")))
        .await
        .unwrap_err();
    assert_eq!(err, GuardError::Timeout);
}

#[tokio::test]
async fn refused_connection_is_transient() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let client = client(GuardPolicy::allow_loopback_for_tests());
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let err = client.send(GuardedRequest::get(url)).await.unwrap_err();
    assert!(matches!(err, GuardError::Connect(_)), "{err}");
    assert!(err.is_transient());
}

#[tokio::test]
async fn https_works_without_the_caller_installing_a_crypto_provider() {
    // A TLS handshake against a peer that answers in plain text fails, but it
    // has to get as far as a handshake, which needs the rustls provider the
    // constructor installs (without one, building the client fails).
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
        }
    });
    let client = client(GuardPolicy::allow_loopback_for_tests());
    let url = Url::parse(&format!("https://{addr}/")).unwrap();
    let err = client.send(GuardedRequest::get(url)).await.unwrap_err();
    assert!(matches!(err, GuardError::Connect(_)), "{err}");
}

#[tokio::test]
async fn invalid_headers_are_rejected() {
    let client = client(GuardPolicy::allow_loopback_for_tests());
    let mut req = GuardedRequest::get(Url::parse("http://127.0.0.1:9/").unwrap());
    req.headers.push(("Bad Name".into(), "x".into()));
    assert!(matches!(
        client.send(req).await,
        Err(GuardError::InvalidRequest(_))
    ));
    let mut req = GuardedRequest::get(Url::parse("http://127.0.0.1:9/").unwrap());
    req.headers.push(("X-Ok".into(), "line\r\nbreak".into()));
    assert!(matches!(
        client.send(req).await,
        Err(GuardError::InvalidRequest(_))
    ));
}

#[test]
fn send_futures_are_send() {
    // Callers run requests inside axum handlers and spawned tasks, which need
    // `Send` futures; this fails to compile if that ever regresses.
    fn assert_send<T: Send>(_: &T) {}
    let client = client(GuardPolicy::strict());
    let check = |_: &Url| Ok(());
    let url = Url::parse("http://example.com/").unwrap();
    assert_send(&client.send(GuardedRequest::get(url.clone())));
    assert_send(&client.send_with(GuardedRequest::get(url), &check));
}

#[tokio::test]
async fn truncating_keeps_an_excerpt_and_the_status() {
    let big = "a".repeat(100_000);
    let server = TestServer::start(move |_| ok(&big)).await;
    let client = client_with(GuardPolicy::allow_loopback_for_tests(), |o| {
        o.max_response_bytes = 1000;
        o.truncate_response = true;
    });
    let resp = client
        .send(GuardedRequest::get(server.url("/")))
        .await
        .unwrap();
    assert_eq!(resp.status, 200);
    assert_eq!(resp.body.len(), 1000);
    assert!(resp.truncated);

    // Headers in time and a body that never ends: the status counts, the
    // excerpt is what arrived before the deadline.
    let drip = TestServer::start(|_| {
        Reply::Raw(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhello".to_vec())
    })
    .await;
    let client = client_with(GuardPolicy::allow_loopback_for_tests(), |o| {
        o.truncate_response = true;
        o.timeout = Duration::from_millis(300);
    });
    let resp = client
        .send(GuardedRequest::get(drip.url("/")))
        .await
        .unwrap();
    assert_eq!((resp.status, resp.body.as_slice()), (200, &b"hello"[..]));
    assert!(resp.truncated);
}

#[tokio::test]
async fn redirects_can_be_returned_instead_of_followed() {
    let target = TestServer::start(|_| ok("target")).await;
    let location = target.url("/").to_string();
    let server = TestServer::start(move |_| redirect(302, &location)).await;
    let client = client_with(GuardPolicy::allow_loopback_for_tests(), |o| {
        o.follow_redirects = false
    });
    let resp = client
        .send(GuardedRequest::get(server.url("/")))
        .await
        .unwrap();
    assert_eq!(resp.status, 302);
    settle().await;
    assert_eq!(target.accepted(), 0);
}
