//! The pool port as workflows call it, on the backend the suite runs
//! (`OUTREACH_TEST_BACKEND`): records and samples, ownership across
//! accounts, adding to lists with the list's rules, scoring, enrichment.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::domains::record::Technology;
use crate::testkit::{findings, new_list, outbox, seed};
use outreach_core::accounts::limits::LimitSetting;
use outreach_core::accounts::plans::Plan;
use outreach_core::events::EventType;
use outreach_core::ports::{Actor, PortError, SharedPoolPort, TriggerTarget};
use outreach_core::testing::{TestAccount, TestApp};

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |c| {
        c.rdap_bootstrap_url = "http://127.0.0.1:9/".into();
    })
    .await
}

/// The port as the workflow engine finds it: through the state.
fn port(app: &TestApp) -> SharedPoolPort {
    app.state.ext::<SharedPoolPort>().clone()
}

fn actor(a: &TestAccount, plan: Plan) -> Actor {
    Actor {
        account_id: a.account_id,
        plan,
    }
}

fn refusal(e: PortError) -> String {
    match e {
        PortError::Refused(detail) => detail,
        PortError::Internal(e) => panic!("internal error instead of a refusal: {e:?}"),
    }
}

fn items(domains: &[&str]) -> Vec<Value> {
    domains.iter().map(|d| json!({"domain": d})).collect()
}

async fn count(app: &TestApp, sql: &str, id: i64) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
        .bind(id)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn records_carry_the_documented_fields_and_samples_come_newest_first() {
    let app = app().await;
    let mut f = findings("Software", 72);
    f.sub_industry = Some("Developer tools".into());
    f.website_email = Some("hello@acme.io".into());
    f.employees_range = Some("11-50".into());
    f.alert_signals = vec!["has_crm".into(), "has_api".into()];
    f.audience_signals = vec!["has_crm".into(), "has_blog".into()];
    f.likely_buys = vec!["CRM".into()];
    f.technologies = vec![Technology {
        name: "HubSpot".into(),
        categories: vec!["CRM".into()],
        version: None,
        confidence: 90,
    }];
    seed(&app, "acme.io", f).await;
    app.clock.advance(Duration::from_secs(60));
    let mut g = findings("Retail", 10);
    g.registrant_country = None;
    g.ip_country = Some("NL".into());
    seed(&app, "shop.example", g).await;
    app.clock.advance(Duration::from_secs(60));
    seed(&app, "newest.example", findings("Healthcare", 40)).await;
    // A bare name on its way to enrichment: a record with nulls.
    crate::domains::pipeline::submit(&app.state, &["queued.example".into()], "api", None)
        .await
        .unwrap();

    let port = port(&app);
    let asked: Vec<String> = [
        "https://www.ACME.io/pricing",
        "shop.example",
        "queued.example",
        "unknown.example",
        "not a domain",
    ]
    .iter()
    .map(|d| d.to_string())
    .collect();
    let found = port.records(&app.state, &asked).await.unwrap();
    let mut keys: Vec<&str> = found.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["acme.io", "queued.example", "shop.example"]);
    assert_eq!(
        Value::Object(found["acme.io"].clone()),
        json!({
            "domain": "acme.io",
            "status": "enriched",
            "company_name": "Software Co",
            "industry": "Software",
            "sub_industry": "Developer tools",
            "country": "DE",
            "business_type": "B2B",
            "confidence": 0.8,
            "intent_score": 72,
            "intent_level": "warm",
            "signals": ["has_crm", "has_api", "has_blog"],
            "tech_stack": ["HubSpot"],
            "likely_buys": ["CRM"],
            "website_email": "hello@acme.io",
            "employees_range": "11-50",
            "enriched_at": "2026-11-21T12:00:00Z",
        })
    );
    assert_eq!(found["shop.example"]["country"], "NL");
    let queued = &found["queued.example"];
    assert_eq!(queued["status"], "queued");
    assert!(queued["business_type"].is_null() && queued["confidence"].is_null());
    assert!(queued["enriched_at"].is_null());

    let sample = port.sample(&app.state, 10).await.unwrap();
    let order: Vec<&str> = sample
        .iter()
        .map(|r| r["domain"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["newest.example", "shop.example", "acme.io"]);
    let two = port.sample(&app.state, 2).await.unwrap();
    assert_eq!(two.len(), 2);
    assert_eq!(two[0]["domain"], "newest.example");
    assert!(port.sample(&app.state, 0).await.unwrap().is_empty());
}

#[tokio::test]
async fn owns_answers_for_the_actors_account_only() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    seed(&app, "watched.example", findings("Software", 50)).await;
    let alert = app
        .post(
            "/v1/alerts",
            &a.api_key,
            json!({"name": "Hot", "delivery_channels": {"email": false}}),
        )
        .await;
    assert_eq!(alert.status, 201, "{:?}", alert.body);
    let audience = app
        .post(
            "/v1/audiences",
            &a.api_key,
            json!({"name": "All", "filters": {}}),
        )
        .await;
    assert_eq!(audience.status, 201, "{:?}", audience.body);
    let watch = app
        .post(
            "/v1/watchlist",
            &a.api_key,
            json!({"domain": "watched.example"}),
        )
        .await;
    assert_eq!(watch.status, 201, "{:?}", watch.body);
    let keyword = app
        .post(
            "/v1/intelligence/tracked-keywords",
            &a.api_key,
            json!({"keyword": "crm"}),
        )
        .await;
    assert_eq!(keyword.status, 201, "{:?}", keyword.body);

    let port = port(&app);
    for (target, body) in [
        (TriggerTarget::Alert, &alert.body),
        (TriggerTarget::Audience, &audience.body),
        (TriggerTarget::Watch, &watch.body),
        (TriggerTarget::Keyword, &keyword.body),
    ] {
        let id = body["id"].as_i64().unwrap();
        let owns = |who: &TestAccount, id| {
            let port = port.clone();
            let actor = actor(who, Plan::Pro);
            let state = app.state.clone();
            async move { port.owns(&state, actor, target, id).await.unwrap() }
        };
        assert!(owns(&a, id).await, "{target:?}");
        assert!(!owns(&b, id).await, "{target:?} of another account");
        assert!(!owns(&a, id + 1000).await, "{target:?} unknown");
    }
}

#[tokio::test]
async fn add_to_list_follows_the_lists_rules_and_records_events() {
    let app = TestApp::with_areas(&[crate::AREA], |c| {
        c.rdap_bootstrap_url = "http://127.0.0.1:9/".into();
        c.limits.insert(
            "starter".into(),
            BTreeMap::from([("list_items".to_string(), LimitSetting::Number(4))]),
        );
    })
    .await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    let list = new_list(&app, &a.api_key, "From workflows").await;
    let port = port(&app);
    let pro = actor(&a, Plan::Pro);

    let mut batch = items(&["acme.io", "https://www.Acme.io/about", "beta.example"]);
    batch.push(json!({"domain": "gamma.example", "notes": "from a run", "industry": "x"}));
    batch.push(json!({"no_domain": true}));
    batch.push(json!({"domain": "not a domain"}));
    let r = port
        .add_to_list(&app.state, pro, list, &batch)
        .await
        .unwrap();
    assert_eq!(r, json!({"added": 3, "skipped": 3}));
    let again = port
        .add_to_list(&app.state, pro, list, &items(&["acme.io", "delta.example"]))
        .await
        .unwrap();
    assert_eq!(again, json!({"added": 1, "skipped": 1}));
    let detail = app.get(&format!("/v1/lists/{list}"), &a.api_key).await;
    assert_eq!(detail.body["leads_count"], 4);
    let gamma = detail.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["domain"] == "gamma.example")
        .unwrap()
        .clone();
    assert_eq!(gamma["notes"], "from a run");
    assert_eq!(gamma["status"], "discovered");
    // The list's events, and the new domains queued for enrichment.
    let added = outbox(&app, a.account_id, EventType::ListItemAdded).await;
    let domains: Vec<&str> = added
        .iter()
        .map(|e| e["domain"].as_str().unwrap())
        .collect();
    assert_eq!(
        domains,
        ["acme.io", "beta.example", "gamma.example", "delta.example"]
    );
    assert_eq!(added[0]["list_name"], "From workflows");
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM domain_enrichment_requests WHERE account_id = $1",
            a.account_id
        )
        .await,
        4
    );

    // Another account's list is not found, and nothing is written.
    let r = port
        .add_to_list(
            &app.state,
            actor(&b, Plan::Pro),
            list,
            &items(&["b.example"]),
        )
        .await
        .unwrap_err();
    assert_eq!(refusal(r), "Lead list not found");
    let r = port
        .add_to_list(&app.state, pro, list + 100, &[])
        .await
        .unwrap_err();
    assert_eq!(refusal(r), "Lead list not found");

    // The actor's plan caps the list (Starter: 4 items here).
    let r = port
        .add_to_list(
            &app.state,
            actor(&a, Plan::Starter),
            list,
            &items(&["epsilon.example"]),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refusal(r),
        "Plan limit reached: a lead list holds at most 4 items (it has 4, this adds 1)"
    );
    assert_eq!(
        app.get(&format!("/v1/lists/{list}"), &a.api_key).await.body["leads_count"],
        4
    );
    assert_eq!(
        outbox(&app, a.account_id, EventType::ListItemAdded)
            .await
            .len(),
        4
    );
}

#[tokio::test]
async fn score_uses_the_accounts_rule_and_nulls_domains_the_pool_lacks() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    seed(&app, "acme.io", findings("Software", 72)).await;
    seed(&app, "shop.example", findings("Retail", 10)).await;
    let r = app
        .post(
            "/v1/scoring/rules",
            &a.api_key,
            json!({"name": "SaaS", "conditions": [
                {"field": "industry", "op": "equals", "value": "Software", "points": 60},
                {"field": "intent_score", "op": "gte", "value": 50, "points": 30},
            ]}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let rule: i64 = r.body["id"]
        .as_str()
        .unwrap()
        .strip_prefix("rule_")
        .unwrap()
        .parse()
        .unwrap();

    let port = port(&app);
    let batch = vec![
        json!({"domain": "https://acme.io/", "email": "ann@acme.io"}),
        json!({"domain": "shop.example"}),
        json!({"domain": "unknown.example"}),
        json!({"email": "no-domain@x.example"}),
    ];
    let scored = port
        .score(&app.state, actor(&a, Plan::Pro), rule, batch)
        .await
        .unwrap();
    assert_eq!(scored.len(), 4);
    assert_eq!(scored[0]["score"], 90);
    assert_eq!(scored[0]["email"], "ann@acme.io", "the item's fields stay");
    assert_eq!(
        scored[0]["score_breakdown"],
        json!([
            {"condition": "industry equals \"Software\"", "matched": true, "points": 60},
            {"condition": "intent_score gte 50", "matched": true, "points": 30},
        ])
    );
    assert_eq!(scored[1]["score"], 0);
    assert_eq!(scored[1]["score_breakdown"][0]["matched"], false);
    for unscored in &scored[2..] {
        assert!(unscored["score"].is_null() && unscored["score_breakdown"].is_null());
    }

    // Another account's rule, and one that does not exist.
    for (who, id) in [(&b, rule), (&a, rule + 100)] {
        let e = port
            .score(&app.state, actor(who, Plan::Pro), id, items(&["acme.io"]))
            .await
            .unwrap_err();
        assert_eq!(
            refusal(e),
            outreach_core::error::details::SCORING_RULE_NOT_FOUND
        );
    }
}

#[tokio::test]
async fn enrich_queues_what_the_bulk_endpoint_would_for_the_actor() {
    let app = app().await;
    let a = app.account(Plan::Free).await;
    seed(&app, "acme.io", findings("Software", 72)).await;
    let jobs_before = count(
        &app,
        "SELECT COUNT(*) FROM jobs WHERE queue = 'domain_enrich' AND id > $1",
        0,
    )
    .await;
    let port = port(&app);
    let domains: Vec<String> = [
        "new.example",
        "https://www.new.example/x",
        "other.example",
        "acme.io",
        "not a domain",
    ]
    .iter()
    .map(|d| d.to_string())
    .collect();
    let fields = vec!["dns".to_string(), "tech_stack".to_string()];
    let r = port
        .enrich(&app.state, actor(&a, Plan::Free), &domains, &fields)
        .await
        .unwrap();
    assert_eq!(r, json!({"queued": 2, "skipped": 3}));
    let jobs = count(
        &app,
        "SELECT COUNT(*) FROM jobs WHERE queue = 'domain_enrich' AND id > $1",
        0,
    )
    .await;
    assert_eq!(jobs - jobs_before, 2);
    let status: Vec<String> =
        sqlx::query_scalar("SELECT status FROM domains WHERE domain IN ($1, $2) ORDER BY domain")
            .bind("new.example")
            .bind("other.example")
            .fetch_all(&app.state.db.pool)
            .await
            .unwrap();
    assert_eq!(status, ["queued", "queued"]);
    // The actor waits for both (it gets their domain.enriched).
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM domain_enrichment_requests WHERE account_id = $1",
            a.account_id
        )
        .await,
        2
    );
    // Asking again queues no second job: both are already on their way.
    let r = port
        .enrich(&app.state, actor(&a, Plan::Free), &domains[..1], &[])
        .await
        .unwrap();
    assert_eq!(r, json!({"queued": 1, "skipped": 0}));
    let again = count(
        &app,
        "SELECT COUNT(*) FROM jobs WHERE queue = 'domain_enrich' AND id > $1",
        0,
    )
    .await;
    assert_eq!(again, jobs);

    let e = port
        .enrich(
            &app.state,
            actor(&a, Plan::Free),
            &domains,
            &["dns".to_string(), "screenshots".to_string()],
        )
        .await
        .unwrap_err();
    assert_eq!(
        refusal(e),
        "fields must be among dns, ssl, whois, tech_stack (got 'screenshots')"
    );
}
