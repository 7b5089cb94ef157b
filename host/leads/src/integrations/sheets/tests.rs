//! The spreadsheet export against a stub of the provider that answers in
//! its documented shapes (RFC 6749 token errors, Sheets API errors `{error:
//! {code, message, status}}`) and records what it received: the whole
//! OAuth dance with PKCE, refresh and revocation, each template's header
//! and cells, the chunking, and each error.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::testkit::{add_domains, findings, new_list, outbox, seed};
use outreach_core::accounts::Plan;
use outreach_core::events::EventType;
use outreach_core::testing::{TestAccount, TestApp};

const CLIENT_ID: &str = "client-123.apps.example";
const CLIENT_SECRET: &str = "s3cret";

/// How the stub's Sheets API answers.
#[derive(Clone, Debug, PartialEq)]
enum Mode {
    Normal,
    /// 500 with this message.
    Fail(String),
    /// 429 this many times, then normal.
    Busy(usize),
    /// Answers after this long.
    Slow(Duration),
}

#[derive(Clone, Debug)]
struct Call {
    method: String,
    path: String,
    query: String,
    body: Value,
}

#[derive(Default)]
struct Provider {
    /// code -> PKCE challenge, as the consent screen would have kept it.
    codes: HashMap<String, String>,
    access: HashSet<String>,
    refresh: HashSet<String>,
    issued: usize,
    grants: Vec<String>,
    revoked: Vec<String>,
    calls: Vec<Call>,
    mode: Option<Mode>,
    redirect_uri: String,
}

#[derive(Clone)]
struct Stub {
    url: String,
    p: Arc<Mutex<Provider>>,
}

fn form(body: &[u8]) -> HashMap<String, String> {
    oauth2::url::form_urlencoded::parse(body)
        .into_owned()
        .collect()
}

fn token_error(code: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({"error": code, "error_description": "refused by the stub"})),
    )
        .into_response()
}

async fn token(State(p): State<Arc<Mutex<Provider>>>, headers: HeaderMap, body: Bytes) -> Response {
    let basic = format!(
        "Basic {}",
        STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
        return token_error("invalid_client");
    }
    let f = form(&body);
    let mut p = p.lock().unwrap();
    p.grants.push(f["grant_type"].clone());
    match f["grant_type"].as_str() {
        "authorization_code" => {
            let Some(challenge) = p.codes.remove(&f["code"]) else {
                return token_error("invalid_grant");
            };
            let verifier = f.get("code_verifier").cloned().unwrap_or_default();
            let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
            if computed != challenge || f.get("redirect_uri") != Some(&p.redirect_uri) {
                return token_error("invalid_grant");
            }
        }
        "refresh_token" => {
            if !p.refresh.contains(&f["refresh_token"]) {
                return token_error("invalid_grant");
            }
        }
        _ => return token_error("unsupported_grant_type"),
    }
    p.issued += 1;
    let access = format!("at-{}", p.issued);
    p.access.insert(access.clone());
    let mut answer = json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600});
    if f["grant_type"] == "authorization_code" {
        let refresh = format!("rt-{}", p.issued);
        p.refresh.insert(refresh.clone());
        answer["refresh_token"] = json!(refresh);
    }
    axum::Json(answer).into_response()
}

async fn revoke(State(p): State<Arc<Mutex<Provider>>>, body: Bytes) -> Response {
    let f = form(&body);
    let mut p = p.lock().unwrap();
    let t = f["token"].clone();
    p.refresh.remove(&t);
    p.access.remove(&t);
    p.revoked.push(t);
    StatusCode::OK.into_response()
}

fn api_error(code: u16, status: &str, message: &str) -> Response {
    (
        StatusCode::from_u16(code).unwrap(),
        axum::Json(json!({"error": {"code": code, "message": message, "status": status}})),
    )
        .into_response()
}

async fn api(
    State(p): State<Arc<Mutex<Provider>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mode = {
        let mut p = p.lock().unwrap();
        let bearer = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default()
            .to_owned();
        if !p.access.contains(&bearer) {
            return api_error(
                401,
                "UNAUTHENTICATED",
                "Request had invalid authentication credentials.",
            );
        }
        let mode = p.mode.clone().unwrap_or(Mode::Normal);
        if let Mode::Busy(n) = mode {
            p.mode = (n > 1).then_some(Mode::Busy(n - 1));
            return api_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded");
        }
        p.calls.push(Call {
            method: method.to_string(),
            path: uri.path().to_owned(),
            query: uri.query().unwrap_or_default().to_owned(),
            body: serde_json::from_slice(&body).unwrap_or_default(),
        });
        mode
    };
    match mode {
        Mode::Fail(message) => return api_error(500, "INTERNAL", &message),
        Mode::Slow(d) => tokio::time::sleep(d).await,
        _ => {}
    }
    if method == Method::POST {
        let n = p.lock().unwrap().calls.len();
        let id = format!("sheet-{n}");
        axum::Json(json!({
            "spreadsheetId": id,
            "spreadsheetUrl": format!("https://docs.google.com/spreadsheets/d/{id}/edit"),
        }))
        .into_response()
    } else {
        axum::Json(json!({"updatedRows": 1})).into_response()
    }
}

impl Stub {
    async fn start() -> Stub {
        let p = Arc::new(Mutex::new(Provider::default()));
        let app = axum::Router::new()
            .route("/token", axum::routing::post(token))
            .route("/revoke", axum::routing::post(revoke))
            .fallback(api)
            .with_state(p.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Stub { url, p }
    }

    fn provider(&self) -> std::sync::MutexGuard<'_, Provider> {
        self.p.lock().unwrap()
    }

    fn mode(&self, m: Mode) {
        self.provider().mode = Some(m);
    }

    fn calls(&self) -> Vec<Call> {
        self.provider().calls.clone()
    }
}

async fn app(stub: &Stub) -> TestApp {
    let url = stub.url.clone();
    let app = TestApp::with_areas(&[crate::AREA], move |c| {
        c.public_base_url = "https://outreach.example.com".into();
        c.sheets.client_id = CLIENT_ID.into();
        c.sheets.client_secret = CLIENT_SECRET.into();
        c.sheets.authorization_url = "https://accounts.example.com/o/oauth2/v2/auth".into();
        c.sheets.token_url = format!("{url}/token");
        c.sheets.revocation_url = format!("{url}/revoke");
        c.sheets.api_base_url = url.clone();
    })
    .await;
    stub.provider().redirect_uri = "https://outreach.example.com/v1/sheets/oauth/callback".into();
    app
}

/// `GET /v1/sheets/connect`, then the provider's consent: the code is
/// bound to the challenge. Answers (state, code).
async fn consent(app: &TestApp, stub: &Stub, acct: &TestAccount, code: &str) -> String {
    let r = app.get("/v1/sheets/connect", &acct.api_key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let url = oauth2::url::Url::parse(r.body["authorization_url"].as_str().unwrap()).unwrap();
    let q: HashMap<String, String> = url.query_pairs().into_owned().collect();
    assert_eq!(q["client_id"], CLIENT_ID);
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["access_type"], "offline");
    assert_eq!(q["scope"], super::oauth::SCOPE);
    assert_eq!(q["redirect_uri"], stub.provider().redirect_uri);
    stub.provider()
        .codes
        .insert(code.into(), q["code_challenge"].clone());
    q["state"].clone()
}

async fn callback(app: &TestApp, query: &str) -> outreach_core::testing::TestResponse {
    app.call(
        "GET",
        &format!("/v1/sheets/oauth/callback?{query}"),
        None,
        None,
    )
    .await
}

async fn connected(app: &TestApp, stub: &Stub, acct: &TestAccount) {
    let state = consent(app, stub, acct, "good-code").await;
    let r = callback(app, &format!("code=good-code&state={state}")).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

async fn status(app: &TestApp, acct: &TestAccount) -> String {
    let r = app.get("/v1/sheets/status", &acct.api_key).await;
    r.body["status"].as_str().unwrap().to_owned()
}

async fn export(
    app: &TestApp,
    acct: &TestAccount,
    body: Value,
) -> outreach_core::testing::TestResponse {
    app.post("/v1/sheets/export", &acct.api_key, body).await
}

#[tokio::test]
async fn the_oauth_dance_with_refresh_and_revocation() {
    let stub = Stub::start().await;
    let app = app(&stub).await;
    let acct = app.account(Plan::Starter).await;
    assert_eq!(status(&app, &acct).await, "not_connected");
    let r = export(&app, &acct, json!({"domains": ["a.com"]})).await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (400, "Google Sheets not connected")
    );

    // A forged state, and a missing one, store nothing.
    let state = consent(&app, &stub, &acct, "good-code").await;
    let r = callback(&app, "code=good-code&state=forged").await;
    assert_eq!(r.status, 400);
    assert!(r.body["detail"].as_str().unwrap().contains("state"));
    let r = callback(&app, "code=good-code").await;
    assert_eq!(r.status, 400);
    assert_eq!(status(&app, &acct).await, "not_connected");
    // A code the token endpoint refuses: 400, and the state is spent.
    let r = callback(&app, &format!("code=wrong&state={state}")).await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(r.detail().contains("invalid_grant"), "{}", r.detail());
    let r = callback(&app, &format!("code=good-code&state={state}")).await;
    assert_eq!(r.status, 400, "a state is good once");
    assert_eq!(status(&app, &acct).await, "not_connected");
    // A state older than 10 minutes.
    let state = consent(&app, &stub, &acct, "late-code").await;
    app.clock.advance(Duration::from_secs(601));
    let r = callback(&app, &format!("code=late-code&state={state}")).await;
    assert_eq!(r.status, 400);
    // The user declines.
    let state = consent(&app, &stub, &acct, "unused").await;
    let r = callback(&app, &format!("error=access_denied&state={state}")).await;
    assert_eq!(r.status, 400);
    assert_eq!(status(&app, &acct).await, "not_connected");

    // The real thing: PKCE verified by the stub, a page for the browser.
    let state = consent(&app, &stub, &acct, "good-code").await;
    let r = callback(&app, &format!("code=good-code&state={state}")).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    let r = app.get("/v1/sheets/status", &acct.api_key).await;
    assert_eq!(r.body["status"], "connected");
    assert!(r.body["connected_at"].is_string());
    // Tokens are sealed at rest.
    let (access, refresh): (String, String) = sqlx::query_as(
        "SELECT access_token, refresh_token FROM sheets_connections WHERE account_id = $1",
    )
    .bind(acct.account_id)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap();
    assert!(!access.contains("at-") && !refresh.contains("rt-"));

    // The refused code asked too; from here on only what the export asks.
    stub.provider().grants.clear();
    let r = export(&app, &acct, json!({"domains": ["a.com"]})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(stub.provider().grants.is_empty());

    // Near expiry the token is refreshed before the call.
    app.clock.advance(Duration::from_secs(3600 - 30));
    let r = export(&app, &acct, json!({"domains": ["a.com"]})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(stub.provider().grants, ["refresh_token"]);
    // A token the provider stopped accepting: one refresh after the 401.
    stub.provider().access.clear();
    let r = export(&app, &acct, json!({"domains": ["a.com"]})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(stub.provider().grants, ["refresh_token", "refresh_token"]);

    // A revoked refresh token breaks the connection.
    stub.provider().refresh.clear();
    stub.provider().access.clear();
    let r = export(&app, &acct, json!({"domains": ["a.com"]})).await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (400, "Google Sheets not connected")
    );
    assert_eq!(status(&app, &acct).await, "broken");
    let r = export(&app, &acct, json!({"domains": ["a.com"]})).await;
    assert_eq!(r.status, 400);

    // Connecting again mends it; disconnecting revokes at the provider.
    connected(&app, &stub, &acct).await;
    assert_eq!(status(&app, &acct).await, "connected");
    let r = app
        .call("DELETE", "/v1/sheets/connect", Some(&acct.api_key), None)
        .await;
    assert_eq!(r.status, 204, "{:?}", r.body);
    {
        let p = stub.provider();
        assert_eq!(p.revoked.len(), 1);
        assert!(p.revoked[0].starts_with("rt-"));
        assert!(p.refresh.is_empty());
    }
    assert_eq!(status(&app, &acct).await, "not_connected");
}

#[tokio::test]
async fn each_template_writes_its_header_and_cells_as_values() {
    let stub = Stub::start().await;
    let app = app(&stub).await;
    let acct = app.account(Plan::Pro).await;
    connected(&app, &stub, &acct).await;
    let mut f = findings("Software", 70);
    f.summary = Some("=HYPERLINK(\"http://evil.example\")".into());
    f.website_email = Some("hi@acme.com".into());
    f.phone = Some("+4930123456".into());
    f.social_links = json!({"linkedin": "https://linkedin.com/company/acme"});
    seed(&app, "acme.com", f).await;

    let r = app.get("/v1/sheets/templates", &acct.api_key).await;
    let templates = r.body["templates"].as_array().unwrap();
    let widths: Vec<usize> = templates
        .iter()
        .map(|t| t["columns"].as_array().unwrap().len())
        .collect();
    assert_eq!(widths, [22, 8, 6]);

    for (template, width) in [("full", 22), ("compact", 8), ("contacts", 6)] {
        let before = stub.calls().len();
        let r = export(
            &app,
            &acct,
            json!({"domains": ["https://acme.com/", "unknown.org", "acme.com"], "template": template}),
        )
        .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        assert_eq!(r.body["rows_exported"], 2);
        assert_eq!(r.body["template"], template);
        let id = r.body["spreadsheet_id"].as_str().unwrap().to_owned();
        assert!(r.body["spreadsheet_url"].as_str().unwrap().contains(&id));
        let calls = stub.calls()[before..].to_vec();
        assert_eq!(calls[0].method, "POST");
        assert_eq!(calls[0].path, "/v4/spreadsheets");
        assert_eq!(calls[1].method, "PUT");
        assert!(
            calls[1]
                .path
                .starts_with(&format!("/v4/spreadsheets/{id}/values/"))
        );
        assert_eq!(calls[1].query, "valueInputOption=RAW");
        let rows = calls[1].body["values"].as_array().unwrap();
        assert_eq!(rows.len(), 3);
        let header: Vec<&str> = rows[0]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(header.len(), width);
        assert_eq!(header[0], "domain");
        let cell = |row: usize, name: &str| -> Value {
            let at = header.iter().position(|h| *h == name).unwrap();
            rows[row][at].clone()
        };
        assert_eq!(cell(1, "domain"), "acme.com");
        assert_eq!(cell(1, "company_name"), "Software Co");
        assert_eq!(cell(2, "domain"), "unknown.org");
        assert_eq!(cell(2, "company_name"), "");
        match template {
            "contacts" => {
                assert_eq!(cell(1, "phone"), "+4930123456");
                assert_eq!(cell(1, "linkedin"), "https://linkedin.com/company/acme");
            }
            _ => {
                // Written as text (RAW): a spreadsheet will not run it.
                assert_eq!(cell(1, "summary"), "=HYPERLINK(\"http://evil.example\")");
                assert_eq!(cell(1, "confidence"), 80);
            }
        }
    }
    let events = outbox(&app, acct.account_id, EventType::ExportCompleted).await;
    assert_eq!(events.len(), 3);
    assert_eq!(events[0]["format"], "google_sheets");
    assert_eq!(events[0]["row_count"], 2);
    assert!(events[0]["export_id"].is_i64());
    assert!(events[0]["spreadsheet_id"].is_string());
    assert!(
        events[0]["url"]
            .as_str()
            .unwrap()
            .starts_with("https://docs.google.com/")
    );

    for (body, detail) in [
        (json!({"domains": ["a.com"], "template": "wide"}), None),
        (json!({"domains": []}), None),
        (json!({"domains": ["not a domain"]}), None),
        (
            json!({"domains": (0..501).map(|i| format!("d{i}.com")).collect::<Vec<_>>()}),
            Some("Maximum 500 domains per export"),
        ),
    ] {
        let r = export(&app, &acct, body).await;
        assert_eq!(r.status, 400, "{:?}", r.body);
        if let Some(d) = detail {
            assert_eq!(r.detail(), d);
        }
    }
}

#[tokio::test]
async fn five_hundred_domains_go_in_chunks_and_a_list_exports_whole() {
    let stub = Stub::start().await;
    let app = app(&stub).await;
    let acct = app.account(Plan::Pro).await;
    let other = app.account(Plan::Pro).await;
    connected(&app, &stub, &acct).await;
    let domains: Vec<String> = (0..500).map(|i| format!("d{i:03}.com")).collect();
    let r = export(
        &app,
        &acct,
        json!({"domains": domains, "template": "compact"}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["rows_exported"], 500);
    let writes: Vec<Call> = stub
        .calls()
        .into_iter()
        .filter(|c| c.method == "PUT")
        .collect();
    let ranges: Vec<&str> = writes
        .iter()
        .map(|c| c.body["range"].as_str().unwrap())
        .collect();
    assert_eq!(ranges, ["'Domains'!A1", "'Domains'!A201", "'Domains'!A401"]);
    let sizes: Vec<usize> = writes
        .iter()
        .map(|c| c.body["values"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [200, 200, 101]);
    assert_eq!(writes[2].body["values"][100][0], "d499.com");
    for w in &writes {
        assert!(serde_json::to_vec(&w.body).unwrap().len() < 2_000_000);
    }

    let list = new_list(&app, &acct.api_key, "Q4 targets").await;
    add_domains(&app, &acct.api_key, list, &["b.com", "a.com"]).await;
    let r = app
        .post(
            &format!("/v1/sheets/export-list/{list}"),
            &acct.api_key,
            json!(null),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["list_name"], "Q4 targets");
    assert_eq!(r.body["rows_exported"], 2);
    let last = stub.calls().last().unwrap().clone();
    assert_eq!(last.body["values"][0].as_array().unwrap().len(), 22);
    assert_eq!(last.body["values"][1][0], "b.com");
    let r = app
        .post(
            &format!("/v1/sheets/export-list/{list}"),
            &other.api_key,
            json!(null),
        )
        .await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (404, "Lead list not found")
    );
    let r = app
        .post("/v1/sheets/export-list/999999", &acct.api_key, json!(null))
        .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn provider_errors_limits_and_silence() {
    let stub = Stub::start().await;
    let app = app(&stub).await;
    let acct = app.account(Plan::Pro).await;
    connected(&app, &stub, &acct).await;
    let body = json!({"domains": ["a.com"]});

    stub.mode(Mode::Fail("Backend Error".into()));
    let r = export(&app, &acct, body.clone()).await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (500, "Google API error: Backend Error")
    );
    assert!(!r.detail().contains("at-"), "no token in the text");

    // Rate limited twice, then served: the retries absorb it.
    stub.mode(Mode::Busy(2));
    let r = export(&app, &acct, body.clone()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // Rate limited past the retries: 429.
    stub.mode(Mode::Busy(10));
    let r = export(&app, &acct, body.clone()).await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (429, "Rate limit exceeded")
    );
    assert!(r.header("retry-after").is_some());

    // A provider that does not answer in time (30 s; shortened here).
    app.state
        .ext::<super::Sheets>()
        .set_timeout(Duration::from_millis(300));
    stub.mode(Mode::Slow(Duration::from_secs(2)));
    let r = export(&app, &acct, body.clone()).await;
    assert_eq!(r.status, 500, "{:?}", r.body);
    assert!(
        r.detail().starts_with("Google API error: "),
        "{}",
        r.detail()
    );
    stub.mode(Mode::Normal);
    assert!(
        outbox(&app, acct.account_id, EventType::ExportCompleted)
            .await
            .len()
            == 1
    );
}

#[tokio::test]
async fn without_an_operator_client_connect_says_so() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let r = app.get("/v1/sheets/connect", &acct.api_key).await;
    assert_eq!(r.status, 400);
    assert!(r.detail().contains("client_id"));
    let r = app.call("GET", "/v1/sheets/status", None, None).await;
    assert_eq!((r.status.as_u16(), r.detail()), (401, "Not authenticated"));
}
