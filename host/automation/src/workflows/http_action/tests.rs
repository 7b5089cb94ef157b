//! Tests of the `http_request` action against a small HTTP/1.1 server on
//! 127.0.0.1. The server counts accepted connections, which is how the
//! blocked cases show that no connection was made, and counts the bytes it
//! managed to write, which is how the size cap shows it stopped reading.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use outreach_core::testing::dns::TestDns;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::*;

/// One request as the server read it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    /// Lower-case names.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

enum Reply {
    /// A complete answer, then close.
    Full {
        status: u16,
        content_type: &'static str,
        extra: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Wait, then answer.
    Late(Duration, Box<Reply>),
    /// 50 MiB of JSON-looking bytes, written in 64 KiB pieces until the
    /// client stops reading; with `declare` the length is announced up
    /// front, without it the body ends when the connection closes.
    Huge { declare: bool },
}

const HUGE_BYTES: usize = 50 * 1024 * 1024;

fn json_reply(status: u16, body: Value) -> Reply {
    Reply::Full {
        status,
        content_type: "application/json",
        extra: Vec::new(),
        body: body.to_string().into_bytes(),
    }
}

fn text_reply(status: u16, body: &str) -> Reply {
    Reply::Full {
        status,
        content_type: "text/plain; charset=utf-8",
        extra: Vec::new(),
        body: body.as_bytes().to_vec(),
    }
}

fn redirect_to(location: &str) -> Reply {
    Reply::Full {
        status: 302,
        content_type: "text/plain",
        extra: vec![("location".to_owned(), location.to_owned())],
        body: Vec::new(),
    }
}

type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

struct Server {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    written: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    async fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = Server {
            addr,
            accepted: Arc::default(),
            written: Arc::default(),
            seen: Arc::default(),
        };
        let handler: Arc<Handler> = Arc::new(handler);
        let (accepted, written, seen) = (
            server.accepted.clone(),
            server.written.clone(),
            server.seen.clone(),
        );
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                accepted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(
                    stream,
                    handler.clone(),
                    written.clone(),
                    seen.clone(),
                ));
            }
        });
        server
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn serve(
    mut stream: TcpStream,
    handler: Arc<Handler>,
    written: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap_or_default().split(' ');
    let method = start.next().unwrap_or_default().to_owned();
    let path = start.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(0, |(_, v)| v.parse::<usize>().unwrap());
    while buf.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let request = Seen {
        method,
        path,
        headers,
        body: buf[head_end..].to_vec(),
    };
    seen.lock().unwrap().push(request.clone());
    let mut reply = handler(&request);
    while let Reply::Late(wait, inner) = reply {
        tokio::time::sleep(wait).await;
        reply = *inner;
    }
    match reply {
        Reply::Full {
            status,
            content_type,
            extra,
            body,
        } => {
            let mut out = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in extra {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
            out.push_str("\r\n");
            let mut bytes = out.into_bytes();
            bytes.extend_from_slice(&body);
            let _ = stream.write_all(&bytes).await;
            let _ = stream.shutdown().await;
        }
        Reply::Huge { declare } => {
            let length = if declare {
                format!("content-length: {HUGE_BYTES}\r\n")
            } else {
                String::new()
            };
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{length}connection: close\r\n\r\n["
            );
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            // One piece reused: the server holds 64 KiB, never 50 MiB.
            let piece = "\"x.example\",".repeat(64 * 1024 / 12).into_bytes();
            let mut sent = 0;
            while sent < HUGE_BYTES {
                if stream.write_all(&piece).await.is_err() {
                    return;
                }
                sent += piece.len();
                written.fetch_add(piece.len(), Ordering::SeqCst);
            }
        }
        Reply::Late(..) => unreachable!("unwrapped above"),
    }
}

/// A config for `url` with the defaults, as from_config would give it.
fn get(url: &str) -> HttpRequestConfig {
    HttpRequestConfig::from_config(&json!({ "url": url })).unwrap()
}

fn loopback_client() -> HttpActionClient {
    HttpActionClient::new(GuardPolicy::allow_loopback_for_tests())
}

fn strict_client() -> HttpActionClient {
    HttpActionClient::new(GuardPolicy::strict())
}

/// Gives a connection that should not happen time to show up.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(100)).await;
}

// ---- config ----

#[test]
fn config_defaults_and_full_form() {
    let c = get("https://api.example/x");
    assert_eq!(c.method, "GET");
    assert_eq!(c.timeout_seconds, DEFAULT_TIMEOUT_SECONDS);
    assert!(c.headers.is_empty() && c.body.is_none() && c.capture_field.is_none());
    assert!(!c.iterate_into_domains && !c.per_domain);

    let c = HttpRequestConfig::from_config(&json!({
        "method": "POST",
        "url": "https://api.example/{{domain}}",
        "headers": {"Authorization": "Bearer {{secret}}", "X-Trace": "1"},
        "body": {"domain": "{{domain}}"},
        "timeout_seconds": 300,
        "capture_field": "data.items",
        "iterate_into_domains": true,
        "per_domain": true,
        "retry": null
    }));
    // `retry` is a sibling of config, not inside it.
    assert_eq!(
        c.unwrap_err(),
        "config.retry: unknown field; the http_request config has method, url, connection_id, \
         headers, body, timeout_seconds, capture_field, iterate_into_domains, per_domain"
    );

    let c = HttpRequestConfig::from_config(&json!({
        "method": "POST",
        "url": "https://api.example/{{domain}}",
        "headers": {"Authorization": "Bearer {{secret}}", "X-Trace": "1"},
        "body": {"domain": "{{domain}}"},
        "timeout_seconds": 300,
        "capture_field": "data.items",
        "iterate_into_domains": true,
        "per_domain": true
    }))
    .unwrap();
    assert_eq!(c.method, "POST");
    assert_eq!(c.headers["Authorization"], "Bearer {{secret}}");
    assert_eq!(c.body, Some(json!({"domain": "{{domain}}"})));
    assert_eq!(c.timeout_seconds, 300);
    assert_eq!(c.capture_field.as_deref(), Some("data.items"));
    assert!(c.iterate_into_domains && c.per_domain);

    // null and "" count as absent.
    let c = HttpRequestConfig::from_config(&json!({
        "url": "http://a.example", "method": null, "headers": null, "body": null,
        "timeout_seconds": null, "capture_field": "", "per_domain": null
    }))
    .unwrap();
    assert_eq!(c, get("http://a.example"));
}

#[test]
fn config_errors_name_the_field() {
    for (config, wanted) in [
        (json!("GET http://x"), "config: must be a JSON object"),
        (json!({}), "config.url: is required"),
        (json!({"url": "  "}), "config.url: is required"),
        (json!({"url": 5}), "config.url: is required"),
        (
            json!({"url": 5, "connection_id": 2}),
            "config.url: is required",
        ),
        (
            json!({"connection_id": 0}),
            "config.connection_id: must be the id of a saved connection",
        ),
        (
            json!({"connection_id": "2"}),
            "config.connection_id: must be the id",
        ),
        (
            json!({"url": "http://x", "method": "get"}),
            "config.method: must be one of GET, POST, PUT, PATCH, DELETE",
        ),
        (
            json!({"url": "http://x", "method": "HEAD"}),
            "config.method: must be one of",
        ),
        (
            json!({"url": "http://x", "headers": []}),
            "config.headers: must be an object",
        ),
        (
            json!({"url": "http://x", "headers": {"X-N": 1}}),
            "config.headers.X-N: must be a string",
        ),
        (
            json!({"url": "http://x", "headers": {"Bad Name": "v"}}),
            "config.headers: \"Bad Name\" is not a valid header name",
        ),
        (
            json!({"url": "http://x", "headers": {"X-A": "a\r\nX-B: b"}}),
            "config.headers.X-A: must not contain line breaks",
        ),
        (
            json!({"url": "http://x", "body": "text"}),
            "config.body: must be a JSON object",
        ),
        (
            json!({"url": "http://x", "body": [1]}),
            "config.body: must be a JSON object",
        ),
        (
            json!({"url": "http://x", "timeout_seconds": 0}),
            "config.timeout_seconds: must be an integer from 1 to 300",
        ),
        (
            json!({"url": "http://x", "timeout_seconds": 301}),
            "config.timeout_seconds",
        ),
        (
            json!({"url": "http://x", "timeout_seconds": 2.5}),
            "config.timeout_seconds",
        ),
        (
            json!({"url": "http://x", "timeout_seconds": "30"}),
            "config.timeout_seconds",
        ),
        (
            json!({"url": "http://x", "capture_field": 3}),
            "config.capture_field: must be a string",
        ),
        (
            json!({"url": "http://x", "iterate_into_domains": "yes"}),
            "config.iterate_into_domains: must be true or false",
        ),
        (
            json!({"url": "http://x", "per_domain": 1}),
            "config.per_domain: must be true or false",
        ),
    ] {
        let e = HttpRequestConfig::from_config(&config).unwrap_err();
        assert!(e.starts_with(wanted), "{config}: {e}");
    }
}

#[test]
fn a_connection_makes_the_url_optional() {
    let c = HttpRequestConfig::from_config(&json!({"connection_id": 4})).unwrap();
    assert_eq!((c.url.as_str(), c.connection_id), ("", Some(4)));
    let c = HttpRequestConfig::from_config(&json!({"connection_id": 4, "url": ""})).unwrap();
    assert_eq!(c.url, "");
    let c = HttpRequestConfig::from_config(&json!({"connection_id": 4, "url": "/people"})).unwrap();
    assert_eq!(c.url, "/people");
    assert!(c.connection.is_none(), "merged only when a run sends it");
}

#[test]
fn schema_matches_the_config_reader() {
    let s = config_schema();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(s["additionalProperties"], false);
    // url is required unless a connection_id gives the base URL.
    assert_eq!(s["if"], json!({"not": {"required": ["connection_id"]}}));
    assert_eq!(s["then"]["required"], json!(["url"]));
    assert_eq!(s["then"]["properties"]["url"]["minLength"], 1);
    assert_eq!(s["properties"]["connection_id"]["minimum"], 1);
    assert_eq!(s["properties"]["method"]["enum"], json!(METHODS));
    assert_eq!(
        s["properties"]["headers"]["additionalProperties"],
        json!({"type": "string"})
    );
    assert_eq!(s["properties"]["body"]["type"], "object");
    assert_eq!(s["properties"]["timeout_seconds"]["minimum"], 1);
    assert_eq!(s["properties"]["timeout_seconds"]["maximum"], 300);
    assert_eq!(s["properties"]["timeout_seconds"]["default"], 30);
    for flag in ["iterate_into_domains", "per_domain"] {
        assert_eq!(s["properties"][flag]["type"], "boolean");
    }
    // Every property the schema lists is one from_config reads, and back.
    let listed: Vec<&str> = s["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut fields = FIELDS.to_vec();
    let mut listed_sorted = listed.clone();
    fields.sort_unstable();
    listed_sorted.sort_unstable();
    assert_eq!(listed_sorted, fields);
}

#[test]
fn debug_output_hides_secret_headers() {
    let c = HttpRequestConfig::from_config(&json!({
        "url": "http://a.example",
        "headers": {"Authorization": "Bearer sk-live-123", "Accept": "application/json"}
    }))
    .unwrap();
    let text = format!("{c:?}");
    assert!(!text.contains("sk-live-123"), "{text}");
    assert!(text.contains("[redacted]") && text.contains("application/json"));
}

// ---- pure helpers ----

#[test]
fn redaction_covers_credential_headers_in_any_case() {
    let headers: BTreeMap<String, String> = [
        "Authorization",
        "proxy-authorization",
        "Cookie",
        "X-API-KEY",
        "X-Auth-Token",
        "Api-Key",
        "x-client-secret",
        "X-Password",
        "X-Refresh-TOKEN",
        "Accept",
        "Content-Type",
        "X-Request-Id",
        "User-Agent",
    ]
    .iter()
    .map(|n| (n.to_string(), format!("value of {n}")))
    .collect();
    let redacted = redact_headers(&headers);
    assert_eq!(redacted.len(), headers.len());
    for (name, value) in &redacted {
        let secret = !matches!(
            name.as_str(),
            "Accept" | "Content-Type" | "X-Request-Id" | "User-Agent"
        );
        if secret {
            assert_eq!(value, "[redacted]", "{name}");
        } else {
            assert_eq!(value, &format!("value of {name}"), "{name}");
        }
    }
}

#[test]
fn capture_walks_objects_and_arrays() {
    let body = json!({
        "data": {
            "items": [{"domain": "a.example"}, {"domain": "b.example", "tags": ["x", "y"]}],
            "total": 2,
            "next": null,
            "0": "key named zero"
        }
    });
    assert_eq!(
        capture(&body, "data.items.0.domain"),
        Some(json!("a.example"))
    );
    assert_eq!(capture(&body, "data.items.1.tags.1"), Some(json!("y")));
    assert_eq!(capture(&body, "data.total"), Some(json!(2)));
    assert_eq!(capture(&body, "data.next"), Some(Value::Null));
    // On an object a numeric segment is a key.
    assert_eq!(capture(&body, "data.0"), Some(json!("key named zero")));
    assert_eq!(capture(&body, ""), Some(body.clone()));
    for missing in [
        "data.items.2",
        "data.items.-1",
        "data.items.+1",
        "data.items.first",
        "data.total.x",
        "data..items",
        "data.",
        ".data",
        "nope",
        "data.items.99999999999999999999999",
    ] {
        assert_eq!(capture(&body, missing), None, "{missing}");
    }
    // A top-level array.
    assert_eq!(capture(&json!([10, 20]), "1"), Some(json!(20)));
}

#[test]
fn iterate_items_turns_a_list_into_domains() {
    let items = iterate_items(&json!([
        "a.example",
        {"domain": "b.example", "score": 3},
        5,
        null,
        ["nested"],
        {"name": "no domain key"}
    ]))
    .unwrap();
    assert_eq!(
        items,
        vec![
            json!({"domain": "a.example"}),
            json!({"domain": "b.example", "score": 3}),
            json!({"name": "no domain key"}),
        ]
    );
    assert_eq!(iterate_items(&json!([])), Some(vec![]));
    assert_eq!(iterate_items(&json!({"domain": "a.example"})), None);
    assert_eq!(iterate_items(&json!("a.example")), None);
}

#[test]
fn failure_texts_and_retry_verdicts() {
    assert_eq!(HttpFailure::Blocked.to_string(), "Blocked by SSRF guard");
    assert_eq!(HttpFailure::Blocked.to_string(), BLOCKED_BY_SSRF_GUARD);
    assert_eq!(
        HttpFailure::Timeout(30).to_string(),
        "No answer within 30 seconds"
    );
    assert_eq!(
        HttpFailure::Timeout(1).to_string(),
        "No answer within 1 second"
    );
    assert_eq!(
        HttpFailure::Status(502, "bad gateway".into()).to_string(),
        "HTTP 502: bad gateway"
    );
    assert_eq!(
        HttpFailure::Status(404, String::new()).to_string(),
        "HTTP 404"
    );
    assert_eq!(
        HttpFailure::TooLarge(MAX_RESPONSE_BYTES).to_string(),
        "Response body larger than 1048576 bytes"
    );
    for retryable in [
        HttpFailure::Timeout(1),
        HttpFailure::Transport("reset".into()),
        HttpFailure::Status(500, String::new()),
        HttpFailure::Status(503, String::new()),
        HttpFailure::Status(429, String::new()),
        HttpFailure::Status(408, String::new()),
    ] {
        assert!(retryable.is_retryable(), "{retryable:?}");
    }
    for fixed in [
        HttpFailure::Blocked,
        HttpFailure::InvalidUrl("x".into()),
        HttpFailure::InvalidRequest("x".into()),
        HttpFailure::TooLarge(1),
        HttpFailure::Status(400, String::new()),
        HttpFailure::Status(404, String::new()),
        HttpFailure::Status(304, String::new()),
    ] {
        assert!(!fixed.is_retryable(), "{fixed:?}");
    }
}

#[test]
fn excerpts_are_short_and_on_one_line() {
    assert_eq!(excerpt(b""), "");
    assert_eq!(excerpt(b"  oops\n  try\tlater \n"), "oops try later");
    let long = "é".repeat(10_000);
    let e = excerpt(long.as_bytes());
    assert_eq!(e.chars().count(), EXCERPT_CHARS + 1);
    assert!(e.ends_with('…'));
}

// ---- over the network ----

#[tokio::test]
async fn get_json_with_capture_and_iterate() {
    let server = Server::start(|seen| {
        assert_eq!(seen.path, "/domains?page=1");
        json_reply(
            200,
            json!({"data": {"items": ["a.example", {"domain": "b.example", "score": 3}, 7]}}),
        )
    })
    .await;
    let mut config = get(&server.url("/domains?page=1"));
    config.capture_field = Some("data.items".to_owned());
    config.iterate_into_domains = true;
    let outcome = loopback_client().send(&config).await.unwrap();
    assert_eq!(outcome.status, 200);
    assert_eq!(outcome.body["data"]["items"][0], "a.example");
    let captured = outcome.captured.unwrap();
    assert_eq!(
        iterate_items(&captured).unwrap(),
        vec![
            json!({"domain": "a.example"}),
            json!({"domain": "b.example", "score": 3})
        ]
    );
    assert!(outcome.elapsed_ms < 5_000);
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "GET");
    assert!(seen[0].body.is_empty());
    assert_eq!(seen[0].header("content-type"), None);
}

#[tokio::test]
async fn post_sends_the_body_as_json_with_the_headers() {
    let server = Server::start(|_| json_reply(201, json!({"id": 42}))).await;
    let config = HttpRequestConfig::from_config(&json!({
        "method": "POST",
        "url": server.url("/hook"),
        "headers": {"Authorization": "Bearer t0k3n", "X-Trace": "abc"},
        "body": {"domain": "a.example", "tags": ["x"], "n": 1.5},
        "capture_field": "id"
    }))
    .unwrap();
    let outcome = loopback_client().send(&config).await.unwrap();
    assert_eq!(outcome.status, 201);
    assert_eq!(outcome.captured, Some(json!(42)));
    let seen = &server.seen()[0];
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.path, "/hook");
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(seen.header("authorization"), Some("Bearer t0k3n"));
    assert_eq!(seen.header("x-trace"), Some("abc"));
    let sent: Value = serde_json::from_slice(&seen.body).unwrap();
    assert_eq!(
        sent,
        json!({"domain": "a.example", "tags": ["x"], "n": 1.5})
    );
}

#[tokio::test]
async fn put_and_patch_send_bodies_get_and_delete_do_not() {
    let server = Server::start(|_| json_reply(200, json!({}))).await;
    let client = loopback_client();
    for method in METHODS {
        let mut config = get(&server.url("/r"));
        config.method = method.to_owned();
        config.body = Some(json!({"m": method}));
        // A Content-Type of the caller's own is kept.
        config.headers.insert(
            "Content-Type".to_owned(),
            "application/vnd.api+json".to_owned(),
        );
        client.send(&config).await.unwrap();
    }
    let seen = server.seen();
    let summary: Vec<(String, bool)> = seen
        .iter()
        .map(|s| (s.method.clone(), !s.body.is_empty()))
        .collect();
    assert_eq!(
        summary,
        [
            ("GET".to_owned(), false),
            ("POST".to_owned(), true),
            ("PUT".to_owned(), true),
            ("PATCH".to_owned(), true),
            ("DELETE".to_owned(), false)
        ]
    );
    assert_eq!(
        seen[1].header("content-type"),
        Some("application/vnd.api+json")
    );
}

#[tokio::test]
async fn text_and_empty_bodies() {
    let server = Server::start(|seen| match seen.path.as_str() {
        "/text" => text_reply(200, "plain words"),
        _ => Reply::Full {
            status: 204,
            content_type: "text/plain",
            extra: Vec::new(),
            body: Vec::new(),
        },
    })
    .await;
    let client = loopback_client();
    let mut config = get(&server.url("/text"));
    config.capture_field = Some("a".to_owned());
    let outcome = client.send(&config).await.unwrap();
    assert_eq!(outcome.body, json!("plain words"));
    assert_eq!(outcome.captured, None);
    let outcome = client.send(&get(&server.url("/empty"))).await.unwrap();
    assert_eq!((outcome.status, outcome.body), (204, Value::Null));
}

#[tokio::test]
async fn error_statuses_carry_an_excerpt() {
    let server = Server::start(|seen| match seen.path.as_str() {
        "/500" => json_reply(500, json!({"error": "database down"})),
        _ => text_reply(404, "no such\nthing"),
    })
    .await;
    let client = loopback_client();
    let failure = client.send(&get(&server.url("/500"))).await.unwrap_err();
    assert_eq!(
        failure,
        HttpFailure::Status(500, r#"{"error":"database down"}"#.to_owned())
    );
    assert!(failure.is_retryable());
    let failure = client.send(&get(&server.url("/404"))).await.unwrap_err();
    assert_eq!(failure.to_string(), "HTTP 404: no such thing");
    assert!(!failure.is_retryable());
}

#[tokio::test]
async fn internal_targets_are_blocked_without_connecting() {
    let server = Server::start(|_| json_reply(200, json!({}))).await;
    let port = server.addr.port();
    let client = strict_client();
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        // The WHATWG parser reads this as 127.0.0.1, and so does the guard.
        format!("http://2130706433:{port}/"),
        "http://10.0.0.1/".to_owned(),
        "http://192.168.1.1/".to_owned(),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://[fd00::1]/".to_owned(),
    ] {
        let started = Instant::now();
        let failure = client.send(&get(&url)).await.unwrap_err();
        assert_eq!(failure, HttpFailure::Blocked, "{url}");
        assert_eq!(failure.to_string(), "Blocked by SSRF guard");
        assert!(!failure.is_retryable());
        assert!(started.elapsed() < Duration::from_secs(2), "{url}");
    }
    settle().await;
    assert_eq!(server.accepted(), 0);
}

#[tokio::test]
async fn loopback_for_tests_opens_loopback_only() {
    let client = loopback_client();
    for url in [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00::1]/",
    ] {
        assert_eq!(
            client.send(&get(url)).await.unwrap_err(),
            HttpFailure::Blocked,
            "{url}"
        );
    }
}

#[tokio::test]
async fn names_resolving_to_internal_addresses_are_blocked() {
    let dns = TestDns::start().await;
    dns.a("internal.test", Ipv4Addr::new(10, 0, 0, 5));
    dns.a("metadata.test", Ipv4Addr::new(169, 254, 169, 254));
    dns.a("here.test", Ipv4Addr::LOCALHOST);
    let server = Server::start(|_| json_reply(200, json!({"ok": true}))).await;
    let port = server.addr.port();
    let with_dns = |policy: GuardPolicy| {
        HttpActionClient::new(GuardPolicy {
            nameservers: vec![dns.addr()],
            ..policy
        })
    };

    let strict = with_dns(GuardPolicy::strict());
    for name in ["internal.test", "metadata.test", "here.test"] {
        let url = format!("http://{name}:{port}/");
        assert_eq!(
            strict.send(&get(&url)).await.unwrap_err(),
            HttpFailure::Blocked,
            "{url}"
        );
    }
    assert!(dns.queries("internal.test") > 0, "the name was resolved");
    settle().await;
    assert_eq!(server.accepted(), 0);

    // The same resolver path reaches the server when loopback is allowed,
    // so the refusals above came from the addresses, not from DNS failing.
    let open = with_dns(GuardPolicy::allow_loopback_for_tests());
    let outcome = open
        .send(&get(&format!("http://here.test:{port}/")))
        .await
        .unwrap();
    assert_eq!(outcome.body, json!({"ok": true}));
    assert_eq!(
        open.send(&get(&format!("http://internal.test:{port}/")))
            .await
            .unwrap_err(),
        HttpFailure::Blocked
    );
}

#[tokio::test]
async fn redirects_to_internal_addresses_are_blocked() {
    let target = Server::start(|_| json_reply(200, json!({"reached": true}))).await;
    let target_url = target.url("/landing");
    let origin = Server::start(move |seen| match seen.path.as_str() {
        "/to-metadata" => redirect_to("http://169.254.169.254/latest/meta-data/"),
        "/to-private" => redirect_to("http://10.0.0.1/admin"),
        "/to-v6-local" => redirect_to("http://[fd12::1]/"),
        _ => redirect_to(&target_url),
    })
    .await;
    let client = loopback_client();
    for path in ["/to-metadata", "/to-private", "/to-v6-local"] {
        let failure = client.send(&get(&origin.url(path))).await.unwrap_err();
        assert_eq!(failure, HttpFailure::Blocked, "{path}");
    }
    // An allowed hop is followed, and the answer is the last hop's.
    let outcome = client.send(&get(&origin.url("/ok"))).await.unwrap();
    assert_eq!(outcome.body, json!({"reached": true}));
    assert_eq!(target.accepted(), 1);

    // Under the strict policy a public origin could not redirect to
    // loopback either; here the origin is itself loopback, so the first
    // hop is refused and nothing is connected to at all.
    let strict = strict_client();
    assert_eq!(
        strict.send(&get(&origin.url("/ok"))).await.unwrap_err(),
        HttpFailure::Blocked
    );
}

#[tokio::test]
async fn slow_answers_time_out() {
    let server = Server::start(|_| {
        Reply::Late(
            Duration::from_secs(3),
            Box::new(json_reply(200, json!({"late": true}))),
        )
    })
    .await;
    let mut config = get(&server.url("/slow"));
    config.timeout_seconds = 1;
    let started = Instant::now();
    let failure = loopback_client().send(&config).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(failure, HttpFailure::Timeout(1));
    assert_eq!(failure.to_string(), "No answer within 1 second");
    assert!(failure.is_retryable());
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_millis(2500),
        "{took:?}"
    );
}

#[tokio::test]
async fn huge_bodies_are_refused_without_reading_them() {
    let server = Server::start(|seen| Reply::Huge {
        declare: seen.path == "/declared",
    })
    .await;
    let client = loopback_client();
    for path in ["/declared", "/streamed"] {
        let started = Instant::now();
        let failure = client.send(&get(&server.url(path))).await.unwrap_err();
        assert_eq!(failure, HttpFailure::TooLarge(MAX_RESPONSE_BYTES), "{path}");
        assert!(!failure.is_retryable());
        assert!(started.elapsed() < Duration::from_secs(5), "{path}");
    }
    // Give the server time to notice the closed connections, then check
    // it got nowhere near 50 MiB out: the client stopped reading at 1 MiB
    // and only socket buffers took the rest.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let written = server.written.load(Ordering::SeqCst);
    assert!(written < HUGE_BYTES / 2, "server wrote {written} bytes");
}

#[tokio::test]
async fn unusable_urls_and_headers() {
    let client = loopback_client();
    for url in ["not a url", "ftp://files.example/x", "file:///etc/passwd"] {
        let failure = client.send(&get(url)).await.unwrap_err();
        assert!(
            matches!(failure, HttpFailure::InvalidUrl(_)),
            "{url}: {failure:?}"
        );
        assert!(
            failure.to_string().starts_with("Invalid URL: "),
            "{failure}"
        );
        assert!(!failure.is_retryable());
    }
    // Templating can put a line break into a header value after from_config.
    let server = Server::start(|_| json_reply(200, json!({}))).await;
    let mut config = get(&server.url("/"));
    config
        .headers
        .insert("X-Value".to_owned(), "a\nb".to_owned());
    let failure = client.send(&config).await.unwrap_err();
    assert!(
        matches!(failure, HttpFailure::InvalidRequest(_)),
        "{failure:?}"
    );
    let mut config = get(&server.url("/"));
    config.method = "TRACE".to_owned();
    assert!(matches!(
        client.send(&config).await.unwrap_err(),
        HttpFailure::InvalidRequest(_)
    ));
    settle().await;
    assert_eq!(server.accepted(), 0);
}

#[tokio::test]
async fn refused_connections_are_transport_failures() {
    // A port that was just free: nothing listens there.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        l.local_addr().unwrap().port()
    };
    let failure = loopback_client()
        .send(&get(&format!("http://127.0.0.1:{port}/")))
        .await
        .unwrap_err();
    assert!(matches!(failure, HttpFailure::Transport(_)), "{failure:?}");
    assert!(failure.is_retryable());
}
