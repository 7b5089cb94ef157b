//! The scoring rules' endpoints through the router, on the backend the
//! suite runs: listing, creating, reading, changing and deleting, default
//! rules read-only, ids that name nothing of the caller's, the checks'
//! 400s, and the per-account cap (also under concurrent creates).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::service::READ_ONLY;
use super::tests::{app, app_with, b2b, create, delete, put, rule, seed};
use outreach_core::accounts::limits::LimitSetting;
use outreach_core::accounts::plans::Plan;

#[tokio::test]
async fn rules_are_listed_created_read_changed_and_deleted() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let list = app.get("/v1/scoring/rules", &a.api_key).await;
    assert_eq!(list.status, 200, "{:?}", list.body);
    let defaults = list.body["data"].as_array().unwrap().clone();
    assert_eq!(list.body["count"], defaults.len());
    assert!(defaults.len() >= 2);
    assert_eq!(defaults[0]["id"], "default");
    assert!(defaults.iter().all(|d| d["is_default"] == true
        && d["created_at"].is_null()
        && d["updated_at"].is_null()));

    let r = app
        .post(
            "/v1/scoring/rules",
            &a.api_key,
            json!({
                "name": "  SaaS in Germany ",
                "description": "Software companies we can reach",
                "conditions": [
                    {"field": "industry", "op": "equals", "value": "Software", "points": 40},
                    {"field": "country", "op": "in", "value": ["DE", "AT"], "points": 30},
                    {"field": "phone", "op": "exists", "points": 30},
                ],
            }),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = r.body["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("rule_"), "{id}");
    assert_eq!(r.body["name"], "SaaS in Germany");
    assert_eq!(r.body["description"], "Software companies we can reach");
    assert_eq!(r.body["is_default"], false);
    assert_eq!(r.body["created_at"], "2026-11-21T12:00:00Z");
    assert_eq!(r.body["updated_at"], "2026-11-21T12:00:00Z");
    assert_eq!(
        r.body["conditions"][2],
        json!({"field": "phone", "op": "exists", "value": true, "points": 30}),
        "exists is stored with its boolean"
    );
    let created = r.body.clone();

    let path = format!("/v1/scoring/rules/{id}");
    let got = app.get(&path, &a.api_key).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.body, created);
    let list = app.get("/v1/scoring/rules", &a.api_key).await;
    assert_eq!(list.body["count"], defaults.len() + 1);
    assert_eq!(
        list.body["data"][defaults.len()],
        created,
        "after the defaults"
    );

    // PUT changes the fields it is given.
    app.clock.advance(Duration::from_secs(60));
    let r = put(&app, &path, &a.api_key, json!({"name": "SaaS DACH"})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["name"], "SaaS DACH");
    assert_eq!(r.body["conditions"], created["conditions"]);
    assert_eq!(r.body["description"], created["description"]);
    assert_eq!(r.body["created_at"], created["created_at"]);
    assert_eq!(r.body["updated_at"], "2026-11-21T12:01:00Z");
    let r = put(
        &app,
        &path,
        &a.api_key,
        json!({"description": null, "conditions": [{"field": "gaps", "op": "contains", "value": "crm", "points": 10}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(r.body["description"].is_null());
    assert_eq!(r.body["name"], "SaaS DACH");
    assert_eq!(r.body["conditions"].as_array().unwrap().len(), 1);
    // An invalid change changes nothing.
    let bad = put(
        &app,
        &path,
        &a.api_key,
        json!({"name": "ok", "conditions": [{"field": "gaps", "op": "gte", "value": 1, "points": 10}]}),
    )
    .await;
    assert_eq!(bad.status, 400, "{:?}", bad.body);
    assert_eq!(app.get(&path, &a.api_key).await.body["name"], "SaaS DACH");

    let r = delete(&app, &path, &a.api_key).await;
    assert_eq!(r.status, 204, "{:?}", r.body);
    let r = app.get(&path, &a.api_key).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.detail(), "Scoring rule not found");
    assert_eq!(delete(&app, &path, &a.api_key).await.status, 404);
    let list = app.get("/v1/scoring/rules", &a.api_key).await;
    assert_eq!(list.body["count"], defaults.len());
}

#[tokio::test]
async fn default_rules_are_read_only() {
    let app = app().await;
    let a = app.account(Plan::Enterprise).await;
    for id in ["default", "default_intent", "default_ecommerce"] {
        let path = format!("/v1/scoring/rules/{id}");
        let r = app.get(&path, &a.api_key).await;
        assert_eq!(r.status, 200, "{id}: {:?}", r.body);
        assert_eq!(r.body["id"], id);
        assert_eq!(r.body["is_default"], true);
        let total: i64 = r.body["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["points"].as_i64().unwrap())
            .sum();
        assert_eq!(total, 100, "{id}");
        let r = put(&app, &path, &a.api_key, json!({"name": "mine"})).await;
        assert_eq!(r.status, 400, "{id}: {:?}", r.body);
        assert_eq!(r.detail(), READ_ONLY);
        let r = delete(&app, &path, &a.api_key).await;
        assert_eq!(r.status, 400);
        assert_eq!(r.detail(), READ_ONLY);
    }
    let list = app.get("/v1/scoring/rules", &a.api_key).await;
    assert_eq!(list.body["data"][0]["name"], "B2B fit");
}

#[tokio::test]
async fn malformed_and_foreign_rule_ids_are_not_found() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    seed(&app, "isolated.com", b2b()).await;
    let theirs = create(
        &app,
        &b.api_key,
        rule(
            "B's rule",
            json!([{"field": "domain", "op": "exists", "points": 50}]),
        ),
    )
    .await;
    let n: i64 = theirs.strip_prefix("rule_").unwrap().parse().unwrap();
    for id in [
        theirs.clone(),
        "rule_x".into(),
        "foo".into(),
        "rule_".into(),
        "rule_0".into(),
        "rule_-1".into(),
        format!("rule_0{n}"),
        format!("rule_+{n}"),
        "Default".into(),
        format!("rule_{}", n + 1000),
    ] {
        let path = format!("/v1/scoring/rules/{id}");
        for r in [
            app.get(&path, &a.api_key).await,
            put(&app, &path, &a.api_key, json!({"name": "taken"})).await,
            delete(&app, &path, &a.api_key).await,
            app.post(
                "/v1/scoring",
                &a.api_key,
                json!({"domain": "isolated.com", "rule_id": id}),
            )
            .await,
            app.post(
                "/v1/scoring/batch",
                &a.api_key,
                json!({"domains": ["isolated.com"], "rule_id": id}),
            )
            .await,
        ] {
            assert_eq!(r.status, 404, "{id}: {:?}", r.body);
            assert_eq!(r.detail(), "Scoring rule not found", "{id}");
        }
    }
    // Not listed for A, untouched for B.
    let list = app.get("/v1/scoring/rules", &a.api_key).await;
    assert!(
        list.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["id"] != theirs.as_str())
    );
    let r = app
        .get(&format!("/v1/scoring/rules/{theirs}"), &b.api_key)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["name"], "B's rule");
    let r = app
        .post(
            "/v1/scoring",
            &b.api_key,
            json!({"domain": "isolated.com", "rule_id": theirs}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["score"], 50);
}

#[tokio::test]
async fn invalid_rules_are_refused_with_400() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let ok = json!({"field": "industry", "op": "equals", "value": "Software", "points": 10});
    let with = |c: Value| rule("r", json!([c]));
    let cases: Vec<(Value, &str)> = vec![
        (
            with(json!({"field": "revenue", "op": "gte", "value": 5, "points": 10})),
            "conditions[0]: unknown field 'revenue'; allowed: domain, status,",
        ),
        (
            with(json!({"field": "industry", "op": "like", "value": "x", "points": 10})),
            "conditions[0]: unknown op 'like'",
        ),
        (
            with(json!({"field": "industry", "op": "gte", "value": 5, "points": 10})),
            "conditions[0]: op 'gte' does not apply to text field 'industry'",
        ),
        (
            with(json!({"field": "has_spf", "op": "contains", "value": "x", "points": 10})),
            "conditions[0]: op 'contains' does not apply to boolean field 'has_spf'",
        ),
        (
            with(json!({"field": "industry", "op": "in", "value": "Software", "points": 10})),
            "conditions[0]: in takes an array",
        ),
        (
            with(json!({"field": "intent_score", "op": "gte", "value": "50", "points": 10})),
            "conditions[0]: 'intent_score' takes a number value",
        ),
        (
            with(json!({"field": "phone", "op": "exists", "value": "yes", "points": 10})),
            "conditions[0]: exists takes a boolean",
        ),
        (
            with(json!({"field": "industry", "op": "exists", "points": 101})),
            "conditions[0]: points must be between -100 and 100",
        ),
        (
            with(json!({"field": "industry", "op": "exists", "points": -101})),
            "conditions[0]: points must be between -100 and 100",
        ),
        (
            with(json!({"field": "business_type", "op": "equals", "value": "B2X", "points": 1})),
            "conditions[0]: unknown business_type 'B2X'",
        ),
        (
            rule("r", json!([])),
            "conditions must hold 1 to 50 conditions",
        ),
        (
            rule("r", json!(vec![ok.clone(); 51])),
            "conditions must hold 1 to 50 conditions",
        ),
        (rule("", json!([ok])), "name must be 1 to 200 characters"),
        (rule("   ", json!([ok])), "name must be 1 to 200 characters"),
        (
            rule(&"n".repeat(201), json!([ok])),
            "name must be 1 to 200 characters",
        ),
        (
            json!({"name": "r", "description": "d".repeat(1001), "conditions": [ok]}),
            "description must be at most 1000 characters",
        ),
        // serde's own refusals, in the error format.
        (
            json!({"name": "r", "conditions": [ok], "weight": 2}),
            "unknown field `weight`",
        ),
        (
            with(json!({"field": "industry", "op": "exists", "points": 10, "note": "x"})),
            "unknown field `note`",
        ),
        (
            with(json!({"field": "industry", "op": "exists"})),
            "missing field `points`",
        ),
        (
            with(json!({"field": "industry", "op": "exists", "points": 1.5})),
            "",
        ),
    ];
    for (body, detail) in cases {
        let r = app
            .post("/v1/scoring/rules", &a.api_key, body.clone())
            .await;
        assert_eq!(r.status, 400, "{body}: {:?}", r.body);
        assert!(
            r.detail().contains(detail),
            "{body}: {} should contain {detail}",
            r.detail()
        );
    }
    // The boundaries themselves are accepted.
    create(
        &app,
        &a.api_key,
        rule(&"n".repeat(200), json!(vec![ok.clone(); 50])),
    )
    .await;
    create(
        &app,
        &a.api_key,
        json!({"name": "r", "description": "d".repeat(1000), "conditions": [
            {"field": "industry", "op": "exists", "points": 100},
            {"field": "industry", "op": "exists", "points": -100},
        ]}),
    )
    .await;
    // Nothing else was stored.
    let list = app.get("/v1/scoring/rules", &a.api_key).await;
    let own = list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["is_default"] == false)
        .count();
    assert_eq!(own, 2);
}

#[tokio::test]
async fn the_51st_rule_is_refused_at_the_default_cap() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let body = rule(
        "r",
        json!([{"field": "domain", "op": "exists", "points": 1}]),
    );
    let mut first = String::new();
    for i in 0..50 {
        let id = create(&app, &a.api_key, body.clone()).await;
        if i == 0 {
            first = id;
        }
    }
    let r = app
        .post("/v1/scoring/rules", &a.api_key, body.clone())
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert_eq!(
        r.detail(),
        "Plan limit reached: the pro plan allows 50 scoring rules"
    );
    // Default rules do not count; another account has its own 50.
    let b = app.account(Plan::Pro).await;
    create(&app, &b.api_key, body.clone()).await;
    // Deleting one makes room again.
    assert_eq!(
        delete(&app, &format!("/v1/scoring/rules/{first}"), &a.api_key)
            .await
            .status,
        204
    );
    create(&app, &a.api_key, body).await;
}

#[tokio::test]
async fn concurrent_creates_do_not_pass_the_cap() {
    let app = app_with(|c| {
        c.limits.insert(
            "starter".into(),
            BTreeMap::from([("scoring_rules".to_string(), LimitSetting::Number(3))]),
        );
    })
    .await;
    let a = app.account(Plan::Starter).await;
    let body = rule(
        "r",
        json!([{"field": "domain", "op": "exists", "points": 1}]),
    );
    let answers = futures::future::join_all(
        (0..8).map(|_| app.post("/v1/scoring/rules", &a.api_key, body.clone())),
    )
    .await;
    let created = answers.iter().filter(|r| r.status == 201).count();
    let refused = answers
        .iter()
        .filter(|r| r.status == 400 && r.detail().starts_with("Plan limit reached"))
        .count();
    assert_eq!((created, refused), (3, 5), "{answers:?}");
    let stored: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM scoring_rules WHERE account_id = $1")
            .bind(a.account_id)
            .fetch_one(&app.state.db.pool)
            .await
            .unwrap();
    assert_eq!(stored, 3);
}
