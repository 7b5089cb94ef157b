//! The watchlist's endpoints through the router, on the backend the suite
//! runs (`OUTREACH_TEST_BACKEND`): the plan gate and cap, adding one and
//! many domains, preferences, deleting, other accounts' ids, and paging.
//! Change detection (check, the pool evaluation, the worker) is in
//! `evaluate_tests.rs`, with the helpers from here.

use serde_json::{Value, json};

use crate::domains::pipeline::save;
pub(super) use crate::testkit::{outbox, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::{TestApp, TestResponse};

pub(super) async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |c| {
        // No registry to ask: loopback is refused at once.
        c.rdap_bootstrap_url = "http://127.0.0.1:9/".into();
    })
    .await
}

/// A record's facts with the six monitored fields given.
pub(super) fn facts(industry: &str, email: &str, confidence: f64) -> save::Findings {
    save::Findings {
        company_name: Some("Acme".into()),
        summary: Some(format!("We make {industry} software.")),
        industry: Some(industry.into()),
        sub_industry: Some("Tools".into()),
        business_type: Some("B2B".into()),
        confidence,
        website_email: Some(email.into()),
        intent_level: "warm".into(),
        social_links: json!({}),
        ..save::Findings::default()
    }
}

pub(super) async fn put(app: &TestApp, path: &str, key: &str, body: Value) -> TestResponse {
    app.call("PUT", path, Some(key), Some(body)).await
}

pub(super) async fn delete(app: &TestApp, path: &str, key: &str) -> TestResponse {
    app.call("DELETE", path, Some(key), None).await
}

/// Watches `domain` with `body`'s preferences; returns the watched domain.
pub(super) async fn watch(app: &TestApp, key: &str, domain: &str, prefs: Value) -> Value {
    let mut body = prefs;
    body["domain"] = json!(domain);
    let r = app.post("/v1/watchlist", key, body).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body
}

async fn count(app: &TestApp, table: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table}");
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
}

async fn in_pool(app: &TestApp, domain: &str) -> bool {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM domains WHERE domain = $1")
        .bind(domain)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    n == 1
}

#[tokio::test]
async fn free_accounts_have_no_watchlist() {
    let app = app().await;
    let free = app.account(Plan::Free).await;
    let key = &free.api_key;
    let calls = [
        app.get("/v1/watchlist", key).await,
        app.post("/v1/watchlist", key, json!({"domain": "a.com"}))
            .await,
        app.post("/v1/watchlist/bulk", key, json!({"domains": ["a.com"]}))
            .await,
        put(&app, "/v1/watchlist/1", key, json!({})).await,
        delete(&app, "/v1/watchlist/1", key).await,
        app.get("/v1/watchlist/1/history", key).await,
        app.get("/v1/watchlist/changes", key).await,
        app.get("/v1/watchlist/1/check", key).await,
    ];
    for r in calls {
        assert_eq!(r.status, 403, "{:?}", r.body);
        assert_eq!(r.detail(), outreach_core::error::NO_ACCESS);
    }
    assert_eq!(count(&app, "watched_domains").await, 0);
}

#[tokio::test]
async fn adding_snapshots_a_record_with_facts_and_queues_an_unknown_one() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let key = &a.api_key;
    seed(&app, "acme.com", facts("Software", "info@acme.com", 0.8)).await;

    let r = app
        .post(
            "/v1/watchlist",
            key,
            json!({"domain": "https://www.acme.com/about", "alert_on_email_change": false}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let w = &r.body;
    assert_eq!(w["domain"], "acme.com");
    assert_eq!(w["last_snapshot"]["industry"], "Software");
    assert_eq!(w["last_snapshot"]["website_email"], "info@acme.com");
    assert_eq!(w["last_snapshot"]["confidence"], 0.8);
    assert_eq!(w["last_snapshot"]["is_trusted"], false);
    assert_eq!(w["last_snapshot"]["sub_industry"], "Tools");
    assert_eq!(w["alert_on_industry_change"], true);
    assert_eq!(w["alert_on_email_change"], false);
    assert_eq!(w["alert_on_tech_change"], true);
    assert_eq!(w["alert_on_status_change"], true);
    assert_eq!(w["created_at"], "2026-11-21T12:00:00Z");
    assert!(w["last_checked_at"].is_null());
    assert!(w["last_changed_at"].is_null());
    assert_eq!(w["total_changes"], 0);
    assert_eq!(w["recent_changes"], json!([]));

    // The same domain again, in any spelling: 409.
    let again = app
        .post("/v1/watchlist", key, json!({"domain": "ACME.com"}))
        .await;
    assert_eq!(again.status, 409, "{:?}", again.body);
    assert_eq!(again.detail(), "Domain already on the watchlist");

    // A domain the pool lacks: added, queued, the account waits for it.
    let fresh = watch(&app, key, "new-co.io", json!({})).await;
    assert!(fresh["last_snapshot"].is_null());
    assert!(in_pool(&app, "new-co.io").await);
    let waiting: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM domain_enrichment_requests r JOIN domains d ON d.id = r.domain_id \
         WHERE d.domain = 'new-co.io' AND r.account_id = $1",
    )
    .bind(a.account_id)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap();
    assert_eq!(waiting, 1);
    let jobs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE queue = 'domain_enrich'")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert!(jobs >= 1);

    for bad in ["not a domain", "", "localhost"] {
        let r = app.post("/v1/watchlist", key, json!({"domain": bad})).await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
    }
    let r = app.post("/v1/watchlist", key, json!({})).await;
    assert_eq!(r.status, 400, "{:?}", r.body);

    let list = app.get("/v1/watchlist", key).await;
    assert_eq!(list.status, 200, "{:?}", list.body);
    assert_eq!(list.body["limit"], 50);
    assert_eq!(list.body["remaining"], 48);
    let domains: Vec<&str> = list.body["domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["domain"].as_str().unwrap())
        .collect();
    assert_eq!(domains, ["acme.com", "new-co.io"]);
}

#[tokio::test]
async fn the_plan_cap_refuses_and_writes_nothing() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    let key = &a.api_key;
    let ten: Vec<String> = (0..10).map(|i| format!("d{i}.com")).collect();
    let r = app
        .post("/v1/watchlist/bulk", key, json!({"domains": ten}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({"added": 10, "skipped": 0, "total": 10, "limit": 10})
    );

    let one = app
        .post("/v1/watchlist", key, json!({"domain": "eleven.com"}))
        .await;
    assert_eq!(one.status, 400, "{:?}", one.body);
    assert!(one.detail().contains("Plan limit"), "{}", one.detail());
    assert!(!in_pool(&app, "eleven.com").await);

    // All or nothing: one new domain among watched ones refuses them all.
    let mixed = json!({"domains": ["d0.com", "twelve.com"]});
    let r = app.post("/v1/watchlist/bulk", key, mixed).await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(!in_pool(&app, "twelve.com").await);
    assert_eq!(count(&app, "watched_domains").await, 10);

    // Only watched ones: nothing to add, so no limit is passed.
    let same = json!({"domains": ["d1.com", "https://d2.com/x"]});
    let r = app.post("/v1/watchlist/bulk", key, same).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({"added": 0, "skipped": 2, "total": 10, "limit": 10})
    );
    let list = app.get("/v1/watchlist", key).await;
    assert_eq!(list.body["remaining"], 0);
}

#[tokio::test]
async fn bulk_adds_skip_repeats_and_refuse_bad_input_whole() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let key = &a.api_key;
    seed(&app, "known.com", facts("Retail", "hi@known.com", 0.5)).await;
    watch(&app, key, "known.com", json!({})).await;

    let many: Vec<String> = (0..51).map(|i| format!("n{i}.com")).collect();
    let r = app
        .post("/v1/watchlist/bulk", key, json!({"domains": many}))
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    let r = app
        .post("/v1/watchlist/bulk", key, json!({"domains": []}))
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);

    let bad = json!({"domains": ["fine.com", "not a domain!", "also-fine.com"]});
    let r = app.post("/v1/watchlist/bulk", key, bad).await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(r.detail().contains("not a domain!"), "{}", r.detail());
    assert!(!in_pool(&app, "fine.com").await);
    assert_eq!(count(&app, "watched_domains").await, 1);

    let body = json!({"domains": ["a.com", "https://www.a.com/", "known.com", "b.com"]});
    let r = app.post("/v1/watchlist/bulk", key, body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({"added": 2, "skipped": 2, "total": 3, "limit": 50})
    );
    let list = app.get("/v1/watchlist", key).await;
    let w = &list.body["domains"][1];
    assert_eq!(w["domain"], "a.com");
    for p in ["industry", "email", "tech", "status"] {
        assert_eq!(w[format!("alert_on_{p}_change")], true);
    }
}

#[tokio::test]
async fn preferences_change_and_watches_are_deleted_per_account() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let other = app.account(Plan::Enterprise).await;
    seed(&app, "acme.com", facts("Software", "info@acme.com", 0.8)).await;
    let w = watch(&app, &a.api_key, "acme.com", json!({})).await;
    let id = w["id"].as_i64().unwrap();
    let path = format!("/v1/watchlist/{id}");

    let r = put(
        &app,
        &path,
        &a.api_key,
        json!({"alert_on_tech_change": false}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["alert_on_tech_change"], false);
    assert_eq!(r.body["alert_on_industry_change"], true);
    let r = put(
        &app,
        &path,
        &a.api_key,
        json!({"alert_on_status_change": false, "alert_on_email_change": false}),
    )
    .await;
    assert_eq!(r.body["alert_on_tech_change"], false);
    assert_eq!(r.body["alert_on_status_change"], false);
    assert_eq!(r.body["alert_on_email_change"], false);
    let r = put(&app, &path, &a.api_key, json!({"domain": "x.com"})).await;
    assert_eq!(r.status, 400, "{:?}", r.body);

    // Another account's id is 404 everywhere, and changes nothing.
    let key = &other.api_key;
    let calls = [
        put(&app, &path, key, json!({"alert_on_tech_change": true})).await,
        app.get(&format!("{path}/history"), key).await,
        app.get(&format!("{path}/check"), key).await,
        delete(&app, &path, key).await,
    ];
    for r in calls {
        assert_eq!(r.status, 404, "{:?}", r.body);
        assert_eq!(r.detail(), "Watched domain not found");
    }
    let r = app.get("/v1/watchlist/abc/history", &a.api_key).await;
    assert_eq!(r.status, 404, "{:?}", r.body);

    let r = delete(&app, &path, &a.api_key).await;
    assert_eq!(r.status, 204, "{:?}", r.body);
    let r = delete(&app, &path, &a.api_key).await;
    assert_eq!(r.status, 404, "{:?}", r.body);
    let list = app.get("/v1/watchlist", &a.api_key).await;
    assert_eq!(list.body["domains"], json!([]));
    // The domain can be watched again.
    watch(&app, &a.api_key, "acme.com", json!({})).await;
}

/// Re-saves `acme.com` `n` times, each time with another industry, and
/// checks after each save, so the watch `id` gets `n` industry changes.
pub(super) async fn industry_changes(app: &TestApp, key: &str, id: i64, n: usize) {
    for i in 0..n {
        seed(
            app,
            "acme.com",
            facts(&format!("Industry {i}"), "info@acme.com", 0.8),
        )
        .await;
        let r = app.get(&format!("/v1/watchlist/{id}/check"), key).await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
}

#[tokio::test]
async fn history_pages_newest_first_and_filters_by_field() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let key = &a.api_key;
    seed(&app, "acme.com", facts("Software", "info@acme.com", 0.8)).await;
    let id = watch(&app, key, "acme.com", json!({})).await["id"]
        .as_i64()
        .unwrap();
    industry_changes(&app, key, id, 4).await;
    seed(&app, "acme.com", facts("Industry 3", "sales@acme.com", 0.8)).await;
    app.get(&format!("/v1/watchlist/{id}/check"), key).await;

    let base = format!("/v1/watchlist/{id}/history");
    let r = app.get(&base, key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["domain"], "acme.com");
    assert_eq!(r.body["watchlist_id"], id);
    // Each industry change came with its summary's; the last save changed
    // the email only.
    assert_eq!(r.body["total"], 9);
    let changes = r.body["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 9);
    assert_eq!(changes[0]["field_changed"], "website_email");
    assert_eq!(changes[0]["old_value"], "info@acme.com");
    assert_eq!(changes[0]["new_value"], "sales@acme.com");
    assert_eq!(changes[0]["watchlist_id"], id);
    assert_eq!(changes[0]["detected_at"], "2026-11-21T12:00:00Z");
    assert_eq!(changes[1]["field_changed"], "summary");
    assert_eq!(changes[2]["field_changed"], "industry");
    assert_eq!(changes[2]["old_value"], "Industry 2");
    assert_eq!(changes[2]["new_value"], "Industry 3");

    let r = app
        .get(&format!("{base}?field=industry&limit=2&offset=1"), key)
        .await;
    assert_eq!(r.body["total"], 4);
    let olds: Vec<&str> = r.body["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["old_value"].as_str().unwrap())
        .collect();
    assert_eq!(olds, ["Industry 1", "Industry 0"]);

    let r = app.get(&format!("{base}?field=industry"), key).await;
    assert_eq!(r.body["total"], 4);
    assert!(
        r.body["changes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["field_changed"] == "industry")
    );
    let r = app
        .get(&format!("{base}?field=summary&limit=200"), key)
        .await;
    assert_eq!(r.body["total"], 4);
    let r = app.get(&format!("{base}?field=phone"), key).await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    for q in ["limit=0", "limit=201", "limit=x", "offset=-1"] {
        let r = app.get(&format!("{base}?{q}"), key).await;
        assert_eq!(r.status, 400, "{q}: {:?}", r.body);
    }

    // The list shows the latest five and the count.
    let list = app.get("/v1/watchlist", key).await;
    let w = &list.body["domains"][0];
    assert_eq!(w["total_changes"], 9);
    assert_eq!(w["recent_changes"].as_array().unwrap().len(), 5);
    assert_eq!(w["recent_changes"][0]["field_changed"], "website_email");
    assert_eq!(w["last_changed_at"], "2026-11-21T12:00:00Z");
}

#[tokio::test]
async fn account_changes_span_every_watch_newest_first() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let other = app.account(Plan::Pro).await;
    let key = &a.api_key;
    seed(&app, "acme.com", facts("Software", "info@acme.com", 0.8)).await;
    seed(&app, "beta.com", facts("Retail", "hi@beta.com", 0.5)).await;
    let acme = watch(&app, key, "acme.com", json!({})).await["id"]
        .as_i64()
        .unwrap();
    let beta = watch(&app, key, "beta.com", json!({})).await["id"]
        .as_i64()
        .unwrap();
    watch(&app, &other.api_key, "beta.com", json!({})).await;
    industry_changes(&app, key, acme, 2).await;
    seed(&app, "beta.com", facts("Retail", "hi@beta.com", 0.9)).await;
    app.get(&format!("/v1/watchlist/{beta}/check"), key).await;

    let r = app.get("/v1/watchlist/changes", key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["total"], 5);
    let first = &r.body["changes"][0];
    assert_eq!(first["domain"], "beta.com");
    assert_eq!(first["field_changed"], "confidence");
    assert_eq!(first["old_value"], "0.50");
    assert_eq!(first["new_value"], "0.90");
    assert_eq!(first["watchlist_id"], beta);
    let r = app.get("/v1/watchlist/changes?limit=1", key).await;
    assert_eq!(r.body["changes"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["total"], 5);
    for q in ["limit=0", "limit=201"] {
        let r = app.get(&format!("/v1/watchlist/changes?{q}"), key).await;
        assert_eq!(r.status, 400, "{q}: {:?}", r.body);
    }
    // The other account's watch was never checked: nothing of its own.
    let r = app.get("/v1/watchlist/changes", &other.api_key).await;
    assert_eq!(r.body, json!({"total": 0, "changes": []}));
}
