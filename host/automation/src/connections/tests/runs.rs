//! `http_request` actions through a saved connection: the merge, the
//! secrets kept out of records, the SSRF guard on the merged URL, and
//! workflows outliving their connection.

use axum::response::Redirect;
use serde_json::{Value, json};

use super::*;
use crate::workflows::tests::{Receiver, create, manual, run_now};

/// `http://127.0.0.1:port` of a receiver (its URL ends in `/hook`).
fn origin(rx: &Receiver) -> String {
    rx.url.trim_end_matches("/hook").to_owned()
}

fn request(connection: &Value, config: Value) -> Value {
    let mut config = config;
    config["connection_id"] = connection["id"].clone();
    json!([{"type": "http_request", "config": config}])
}

async fn workflow(app: &TestApp, key: &str, actions: Value) -> (i64, String) {
    let w = create(app, key, manual("through a connection", actions)).await;
    (w["id"].as_i64().unwrap(), w.to_string())
}

#[tokio::test]
async fn a_run_sends_the_connections_headers_and_no_record_keeps_them() {
    let app = app().await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({"ok": true, "items": ["a.com"]})).await;
    let c = connection(&app, &a.api_key, &origin(&rx)).await;
    let (id, created) = workflow(
        &app,
        &a.api_key,
        request(
            &c,
            json!({"method": "POST", "url": "/hook", "headers": {"X-Trace": "visible"},
                "body": {"n": 1}, "capture_field": "items"}),
        ),
    )
    .await;
    let run = run_now(&app, &a.api_key, id).await;
    assert_eq!(run["status"], "success", "{run}");

    // The receiver got the merged request.
    let seen = rx.headers.lock().unwrap()[0].clone();
    assert_eq!(seen["authorization"], format!("Bearer {SECRET}").as_str());
    assert_eq!(seen["x-tenant"], TENANT);
    assert_eq!(seen["x-trace"], "visible");
    assert_eq!(rx.got.lock().unwrap()[0], json!({"n": 1}));

    // The record names the connection and redacts every header it gave,
    // whatever its name.
    let first = &run["actions_executed"][0];
    assert_eq!(first["result"]["url"], rx.url);
    assert_eq!(first["result"]["connection_id"], c["id"]);
    assert_eq!(
        first["result"]["headers"],
        json!({"Authorization": "[redacted]", "X-Tenant": "[redacted]", "X-Trace": "visible"})
    );
    assert_eq!(first["captured"], json!(["a.com"]));

    let runs = app
        .get(&format!("/v1/workflows/{id}/runs"), &a.api_key)
        .await;
    let stream = app
        .get(
            &format!("/v1/workflows/{id}/runs/{}/stream", run["id"]),
            &a.api_key,
        )
        .await;
    let listed = app.get("/v1/connections", &a.api_key).await;
    for (what, text) in [
        ("the connection", c.to_string()),
        ("the workflow", created),
        ("the run", run.to_string()),
        ("the run list", runs.body.to_string()),
        ("the stream", stream.body.to_string()),
        ("the connection list", listed.body.to_string()),
    ] {
        assert_no_secret(what, &text);
    }
    for table in [
        "saved_connections",
        "workflows",
        "workflow_runs",
        "workflow_run_events",
        "workflow_versions",
    ] {
        assert_no_secret(table, &table_text(&app, table).await);
    }
}

#[tokio::test]
async fn the_guard_checks_the_merged_url_when_the_run_sends_it() {
    let app = app().await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({})).await;
    let c = connection(&app, &a.api_key, &origin(&rx)).await;
    let (id, _) = workflow(&app, &a.api_key, request(&c, json!({"url": "/hook"}))).await;

    // Saved while the operator allowed that network, say, and refused at
    // use now: the merged URL goes through the guard like any other.
    sqlx::query("UPDATE saved_connections SET base_url = $1 WHERE id = $2")
        .bind("http://10.20.30.40:8080/api")
        .bind(c["id"].as_i64().unwrap())
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    let run = run_now(&app, &a.api_key, id).await;
    assert_eq!(run["status"], "error", "{run}");
    assert_eq!(run["actions_executed"][0]["error"], "Blocked by SSRF guard");
    assert_eq!(
        run["actions_executed"][0]["attempts"], 1,
        "a refusal is not retried"
    );
    assert_eq!(rx.hits(), 0);

    // An absolute URL elsewhere would carry the connection's headers
    // there: refused before any call.
    let (id, _) = workflow(
        &app,
        &a.api_key,
        request(&c, json!({"url": "http://10.20.30.40/steal"})),
    )
    .await;
    let run = run_now(&app, &a.api_key, id).await;
    let error = run["actions_executed"][0]["error"].as_str().unwrap();
    assert!(error.contains("is outside connection"), "{error}");

    // So is a redirect to another origin.
    let other = Receiver::start(json!({})).await;
    let target = other.url.clone();
    let app_router = axum::Router::new().fallback(move || {
        let target = target.clone();
        async move { Redirect::temporary(&target) }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let redirector = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app_router).await });
    let c2 = connection(&app, &a.api_key, &redirector).await;
    let (id, _) = workflow(&app, &a.api_key, request(&c2, json!({"url": "/go"}))).await;
    let run = run_now(&app, &a.api_key, id).await;
    let error = run["actions_executed"][0]["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!("Redirect to {} refused", origin(&other))),
        "{error}"
    );
    assert_eq!(other.hits(), 0);
}

#[tokio::test]
async fn deleting_a_connection_leaves_inline_urls_running() {
    let app = app().await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({})).await;
    let c = connection(&app, &a.api_key, &origin(&rx)).await;
    let (inline, _) = workflow(&app, &a.api_key, request(&c, json!({"url": rx.url}))).await;
    let (relative, _) = workflow(&app, &a.api_key, request(&c, json!({"url": "hook"}))).await;
    let run = run_now(&app, &a.api_key, relative).await;
    assert_eq!(run["status"], "success", "{run}");
    assert_eq!(rx.hits(), 1);

    let r = delete(&app, &format!("/v1/connections/{}", c["id"]), &a.api_key).await;
    assert_eq!(r.status, 204);

    let run = run_now(&app, &a.api_key, inline).await;
    assert_eq!(run["status"], "success", "{run}");
    assert_eq!(rx.hits(), 2);
    let seen = rx.headers.lock().unwrap()[1].clone();
    assert!(seen.get("authorization").is_none() && seen.get("x-tenant").is_none());
    let result = &run["actions_executed"][0]["result"];
    assert_eq!(result["connection_missing"], true, "{run}");

    let run = run_now(&app, &a.api_key, relative).await;
    assert_eq!(run["status"], "error", "{run}");
    assert_eq!(
        run["actions_executed"][0]["error"],
        format!(
            "Connection {} no longer exists, and the action has no absolute url of its own",
            c["id"]
        )
    );
    assert_eq!(rx.hits(), 2);
}
