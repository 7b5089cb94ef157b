//! Triggers: the incoming webhook and its token, outbox events, the
//! schedule across servers, and the dry run.

use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::webhooks::dispatch::dispatch_once;
use crate::workflows::{runs, triggers};
use outreach_core::events::{self, EventType};

fn store_action() -> Value {
    json!({"type": "cross_run_memory", "config": {"op": "store", "key": "k", "value": "{{domains}}"}})
}

#[tokio::test]
async fn the_incoming_webhook_counts_calls_limits_them_and_dies_with_its_token() {
    let app = app().await;
    let a = starter(&app).await;
    let w = create(
        &app,
        &a.api_key,
        json!({"name": "hook", "trigger_type": "webhook", "actions": [store_action()]}),
    )
    .await;
    let id = w["id"].as_i64().unwrap();
    let token = w["webhook_token"].as_str().unwrap().to_owned();
    assert!(
        w["webhook_url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v1/workflows/incoming/{token}"))
    );
    let incoming = |t: &str| format!("/v1/workflows/incoming/{t}");
    let r = app
        .call("POST", &incoming(&token), None, Some(json!({"x": 1})))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["workflow_id"], id);
    assert_eq!(r.body["run_status"], "queued");
    let t = app
        .get(&format!("/v1/workflows/{id}/webhook-token"), &a.api_key)
        .await;
    assert_eq!(t.body["trigger_count"], 1);
    assert_eq!(t.body["webhook_token"], token);
    for _ in 1..30 {
        let r = app
            .call("POST", &incoming(&token), None, Some(json!({})))
            .await;
        assert_eq!(r.status, 200);
    }
    let r = app
        .call("POST", &incoming(&token), None, Some(json!({})))
        .await;
    assert_eq!(r.status, 429, "the 31st call in a minute");
    app.clock.advance(Duration::from_secs(60));
    let r = app
        .post(
            &format!("/v1/workflows/{id}/webhook-token/regenerate"),
            &a.api_key,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200);
    let fresh = r.body["webhook_token"].as_str().unwrap().to_owned();
    assert_ne!(fresh, token);
    assert_eq!(
        app.call("POST", &incoming(&token), None, Some(json!({})))
            .await
            .status,
        404
    );
    assert_eq!(
        app.call("POST", &incoming(&fresh), None, Some(json!({})))
            .await
            .status,
        200
    );
    app.call(
        "PUT",
        &format!("/v1/workflows/{id}"),
        Some(&a.api_key),
        Some(json!({"is_active": false})),
    )
    .await;
    let before = app
        .get(&format!("/v1/workflows/{id}/runs"), &a.api_key)
        .await
        .body["total"]
        .clone();
    let r = app
        .call("POST", &incoming(&fresh), None, Some(json!({})))
        .await;
    assert_eq!(r.status, 409, "{:?}", r.body);
    let after = app
        .get(&format!("/v1/workflows/{id}/runs"), &a.api_key)
        .await
        .body["total"]
        .clone();
    assert_eq!(before, after, "a paused workflow makes no run");
    let r = app
        .call(
            "POST",
            &incoming(&fresh),
            None,
            Some(json!({"domains": "a.com"})),
        )
        .await;
    assert!(r.status == 400 || r.status == 409);
}

async fn record(app: &TestApp, account_id: i64, event: EventType, data: Value) {
    let mut conn = app.state.db.pool.acquire().await.unwrap();
    events::record(
        &mut conn,
        account_id,
        event,
        &data,
        app.state.clock.now_ms(),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn outbox_events_start_the_workflows_they_name() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    let audience = app
        .post(
            "/v1/audiences",
            &a.api_key,
            json!({"name": "aud", "filters": {}}),
        )
        .await;
    let audience_id = audience.body["id"].as_i64().unwrap();
    let on_audience = create(
        &app,
        &a.api_key,
        json!({"name": "aud", "trigger_type": "audience_match",
        "trigger_config": {"audience_id": audience_id}, "actions": [store_action()]}),
    )
    .await;
    let on_watch = create(
        &app,
        &a.api_key,
        json!({"name": "watch", "trigger_type": "watchlist_change",
        "actions": [store_action()]}),
    )
    .await;
    let on_new = create(
        &app,
        &a.api_key,
        json!({"name": "new", "trigger_type": "new_domain",
        "actions": [store_action()]}),
    )
    .await;
    let paused = create(
        &app,
        &a.api_key,
        json!({"name": "off", "trigger_type": "new_domain",
        "is_active": false, "actions": [store_action()]}),
    )
    .await;
    record(&app, a.account_id, EventType::AudienceUpdated,
        json!({"audience_id": audience_id, "audience_name": "aud", "new_domains": ["x.com", "y.com"], "match_count": 2})).await;
    record(
        &app,
        a.account_id,
        EventType::AudienceUpdated,
        json!({"audience_id": audience_id + 1000, "new_domains": ["z.com"], "match_count": 1}),
    )
    .await;
    record(&app, a.account_id, EventType::WatchlistChange,
        json!({"watchlist_id": 5, "domain": "w.com", "changes": [{"field": "industry", "old": "a", "new": "b"}]})).await;
    record(
        &app,
        a.account_id,
        EventType::DomainEnriched,
        json!({"domain": "n.com", "status": "enriched", "changes": [], "new_to_pool": true}),
    )
    .await;
    record(
        &app,
        a.account_id,
        EventType::DomainEnriched,
        json!({"domain": "old.com", "status": "enriched", "changes": [], "new_to_pool": false}),
    )
    .await;
    // Another account's event starts none of a's workflows.
    record(
        &app,
        b.account_id,
        EventType::DomainEnriched,
        json!({"domain": "b.com", "status": "enriched", "changes": [], "new_to_pool": true}),
    )
    .await;
    dispatch_once(&app.state, 100).await.unwrap();
    runs::drain(&app.state).await.unwrap();
    let runs_of = |w: &Value| {
        let id = w["id"].as_i64().unwrap();
        let app = &app;
        let key = a.api_key.clone();
        async move {
            app.get(&format!("/v1/workflows/{id}/runs"), &key)
                .await
                .body["runs"]
                .clone()
        }
    };
    let r = runs_of(&on_audience).await;
    assert_eq!(r.as_array().unwrap().len(), 1, "{r}");
    assert_eq!(r[0]["trigger_event"], "audience.updated");
    assert_eq!(r[0]["domain_count"], 2);
    assert_eq!(r[0]["status"], "success");
    assert_eq!(r[0]["trigger_data"]["data"]["audience_id"], audience_id);
    let r = runs_of(&on_watch).await;
    assert_eq!(r.as_array().unwrap().len(), 1);
    assert_eq!(r[0]["trigger_event"], "watchlist.change");
    let r = runs_of(&on_new).await;
    assert_eq!(
        r.as_array().unwrap().len(),
        1,
        "only the domain new to the pool: {r}"
    );
    assert_eq!(runs_of(&paused).await, json!([]));
    // The fan-out took the events once: another pass starts nothing.
    dispatch_once(&app.state, 100).await.unwrap();
    runs::drain(&app.state).await.unwrap();
    assert_eq!(runs_of(&on_audience).await.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_schedule_fires_once_per_due_time_across_servers() {
    let app = app().await;
    let a = starter(&app).await;
    // 12:00 UTC on 2026-11-21 is 07:00 in New York (EST).
    let w = create(
        &app,
        &a.api_key,
        json!({"name": "daily", "trigger_type": "schedule",
        "trigger_config": {"cron": "30 7 * * *", "timezone": "America/New_York"},
        "actions": [store_action()]}),
    )
    .await;
    let id = w["id"].as_i64().unwrap();
    let other = app.another_server().await;
    assert_eq!(triggers::fire_schedules(&app.state).await.unwrap(), 0);
    app.clock.advance(Duration::from_secs(30 * 60));
    let fired = triggers::fire_schedules(&app.state).await.unwrap()
        + triggers::fire_schedules(&other.state).await.unwrap();
    assert_eq!(fired, 1);
    app.clock.advance(Duration::from_secs(23 * 3600));
    assert_eq!(triggers::fire_schedules(&other.state).await.unwrap(), 0);
    app.clock.advance(Duration::from_secs(3600));
    assert_eq!(triggers::fire_schedules(&other.state).await.unwrap(), 1);
    runs::drain(&app.state).await.unwrap();
    let r = app
        .get(&format!("/v1/workflows/{id}/runs"), &a.api_key)
        .await;
    assert_eq!(r.body["total"], 2);
    assert_eq!(r.body["runs"][0]["trigger_event"], "schedule");
    assert_eq!(r.body["runs"][0]["status"], "success");
}

#[tokio::test]
async fn the_dry_run_writes_nothing_and_allows_ten_a_minute() {
    let app = app().await;
    let a = starter(&app).await;
    pool(
        &app,
        &[
            json!({"domain": "acme.io", "industry": "Software"}),
            json!({"domain": "shop.fr", "industry": "Retail"}),
        ],
    )
    .await;
    let rx = Receiver::start(json!({})).await;
    let body = json!({"name": "dry", "trigger_type": "manual",
        "conditions": [{"field": "industry", "op": "equals", "value": "software"}],
        "actions": [{"type": "http_request", "config": {"method": "GET", "url": rx.url}}]});
    let w = create(&app, &a.api_key, body).await;
    let id = w["id"].as_i64().unwrap();
    let r = app
        .post(&format!("/v1/workflows/{id}/test"), &a.api_key, json!({}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let t = &r.body["test_results"];
    assert_eq!(t["sample_domains_checked"], 2);
    assert_eq!(t["domains_after_conditions"], 1);
    assert_eq!(t["sample_filtered"][0]["domain"], "acme.io");
    assert_eq!(t["actions_that_would_execute"][0]["type"], "http_request");
    assert_eq!(r.body["workflow"]["id"], id);
    for _ in 1..10 {
        assert_eq!(
            app.post(&format!("/v1/workflows/{id}/test"), &a.api_key, json!({}))
                .await
                .status,
            200
        );
    }
    assert_eq!(
        app.post(&format!("/v1/workflows/{id}/test"), &a.api_key, json!({}))
            .await
            .status,
        429
    );
    runs::drain(&app.state).await.unwrap();
    assert_eq!(rx.hits(), 0);
    assert_eq!(
        app.get(&format!("/v1/workflows/{id}/runs"), &a.api_key)
            .await
            .body["total"],
        0
    );
}
