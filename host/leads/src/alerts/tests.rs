//! Alert rules through the router, on the backend the suite runs: the
//! endpoints and their checks, evaluation (history, the three events,
//! re-enrichment not new), history pages, the test run, and delivery by
//! email to a capturing SMTP server and to a local Slack receiver, with
//! retries and the outbound policy.

use std::time::Duration;

use serde_json::{Value, json};

use super::deliver;
use crate::testkit::{delete, evaluate, outbox, put, record, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::events::EventType;
use outreach_core::smtp_capture::CaptureServer;
use outreach_core::testing::TestApp;
use outreach_core::testing::stub::{Canned, Stub};

async fn app_with(adjust: impl FnOnce(&mut outreach_core::config::Config)) -> TestApp {
    TestApp::with_areas(&[crate::AREA], |c| {
        c.rdap_bootstrap_url = "http://127.0.0.1:9/".into();
        adjust(c);
    })
    .await
}

async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    let r = app.post("/v1/alerts", key, body).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body
}

fn quiet(name: &str, filters: Value) -> Value {
    json!({"name": name, "filters": filters, "delivery_channels": {"email": false}})
}

#[tokio::test]
async fn rules_are_created_listed_changed_partially_and_deleted() {
    let app = app_with(|_| {}).await;
    let a = app.account(Plan::Starter).await;
    let other = app.account(Plan::Starter).await;
    let r = create(&app, &a.api_key, json!({"name": "Hot SaaS"})).await;
    let id = r["id"].as_i64().unwrap();
    assert_eq!(
        r["filters"],
        json!({"industry": null, "country": null, "min_intent_score": 50, "required_signals": []})
    );
    assert_eq!(
        r["delivery_channels"],
        json!({"email": true, "slack": false, "in_app": true, "slack_webhook_url": null})
    );
    assert_eq!(r["is_active"], true);
    assert!(r["last_triggered_at"].is_null());
    let list = app.get("/v1/alerts", &a.api_key).await;
    assert_eq!(list.body["plan_limit"], 5);
    assert_eq!(list.body["plan"], "starter");
    assert_eq!(list.body["data"][0]["id"], id);

    let path = format!("/v1/alerts/{id}");
    let r = put(
        &app,
        &path,
        &a.api_key,
        json!({"filters": {"industry": "software"}}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["filters"]["industry"], "Software");
    assert_eq!(
        r.body["filters"]["min_intent_score"], 50,
        "only the fields sent change"
    );
    assert_eq!(r.body["name"], "Hot SaaS");
    let r = put(
        &app,
        &path,
        &a.api_key,
        json!({"is_active": false, "delivery_channels": {"in_app": false}}),
    )
    .await;
    assert_eq!(r.body["is_active"], false);
    assert_eq!(r.body["delivery_channels"]["email"], true);
    assert_eq!(r.body["delivery_channels"]["in_app"], false);
    assert_eq!(r.body["filters"]["industry"], "Software");
    let r = put(
        &app,
        &path,
        &a.api_key,
        json!({"filters": {"industry": null}}),
    )
    .await;
    assert!(r.body["filters"]["industry"].is_null(), "null clears");

    assert_eq!(
        put(&app, &path, &other.api_key, json!({"name": "x"}))
            .await
            .status,
        404
    );
    assert_eq!(delete(&app, &path, &other.api_key).await.status, 404);
    let t = app
        .post(&format!("{path}/test"), &other.api_key, json!({}))
        .await;
    assert_eq!(t.status, 404);
    assert_eq!(delete(&app, &path, &a.api_key).await.status, 204);
    assert_eq!(delete(&app, &path, &a.api_key).await.status, 404);
}

#[tokio::test]
async fn bad_input_is_refused_and_the_cap_writes_nothing() {
    let app = app_with(|_| {}).await;
    let a = app.account(Plan::Free).await;
    let cases = [
        (
            json!({"name": "x", "filters": {"industry": "Softwear"}}),
            "'Softwear'",
        ),
        (json!({"name": "x", "filters": {"country": "ZZ"}}), "'ZZ'"),
        (
            json!({"name": "x", "filters": {"required_signals": ["has_saas"]}}),
            "'has_saas'",
        ),
        (
            json!({"name": "x", "filters": {"min_intent_score": 101}}),
            "min_intent_score",
        ),
        (json!({"name": "n".repeat(201)}), "name"),
        (
            json!({"name": "x", "delivery_channels": {"slack": true}}),
            "slack_webhook_url",
        ),
        (
            json!({"name": "x", "delivery_channels": {"slack": true, "slack_webhook_url": "https://10.0.0.5/hook"}}),
            "",
        ),
        (
            json!({"name": "x", "delivery_channels": {"slack": true, "slack_webhook_url": "https://169.254.169.254/latest"}}),
            "",
        ),
        (
            json!({"name": "x", "delivery_channels": {"slack": true, "slack_webhook_url": "http://hooks.example.com/x"}}),
            "HTTPS",
        ),
    ];
    for (body, named) in cases {
        let r = app.post("/v1/alerts", &a.api_key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {:?}", r.body);
        assert!(r.detail().contains(named), "{body}: {}", r.detail());
    }
    assert_eq!(
        app.get("/v1/alerts", &a.api_key).await.body["data"],
        json!([])
    );
    create(&app, &a.api_key, json!({"name": "one"})).await;
    let r = app
        .post("/v1/alerts", &a.api_key, json!({"name": "two"}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        app.get("/v1/alerts", &a.api_key).await.body["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let r = app.get("/v1/alerts/history?limit=101", &a.api_key).await;
    assert_eq!(r.status, 400);
    let r = app.get("/v1/alerts/history?page=0", &a.api_key).await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn new_matches_make_one_history_entry_and_the_three_events() {
    let app = app_with(|_| {}).await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    // Two rules of `a` both match hot Software records; `b`'s matches none.
    let wide = create(
        &app,
        &a.api_key,
        quiet(
            "Software",
            json!({"industry": "Software", "min_intent_score": 0}),
        ),
    )
    .await;
    let hot = create(
        &app,
        &a.api_key,
        quiet(
            "Hot",
            json!({"min_intent_score": 80, "required_signals": ["has_crm"]}),
        ),
    )
    .await;
    create(
        &app,
        &b.api_key,
        quiet(
            "Retail in Iceland",
            json!({"industry": "Retail", "country": "IS"}),
        ),
    )
    .await;
    // record(0): Software, intent 0; record(12): Software, intent 40;
    // record(24): Software, intent 80 (hot), has_crm.
    for (d, i) in [
        ("a.example", 0),
        ("b.example", 12),
        ("c.example", 24),
        ("r.example", 1),
    ] {
        seed(&app, d, record(i)).await;
    }
    evaluate(&app).await;
    let history = app.get("/v1/alerts/history", &a.api_key).await;
    assert_eq!(history.status, 200, "{:?}", history.body);
    assert_eq!(history.body["total"], 2);
    let entries = history.body["data"].as_array().unwrap();
    let of = |rule: &Value| {
        entries
            .iter()
            .find(|e| e["alert_id"] == rule["id"])
            .unwrap()
            .clone()
    };
    let w = of(&wide);
    assert_eq!(w["alert_name"], "Software");
    let domains: Vec<&str> = w["matched_domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["domain"].as_str().unwrap())
        .collect();
    assert_eq!(domains, ["a.example", "b.example", "c.example"]);
    assert_eq!(
        w["delivered_via"],
        json!({"email": false, "in_app": true, "slack": false})
    );
    let h = of(&hot);
    assert_eq!(
        h["matched_domains"],
        json!([{"domain": "c.example", "intent_score": 80, "level": "hot", "signals": ["has_crm"], "likely_buys": []}])
    );
    let rules = app.get("/v1/alerts", &a.api_key).await;
    assert!(rules.body["data"][0]["last_triggered_at"].is_string());

    let alerts = outbox(&app, a.account_id, EventType::SearchAlert).await;
    assert_eq!(alerts.len(), 2);
    assert_eq!(alerts[0]["alert_id"], wide["id"]);
    assert_eq!(alerts[0]["history_id"], w["id"]);
    assert_eq!(alerts[0]["matched_domains"][2]["level"], "hot");
    let new = outbox(&app, a.account_id, EventType::DomainNewMatch).await;
    assert_eq!(new.len(), 4, "one per rule and domain: {new:?}");
    assert_eq!(new[0]["domain"], "a.example");
    assert_eq!(new[0]["industry"], "Software");
    assert_eq!(new[0]["country"], "DE");
    assert_eq!(new[0]["confidence"], 0.0);
    let high = outbox(&app, a.account_id, EventType::IntentHighDetected).await;
    assert_eq!(
        high.len(),
        1,
        "once per account and domain, not per rule: {high:?}"
    );
    assert_eq!(high[0]["domain"], "c.example");
    assert_eq!(high[0]["level"], "hot");
    assert!(
        outbox(&app, b.account_id, EventType::SearchAlert)
            .await
            .is_empty()
    );
    let b_history = app.get("/v1/alerts/history", &b.api_key).await;
    assert_eq!(b_history.body["total"], 0, "no history crosses accounts");

    // Enriched again: matched before, so nothing new.
    seed(&app, "c.example", record(24)).await;
    evaluate(&app).await;
    assert_eq!(
        app.get("/v1/alerts/history", &a.api_key).await.body["total"],
        2
    );
    // Switched off, a rule records nothing.
    put(
        &app,
        &format!("/v1/alerts/{}", wide["id"]),
        &a.api_key,
        json!({"is_active": false}),
    )
    .await;
    seed(&app, "d.example", record(4)).await;
    evaluate(&app).await;
    assert_eq!(
        app.get("/v1/alerts/history", &a.api_key).await.body["total"],
        2
    );
}

#[tokio::test]
async fn history_pages_and_filters_by_rule() {
    let app = app_with(|_| {}).await;
    let a = app.account(Plan::Pro).await;
    let r1 = create(
        &app,
        &a.api_key,
        quiet("all", json!({"min_intent_score": 0})),
    )
    .await;
    create(
        &app,
        &a.api_key,
        quiet(
            "software",
            json!({"industry": "Software", "min_intent_score": 0}),
        ),
    )
    .await;
    // One batch per record: five entries for the first rule.
    for i in 0..5 {
        seed(&app, &format!("h{i}.example"), record(i)).await;
        evaluate(&app).await;
    }
    let all = app.get("/v1/alerts/history?limit=2", &a.api_key).await;
    assert_eq!(all.body["total"], 7, "{:?}", all.body);
    assert_eq!(all.body["pages"], 4);
    assert_eq!(all.body["page"], 1);
    assert_eq!(all.body["data"].as_array().unwrap().len(), 2);
    let page4 = app
        .get("/v1/alerts/history?limit=2&page=4", &a.api_key)
        .await;
    assert_eq!(page4.body["data"].as_array().unwrap().len(), 1);
    let ids: Vec<i64> = all.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    assert!(ids[0] > ids[1], "newest first");
    let only = app
        .get(
            &format!("/v1/alerts/history?alert_id={}", r1["id"]),
            &a.api_key,
        )
        .await;
    assert_eq!(only.body["total"], 5);
    assert_eq!(only.body["pages"], 1);
}

#[tokio::test]
async fn the_test_run_answers_matches_with_gaps_and_writes_nothing() {
    let app = app_with(|_| {}).await;
    let a = app.account(Plan::Pro).await;
    for i in 0..30 {
        let mut f = record(i);
        f.gaps = vec!["no CRM".into()];
        seed(&app, &format!("x{i}.example"), f).await;
    }
    evaluate(&app).await;
    let rule = create(
        &app,
        &a.api_key,
        quiet(
            "Software",
            json!({"industry": "Software", "min_intent_score": 0}),
        ),
    )
    .await;
    let r = app
        .post(
            &format!("/v1/alerts/{}/test", rule["id"]),
            &a.api_key,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["alert_id"], rule["id"]);
    assert_eq!(r.body["alert_name"], "Software");
    assert_eq!(r.body["matched_count"], 8);
    let matched = r.body["matched_domains"].as_array().unwrap();
    assert_eq!(matched.len(), 8);
    assert_eq!(matched[0]["gaps"], json!(["no CRM"]));
    let scores: Vec<i64> = matched
        .iter()
        .map(|m| m["intent_score"].as_i64().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "highest intent first: {scores:?}"
    );
    let wide = create(
        &app,
        &a.api_key,
        quiet("wide", json!({"min_intent_score": 0})),
    )
    .await;
    let r = app
        .post(
            &format!("/v1/alerts/{}/test", wide["id"]),
            &a.api_key,
            json!({}),
        )
        .await;
    assert_eq!(r.body["matched_count"], 30);
    assert_eq!(r.body["matched_domains"].as_array().unwrap().len(), 10);
    assert_eq!(
        app.get("/v1/alerts/history", &a.api_key).await.body["total"],
        0
    );
    assert!(app.get("/v1/alerts", &a.api_key).await.body["data"][0]["last_triggered_at"].is_null());
}

async fn deliver_all(app: &TestApp) {
    deliver::run_once(&app.state, "test").await.unwrap();
}

#[tokio::test]
async fn email_goes_to_the_owner_and_slack_to_its_webhook_with_retries() {
    let smtp = CaptureServer::start("pw").await;
    let app = app_with(|c| {
        c.unsafe_outbound_allow_loopback = true;
        c.smtp.host = "127.0.0.1".into();
        c.smtp.port = smtp.port;
        c.smtp.security = "none".into();
        c.smtp.from = "alerts@outreach.test".into();
    })
    .await;
    let slack = Stub::start().await;
    slack.set("/hook", Canned::json(500, json!({"error": "busy"})));
    let a = app.account(Plan::Pro).await;
    let rule = create(
        &app,
        &a.api_key,
        json!({"name": "Software", "filters": {"industry": "Software", "min_intent_score": 0},
               "delivery_channels": {"email": true, "slack": true, "slack_webhook_url": slack.url("/hook/T1/B2/secret")}}),
    )
    .await;
    assert_eq!(
        rule["delivery_channels"]["slack_webhook_url"],
        format!("http://127.0.0.1/…"),
        "masked"
    );
    let sealed: String =
        sqlx::query_scalar("SELECT slack_webhook_url FROM alert_rules WHERE id = $1")
            .bind(rule["id"].as_i64().unwrap())
            .fetch_one(&app.state.db.pool)
            .await
            .unwrap();
    assert!(!sealed.contains("secret"), "sealed at rest");

    seed(&app, "m.example", record(0)).await;
    evaluate(&app).await;
    deliver_all(&app).await;
    let mail = smtp.messages();
    assert_eq!(mail.len(), 1);
    let owner: String = sqlx::query_scalar("SELECT email FROM users WHERE account_id = $1")
        .bind(a.account_id)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(mail[0].to, vec![owner]);
    assert!(mail[0].data.contains("m.example"), "{}", mail[0].data);
    assert_eq!(slack.hits("/hook"), 1);
    let text = slack.last_body("/hook").unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.contains("Software") && text.contains("m.example"),
        "{text}"
    );
    let entry = &app.get("/v1/alerts/history", &a.api_key).await.body["data"][0];
    assert_eq!(
        entry["delivered_via"],
        json!({"email": true, "in_app": true, "slack": false})
    );

    // Not retried before its 30 s; then Slack answers and it is delivered.
    deliver_all(&app).await;
    assert_eq!(slack.hits("/hook"), 1);
    slack.set("/hook", Canned::json(200, json!({"ok": true})));
    app.clock.advance(Duration::from_secs(31));
    deliver_all(&app).await;
    assert_eq!(slack.hits("/hook"), 2);
    let entry = &app.get("/v1/alerts/history", &a.api_key).await.body["data"][0];
    assert_eq!(
        entry["delivered_via"],
        json!({"email": true, "in_app": true, "slack": true})
    );
    assert_eq!(
        smtp.messages().len(),
        1,
        "a failing channel never repeats the others"
    );
}

#[tokio::test]
async fn a_slack_url_the_policy_refuses_is_recorded_as_not_delivered() {
    let app = app_with(|_| {}).await;
    let a = app.account(Plan::Pro).await;
    let rule = create(
        &app,
        &a.api_key,
        quiet(
            "Software",
            json!({"industry": "Software", "min_intent_score": 0}),
        ),
    )
    .await;
    let id = rule["id"].as_i64().unwrap();
    // As if the name had resolved to a public address when the rule was
    // saved and to a private one now: only the delivery's check remains.
    let sealed = app
        .state
        .secrets
        .encrypt(&super::service::slack_aad(id), "http://10.1.2.3/hook");
    sqlx::query("UPDATE alert_rules SET via_slack = 1, slack_webhook_url = $1 WHERE id = $2")
        .bind(sealed)
        .bind(id)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    seed(&app, "m.example", record(0)).await;
    evaluate(&app).await;
    deliver_all(&app).await;
    let entry = &app.get("/v1/alerts/history", &a.api_key).await.body["data"][0];
    assert_eq!(entry["delivered_via"]["slack"], false);
    let error: Option<String> = sqlx::query_scalar("SELECT last_error FROM jobs WHERE queue = $1")
        .bind(deliver::QUEUE)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert!(error.is_some(), "the refusal is recorded on the job");
}
