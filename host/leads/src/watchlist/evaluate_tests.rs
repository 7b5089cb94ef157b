//! Change detection: the check endpoint, the pool evaluation (`apply`,
//! through `evaluation::drain` after records are saved again), their
//! preferences and events, and the worker that makes due watches
//! re-enrich.

use serde_json::{Value, json};

use super::tests::{app, facts, outbox, seed, watch};
use crate::domains::facets::{Facets, Monitored, PoolChange, PoolEvent};
use crate::domains::pipeline::{self, save};
use crate::evaluation::drain;
use crate::testkit::days_pass;
use outreach_core::accounts::plans::Plan;
use outreach_core::events::EventType;
use outreach_core::testing::TestApp;

/// Every monitored field differs from `facts("Software", "info@acme.com", 0.8)`.
fn all_changed() -> save::Findings {
    save::Findings {
        sub_industry: Some("Shops".into()),
        is_trusted: true,
        ..facts("Retail", "sales@acme.com", 0.9)
    }
}

fn fields_of(event: &Value) -> Vec<&str> {
    event["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect()
}

async fn history(app: &TestApp, key: &str, id: i64) -> Value {
    let r = app.get(&format!("/v1/watchlist/{id}/history"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body
}

#[tokio::test]
async fn check_records_every_change_and_announces_those_preferences_cover() {
    let app = app().await;
    seed(&app, "acme.com", facts("Software", "info@acme.com", 0.8)).await;
    // One account per preference turned off, one with all on, one with
    // all off; each watches acme.com.
    let cases = [
        (
            json!({}),
            vec![
                "industry",
                "sub_industry",
                "website_email",
                "summary",
                "is_trusted",
                "confidence",
            ],
        ),
        (
            json!({"alert_on_industry_change": false}),
            vec!["website_email", "summary", "is_trusted", "confidence"],
        ),
        (
            json!({"alert_on_email_change": false}),
            vec![
                "industry",
                "sub_industry",
                "summary",
                "is_trusted",
                "confidence",
            ],
        ),
        (
            json!({"alert_on_tech_change": false}),
            vec![
                "industry",
                "sub_industry",
                "website_email",
                "is_trusted",
                "confidence",
            ],
        ),
        (
            json!({"alert_on_status_change": false}),
            vec!["industry", "sub_industry", "website_email", "summary"],
        ),
        (
            json!({"alert_on_industry_change": false, "alert_on_email_change": false,
                   "alert_on_tech_change": false, "alert_on_status_change": false}),
            vec![],
        ),
    ];
    let mut watchers = Vec::new();
    for (prefs, _) in &cases {
        let a = app.account(Plan::Pro).await;
        let id = watch(&app, &a.api_key, "acme.com", prefs.clone()).await["id"]
            .as_i64()
            .unwrap();
        watchers.push((a, id));
    }
    seed(&app, "acme.com", all_changed()).await;

    for ((a, id), (_, alerted)) in watchers.iter().zip(&cases) {
        let r = app
            .get(&format!("/v1/watchlist/{id}/check"), &a.api_key)
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        assert_eq!(r.body["domain"], "acme.com");
        assert_eq!(r.body["has_changes"], true);
        assert_eq!(
            r.body["current"],
            json!({"domain": "acme.com", "industry": "Retail",
                   "website_email": "sales@acme.com", "confidence": 0.9})
        );
        let changes = r.body["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 6, "{changes:?}");
        assert_eq!(
            changes[0],
            json!({"field": "industry", "old": "Software", "new": "Retail"})
        );
        assert_eq!(
            changes[4],
            json!({"field": "is_trusted", "old": "false", "new": "true"})
        );
        assert_eq!(
            changes[5],
            json!({"field": "confidence", "old": "0.80", "new": "0.90"})
        );
        // Change records for every field, whatever the preferences.
        assert_eq!(history(&app, &a.api_key, *id).await["total"], 6);
        let events = outbox(&app, a.account_id, EventType::WatchlistChange).await;
        if alerted.is_empty() {
            assert!(events.is_empty(), "{events:?}");
        } else {
            assert_eq!(events.len(), 1, "{events:?}");
            assert_eq!(events[0]["watchlist_id"], *id);
            assert_eq!(events[0]["domain"], "acme.com");
            assert_eq!(&fields_of(&events[0]), alerted);
            assert_eq!(
                events[0]["changes"][0]["old"],
                r.body["changes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["field"] == alerted[0])
                    .unwrap()["old"]
            );
        }
        // The snapshot moved: a second check finds nothing.
        let again = app
            .get(&format!("/v1/watchlist/{id}/check"), &a.api_key)
            .await;
        assert_eq!(again.body["has_changes"], false);
        assert_eq!(again.body["changes"], json!([]));
        let list = app.get("/v1/watchlist", &a.api_key).await;
        let w = &list.body["domains"][0];
        assert_eq!(w["last_snapshot"]["industry"], "Retail");
        assert_eq!(w["last_snapshot"]["is_trusted"], true);
        assert_eq!(w["total_changes"], 6);
        assert_eq!(w["last_checked_at"], "2026-11-21T12:00:00Z");
    }
    // The pool events of those saves carry revisions the checks have seen.
    drain(&app.state).await.unwrap();
    let (a, id) = &watchers[0];
    assert_eq!(history(&app, &a.api_key, *id).await["total"], 6);
    assert_eq!(
        outbox(&app, a.account_id, EventType::WatchlistChange)
            .await
            .len(),
        1
    );
}

#[tokio::test]
async fn the_pool_evaluation_applies_each_save_to_every_watch() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Enterprise).await;
    seed(&app, "acme.com", facts("Software", "info@acme.com", 0.8)).await;
    let wa = watch(&app, &a.api_key, "acme.com", json!({})).await["id"]
        .as_i64()
        .unwrap();
    let quiet = json!({"alert_on_email_change": false});
    let wb = watch(&app, &b.api_key, "acme.com", quiet).await["id"]
        .as_i64()
        .unwrap();
    // The seed's own event is the snapshot's revision: nothing changes.
    drain(&app.state).await.unwrap();
    assert_eq!(history(&app, &a.api_key, wa).await["total"], 0);

    days_pass(&app, 1);
    seed(&app, "acme.com", facts("Software", "sales@acme.com", 0.8)).await;
    drain(&app.state).await.unwrap();
    let h = history(&app, &a.api_key, wa).await;
    assert_eq!(h["total"], 1);
    assert_eq!(h["changes"][0]["field_changed"], "website_email");
    assert_eq!(h["changes"][0]["old_value"], "info@acme.com");
    assert_eq!(h["changes"][0]["new_value"], "sales@acme.com");
    assert_eq!(h["changes"][0]["detected_at"], "2026-11-22T12:00:00Z");
    let events = outbox(&app, a.account_id, EventType::WatchlistChange).await;
    assert_eq!(
        events,
        [
            json!({"watchlist_id": wa, "domain": "acme.com", "changes": [
            {"field": "website_email", "old": "info@acme.com", "new": "sales@acme.com"}]})
        ]
    );
    // b records the change but asked for no email alerts.
    assert_eq!(history(&app, &b.api_key, wb).await["total"], 1);
    assert!(
        outbox(&app, b.account_id, EventType::WatchlistChange)
            .await
            .is_empty()
    );
    let list = app.get("/v1/watchlist", &a.api_key).await;
    let w = &list.body["domains"][0];
    assert_eq!(w["last_snapshot"]["website_email"], "sales@acme.com");
    assert_eq!(w["last_changed_at"], "2026-11-22T12:00:00Z");
    assert_eq!(w["last_checked_at"], "2026-11-22T12:00:00Z");
    assert_eq!(w["total_changes"], 1);

    // Two saves in one batch: applied in order, each against the last.
    seed(&app, "acme.com", facts("Retail", "sales@acme.com", 0.8)).await;
    seed(&app, "acme.com", facts("Travel", "sales@acme.com", 0.8)).await;
    drain(&app.state).await.unwrap();
    let h = history(&app, &a.api_key, wa).await;
    let industry: Vec<(&str, &str)> = h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["field_changed"] == "industry")
        .map(|c| {
            (
                c["old_value"].as_str().unwrap(),
                c["new_value"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(industry, [("Retail", "Travel"), ("Software", "Retail")]);
    let events = outbox(&app, a.account_id, EventType::WatchlistChange).await;
    assert_eq!(events.len(), 3);
    assert_eq!(fields_of(&events[1]), ["industry", "summary"]);
    // A save that changes no monitored field checks without a change.
    days_pass(&app, 1);
    seed(&app, "acme.com", facts("Travel", "sales@acme.com", 0.8)).await;
    drain(&app.state).await.unwrap();
    let list = app.get("/v1/watchlist", &a.api_key).await;
    let w = &list.body["domains"][0];
    assert_eq!(w["total_changes"], 5);
    assert_eq!(w["last_checked_at"], "2026-11-23T12:00:00Z");
    assert_eq!(w["last_changed_at"], "2026-11-22T12:00:00Z");
}

#[tokio::test]
async fn a_domain_watched_before_its_facts_takes_them_as_its_baseline() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let key = &a.api_key;
    let id = watch(&app, key, "later.com", json!({})).await["id"]
        .as_i64()
        .unwrap();
    let r = app.get(&format!("/v1/watchlist/{id}/check"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({"domain": "later.com", "has_changes": false, "changes": [],
               "current": {"domain": "later.com", "industry": null,
                           "website_email": null, "confidence": null}})
    );

    seed(&app, "later.com", facts("Software", "info@later.com", 0.7)).await;
    drain(&app.state).await.unwrap();
    let list = app.get("/v1/watchlist", key).await;
    let w = &list.body["domains"][0];
    assert_eq!(w["last_snapshot"]["industry"], "Software");
    assert_eq!(w["total_changes"], 0);
    assert!(w["last_changed_at"].is_null());
    assert!(
        outbox(&app, a.account_id, EventType::WatchlistChange)
            .await
            .is_empty()
    );

    seed(&app, "later.com", facts("Software", "info@later.com", 0.75)).await;
    drain(&app.state).await.unwrap();
    let h = history(&app, key, id).await;
    assert_eq!(h["total"], 1);
    assert_eq!(h["changes"][0]["old_value"], "0.70");
    assert_eq!(h["changes"][0]["new_value"], "0.75");

    // The check endpoint makes a baseline the same way.
    let fresh = watch(&app, key, "check-first.com", json!({})).await["id"]
        .as_i64()
        .unwrap();
    seed(
        &app,
        "check-first.com",
        facts("Retail", "a@check-first.com", 0.5),
    )
    .await;
    let r = app.get(&format!("/v1/watchlist/{fresh}/check"), key).await;
    assert_eq!(r.body["has_changes"], false);
    assert_eq!(r.body["current"]["industry"], "Retail");
    let list = app.get("/v1/watchlist", key).await;
    assert_eq!(
        list.body["domains"][1]["last_snapshot"]["industry"],
        "Retail"
    );
}

fn event(domain_id: i64, revision: i64, industry: &str) -> PoolEvent {
    let facets = Facets {
        industry: Some(industry.to_lowercase()),
        country: None,
        business_type: "B2B".into(),
        confidence: 80,
        intent_score: 0,
        signal_bits: 0,
        seen_at: 0,
    };
    PoolEvent {
        id: revision,
        domain_id,
        change: PoolChange {
            domain: "acme.com".into(),
            revision,
            before: None,
            after: Some(facets),
            monitored: Monitored::new(
                Some(industry.into()),
                Some("Tools".into()),
                Some("info@acme.com".into()),
                Some("We make Software software.".into()),
                false,
                0.8,
            ),
            level: "warm".into(),
            likely_buys: vec![],
            alert_signals: vec![],
        },
    }
}

#[tokio::test]
async fn apply_orders_a_domains_events_and_skips_revisions_already_seen() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let domain_id = seed(&app, "acme.com", facts("Software", "info@acme.com", 0.8)).await;
    let id = watch(&app, &a.api_key, "acme.com", json!({})).await["id"]
        .as_i64()
        .unwrap();
    // As a second server would hand them over: out of order, with one the
    // snapshot already reflects (revision 1).
    let events = [
        event(domain_id, 3, "Travel"),
        event(domain_id, 1, "Ignored"),
        event(domain_id, 2, "Retail"),
    ];
    let state = &app.state;
    let mut tx = state.db.pool.begin().await.unwrap();
    let now = state.clock.now_ms();
    super::evaluate::apply(&mut tx, state.db.backend, &events, now)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let h = history(&app, &a.api_key, id).await;
    let pairs: Vec<(&str, &str)> = h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["old_value"].as_str().unwrap(),
                c["new_value"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(pairs, [("Retail", "Travel"), ("Software", "Retail")]);
    // Revision 3 is the snapshot's now: handing it over again is a no-op.
    let mut tx = state.db.pool.begin().await.unwrap();
    super::evaluate::apply(&mut tx, state.db.backend, &events[..1], now)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(history(&app, &a.api_key, id).await["total"], 2);
    let revision: i64 =
        sqlx::query_scalar("SELECT snapshot_revision FROM watched_domains WHERE id = $1")
            .bind(id)
            .fetch_one(&state.db.pool)
            .await
            .unwrap();
    assert_eq!(revision, 3);
}

async fn refresh_at(app: &TestApp, domain: &str) -> Option<i64> {
    sqlx::query_scalar("SELECT refresh_at FROM domains WHERE domain = $1")
        .bind(domain)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_worker_re_enriches_watched_domains_at_each_plans_pace() {
    let app = app().await;
    let plans = [
        ("starter.com", Plan::Starter),
        ("pro.com", Plan::Pro),
        ("enterprise.com", Plan::Enterprise),
        ("downgraded.com", Plan::Starter),
    ];
    for (domain, plan) in plans {
        let a = app.account(plan).await;
        seed(&app, domain, facts("Software", "info@x.com", 0.8)).await;
        watch(&app, &a.api_key, domain, json!({})).await;
        if domain == "downgraded.com" {
            sqlx::query("UPDATE accounts SET plan = 'free' WHERE id = $1")
                .bind(a.account_id)
                .execute(&app.state.db.pool)
                .await
                .unwrap();
        }
    }
    // Records refreshed lately: not due for the pool on their own.
    let later = app.state.clock.now_ms() + 30 * 86_400_000;
    sqlx::query("UPDATE domains SET refresh_at = $1")
        .bind(later)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    let worker = super::worker::run_once;
    assert_eq!(worker(&app.state).await.unwrap(), 0);

    days_pass(&app, 1);
    assert_eq!(worker(&app.state).await.unwrap(), 1);
    let now = app.state.clock.now_ms();
    assert_eq!(refresh_at(&app, "enterprise.com").await, Some(now));
    assert_eq!(refresh_at(&app, "pro.com").await, Some(later));
    // Claimed once per interval, on any number of servers.
    let second = app.another_server().await;
    assert_eq!(worker(&second.state).await.unwrap(), 0);
    // The pool's refresh scan queues the enrichment.
    let jobs_before = jobs(&app).await;
    assert_eq!(pipeline::queue_due(&app.state, 100).await.unwrap(), 1);
    assert_eq!(jobs(&app).await, jobs_before + 1);

    days_pass(&app, 2);
    assert_eq!(worker(&app.state).await.unwrap(), 2);
    assert_eq!(
        refresh_at(&app, "pro.com").await,
        Some(app.state.clock.now_ms())
    );
    assert_eq!(refresh_at(&app, "starter.com").await, Some(later));

    days_pass(&app, 4);
    assert_eq!(worker(&app.state).await.unwrap(), 4);
    let now = app.state.clock.now_ms();
    assert_eq!(refresh_at(&app, "starter.com").await, Some(now));
    // An account that fell back to Free is not re-enriched.
    assert_eq!(refresh_at(&app, "downgraded.com").await, Some(later));
}

async fn jobs(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE queue = 'domain_enrich'")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
}
