//! The engine and run records: http_request, retries on the injected
//! clock, failure modes, branching, templating, memory, checkpoints and
//! the stream.

use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::workflows::runs;

pub(super) async fn webhook_workflow(app: &TestApp, key: &str, actions: Value) -> (i64, String) {
    let w = create(
        app,
        key,
        json!({"name": "hook", "trigger_type": "webhook", "actions": actions}),
    )
    .await;
    (
        w["id"].as_i64().unwrap(),
        w["webhook_token"].as_str().unwrap().to_owned(),
    )
}

/// Calls the incoming webhook and drains the queue; answers the run.
pub(super) async fn call_in(app: &TestApp, key: &str, id: i64, token: &str, body: Value) -> Value {
    let r = app
        .call(
            "POST",
            &format!("/v1/workflows/incoming/{token}"),
            None,
            Some(body),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["status"], "accepted");
    let run_id = r.body["run_id"].as_i64().unwrap();
    runs::drain(&app.state).await.unwrap();
    run(app, key, id, run_id).await
}

#[tokio::test]
async fn http_request_captures_iterates_and_redacts_secrets() {
    let app = app().await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({"data": {"items": ["x.com", {"domain": "y.com", "k": 1}, 7]}}))
        .await;
    let actions = json!([
        {"type": "http_request", "config": {"method": "POST", "url": rx.url,
            "headers": {"Authorization": "Bearer s3cret", "X-Trace": "t-{{trigger.trace}}"},
            "body": {"domains": "{{domains}}", "note": "{{trigger.trace}}"},
            "capture_field": "data.items", "iterate_into_domains": true}},
        {"type": "dedup_by_field", "config": {"field": "domain"}},
    ]);
    let (id, token) = webhook_workflow(&app, &a.api_key, actions).await;
    let run = call_in(
        &app,
        &a.api_key,
        id,
        &token,
        json!({"domains": ["A.com", "https://www.b.com/x"], "trace": "7"}),
    )
    .await;
    assert_eq!(run["status"], "success", "{run}");
    assert_eq!(run["trigger_event"], "webhook");
    assert_eq!(run["domain_count"], 2);
    let sent = rx.got.lock().unwrap()[0].clone();
    assert_eq!(sent, json!({"domains": ["a.com", "b.com"], "note": "7"}));
    let first = &run["actions_executed"][0];
    assert_eq!(first["status"], "success");
    assert_eq!(first["input_count"], 2);
    assert_eq!(first["output_count"], 2);
    assert_eq!(first["result"]["headers"]["Authorization"], "[redacted]");
    assert_eq!(first["result"]["headers"]["X-Trace"], "t-7");
    assert!(!run.to_string().contains("s3cret"));
    assert_eq!(
        first["captured"],
        json!(["x.com", {"domain": "y.com", "k": 1}, 7])
    );
    assert_eq!(run["actions_executed"][1]["type"], "dedup_by_field");
    assert_eq!(run["actions_executed"][1]["output_count"], 2);
    let list = app
        .get(&format!("/v1/workflows/{id}/runs"), &a.api_key)
        .await;
    assert_eq!(list.body["runs"][0]["id"], run["id"]);
    assert_eq!(list.body["total"], 1);
    let w = app.get(&format!("/v1/workflows/{id}"), &a.api_key).await;
    assert_eq!(w.body["run_count"], 1);
}

#[tokio::test]
async fn retries_wait_on_the_clock_with_doubling_backoff() {
    let app = app().await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({"ok": true})).await;
    rx.answer_with(&[500, 503, 200]);
    let actions = json!([{"type": "http_request", "config": {"method": "GET", "url": rx.url},
        "retry": {"attempts": 2, "backoff_seconds": 2}}]);
    let w = create(&app, &a.api_key, manual("retry", actions)).await;
    let id = w["id"].as_i64().unwrap();
    let first = run_now(&app, &a.api_key, id).await;
    assert_eq!(first["status"], "running", "waiting out its retry: {first}");
    assert_eq!(rx.hits(), 1);
    app.clock.advance(Duration::from_millis(1_999));
    runs::drain(&app.state).await.unwrap();
    assert_eq!(rx.hits(), 1, "the first wait is backoff_seconds");
    app.clock.advance(Duration::from_millis(1));
    runs::drain(&app.state).await.unwrap();
    assert_eq!(rx.hits(), 2);
    app.clock.advance(Duration::from_millis(3_999));
    runs::drain(&app.state).await.unwrap();
    assert_eq!(rx.hits(), 2, "the second wait doubles");
    app.clock.advance(Duration::from_millis(1));
    runs::drain(&app.state).await.unwrap();
    assert_eq!(rx.hits(), 3);
    let done = run(&app, &a.api_key, id, first["id"].as_i64().unwrap()).await;
    assert_eq!(done["status"], "success", "{done}");
    assert_eq!(done["actions_executed"][0]["attempts"], 3);
}

#[tokio::test]
async fn failures_stop_the_run_or_make_it_partial_and_retry_failed_reruns_once() {
    let app = app().await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({})).await;
    rx.answer_with(&[500]);
    let store =
        json!({"type": "cross_run_memory", "config": {"op": "store", "key": "k", "value": 1}});
    let failing = json!({"type": "http_request", "config": {"method": "GET", "url": rx.url}});
    let mut tolerant = failing.clone();
    tolerant["continue_on_error"] = json!(true);
    let w = create(
        &app,
        &a.api_key,
        manual("partial", json!([tolerant, store])),
    )
    .await;
    let r = run_now(&app, &a.api_key, w["id"].as_i64().unwrap()).await;
    assert_eq!(r["status"], "partial", "{r}");
    assert_eq!(r["actions_executed"][0]["status"], "error");
    assert!(
        r["actions_executed"][0]["error"]
            .as_str()
            .unwrap()
            .contains("500")
    );
    assert_eq!(r["actions_executed"][1]["status"], "success");

    let mut body = manual("error", json!([failing, store]));
    body["retry_failed"] = json!(true);
    let w = create(&app, &a.api_key, body).await;
    let id = w["id"].as_i64().unwrap();
    let r = run_now(&app, &a.api_key, id).await;
    assert_eq!(r["status"], "error", "{r}");
    assert_eq!(
        r["actions_executed"].as_array().unwrap().len(),
        1,
        "stopped at the failure"
    );
    assert!(r["error"].as_str().unwrap().contains("http_request"));
    let list = app
        .get(&format!("/v1/workflows/{id}/runs"), &a.api_key)
        .await;
    let runs = list.body["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "one rerun, not a loop: {runs:?}");
    assert_eq!(runs[0]["rerun_of"], r["id"]);
    assert_eq!(runs[0]["status"], "error");
}

#[tokio::test]
async fn the_ssrf_guard_refuses_private_targets_without_retrying() {
    let app = app().await;
    let a = starter(&app).await;
    for url in [
        "http://10.0.0.1/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://192.168.1.1/",
        "http://[fd00::1]/",
    ] {
        let actions = json!([{"type": "http_request", "config": {"method": "GET", "url": url},
            "retry": {"attempts": 3, "backoff_seconds": 1}}]);
        let w = create(&app, &a.api_key, manual("ssrf", actions)).await;
        let r = run_now(&app, &a.api_key, w["id"].as_i64().unwrap()).await;
        assert_eq!(r["status"], "error", "{url}: {r}");
        assert_eq!(
            r["actions_executed"][0]["error"], "Blocked by SSRF guard",
            "{url}"
        );
        assert_eq!(r["actions_executed"][0]["attempts"], 1);
    }
}

#[tokio::test]
async fn branches_parallel_merge_memory_and_sub_workflows_shape_the_working_set() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let rx = Receiver::start(json!({})).await;
    let store = |key: &str| json!({"type": "cross_run_memory", "config": {"op": "store", "key": key, "value": "{{domains}}"}});
    let only = |domains: Value| {
        json!({"name": "part", "trigger_type": "manual", "actions": [store("seen")],
            "conditions": [{"field": "domain", "op": "in", "value": domains}]})
    };
    let x = create(&app, &a.api_key, only(json!(["a.com", "b.com"]))).await["id"]
        .as_i64()
        .unwrap();
    let y = create(&app, &a.api_key, only(json!(["b.com", "c.com"]))).await["id"]
        .as_i64()
        .unwrap();
    let later = create(&app, &a.api_key, manual("later", json!([store("later")]))).await["id"]
        .as_i64()
        .unwrap();
    let actions = json!([
        {"type": "conditional_branch", "config": {"branches": [
            {"when": {"field": "industry", "op": "equals", "value": "retail"}, "then": [store("retail")]}
        ]}},
        {"type": "parallel_split", "config": {"branches": [
            [{"type": "sub_workflow", "config": {"workflow_id": x}}],
            [{"type": "sub_workflow", "config": {"workflow_id": y}}]
        ]}},
        {"type": "merge_branches", "config": {"strategy": "intersection"}},
        {"type": "http_request", "config": {"method": "POST", "url": rx.url,
            "body": {"retail": "{{ai_memory_recall:retail}}", "now": "{{domains}}"}}},
        {"type": "schedule_workflow", "config": {"workflow_id": later, "delay_seconds": 60}},
    ]);
    let (id, token) = webhook_workflow(&app, &a.api_key, actions).await;
    let r = call_in(
        &app,
        &a.api_key,
        id,
        &token,
        json!({"domains": ["a.com", {"domain": "b.com", "industry": "Retail"}, "c.com"]}),
    )
    .await;
    assert_eq!(r["status"], "success", "{r}");
    let steps = r["actions_executed"].as_array().unwrap();
    assert_eq!(steps[0]["result"]["branches"][0]["matched"], 1);
    assert_eq!(steps[0]["output_count"], 3, "unmatched items pass on");
    assert_eq!(steps[1]["result"]["branches"], json!([2, 2]));
    assert_eq!(steps[1]["output_count"], 3, "the union until merged");
    assert_eq!(steps[2]["output_count"], 1);
    assert_eq!(
        rx.got.lock().unwrap()[0],
        json!({"retail": ["b.com"], "now": ["b.com"]})
    );
    let scheduled = steps[4]["result"]["run_id"].as_i64().unwrap();
    assert_eq!(
        run(&app, &a.api_key, later, scheduled).await["status"],
        "queued"
    );
    app.clock.advance(Duration::from_secs(60));
    runs::drain(&app.state).await.unwrap();
    let done = run(&app, &a.api_key, later, scheduled).await;
    assert_eq!(done["status"], "success");
    assert_eq!(done["domain_count"], 1);
    assert_eq!(done["trigger_event"], "schedule_workflow");
}

#[tokio::test]
async fn runs_cut_to_max_domains_and_conditions_read_pool_fields() {
    let app = app().await;
    let a = starter(&app).await;
    pool(
        &app,
        &[
            json!({"domain": "acme.io", "industry": "Software", "registrant_country": "DE"}),
            json!({"domain": "shop.fr", "industry": "Retail"}),
        ],
    )
    .await;
    let store = json!({"type": "cross_run_memory", "config": {"op": "store", "key": "k", "value": "{{domains}}"}});
    let body = json!({"name": "soft", "trigger_type": "webhook", "actions": [store],
        "conditions": [{"field": "industry", "op": "equals", "value": "software"}],
        "execution_limits": {"max_domains_per_run": 2}});
    let w = create(&app, &a.api_key, body).await;
    let (id, token) = (
        w["id"].as_i64().unwrap(),
        w["webhook_token"].as_str().unwrap().to_owned(),
    );
    let r = call_in(
        &app,
        &a.api_key,
        id,
        &token,
        json!({"domains": ["acme.io", "shop.fr"]}),
    )
    .await;
    assert_eq!(r["domain_count"], 1, "{r}");
    let mut put = json!({"conditions": []});
    put["execution_limits"] = json!({"max_domains_per_run": 1});
    app.call(
        "PUT",
        &format!("/v1/workflows/{id}"),
        Some(&a.api_key),
        Some(put),
    )
    .await;
    let r = call_in(
        &app,
        &a.api_key,
        id,
        &token,
        json!({"domains": ["acme.io", "shop.fr", "x.org"]}),
    )
    .await;
    assert_eq!(r["domain_count"], 1);
    assert_eq!(r["domains_truncated_from"], 3);
}

#[tokio::test]
async fn a_run_resumes_at_the_action_in_flight_when_its_lease_runs_out() {
    let app = app().await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({})).await;
    let call = json!({"type": "http_request", "config": {"method": "POST", "url": rx.url, "body": {"n": "x"}}});
    let w = create(
        &app,
        &a.api_key,
        manual("resume", json!([call, call, call])),
    )
    .await;
    let id = w["id"].as_i64().unwrap();
    let r = app
        .post(
            &format!("/v1/workflows/{id}/execute"),
            &a.api_key,
            json!({}),
        )
        .await;
    let run_id = r.body["run_id"].as_i64().unwrap();
    // A server took the run, finished action 0, checkpointed and died in
    // action 1: its row says running, leased, next = 1.
    let checkpoint = json!({"input": null, "seeded": true, "next": 1,
        "working": {"items": [], "previous_result": null}});
    let record = json!([{"index": 0, "type": "http_request", "status": "success", "input_count": 0,
        "output_count": 0, "result": {}, "attempts": 1, "started_at": "2026-11-21T12:00:00Z",
        "finished_at": "2026-11-21T12:00:00Z", "duration_ms": 1}]);
    let now = app.state.clock.now_ms();
    sqlx::query(
        "UPDATE workflow_runs SET status = 'running', lease_owner = 'dead', lease_until = $1, \
         started_at = $2, checkpoint = $3, actions_executed = $4 WHERE id = $5",
    )
    .bind(now + runs::LEASE_MS)
    .bind(now)
    .bind(checkpoint.to_string())
    .bind(record.to_string())
    .bind(run_id)
    .execute(&app.state.db.pool)
    .await
    .unwrap();
    let other = app.another_server().await;
    runs::drain(&other.state).await.unwrap();
    assert_eq!(rx.hits(), 0, "leased to the dead server");
    app.clock
        .advance(Duration::from_millis(runs::LEASE_MS as u64 + 1));
    runs::drain(&other.state).await.unwrap();
    assert_eq!(rx.hits(), 2, "actions 1 and 2, not 0 again");
    let done = run(&app, &a.api_key, id, run_id).await;
    assert_eq!(done["status"], "success");
    assert_eq!(done["actions_executed"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn the_stream_replays_a_finished_run_and_resumes_after_last_event_id() {
    let app = app().await;
    let a = starter(&app).await;
    let store = |k: &str| json!({"type": "cross_run_memory", "config": {"op": "store", "key": k, "value": 1}});
    let w = create(
        &app,
        &a.api_key,
        manual("s", json!([store("a"), store("b")])),
    )
    .await;
    let id = w["id"].as_i64().unwrap();
    let r = run_now(&app, &a.api_key, id).await;
    let path = format!("/v1/workflows/{id}/runs/{}/stream", r["id"]);
    let all = app.get(&path, &a.api_key).await;
    assert_eq!(all.status, 200);
    let text = all.body.as_str().unwrap().to_owned();
    let events: Vec<&str> = text
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .collect();
    assert_eq!(events.len(), 3, "{text}");
    assert!(
        events[0].contains("event: action") && events[0].contains("id: 1"),
        "{}",
        events[0]
    );
    assert!(events[0].contains("\"index\":0") && events[0].contains("cross_run_memory"));
    assert!(
        events[2].contains("event: run.finished") && events[2].contains("\"status\":\"success\"")
    );
    let req = axum::http::Request::builder()
        .uri(&path)
        .header("authorization", format!("Bearer {}", a.api_key))
        .header("last-event-id", "2")
        .body(axum::body::Body::empty())
        .unwrap();
    let mut req = req;
    req.extensions_mut().insert(axum::extract::ConnectInfo(
        "127.0.0.1:40000".parse::<std::net::SocketAddr>().unwrap(),
    ));
    let rest = app.send(req).await;
    let text = rest.body.as_str().unwrap().to_owned();
    assert!(!text.contains("event: action"), "{text}");
    assert!(text.contains("event: run.finished"));
}
