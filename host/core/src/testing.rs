//! Test harness for area tests: a real `AppState` on SQLite or PostgreSQL
//! (chosen by `OUTREACH_TEST_BACKEND`), a manual clock, and helpers that
//! drive the router in-process.
//!
//! On PostgreSQL each `TestApp` gets its own database, dropped afterwards;
//! `OUTREACH_TEST_POSTGRES_URL` names the server (default
//! `postgres://postgres@127.0.0.1:5432/postgres`).
//!
//! Tests that reach DNS start a [`dns::TestDns`] and name it in the
//! configuration closure (`|c| c.dns_nameservers = vec![dns.nameserver()]`).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use chrono::TimeZone;
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

use crate::accounts::plans::Plan;
use crate::accounts::service::create_account;
use crate::area::Area;
use crate::config::Config;
use crate::platform::clock::ManualClock;
use crate::state::{AppState, Plugins};

pub mod dns;

pub struct TestApp {
    pub state: AppState,
    pub router: Router,
    pub clock: Arc<ManualClock>,
    areas: Vec<Area>,
    /// The data dir; owned by the first server of a test only.
    _dir: Option<tempfile::TempDir>,
    postgres: Option<(String, String)>,
}

pub struct TestAccount {
    pub account_id: i64,
    pub user_id: i64,
    pub api_key: String,
}

#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl TestResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    pub fn detail(&self) -> &str {
        self.body["detail"].as_str().unwrap_or("")
    }
}

/// The request [`TestApp::call_from`] sends: from `peer`, with `auth` as a
/// bearer token and `body` as JSON; for callers that drive
/// [`TestApp::router`] themselves (the request-path bench).
pub fn request_from(
    peer: &str,
    method: &str,
    path: &str,
    auth: Option<&str>,
    body: Option<Value>,
) -> Request<Body> {
    let mut builder = Request::builder()
        .method(Method::from_bytes(method.as_bytes()).unwrap())
        .uri(path);
    if let Some(token) = auth {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    let body = match body {
        Some(v) => {
            builder = builder.header("content-type", "application/json");
            Body::from(v.to_string())
        }
        None => Body::empty(),
    };
    let mut req = builder.body(body).unwrap();
    req.extensions_mut()
        .insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
    req
}

pub fn postgres_admin_url() -> String {
    std::env::var("OUTREACH_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

pub fn use_postgres() -> bool {
    std::env::var("OUTREACH_TEST_BACKEND").is_ok_and(|b| b == "postgres")
}

/// Creates a fresh PostgreSQL database and returns its URL.
pub async fn fresh_postgres_database() -> (String, String) {
    sqlx::any::install_default_drivers();
    let admin = postgres_admin_url();
    let name = format!("outreach_t_{}", uuid::Uuid::new_v4().simple());
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin)
        .await
        .expect("PostgreSQL for tests (set OUTREACH_TEST_POSTGRES_URL)");
    let create = format!("CREATE DATABASE {name}");
    sqlx::query(sqlx::AssertSqlSafe(create))
        .execute(&mut conn)
        .await
        .unwrap();
    let base = admin.rsplit_once('/').unwrap().0;
    (format!("{base}/{name}"), name)
}

/// Precompiled components are keyed by content and engine hash, so every
/// test shares one cache across its temporary data dirs.
fn shared_plugin_cache() -> Plugins {
    Plugins::LoadCachedIn(std::env::temp_dir().join("outreach-test-plugin-cache"))
}

impl TestApp {
    /// The core areas only (accounts, keys, sign-in, usage).
    pub async fn new() -> TestApp {
        TestApp::with(|_| {}).await
    }

    /// The core areas, with a configuration `adjust` may change first.
    pub async fn with(adjust: impl FnOnce(&mut Config)) -> TestApp {
        TestApp::with_areas(&[], adjust).await
    }

    /// The core areas plus `areas` (an area crate passes its own, the server
    /// its whole `AREAS` list), with a
    /// configuration `adjust` may change first (vendor base URLs pointing at
    /// a stub, for example). Outbound connections may reach loopback.
    pub async fn with_areas(areas: &[Area], adjust: impl FnOnce(&mut Config)) -> TestApp {
        let _ = tracing_subscriber::fmt()
            .with_test_writer()
            .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()))
            .try_init();
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config {
            data_dir: dir.path().to_path_buf(),
            usage_flush_interval_ms: 20,
            ..Config::default()
        };
        config.unsafe_outbound_allow_loopback = true;
        config.offer_example_vendors = true;
        adjust(&mut config);
        let postgres = if use_postgres() {
            let (url, name) = fresh_postgres_database().await;
            config.database_url = url;
            Some((postgres_admin_url(), name))
        } else {
            None
        };
        let clock = ManualClock::new(
            chrono::Utc
                .with_ymd_and_hms(2026, 11, 21, 12, 0, 0)
                .unwrap(),
        );
        // The core area always; callers may pass a full list that has it.
        let mut all = vec![crate::AREA];
        all.extend(areas.iter().filter(|a| a.name != crate::AREA.name));
        let state = AppState::build_with(config, clock.clone(), shared_plugin_cache(), &all)
            .await
            .unwrap();
        let router = crate::http::app::router(state.clone(), &all);
        TestApp {
            state,
            router,
            clock,
            areas: all,
            _dir: Some(dir),
            postgres,
        }
    }

    /// Another server on the same database, data dir and clock, as a second
    /// `outreach serve` process would be (or this one after a restart).
    pub async fn another_server(&self) -> TestApp {
        let config = (*self.state.config).clone();
        let state = AppState::build_with(
            config,
            self.clock.clone(),
            shared_plugin_cache(),
            &self.areas,
        )
        .await
        .unwrap();
        let router = crate::http::app::router(state.clone(), &self.areas);
        TestApp {
            state,
            router,
            clock: self.clock.clone(),
            areas: self.areas.clone(),
            _dir: None,
            postgres: None,
        }
    }

    pub async fn account(&self, plan: Plan) -> TestAccount {
        let email = format!("{}@example.com", uuid::Uuid::new_v4().simple());
        let c = create_account(&self.state, &email, plan, Some("password123"))
            .await
            .unwrap();
        TestAccount {
            account_id: c.account_id,
            user_id: c.user_id,
            api_key: c.api_key,
        }
    }

    /// Sends a request from 127.0.0.1.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        auth: Option<&str>,
        body: Option<Value>,
    ) -> TestResponse {
        self.call_from("127.0.0.1:40000", method, path, auth, body)
            .await
    }

    pub async fn call_from(
        &self,
        peer: &str,
        method: &str,
        path: &str,
        auth: Option<&str>,
        body: Option<Value>,
    ) -> TestResponse {
        self.send(request_from(peer, method, path, auth, body))
            .await
    }

    pub async fn send(&self, req: Request<Body>) -> TestResponse {
        let response = self.router.clone().oneshot(req).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        TestResponse {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str, key: &str) -> TestResponse {
        self.call("GET", path, Some(key), None).await
    }

    pub async fn post(&self, path: &str, key: &str, body: Value) -> TestResponse {
        self.call("POST", path, Some(key), Some(body)).await
    }

    /// Posts a multipart form: the text `fields`, then `file` (its name and
    /// bytes) as the field `file`, as a browser's upload sends them.
    pub async fn post_form(
        &self,
        path: &str,
        key: &str,
        fields: &[(&str, &str)],
        file: Option<(&str, &[u8])>,
    ) -> TestResponse {
        let boundary = "XbOuNdArYx";
        let mut body = Vec::new();
        for (name, value) in fields {
            body.extend_from_slice(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
                )
                .as_bytes(),
            );
        }
        if let Some((file_name, bytes)) = file {
            body.extend_from_slice(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; \
                     filename=\"{file_name}\"\r\nContent-Type: text/csv\r\n\r\n"
                )
                .as_bytes(),
            );
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        let req = Request::post(path)
            .header("authorization", format!("Bearer {key}"))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(Body::from(body))
            .unwrap();
        self.send(req).await
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.postgres.take() {
            // Drop cannot await, and the test's runtime is blocked while we
            // wait here, so a helper thread with its own runtime removes the
            // database; FORCE ends the pool's open sessions.
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    if let Ok(mut conn) =
                        <sqlx::AnyConnection as sqlx::Connection>::connect(&admin).await
                    {
                        let drop = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                        let _ = sqlx::query(sqlx::AssertSqlSafe(drop))
                            .execute(&mut conn)
                            .await;
                    }
                });
            })
            .join();
        }
    }
}

/// A local HTTP server standing in for vendor APIs in tests. Each route is a
/// path prefix answering a canned status and body after an optional delay;
/// every request is counted per prefix.
pub mod stub {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use axum::body::Body;
    use axum::extract::{Request, State};
    use axum::http::StatusCode;
    use axum::response::Response;

    #[derive(Clone)]
    pub struct Canned {
        pub status: u16,
        pub body: String,
        pub headers: Vec<(String, String)>,
        pub delay: Duration,
    }

    impl Canned {
        pub fn json(status: u16, body: serde_json::Value) -> Canned {
            Canned {
                status,
                body: body.to_string(),
                headers: vec![("content-type".into(), "application/json".into())],
                delay: Duration::ZERO,
            }
        }
        pub fn with_header(mut self, name: &str, value: &str) -> Canned {
            self.headers.push((name.into(), value.into()));
            self
        }
        pub fn after(mut self, delay: Duration) -> Canned {
            self.delay = delay;
            self
        }
    }

    #[derive(Default)]
    struct Routes {
        canned: Vec<(String, Canned)>,
        hits: HashMap<String, usize>,
        /// The body of the latest request per prefix.
        last_bodies: HashMap<String, String>,
        in_flight: usize,
        max_in_flight: usize,
    }

    #[derive(Clone)]
    pub struct Stub {
        pub base: String,
        routes: Arc<Mutex<Routes>>,
    }

    impl Stub {
        pub async fn start() -> Stub {
            let routes = Arc::new(Mutex::new(Routes::default()));
            let app = axum::Router::new()
                .fallback(answer)
                .with_state(routes.clone());
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
            Stub { base, routes }
        }

        /// Answers requests whose path starts with `prefix` (longest prefix wins).
        pub fn set(&self, prefix: &str, canned: Canned) {
            let mut r = self.routes.lock().unwrap();
            r.canned.retain(|(p, _)| p != prefix);
            r.canned.push((prefix.to_string(), canned));
            r.canned.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        }

        pub fn hits(&self, prefix: &str) -> usize {
            self.routes
                .lock()
                .unwrap()
                .hits
                .get(prefix)
                .copied()
                .unwrap_or(0)
        }

        /// The latest request body under `prefix`, parsed as JSON.
        pub fn last_body(&self, prefix: &str) -> Option<serde_json::Value> {
            let r = self.routes.lock().unwrap();
            serde_json::from_str(r.last_bodies.get(prefix)?).ok()
        }

        /// The most requests the stub has served at the same time.
        pub fn max_in_flight(&self) -> usize {
            self.routes.lock().unwrap().max_in_flight
        }

        pub fn url(&self, prefix: &str) -> String {
            format!("{}{prefix}", self.base)
        }
    }

    async fn answer(State(routes): State<Arc<Mutex<Routes>>>, req: Request) -> Response {
        // Path and query, so a prefix may pin a query (one answer per address).
        let path = req
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        let body = axum::body::to_bytes(req.into_body(), usize::MAX)
            .await
            .unwrap_or_default();
        let found = {
            let mut r = routes.lock().unwrap();
            let hit = r
                .canned
                .iter()
                .find(|(p, _)| path.starts_with(p.as_str()))
                .cloned();
            if let Some((p, _)) = &hit {
                *r.hits.entry(p.clone()).or_default() += 1;
                r.last_bodies
                    .insert(p.clone(), String::from_utf8_lossy(&body).into_owned());
            }
            r.in_flight += 1;
            r.max_in_flight = r.max_in_flight.max(r.in_flight);
            hit
        };
        tokio::time::sleep(found.as_ref().map_or(Duration::ZERO, |(_, c)| c.delay)).await;
        routes.lock().unwrap().in_flight -= 1;
        let Some((_, canned)) = found else {
            return Response::builder()
                .status(404)
                .body(Body::from("no stub"))
                .unwrap();
        };
        let mut builder = Response::builder().status(StatusCode::from_u16(canned.status).unwrap());
        for (k, v) in &canned.headers {
            builder = builder.header(k, v);
        }
        builder.body(Body::from(canned.body)).unwrap()
    }
}

/// The mail peers `tests/support/mail.sh` starts (and `tests/run.sh` runs it):
/// Postfix's smtp-sink and a private Dovecot on fixed loopback ports, so tests
/// in any crate find them without environment variables.
pub mod mail_peers {
    /// smtp-sink: announces AUTH PLAIN and LOGIN, accepts any credentials, no TLS.
    pub const SMTP_PORT: u16 = 12525;
    /// Dovecot's plaintext IMAP listener (no STARTTLS), with an empty INBOX.
    pub const IMAP_PORT: u16 = 11143;
    /// The one IMAP user.
    pub const IMAP_USER: &str = "seller@outreach.test";
    /// That user's password.
    pub const IMAP_PASSWORD: &str = "mail-pass-1";
}
