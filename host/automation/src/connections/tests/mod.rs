//! Saved connections through the router on either backend: the fields'
//! checks, the cap, masking and sealing, other accounts' ids; `runs.rs`:
//! `http_request` actions through a connection.

mod runs;

use serde_json::{Value, json};

use crate::workflows::tests::{app, starter};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::{TestApp, TestResponse};

pub const SECRET: &str = "sk-live-SECRET-0451";
pub const TENANT: &str = "tenant-SECRET-7788";

pub async fn put(app: &TestApp, path: &str, key: &str, body: Value) -> TestResponse {
    app.call("PUT", path, Some(key), Some(body)).await
}

pub async fn delete(app: &TestApp, path: &str, key: &str) -> TestResponse {
    app.call("DELETE", path, Some(key), None).await
}

/// A connection to `base_url` with a bearer token and a tenant header
/// whose name does not look secret; answers its body.
pub async fn connection(app: &TestApp, key: &str, base_url: &str) -> Value {
    let r = app
        .post(
            "/v1/connections",
            key,
            json!({"name": "CRM", "base_url": base_url, "auth_type": "bearer",
                "headers": {"Authorization": format!("Bearer {SECRET}"), "X-Tenant": TENANT},
                "description": "the CRM's API"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body
}

/// Every text of `table`'s rows, to look for a secret in.
pub async fn table_text(app: &TestApp, table: &str) -> String {
    let sql = format!("SELECT * FROM {table}");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(&app.state.db.pool)
        .await
        .unwrap();
    let mut out = String::new();
    for row in &rows {
        use sqlx::Row;
        for i in 0..row.len() {
            if let Ok(Some(text)) = row.try_get::<Option<String>, _>(i) {
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
    out
}

pub async fn count(app: &TestApp, table: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table}");
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in [SECRET, TENANT] {
        assert!(!text.contains(secret), "{what} holds {secret}: {text}");
    }
}

#[tokio::test]
async fn connections_are_listed_with_masked_headers_and_sealed_at_rest() {
    let app = app().await;
    let a = starter(&app).await;
    let created = connection(&app, &a.api_key, "https://api.crm.example/v1").await;
    let id = created["id"].as_i64().unwrap();
    assert_eq!(created["name"], "CRM");
    assert_eq!(created["base_url"], "https://api.crm.example/v1");
    assert_eq!(created["auth_type"], "bearer");
    assert_eq!(created["description"], "the CRM's API");
    assert_eq!(
        created["headers"],
        json!({"Authorization": "********", "X-Tenant": "********"})
    );
    let mut seen = vec![created.to_string()];

    let list = app.get("/v1/connections", &a.api_key).await;
    assert_eq!(list.status, 200);
    assert_eq!(
        (
            &list.body["count"],
            &list.body["limit"],
            &list.body["remaining"]
        ),
        (&json!(1), &json!(20), &json!(19))
    );
    assert_eq!(list.body["connections"][0], created);
    seen.push(list.body.to_string());
    let one = app.get(&format!("/v1/connections/{id}"), &a.api_key).await;
    assert_eq!(one.body, created);

    // A PUT of the body read back keeps the masked values; a new value
    // replaces, a header left out is removed.
    let r = put(
        &app,
        &format!("/v1/connections/{id}"),
        &a.api_key,
        json!({"name": "CRM v2", "headers": {"authorization": "********", "X-Region": "eu"}}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["name"], "CRM v2");
    assert_eq!(
        r.body["headers"],
        json!({"X-Region": "********", "authorization": "********"})
    );
    seen.push(r.body.to_string());
    let opened = super::service::open(&app.state, a.account_id, id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        opened.headers,
        [
            ("X-Region".to_owned(), "eu".to_owned()),
            ("authorization".to_owned(), format!("Bearer {SECRET}")),
        ]
        .into()
    );

    for text in &seen {
        assert_no_secret("a response", text);
    }
    let stored = table_text(&app, "saved_connections").await;
    assert_no_secret("saved_connections", &stored);
    assert!(stored.contains("authorization") && stored.contains("v1:"));

    let r = delete(&app, &format!("/v1/connections/{id}"), &a.api_key).await;
    assert_eq!(r.status, 204);
    let r = app.get(&format!("/v1/connections/{id}"), &a.api_key).await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (404, "Connection not found")
    );
}

#[tokio::test]
async fn the_twenty_first_connection_is_refused_and_nothing_written() {
    let app = app().await;
    let a = starter(&app).await;
    for i in 0..20 {
        let r = app
            .post(
                "/v1/connections",
                &a.api_key,
                json!({"name": format!("c{i}"), "base_url": "https://api.example.com"}),
            )
            .await;
        assert_eq!(r.status, 201, "{i}: {:?}", r.body);
        assert_eq!(r.body["auth_type"], "none");
    }
    let r = app
        .post(
            "/v1/connections",
            &a.api_key,
            json!({"name": "c20", "base_url": "https://api.example.com",
                "headers": {"X-Api-Key": SECRET}, "auth_type": "api_key"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.detail(),
        "Plan limit reached: the starter plan allows 20 saved connections"
    );
    assert_eq!(count(&app, "saved_connections").await, 20);
    assert_no_secret(
        "saved_connections",
        &table_text(&app, "saved_connections").await,
    );
    let list = app.get("/v1/connections", &a.api_key).await;
    assert_eq!(list.body["remaining"], 0);
}

#[tokio::test]
async fn bad_fields_are_refused_naming_them_and_change_nothing() {
    let app = app().await;
    let a = starter(&app).await;
    let post = |body: Value| {
        let app = &app;
        let key = a.api_key.clone();
        async move { app.post("/v1/connections", &key, body).await }
    };
    let base = |extra: Value| {
        let mut b = json!({"name": "x", "base_url": "https://api.example.com"});
        for (k, v) in extra.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };
    for (body, wanted) in [
        (
            base(json!({"auth_type": "digest"})),
            "auth_type must be one of none, bearer, basic, api_key",
        ),
        (
            base(json!({"base_url": "http://10.0.0.7/api"})),
            "base_url refused: Blocked by SSRF guard",
        ),
        (
            base(json!({"base_url": "http://192.168.1.20"})),
            "base_url refused: Blocked by SSRF guard",
        ),
        (
            base(json!({"base_url": "http://169.254.169.254/latest"})),
            "base_url refused: Blocked by SSRF guard",
        ),
        (
            base(json!({"base_url": "http://[fd00::1]/"})),
            "base_url refused: Blocked by SSRF guard",
        ),
        (
            base(json!({"base_url": "ftp://files.example.com"})),
            "base_url must be an http or https URL",
        ),
        (
            base(json!({"base_url": "https://u:p@api.example.com"})),
            "base_url must not hold credentials",
        ),
        (
            base(json!({"base_url": "not a url"})),
            "base_url is not a valid URL",
        ),
        (
            json!({"base_url": "https://api.example.com"}),
            "name is required",
        ),
        (json!({"name": "x"}), "base_url is required"),
        (base(json!({"name": " "})), "name must be 1-200 characters"),
        (
            base(json!({"auth_type": "bearer"})),
            "auth_type bearer needs an Authorization header",
        ),
        (
            base(json!({"auth_type": "basic", "headers": {"Authorization": "Bearer x"}})),
            "auth_type basic needs",
        ),
        (
            base(json!({"auth_type": "api_key"})),
            "auth_type api_key needs the key",
        ),
        (
            base(json!({"headers": {"Bad Name": "v"}})),
            "headers: \"Bad Name\" is not a valid header name",
        ),
        (
            base(json!({"headers": {"X-A": "a\r\nX-B: b"}})),
            "headers.X-A: must not contain line breaks",
        ),
        (
            base(json!({"headers": {"X-A": "1", "x-a": "2"}})),
            "is given twice",
        ),
        (
            base(json!({"headers": {"X-A": "********"}})),
            "stands for the stored value",
        ),
    ] {
        let r = post(body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {:?}", r.body);
        assert!(r.detail().contains(wanted), "{body}: {}", r.detail());
    }
    let r = post(base(json!({"headers": {"X-A": 1}}))).await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    let r = post(base(json!({"color": "red"}))).await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert_eq!(count(&app, "saved_connections").await, 0);

    // A refused PUT leaves the connection as it was.
    let c = connection(&app, &a.api_key, "https://api.example.com").await;
    let path = format!("/v1/connections/{}", c["id"]);
    for body in [
        json!({"name": "renamed", "base_url": "http://10.1.2.3"}),
        json!({"name": "renamed", "auth_type": "digest"}),
        json!({"name": "renamed", "headers": {"X-Other": "1"}}),
    ] {
        let r = put(&app, &path, &a.api_key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {:?}", r.body);
    }
    assert_eq!(app.get(&path, &a.api_key).await.body, c);
}

#[tokio::test]
async fn loopback_needs_the_unsafe_setting() {
    let strict = TestApp::with_areas(&[crate::AREA], |c| {
        c.unsafe_outbound_allow_loopback = false;
    })
    .await;
    let a = strict.account(Plan::Starter).await;
    for url in [
        "http://127.0.0.1:9/",
        "http://localhost:9/",
        "http://[::1]/",
    ] {
        let r = strict
            .post(
                "/v1/connections",
                &a.api_key,
                json!({"name": "local", "base_url": url}),
            )
            .await;
        assert_eq!(r.status, 400, "{url}: {:?}", r.body);
        assert!(
            r.detail().contains("Blocked by SSRF guard"),
            "{url}: {}",
            r.detail()
        );
    }
    // The test harness's default opens loopback for local peers.
    let app = app().await;
    let b = starter(&app).await;
    connection(&app, &b.api_key, "http://127.0.0.1:9/").await;
}

#[tokio::test]
async fn other_accounts_ids_are_not_found_and_free_is_forbidden() {
    let app = app().await;
    let a = starter(&app).await;
    let b = starter(&app).await;
    let c = connection(&app, &a.api_key, "https://api.example.com").await;
    let path = format!("/v1/connections/{}", c["id"]);
    let r = app.get(&path, &b.api_key).await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (404, "Connection not found")
    );
    let r = put(&app, &path, &b.api_key, json!({"name": "mine"})).await;
    assert_eq!(r.status, 404);
    let r = delete(&app, &path, &b.api_key).await;
    assert_eq!(r.status, 404);
    let r = app.get("/v1/connections/99999", &a.api_key).await;
    assert_eq!(r.status, 404);
    // Nor can a workflow of b name it.
    let r = app
        .post(
            "/v1/workflows",
            &b.api_key,
            json!({"name": "w", "trigger_type": "manual", "actions": [
                {"type": "http_request", "config": {"connection_id": c["id"], "url": "/x"}}]}),
        )
        .await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (404, "Connection not found")
    );
    assert_eq!(app.get(&path, &a.api_key).await.body, c);

    let free = app.account(Plan::Free).await;
    let r = app.get("/v1/connections", &free.api_key).await;
    assert_eq!(r.status, 403);
    let r = app
        .post(
            "/v1/connections",
            &free.api_key,
            json!({"name": "x", "base_url": "https://api.example.com"}),
        )
        .await;
    assert_eq!(r.status, 403);
}
