//! The automation-platform endpoints through the router, on either
//! backend: authentication, plan gate and daily cap, each trigger with its
//! filters and deduplication ids, each action through its area's service.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::domains::pipeline::save;
use crate::testkit::{add_domains, findings, new_list, seed};
use outreach_core::accounts::Plan;
use outreach_core::accounts::limits::LimitSetting;
use outreach_core::testing::{TestAccount, TestApp};

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |c| {
        let mut starter = BTreeMap::new();
        starter.insert("automation_daily_queries".into(), LimitSetting::Number(3));
        c.limits.insert("starter".into(), starter);
        let mut pro = BTreeMap::new();
        pro.insert("list_items".into(), LimitSetting::Number(2));
        c.limits.insert("pro".into(), pro);
    })
    .await
}

/// A record the `default` rule scores 80 (`hot`) or 60.
fn scored(hot: bool) -> save::Findings {
    save::Findings {
        website_email: Some("hello@example.com".into()),
        phone: Some("+4930123456".into()),
        ..findings("Software", if hot { 60 } else { 10 })
    }
}

async fn ids(app: &TestApp, acct: &TestAccount, path: &str) -> Vec<String> {
    let r = app.get(path, &acct.api_key).await;
    assert_eq!(r.status, 200, "{path}: {:?}", r.body);
    r.body
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn auth_test_plan_gate_and_the_daily_cap() {
    let app = app().await;
    let pro = app.account(Plan::Pro).await;
    let r = app
        .call("POST", "/v1/zapier/auth/test", Some("sk_nope"), None)
        .await;
    assert_eq!((r.status.as_u16(), r.detail()), (401, "Not authenticated"));
    let r = app
        .call("GET", "/v1/zapier/triggers/new-domain", None, None)
        .await;
    assert_eq!((r.status.as_u16(), r.detail()), (401, "Not authenticated"));
    let r = app
        .call("POST", "/v1/zapier/auth/test", Some(&pro.api_key), None)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["success"], true);
    assert_eq!(r.body["plan"], "pro");
    assert!(r.body["email"].as_str().unwrap().contains('@'));

    // Free may test its key but not use the integration.
    let free = app.account(Plan::Free).await;
    let r = app
        .call("POST", "/v1/zapier/auth/test", Some(&free.api_key), None)
        .await;
    assert_eq!(r.status, 200);
    let r = app
        .get("/v1/zapier/triggers/new-domain", &free.api_key)
        .await;
    assert_eq!(r.status, 403);
    let r = app
        .post(
            "/v1/zapier/actions/add-to-watchlist",
            &free.api_key,
            json!({"domain": "acme.com"}),
        )
        .await;
    assert_eq!(r.status, 403);

    // Starter's cap is 3 here: the fourth query of the UTC day is refused
    // with the day's window in the headers, and the next day is open.
    let starter = app.account(Plan::Starter).await;
    for _ in 0..3 {
        let r = app
            .get("/v1/zapier/triggers/domain-enriched", &starter.api_key)
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
    let r = app
        .get("/v1/zapier/triggers/domain-enriched", &starter.api_key)
        .await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (429, "Rate limit exceeded")
    );
    assert_eq!(r.header("x-ratelimit-limit"), Some("3"));
    assert_eq!(r.header("x-ratelimit-remaining"), Some("0"));
    let reset: i64 = r.header("x-ratelimit-reset").unwrap().parse().unwrap();
    assert_eq!(reset % 86_400, 0, "the reset is the next UTC midnight");
    assert!(r.header("retry-after").is_some());
    // auth/test is not counted.
    let r = app
        .call("POST", "/v1/zapier/auth/test", Some(&starter.api_key), None)
        .await;
    assert_eq!(r.status, 200);
    crate::testkit::days_pass(&app, 1);
    let r = app
        .get("/v1/zapier/triggers/domain-enriched", &starter.api_key)
        .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn new_domain_is_the_newest_records_filtered_with_the_domain_as_id() {
    let app = app().await;
    let acct = app.account(Plan::Pro).await;
    seed(&app, "first.com", findings("Software", 10)).await;
    crate::testkit::days_pass(&app, 1);
    let mut fr = findings("Retail", 10);
    fr.registrant_country = None;
    fr.ip_country = Some("FR".into());
    fr.confidence = 0.5;
    seed(&app, "second.com", fr).await;
    crate::testkit::days_pass(&app, 1);
    seed(&app, "third.com", findings("Software", 10)).await;

    let all = ids(&app, &acct, "/v1/zapier/triggers/new-domain").await;
    assert_eq!(all, ["third.com", "second.com", "first.com"]);
    let r = app
        .get("/v1/zapier/triggers/new-domain?limit=1", &acct.api_key)
        .await;
    let item = &r.body[0];
    assert_eq!(item["domain"], "third.com");
    assert_eq!(item["industry"], "Software");
    assert_eq!(item["country"], "DE");
    assert_eq!(item["confidence"], 80);
    assert_eq!(item["business_type"], "B2B");
    assert!(
        item["created_at"]
            .as_str()
            .unwrap()
            .starts_with("2026-11-23")
    );
    for key in ["sub_industry", "website_email", "summary", "registered_at"] {
        assert!(item.get(key).is_some(), "{key}");
    }

    let q = "/v1/zapier/triggers/new-domain?industry=software";
    assert_eq!(ids(&app, &acct, q).await, ["third.com", "first.com"]);
    // The server's country stands in for the registrant's.
    let q = "/v1/zapier/triggers/new-domain?country=fr";
    assert_eq!(ids(&app, &acct, q).await, ["second.com"]);
    let q = "/v1/zapier/triggers/new-domain?min_confidence=60";
    assert_eq!(ids(&app, &acct, q).await, ["third.com", "first.com"]);
    for bad in [
        "min_confidence=101",
        "min_confidence=-1",
        "limit=0",
        "limit=101",
        "industry=Nonsense",
        "country=Germany",
    ] {
        let r = app
            .get(
                &format!("/v1/zapier/triggers/new-domain?{bad}"),
                &acct.api_key,
            )
            .await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
    }
}

#[tokio::test]
async fn domain_enriched_lists_each_enrichment_the_account_asked_for() {
    let app = app().await;
    let acct = app.account(Plan::Pro).await;
    let other = app.account(Plan::Pro).await;
    let r = app
        .post(
            "/v1/zapier/actions/enrich-domain",
            &acct.api_key,
            json!({"domain": "https://www.Acme.com/about"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["domain"], "acme.com");
    assert_eq!(r.body["status"], "queued");
    assert!(r.body["record"].is_null());
    let id: i64 = sqlx::query_scalar("SELECT id FROM domains WHERE domain = 'acme.com'")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    let now = app.state.clock.now_ms();
    save::save(&app.state, id, &findings("Software", 40), now, now + 1)
        .await
        .unwrap();

    let first = ids(&app, &acct, "/v1/zapier/triggers/domain-enriched").await;
    assert_eq!(first.len(), 1);
    let r = app
        .get("/v1/zapier/triggers/domain-enriched", &acct.api_key)
        .await;
    let item = &r.body[0];
    assert_eq!(item["domain"], "acme.com");
    assert_eq!(item["industry"], "Software");
    assert_eq!(item["confidence"], 80);
    assert!(item["fields_filled"].is_i64());
    assert!(item["completeness_score"].is_i64());
    assert!(item["enriched_at"].is_string());
    // Another account did not ask, so it sees nothing.
    assert!(
        ids(&app, &other, "/v1/zapier/triggers/domain-enriched")
            .await
            .is_empty()
    );

    // The record is enriched now: the action answers it with the record.
    let r = app
        .post(
            "/v1/zapier/actions/enrich-domain",
            &acct.api_key,
            json!({"domain": "acme.com"}),
        )
        .await;
    assert_eq!(r.body["status"], "enriched");
    assert_eq!(r.body["industry"], "Software");
    assert_eq!(r.body["confidence"], 80);
    assert_eq!(r.body["record"]["domain"], "acme.com");

    // Asking again and enriching again is a new item with a new id.
    sqlx::query("INSERT INTO domain_enrichment_requests (domain_id, account_id, requested_at) VALUES ($1, $2, $3)")
        .bind(id)
        .bind(acct.account_id)
        .bind(now)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    crate::testkit::days_pass(&app, 1);
    let now = app.state.clock.now_ms();
    save::save(&app.state, id, &findings("Retail", 40), now, now + 1)
        .await
        .unwrap();
    let second = ids(&app, &acct, "/v1/zapier/triggers/domain-enriched").await;
    assert_eq!(second.len(), 2);
    assert_eq!(second[1], first[0], "the first keeps its id");
    assert_ne!(second[0], first[0]);
}

#[tokio::test]
async fn score_threshold_gives_each_crossing_its_own_id() {
    let app = app().await;
    let acct = app.account(Plan::Pro).await;
    let stranger = app.account(Plan::Pro).await;
    let hot = seed(&app, "hot.com", scored(true)).await;
    seed(&app, "cool.com", scored(false)).await;
    seed(&app, "unlisted.com", scored(true)).await;
    let list = new_list(&app, &acct.api_key, "Targets").await;
    let r = add_domains(&app, &acct.api_key, list, &["hot.com", "cool.com"]).await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    let r = app
        .get("/v1/zapier/triggers/score-threshold", &acct.api_key)
        .await;
    assert_eq!(r.status, 200);
    let items = r.body.as_array().unwrap();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["domain"], "hot.com");
    assert_eq!(items[0]["industry"], "Software");
    assert_eq!(items[0]["country"], "DE");
    assert_eq!(items[0]["confidence"], 80);
    let first_id = items[0]["id"].as_str().unwrap().to_owned();
    let triggered_at = items[0]["triggered_at"].as_str().unwrap().to_owned();
    // A lower threshold is a crossing of its own.
    let q = "/v1/zapier/triggers/score-threshold?threshold=50";
    assert_eq!(ids(&app, &acct, q).await.len(), 2);
    assert!(
        ids(&app, &stranger, "/v1/zapier/triggers/score-threshold")
            .await
            .is_empty()
    );

    // Polled again later: same id, same triggered_at.
    crate::testkit::days_pass(&app, 1);
    let r = app
        .get("/v1/zapier/triggers/score-threshold", &acct.api_key)
        .await;
    assert_eq!(r.body[0]["id"], first_id.as_str());
    assert_eq!(r.body[0]["triggered_at"], triggered_at.as_str());

    // It drops below, then comes back: a new crossing, a new id.
    let now = app.state.clock.now_ms();
    save::save(&app.state, hot, &scored(false), now, now + 1)
        .await
        .unwrap();
    assert!(
        ids(&app, &acct, "/v1/zapier/triggers/score-threshold")
            .await
            .is_empty()
    );
    crate::testkit::days_pass(&app, 1);
    let now = app.state.clock.now_ms();
    save::save(&app.state, hot, &scored(true), now, now + 1)
        .await
        .unwrap();
    let again = ids(&app, &acct, "/v1/zapier/triggers/score-threshold").await;
    assert_eq!(again.len(), 1);
    assert_ne!(again[0], first_id);
    for bad in ["threshold=101", "threshold=-5", "limit=500"] {
        let r = app
            .get(
                &format!("/v1/zapier/triggers/score-threshold?{bad}"),
                &acct.api_key,
            )
            .await;
        assert_eq!(r.status, 400, "{bad}");
    }
}

#[tokio::test]
async fn add_to_list_uses_the_lists_rules() {
    let app = app().await;
    let acct = app.account(Plan::Pro).await;
    let other = app.account(Plan::Pro).await;
    let list = new_list(&app, &acct.api_key, "Inbound").await;
    let post = |key: String, body: Value| {
        let app = &app;
        async move { app.post("/v1/zapier/actions/add-to-list", &key, body).await }
    };
    let r = post(
        acct.api_key.clone(),
        json!({"domain": "https://www.Example.org/pricing", "list_id": list, "notes": "from a form"}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["success"], true);
    assert_eq!(r.body["domain"], "example.org");
    assert_eq!(r.body["list_id"], list);
    assert_eq!(r.body["message"], "Added to Inbound");
    let notes: String = sqlx::query_scalar("SELECT notes FROM list_items WHERE list_id = $1")
        .bind(list)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(notes, "from a form");
    let r = post(
        acct.api_key.clone(),
        json!({"domain": "example.org", "list_id": list}),
    )
    .await;
    assert_eq!(r.body["message"], "Already in Inbound");

    let r = post(
        other.api_key.clone(),
        json!({"domain": "a.com", "list_id": list}),
    )
    .await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (404, "Lead list not found")
    );
    let r = post(
        acct.api_key.clone(),
        json!({"domain": "not a domain", "list_id": list}),
    )
    .await;
    assert_eq!(r.status, 400);
    // The list cap is 2 here.
    let r = post(
        acct.api_key.clone(),
        json!({"domain": "b.com", "list_id": list}),
    )
    .await;
    assert_eq!(r.status, 200);
    let r = post(
        acct.api_key.clone(),
        json!({"domain": "c.com", "list_id": list}),
    )
    .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    let r = post(acct.api_key.clone(), json!({"list_id": list})).await;
    assert_eq!(r.status, 400, "domain is required");
}

/// The account's watch `id` as `GET /v1/watchlist` shows it.
async fn watch_of(app: &TestApp, acct: &TestAccount, id: &Value) -> Value {
    let r = app.get("/v1/watchlist", &acct.api_key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| &w["id"] == id)
        .cloned()
        .unwrap()
}

#[tokio::test]
async fn add_to_watchlist_maps_alert_types_onto_the_watch() {
    let app = app().await;
    let acct = app.account(Plan::Pro).await;
    let watch = |body: Value| {
        let app = &app;
        let key = acct.api_key.clone();
        async move {
            app.post("/v1/zapier/actions/add-to-watchlist", &key, body)
                .await
        }
    };
    let r = watch(json!({"domain": "http://tech.io/x", "alert_types": ["tech"]})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["domain"], "tech.io");
    assert_eq!(r.body["monitoring"], json!(["tech"]));
    let w = watch_of(&app, &acct, &r.body["watchlist_id"]).await;
    assert_eq!(w["alert_on_tech_change"], true);
    assert_eq!(w["alert_on_industry_change"], false);
    assert_eq!(w["alert_on_email_change"], false);
    assert_eq!(w["alert_on_status_change"], false);

    let r = watch(json!({"domain": "content.io", "alert_types": ["content", "ssl"]})).await;
    assert_eq!(r.body["monitoring"], json!(["content", "dns", "ssl"]));
    let w = watch_of(&app, &acct, &r.body["watchlist_id"]).await;
    assert_eq!(w["alert_on_industry_change"], true);
    assert_eq!(w["alert_on_email_change"], true);
    assert_eq!(w["alert_on_status_change"], true);
    assert_eq!(w["alert_on_tech_change"], false);

    let r = watch(json!({"domain": "all.io"})).await;
    assert_eq!(
        r.body["monitoring"],
        json!(["tech", "content", "dns", "ssl"])
    );
    // The platform may run an action twice: the watch is answered as it is.
    let again = watch(json!({"domain": "all.io", "alert_types": ["tech"]})).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.body["watchlist_id"], r.body["watchlist_id"]);
    assert_eq!(
        again.body["monitoring"],
        json!(["tech", "content", "dns", "ssl"])
    );

    let r = watch(json!({"domain": "x.io", "alert_types": ["whois"]})).await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(r.detail().contains("dns, content, tech, ssl"));
}
