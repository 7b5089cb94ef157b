//! `GET /v1/workflows/analytics` against hand-counted runs, and the
//! hourly retention of run records, on the injected clock.

use serde_json::{Value, json};

use super::*;
use crate::workflows::retention;
use outreach_core::platform::clock::Clock;

const DAY: i64 = 86_400_000;

/// A finished (or not) run written as the run writer would leave it.
#[allow(clippy::too_many_arguments)]
async fn insert_run(
    app: &TestApp,
    account_id: i64,
    workflow_id: i64,
    status: &str,
    created_at: i64,
    duration_ms: Option<i64>,
    actions: Value,
) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO workflow_runs (workflow_id, account_id, status, trigger_event, \
         trigger_data, checkpoint, actions_executed, due_at, started_at, finished_at, \
         created_at) VALUES ($1, $2, $3, 'manual', '{}', '{}', $4, $5, $6, $7, $5) RETURNING id",
    )
    .bind(workflow_id)
    .bind(account_id)
    .bind(status)
    .bind(actions.to_string())
    .bind(created_at)
    .bind(duration_ms.map(|_| created_at))
    .bind(duration_ms.map(|d| created_at + d))
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap()
}

fn records(entries: &[(&str, &str)]) -> Value {
    Value::Array(
        entries
            .iter()
            .enumerate()
            .map(|(i, (t, s))| json!({"index": i, "type": t, "status": s, "result": {"big": "x"}}))
            .collect(),
    )
}

async fn workflow(app: &TestApp, key: &str, name: &str) -> i64 {
    let actions = json!([{"type": "http_request", "config": {"url": "https://example.com"}}]);
    create(app, key, manual(name, actions)).await["id"]
        .as_i64()
        .unwrap()
}

async fn analytics(app: &TestApp, key: &str, query: &str) -> Value {
    let r = app
        .get(&format!("/v1/workflows/analytics{query}"), key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body
}

#[tokio::test]
async fn analytics_answers_hand_counted_runs() {
    let app = app().await;
    let a = starter(&app).await;
    let b = starter(&app).await;
    // The test clock stands at 2026-11-21 12:00 UTC.
    let now = app.clock.now_ms();
    let w1 = workflow(&app, &a.api_key, "Busy").await;
    let w2 = workflow(&app, &a.api_key, "Quiet").await;
    // A workflow without runs counts among the workflows, not the leaders.
    workflow(&app, &a.api_key, "Idle").await;
    let r = app
        .call(
            "PUT",
            &format!("/v1/workflows/{w2}"),
            Some(&a.api_key),
            Some(json!({"is_active": false})),
        )
        .await;
    assert_eq!(r.status, 200);
    let other = workflow(&app, &b.api_key, "Someone else's").await;

    let http_ok = records(&[("http_request", "success"), ("add_to_list", "success")]);
    let http_err = records(&[("http_request", "error")]);
    let mixed = records(&[("http_request", "success"), ("add_to_list", "error")]);
    // Today (2026-11-21): three of w1, one of w2.
    insert_run(
        &app,
        a.account_id,
        w1,
        "success",
        now - 1_000,
        Some(2_000),
        http_ok.clone(),
    )
    .await;
    insert_run(
        &app,
        a.account_id,
        w1,
        "error",
        now - 2_000,
        Some(1_000),
        http_err.clone(),
    )
    .await;
    insert_run(
        &app,
        a.account_id,
        w1,
        "partial",
        now - 3_000,
        Some(4_500),
        mixed.clone(),
    )
    .await;
    insert_run(
        &app,
        a.account_id,
        w2,
        "success",
        now - 4_000,
        None,
        http_ok.clone(),
    )
    .await;
    // Yesterday: one of w2; 29 days back (the window's first day): one of w1.
    insert_run(
        &app,
        a.account_id,
        w2,
        "success",
        now - DAY,
        Some(500),
        http_ok.clone(),
    )
    .await;
    insert_run(
        &app,
        a.account_id,
        w1,
        "success",
        now - 29 * DAY,
        Some(0),
        records(&[]),
    )
    .await;
    // Not counted: before the window, still in progress, another account's.
    insert_run(
        &app,
        a.account_id,
        w1,
        "success",
        now - 31 * DAY,
        Some(9_000),
        http_ok.clone(),
    )
    .await;
    insert_run(&app, a.account_id, w1, "queued", now - 10, None, json!([])).await;
    insert_run(
        &app,
        a.account_id,
        w1,
        "running",
        now - 10,
        None,
        http_ok.clone(),
    )
    .await;
    insert_run(
        &app,
        b.account_id,
        other,
        "error",
        now - 10,
        Some(1),
        http_err.clone(),
    )
    .await;

    let body = analytics(&app, &a.api_key, "").await;
    assert_eq!(body["days"], 30);
    assert_eq!(body["since"], "2026-10-23T00:00:00Z");
    assert_eq!(body["total_workflows"], 3);
    assert_eq!(body["active_workflows"], 2);
    assert_eq!(body["total_runs"], 6);
    assert_eq!(
        body["runs_by_status"],
        json!({"success": 4, "error": 1, "partial": 1})
    );
    let days = body["runs_by_day"].as_array().unwrap();
    assert_eq!(days.len(), 30);
    assert_eq!(days[0], json!({"date": "2026-10-23", "count": 1}));
    assert_eq!(days[28], json!({"date": "2026-11-20", "count": 1}));
    assert_eq!(days[29], json!({"date": "2026-11-21", "count": 4}));
    let counted: i64 = days.iter().map(|d| d["count"].as_i64().unwrap()).sum();
    assert_eq!(counted, 6);
    assert_eq!(
        body["top_workflows"],
        json!([
            {"id": w1, "name": "Busy", "runs": 4, "is_active": true},
            {"id": w2, "name": "Quiet", "runs": 2, "is_active": false},
        ])
    );
    // http_request: success in 4 runs (w1 success, w1 partial, w2 twice),
    // error in 1; add_to_list: success 3, error 1.
    assert_eq!(
        body["action_success_rates"],
        json!({
            "add_to_list": {"total": 4, "success": 3, "error": 1, "success_rate": 75.0},
            "http_request": {"total": 5, "success": 4, "error": 1, "success_rate": 80.0},
        })
    );
    // (2000 + 1000 + 4500 + 500 + 0) / 5 timed runs = 1.6 s.
    assert_eq!(body["avg_duration_seconds"], 1.6);

    // One day: today's four runs only.
    let body = analytics(&app, &a.api_key, "?days=1").await;
    assert_eq!(body["total_runs"], 4);
    assert_eq!(
        body["runs_by_day"],
        json!([{"date": "2026-11-21", "count": 4}])
    );
    assert_eq!(body["top_workflows"][0]["runs"], 3);
    // 90 days reaches the older run.
    let body = analytics(&app, &a.api_key, "?days=90").await;
    assert_eq!(body["total_runs"], 7);
    assert_eq!(body["runs_by_day"].as_array().unwrap().len(), 90);

    // An account without runs.
    let c = starter(&app).await;
    let body = analytics(&app, &c.api_key, "?days=7").await;
    assert_eq!(body["total_runs"], 0);
    assert_eq!(body["avg_duration_seconds"], 0.0);
    assert_eq!(body["top_workflows"], json!([]));
    assert_eq!(body["action_success_rates"], json!({}));
}

#[tokio::test]
async fn analytics_counts_a_run_the_engine_made() {
    let app = app().await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({})).await;
    let actions = json!([{"type": "http_request", "config": {"url": rx.url}}]);
    let id = create(&app, &a.api_key, manual("real", actions)).await["id"]
        .as_i64()
        .unwrap();
    let run = run_now(&app, &a.api_key, id).await;
    assert_eq!(run["status"], "success");
    let body = analytics(&app, &a.api_key, "?days=1").await;
    assert_eq!(body["runs_by_status"]["success"], 1);
    assert_eq!(
        body["action_success_rates"]["http_request"],
        json!({"total": 1, "success": 1, "error": 0, "success_rate": 100.0})
    );
    assert_eq!(body["top_workflows"][0]["id"], id);
}

#[tokio::test]
async fn analytics_days_outside_1_to_90_are_refused() {
    let app = app().await;
    let a = starter(&app).await;
    for q in ["?days=0", "?days=91", "?days=-3"] {
        let r = app
            .get(&format!("/v1/workflows/analytics{q}"), &a.api_key)
            .await;
        assert_eq!(r.status, 400, "{q}: {:?}", r.body);
        assert_eq!(r.detail(), "days must be between 1 and 90", "{q}");
    }
    let r = app
        .get("/v1/workflows/analytics?days=ten", &a.api_key)
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(r.body["detail"].is_string());
    let free = app.account(Plan::Free).await;
    let r = app.get("/v1/workflows/analytics", &free.api_key).await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn old_finished_runs_are_pruned_hourly_by_one_server() {
    let app = TestApp::with_areas(
        &[outreach_leads::AREA, outreach_outbound::AREA, crate::AREA],
        |c| c.workflow_run_retention_days = 7,
    )
    .await;
    let a = starter(&app).await;
    let w = workflow(&app, &a.api_key, "Old and new").await;
    let now = app.clock.now_ms();
    let mut old = Vec::new();
    for status in ["success", "error", "partial"] {
        old.push(
            insert_run(
                &app,
                a.account_id,
                w,
                status,
                now - 8 * DAY,
                Some(1),
                json!([]),
            )
            .await,
        );
    }
    let waiting = insert_run(
        &app,
        a.account_id,
        w,
        "waiting",
        now - 8 * DAY,
        None,
        json!([]),
    )
    .await;
    let recent = insert_run(
        &app,
        a.account_id,
        w,
        "success",
        now - 6 * DAY,
        Some(1),
        json!([]),
    )
    .await;
    for run in old.iter().chain([&recent]) {
        sqlx::query(
            "INSERT INTO workflow_run_events (run_id, seq, name, data) VALUES ($1, 1, 'action', '{}')",
        )
        .bind(run)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    }

    // Two servers at the same hour: one prunes, the other leaves it.
    let second = app.another_server().await;
    assert_eq!(retention::prune_if_due(&app.state).await.unwrap(), Some(3));
    assert_eq!(retention::prune_if_due(&second.state).await.unwrap(), None);

    let left: Vec<i64> = sqlx::query_scalar("SELECT id FROM workflow_runs ORDER BY id")
        .fetch_all(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(left, vec![waiting, recent]);
    let events: Vec<i64> = sqlx::query_scalar("SELECT run_id FROM workflow_run_events")
        .fetch_all(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(events, vec![recent], "events go with their runs");

    // A day and an hour on, the next turn prunes what aged out meanwhile.
    app.clock.advance(std::time::Duration::from_secs(25 * 3600));
    assert_eq!(
        retention::prune_if_due(&second.state).await.unwrap(),
        Some(1)
    );
    assert_eq!(retention::prune_if_due(&app.state).await.unwrap(), None);

    // Batches: more runs than one statement deletes.
    let now = app.clock.now_ms();
    for _ in 0..(retention::BATCH + 20) {
        insert_run(
            &app,
            a.account_id,
            w,
            "success",
            now - 30 * DAY,
            None,
            json!([]),
        )
        .await;
    }
    let deleted = retention::prune_before(&app.state, now - 7 * DAY)
        .await
        .unwrap();
    assert_eq!(deleted, retention::BATCH as u64 + 20);
}
