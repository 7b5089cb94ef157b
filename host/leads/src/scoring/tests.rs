//! Scoring through the router, on the backend the suite runs
//! (`OUTREACH_TEST_BACKEND`): one domain and batches, tiers and clamping,
//! refused and unknown domains, and that a batch is one query against the
//! monthly quota. The rules' endpoints are in `rules_api_tests.rs`, with
//! the helpers from here.

use serde_json::{Value, json};

use crate::domains::pipeline::{self, save};
use crate::domains::record::Technology;
pub(super) use crate::testkit::{delete, put, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

pub(super) async fn app() -> TestApp {
    app_with(|_| {}).await
}

pub(super) async fn app_with(adjust: impl FnOnce(&mut outreach_core::config::Config)) -> TestApp {
    TestApp::with_areas(&[crate::AREA], |c| {
        // No registry to ask: loopback is refused at once.
        c.rdap_bootstrap_url = "http://127.0.0.1:9/".into();
        adjust(c);
    })
    .await
}

/// A B2B company that every condition of the `default` rule matches.
pub(super) fn b2b() -> save::Findings {
    save::Findings {
        company_name: Some("Acme Widgets".into()),
        summary: Some("Acme makes widget software for factories.".into()),
        industry: Some("Software".into()),
        business_type: Some("B2B".into()),
        confidence: 0.9,
        website_email: Some("info@acme-widgets.com".into()),
        phone: Some("+4930123456".into()),
        employees_range: Some("11-50".into()),
        technologies: vec![Technology {
            name: "Stripe".into(),
            categories: vec!["Payment processors".into()],
            version: None,
            confidence: 100,
        }],
        alert_signals: vec!["has_payments".into()],
        intent_score: 60,
        intent_level: "warm".into(),
        registrant_country: Some("DE".into()),
        city: Some("Berlin".into()),
        language: Some("de".into()),
        mx_provider: Some("Google Workspace".into()),
        social_links: json!({"linkedin": "https://www.linkedin.com/company/acme"}),
        registered_at: Some(1_600_000_000_000),
        ..save::Findings::default()
    }
}

pub(super) fn rule(name: &str, conditions: Value) -> Value {
    json!({"name": name, "conditions": conditions})
}

/// Creates a rule and returns its id.
pub(super) async fn create(app: &TestApp, key: &str, body: Value) -> String {
    let r = app.post("/v1/scoring/rules", key, body).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["id"].as_str().unwrap().to_owned()
}

fn domains_of(body: &Value) -> Vec<&str> {
    body.as_array()
        .unwrap()
        .iter()
        .map(|r| r["domain"].as_str().unwrap())
        .collect()
}

async fn pool_size(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM domains")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_first_default_rule_scores_when_none_is_named() {
    let app = app().await;
    let a = app.account(Plan::Free).await;
    seed(&app, "acme-widgets.com", b2b()).await;

    // Any spelling of the domain is the one record.
    let r = app
        .post(
            "/v1/scoring",
            &a.api_key,
            json!({"domain": "https://www.Acme-Widgets.com/about"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["domain"], "acme-widgets.com");
    assert_eq!(r.body["rule_id"], "default");
    assert_eq!(r.body["rule_name"], "B2B fit");
    assert_eq!(r.body["score"], 100);
    assert_eq!(r.body["tier"], "hot");
    let breakdown = r.body["breakdown"].as_array().unwrap();
    assert_eq!(breakdown.len(), 7);
    assert_eq!(
        breakdown[0],
        json!({"condition": "business_type in [\"B2B\", \"B2B2C\"]", "matched": true, "points": 25})
    );
    assert_eq!(
        breakdown[1],
        json!({"condition": "website_email exists", "matched": true, "points": 15})
    );
    assert_eq!(breakdown[2]["condition"], "intent_score gte 50");

    // The same with the id named, and null meaning the default.
    for rule_id in [json!("default"), Value::Null] {
        let again = app
            .post(
                "/v1/scoring",
                &a.api_key,
                json!({"domain": "acme-widgets.com", "rule_id": rule_id}),
            )
            .await;
        assert_eq!(again.body, r.body);
    }

    // A weaker record: unmatched conditions award 0.
    let mut weak = b2b();
    weak.phone = None;
    weak.intent_score = 10;
    seed(&app, "weak-widgets.com", weak).await;
    let r = app
        .post(
            "/v1/scoring",
            &a.api_key,
            json!({"domain": "weak-widgets.com", "rule_id": "default_intent"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["rule_name"], "Buying intent");
    assert_eq!(r.body["score"], 5, "website_email only: {:?}", r.body);
    assert_eq!(r.body["tier"], "cold");
    let r = app
        .post(
            "/v1/scoring",
            &a.api_key,
            json!({"domain": "weak-widgets.com"}),
        )
        .await;
    assert_eq!(r.body["score"], 70, "{:?}", r.body);
    assert_eq!(r.body["tier"], "warm");
    let unmatched: Vec<&Value> = r.body["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["matched"] == false)
        .collect();
    assert_eq!(unmatched.len(), 2);
    assert!(unmatched.iter().all(|b| b["points"] == 0));
}

#[tokio::test]
async fn tiers_follow_the_boundaries_and_scores_are_clamped() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    seed(&app, "tiered.com", b2b()).await;
    for (points, tier) in [
        (80, "hot"),
        (79, "warm"),
        (50, "warm"),
        (49, "neutral"),
        (20, "neutral"),
        (19, "cold"),
    ] {
        let id = create(
            &app,
            &a.api_key,
            rule(
                &format!("{points} points"),
                json!([{"field": "domain", "op": "exists", "points": points}]),
            ),
        )
        .await;
        let r = app
            .post(
                "/v1/scoring",
                &a.api_key,
                json!({"domain": "tiered.com", "rule_id": id}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        assert_eq!(r.body["score"], points);
        assert_eq!(r.body["tier"], tier, "{points}");
        assert_eq!(r.body["rule_id"], id);
        assert_eq!(r.body["rule_name"], format!("{points} points"));
    }
    let over = create(
        &app,
        &a.api_key,
        rule(
            "over",
            json!([
                {"field": "industry", "op": "equals", "value": "software", "points": 100},
                {"field": "technologies", "op": "contains", "value": "stripe", "points": 60},
            ]),
        ),
    )
    .await;
    let r = app
        .post(
            "/v1/scoring",
            &a.api_key,
            json!({"domain": "tiered.com", "rule_id": over}),
        )
        .await;
    assert_eq!(r.body["score"], 100);
    assert_eq!(r.body["breakdown"][1]["points"], 60);
    let under = create(
        &app,
        &a.api_key,
        rule(
            "under",
            json!([
                {"field": "country", "op": "equals", "value": "de", "points": -80},
                {"field": "has_spf", "op": "exists", "value": false, "points": 30},
            ]),
        ),
    )
    .await;
    let r = app
        .post(
            "/v1/scoring",
            &a.api_key,
            json!({"domain": "tiered.com", "rule_id": under}),
        )
        .await;
    assert_eq!(r.body["score"], 0, "{:?}", r.body);
    assert_eq!(r.body["tier"], "cold");
    assert_eq!(r.body["breakdown"][0]["points"], -80);
}

#[tokio::test]
async fn bad_and_unknown_domains_are_refused_without_side_effects() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    for bad in [
        "",
        "localhost",
        "127.0.0.1",
        "co.uk",
        "a_b.com",
        "x.internal",
    ] {
        let r = app
            .post("/v1/scoring", &a.api_key, json!({"domain": bad}))
            .await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
        // Exactly the spec's text: clients compare it.
        assert_eq!(r.detail(), "Invalid domain format");
    }
    let long = "a".repeat(300);
    let r = app
        .post("/v1/scoring", &a.api_key, json!({"domain": long}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.detail(), "Invalid domain format");
    let r = app
        .post(
            "/v1/scoring",
            &a.api_key,
            json!({"domain": "not-in-pool.com"}),
        )
        .await;
    assert_eq!(r.status, 404, "{:?}", r.body);
    assert_eq!(r.detail(), "Domain not found");
    // A bad domain is reported before an unknown rule.
    let r = app
        .post(
            "/v1/scoring",
            &a.api_key,
            json!({"domain": "localhost", "rule_id": "nope"}),
        )
        .await;
    assert_eq!(r.status, 400);
    // Unknown body fields, or none at all.
    for body in [
        json!({"domain": "a.com", "rules": "default"}),
        json!({}),
        json!({"domain": 5}),
    ] {
        let r = app.post("/v1/scoring", &a.api_key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {:?}", r.body);
    }
    let r = app
        .post(
            "/v1/scoring/batch",
            &a.api_key,
            json!({"domains": ["a.com"], "extra": 1}),
        )
        .await;
    assert_eq!(r.status, 400);
    // Scoring never adds a domain to the pool.
    assert_eq!(pool_size(&app).await, 0);
}

#[tokio::test]
async fn batches_are_bounded_ordered_deduplicated_and_all_or_nothing() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    seed(&app, "bravo.com", b2b()).await;
    let mut alpha = b2b();
    alpha.business_type = Some("B2C".into());
    seed(&app, "alpha.com", alpha).await;

    let r = app
        .post("/v1/scoring/batch", &a.api_key, json!({"domains": []}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.detail(), "domains must hold 1 to 100 entries");
    let too_many: Vec<String> = (0..101).map(|i| format!("company{i}.com")).collect();
    let r = app
        .post(
            "/v1/scoring/batch",
            &a.api_key,
            json!({"domains": too_many}),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);

    let r = app
        .post(
            "/v1/scoring/batch",
            &a.api_key,
            json!({"domains": ["bravo.com", "localhost", "nowhere.com"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.detail(), "Invalid domain format");
    let r = app
        .post(
            "/v1/scoring/batch",
            &a.api_key,
            json!({"domains": ["nowhere.com", "bravo.com", "https://www.elsewhere.com/x", "nowhere.com"]}),
        )
        .await;
    assert_eq!(r.status, 404, "{:?}", r.body);
    assert_eq!(r.detail(), "Domain not found");
    assert_eq!(pool_size(&app).await, 2);

    let r = app
        .post(
            "/v1/scoring/batch",
            &a.api_key,
            json!({"domains": ["bravo.com", "ALPHA.com", "https://www.bravo.com/pricing", "alpha.com"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(domains_of(&r.body), vec!["bravo.com", "alpha.com"]);
    assert_eq!(r.body[0]["score"], 100);
    assert_eq!(r.body[0]["rule_id"], "default");
    assert_eq!(r.body[1]["score"], 75, "not B2B: {:?}", r.body[1]);
    assert_eq!(r.body[1]["breakdown"][0]["matched"], false);

    // A rule of the account's own, named in the batch.
    let id = create(
        &app,
        &a.api_key,
        rule(
            "consumer",
            json!([{"field": "business_type", "op": "equals", "value": "b2c", "points": 90}]),
        ),
    )
    .await;
    let r = app
        .post(
            "/v1/scoring/batch",
            &a.api_key,
            json!({"domains": ["alpha.com", "bravo.com"], "rule_id": id}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body[0]["score"], 90);
    assert_eq!(r.body[0]["tier"], "hot");
    assert_eq!(r.body[1]["score"], 0);
    assert_eq!(r.body[1]["rule_name"], "consumer");
}

/// `monthly_queries_used` as `/v1/usage/rate-limits` reports it, counting
/// that call itself.
async fn queries_used(app: &TestApp, key: &str) -> i64 {
    app.state.usage.flush().await;
    let r = app.get("/v1/usage/rate-limits", key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["current_usage"]["monthly_queries_used"]
        .as_i64()
        .unwrap()
}

#[tokio::test]
async fn a_batch_of_100_domains_is_one_query() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    // Records the pool has not enriched yet: they score on what they hold.
    let domains: Vec<String> = (0..100).map(|i| format!("pending{i:03}.com")).collect();
    pipeline::submit(&app.state, &domains, "import", None)
        .await
        .unwrap();

    let before = queries_used(&app, &a.api_key).await;
    let r = app
        .post(
            "/v1/scoring",
            &a.api_key,
            json!({"domain": "pending000.com"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["score"], 0);
    assert_eq!(r.body["tier"], "cold");
    let after_single = queries_used(&app, &a.api_key).await;

    let mut reversed = domains.clone();
    reversed.reverse();
    let r = app
        .post(
            "/v1/scoring/batch",
            &a.api_key,
            json!({"domains": reversed, "rule_id": "default_intent"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(domains_of(&r.body), reversed);
    assert!(
        r.body
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["score"] == 0 && s["tier"] == "cold")
    );
    let after_batch = queries_used(&app, &a.api_key).await;

    // Each step is the scoring request plus the usage read itself.
    assert_eq!(after_single - before, 2);
    assert_eq!(
        after_batch - after_single,
        after_single - before,
        "a batch of 100 counts as one query, like a single call"
    );
    // Recent activity tells how many domains the batch scored.
    app.state.usage.flush().await;
    let recent = app.get("/v1/usage/recent-activity", &a.api_key).await;
    let batch = recent.body["recent_requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["endpoint"] == "/v1/scoring/batch")
        .cloned()
        .unwrap();
    assert_eq!(batch["results_count"], 100, "{batch}");
}
