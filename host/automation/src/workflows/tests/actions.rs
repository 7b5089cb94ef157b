//! The port-backed actions end to end (webhook in, run drained, record
//! read back): scoring and lists, enrichment, enrolment, automatic
//! replies through a capturing SMTP server; and the intent-alert and
//! tracked-keyword triggers started by their outbox events.

use serde_json::{Value, json};

use super::runs::{call_in, webhook_workflow};
use super::*;
use crate::webhooks::dispatch::dispatch_once;
use outreach_core::error::details::SCORING_RULE_NOT_FOUND;
use outreach_core::events::{self, EventType};
use outreach_core::smtp_capture::CaptureServer;
use outreach_outbound::send_accounts::store::{self as send_accounts, SendAccountRow};

/// A webhook workflow of `actions`, called once with `domains`; answers
/// the run.
async fn hook_run(app: &TestApp, key: &str, actions: Value, domains: Value) -> Value {
    let (id, token) = webhook_workflow(app, key, actions).await;
    call_in(app, key, id, &token, json!({"domains": domains})).await
}

async fn count(app: &TestApp, sql: &str, id: i64) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
        .bind(id)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
}

/// Asserts the run failed at its first action with `detail`.
fn failed_with(run: &Value, action: &str, detail: &str) {
    assert_eq!(run["status"], "error", "{run}");
    let first = &run["actions_executed"][0];
    assert_eq!(first["status"], "error", "{run}");
    assert_eq!(first["error"], detail, "{run}");
    assert_eq!(
        run["error"],
        format!("action 0 ({action}) failed: {detail}"),
        "{run}"
    );
}

async fn new_list(app: &TestApp, key: &str) -> i64 {
    let r = app
        .post("/v1/lists", key, json!({"name": "From runs"}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["id"].as_i64().unwrap()
}

#[tokio::test]
async fn score_domains_then_add_to_list_with_the_accounts_rule_and_list() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    pool(
        &app,
        &[
            json!({"domain": "acme.io", "industry": "Software"}),
            json!({"domain": "shop.example", "industry": "Retail"}),
        ],
    )
    .await;
    let r = app
        .post(
            "/v1/scoring/rules",
            &a.api_key,
            json!({"name": "SaaS", "conditions": [
                {"field": "industry", "op": "equals", "value": "Software", "points": 60}]}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let rule: i64 = r.body["id"].as_str().unwrap()["rule_".len()..]
        .parse()
        .unwrap();
    let list = new_list(&app, &a.api_key).await;
    let rx = Receiver::start(json!({})).await;
    let actions = json!([
        {"type": "score_domains", "config": {"rule_id": rule}},
        {"type": "http_request", "config": {"method": "POST", "url": rx.url,
            "per_domain": true, "body": {"domain": "{{domain}}", "score": "{{score}}"}}},
        {"type": "add_to_list", "config": {"list_id": list}},
    ]);
    let domains = json!(["acme.io", "https://www.shop.example/", "new.example"]);
    let run = hook_run(&app, &a.api_key, actions, domains.clone()).await;
    assert_eq!(run["status"], "success", "{run}");
    let done = &run["actions_executed"];
    assert_eq!(done[0]["result"], json!({"scored": 3}));
    assert_eq!(done[0]["output_count"], 3);
    // The items carried their scores on: null for a domain the pool lacks.
    assert_eq!(
        *rx.got.lock().unwrap(),
        [
            json!({"domain": "acme.io", "score": 60}),
            json!({"domain": "shop.example", "score": 0}),
            json!({"domain": "new.example", "score": null}),
        ]
    );
    assert_eq!(done[2]["type"], "add_to_list");
    assert_eq!(done[2]["result"], json!({"added": 3, "skipped": 0}));
    let detail = app.get(&format!("/v1/lists/{list}"), &a.api_key).await;
    assert_eq!(detail.body["leads_count"], 3, "{:?}", detail.body);
    let mut listed: Vec<&str> = detail.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["domain"].as_str().unwrap())
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, ["acme.io", "new.example", "shop.example"]);

    // Another account's list, and an unknown rule, fail the run.
    let theirs = new_list(&app, &b.api_key).await;
    let actions = json!([{"type": "add_to_list", "config": {"list_id": theirs}}]);
    let run = hook_run(&app, &a.api_key, actions, domains.clone()).await;
    failed_with(&run, "add_to_list", "Lead list not found");
    let theirs = app.get(&format!("/v1/lists/{theirs}"), &b.api_key).await;
    assert_eq!(theirs.body["leads_count"], 0);
    let actions = json!([{"type": "score_domains", "config": {"rule_id": rule + 1000}}]);
    let run = hook_run(&app, &a.api_key, actions, domains).await;
    failed_with(&run, "score_domains", SCORING_RULE_NOT_FOUND);
}

#[tokio::test]
async fn enrich_queues_the_items_domains_for_the_account() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    pool(&app, &[json!({"domain": "imported.example"})]).await;
    let jobs = "SELECT COUNT(*) FROM jobs WHERE queue = 'domain_enrich' AND id > $1";
    let before = count(&app, jobs, 0).await;
    let actions = json!([{"type": "enrich", "config": {"fields": ["dns"]}}]);
    let domains = json!([
        "new.example",
        "https://www.new.example/x",
        "imported.example",
        "not a domain"
    ]);
    let run = hook_run(&app, &a.api_key, actions, domains).await;
    assert_eq!(run["status"], "success", "{run}");
    let done = &run["actions_executed"][0];
    assert_eq!(done["result"], json!({"queued": 2, "skipped": 2}), "{run}");
    assert_eq!(done["output_count"], 4, "the items pass on unchanged");
    assert_eq!(count(&app, jobs, 0).await - before, 2);
    let status: String = sqlx::query_scalar("SELECT status FROM domains WHERE domain = $1")
        .bind("new.example")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(status, "queued");
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM domain_enrichment_requests WHERE account_id = $1",
            a.account_id
        )
        .await,
        2,
        "the account waits for both"
    );
}

/// A sequence of `key`'s with one email step.
async fn sequence(app: &TestApp, key: &str, body: Value) -> i64 {
    let r = app.post("/v1/sequences", key, body).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = r.body["id"].as_i64().unwrap();
    let step = json!({"subject": "Hello", "body_html": "<p>Hi</p>"});
    let r = app
        .post(&format!("/v1/sequences/{id}/steps"), key, step)
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    id
}

#[tokio::test]
async fn enroll_in_sequence_takes_item_or_pool_addresses_and_counts_the_rest() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    pool(
        &app,
        &[json!({"domain": "shop.example", "website_email": "anna@shop.example"})],
    )
    .await;
    let seq = sequence(&app, &a.api_key, json!({"name": "Workflow"})).await;
    let domains = json!([
        {"domain": "acme.com", "email": "jane@acme.com"},
        "shop.example",
        "bare.example",
        {"domain": "odd.example", "email": "not an address"},
    ]);
    let actions = json!([{"type": "enroll_in_sequence", "config": {"sequence_id": seq}}]);
    let run = hook_run(&app, &a.api_key, actions, domains.clone()).await;
    assert_eq!(run["status"], "success", "{run}");
    assert_eq!(
        run["actions_executed"][0]["result"],
        json!({"enrolled": 2, "skipped": 0, "skipped_without_email": 2}),
        "{run}"
    );
    let r = app
        .get(&format!("/v1/sequences/{seq}/enrollments"), &a.api_key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["total"], 2);
    let mut enrolled: Vec<(&str, &str)> = r.body["enrollments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap();
            (text("contact_email"), text("domain"))
        })
        .collect();
    enrolled.sort_unstable();
    assert_eq!(
        enrolled,
        [
            ("anna@shop.example", "shop.example"),
            ("jane@acme.com", "acme.com")
        ]
    );

    // Another account's sequence is the enroll endpoint's 404.
    let theirs = sequence(&app, &b.api_key, json!({"name": "Theirs"})).await;
    let r = app
        .post(
            &format!("/v1/sequences/{theirs}/enroll"),
            &a.api_key,
            json!({"contacts": [{"domain": "acme.com", "contact_email": "joe@acme.com"}]}),
        )
        .await;
    assert_eq!(r.status, 404, "{:?}", r.body);
    let detail = r.body["detail"].as_str().unwrap().to_owned();
    let actions = json!([{"type": "enroll_in_sequence", "config": {"sequence_id": theirs}}]);
    let run = hook_run(&app, &a.api_key, actions, domains).await;
    failed_with(&run, "enroll_in_sequence", &detail);
    let r = app
        .get(&format!("/v1/sequences/{theirs}/enrollments"), &b.api_key)
        .await;
    assert_eq!(r.body["total"], 0);
}

/// A plain-SMTP mailbox of `account_id` whose server is the capture
/// server on `port`; returns its id.
async fn mailbox(app: &TestApp, account_id: i64, port: u16) -> i64 {
    let now = app.state.clock.now_ms();
    let row = SendAccountRow {
        id: 0,
        account_id,
        email: "sam@seller.test".into(),
        display_name: Some("Sam Seller".into()),
        provider: "smtp".into(),
        status: "active".into(),
        warmup_enabled: false,
        warmup_progress_pct: 0.0,
        daily_send_limit: 1000,
        emails_sent_today: 0,
        sent_day: 0,
        smtp_host: "127.0.0.1".into(),
        smtp_port: port.into(),
        smtp_encryption: "none".into(),
        imap_host: "127.0.0.1".into(),
        imap_port: 143,
        credentials: String::new(),
        smtp_verified: true,
        imap_verified: true,
        connected_at: now,
        last_activity_at: None,
        created_at: now,
        updated_at: now,
    };
    let creds = json!({"smtp_username": "seller", "smtp_password": "pw",
        "imap_username": "seller", "imap_password": "pw"})
    .to_string();
    let secrets = app.state.secrets.clone();
    send_accounts::insert(&app.state.db, &row, move |id| {
        secrets.encrypt(&format!("send_account:{id}"), &creds)
    })
    .await
    .unwrap()
    .unwrap()
}

/// An `interested` reply from jane@acme.com at `mailbox`, in its own thread.
async fn inbound_reply(app: &TestApp, account_id: i64, mailbox: i64) {
    let now = app.state.clock.now_ms();
    let thread: i64 = sqlx::query_scalar(
        "INSERT INTO inbox_threads (account_id, thread_id, domain, contact_email, subject,
             last_received_at, message_count, status, created_at, updated_at)
         VALUES ($1, 'wf-thread', 'acme.com', 'jane@acme.com', 'Re: Hello', $2, 1, 'open', $2, $2)
         RETURNING id",
    )
    .bind(account_id)
    .bind(now)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO inbox_replies (account_id, thread_row_id, send_account_id, message_key,
             message_id, in_reply_to, from_email, from_name, subject, body_text, full_text,
             headers, received_at, domain, kind, classification_label,
             classification_confidence, classification_model, classification_provider,
             classified_at, created_at)
         VALUES ($1, $2, $3, 'm1@mail.acme.com', 'm1@mail.acme.com', 'otr.1.1.abc@seller.test',
             'jane@acme.com', 'Jane Doe', 'Re: Hello', 'Sounds good', 'Sounds good', '[]', $4,
             'acme.com', 'reply', 'interested', 0.9, 'rules-v1', 'outreach', $4, $4)",
    )
    .persistent(false)
    .bind(account_id)
    .bind(thread)
    .bind(mailbox)
    .bind(now)
    .execute(&app.state.db.pool)
    .await
    .unwrap();
}

#[tokio::test]
async fn auto_reply_template_answers_a_reply_once_across_runs() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let smtp = CaptureServer::start("pw").await;
    let mailbox = mailbox(&app, a.account_id, smtp.port).await;
    inbound_reply(&app, a.account_id, mailbox).await;
    let actions = json!([{"type": "auto_reply_template", "config": {
        "template_subject": "Thanks", "template_body": "Hi {{first_name|there}}, talk soon",
        "only_classes": ["interested"]}}]);
    let (id, token) = webhook_workflow(&app, &a.api_key, actions).await;
    let body = json!({"domains": ["acme.com"]});
    let first = call_in(&app, &a.api_key, id, &token, body.clone()).await;
    assert_eq!(first["status"], "success", "{first}");
    assert_eq!(
        first["actions_executed"][0]["result"],
        json!({"replied": 1, "skipped": 0}),
        "{first}"
    );
    let sent = smtp.messages();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].to, vec!["jane@acme.com"]);
    assert_eq!(sent[0].from, "sam@seller.test");
    assert_eq!(sent[0].header("Subject").as_deref(), Some("Thanks"));
    assert_eq!(
        sent[0].header("In-Reply-To").as_deref(),
        Some("<m1@mail.acme.com>")
    );
    assert!(sent[0].data.contains("talk soon"), "{}", sent[0].data);
    let second = call_in(&app, &a.api_key, id, &token, body).await;
    assert_eq!(second["status"], "success", "{second}");
    assert_eq!(
        second["actions_executed"][0]["result"],
        json!({"replied": 0, "skipped": 1}),
        "{second}"
    );
    assert_eq!(smtp.messages().len(), 1, "answered once");
}

async fn record(app: &TestApp, account_id: i64, event: EventType, data: Value) {
    let mut conn = app.state.db.pool.acquire().await.unwrap();
    let now = app.state.clock.now_ms();
    events::record(&mut conn, account_id, event, &data, now)
        .await
        .unwrap();
}

async fn runs_of(app: &TestApp, key: &str, id: i64) -> Vec<Value> {
    let r = app.get(&format!("/v1/workflows/{id}/runs"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["runs"].as_array().unwrap().clone()
}

async fn fan_out(app: &TestApp) {
    dispatch_once(&app.state, 100).await.unwrap();
    crate::workflows::runs::drain(&app.state).await.unwrap();
}

fn memory_action() -> Value {
    json!([{"type": "cross_run_memory", "config": {"op": "store", "key": "k", "value": "{{domains}}"}}])
}

fn alert_event(alert_id: i64) -> Value {
    json!({"alert_id": alert_id, "alert_name": "x", "history_id": 1,
        "matched_domains": [{"domain": "a.com", "intent_score": 80, "level": "high",
            "signals": [], "likely_buys": []}]})
}

#[tokio::test]
async fn intent_alert_and_keyword_workflows_start_from_their_events() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    let alert = app
        .post(
            "/v1/alerts",
            &a.api_key,
            json!({"name": "Hot", "delivery_channels": {"email": false}}),
        )
        .await;
    assert_eq!(alert.status, 201, "{:?}", alert.body);
    let alert_id = alert.body["id"].as_i64().unwrap();
    let on_alert = create(
        &app,
        &a.api_key,
        json!({"name": "alert", "trigger_type": "intent_alert",
            "trigger_config": {"alert_id": alert_id}, "actions": memory_action()}),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    let on_keyword = create(
        &app,
        &a.api_key,
        json!({"name": "keyword", "trigger_type": "tracked_keyword_match",
            "actions": memory_action()}),
    )
    .await["id"]
        .as_i64()
        .unwrap();

    // Another alert of the account, and another account's keyword, start nothing.
    record(
        &app,
        a.account_id,
        EventType::SearchAlert,
        alert_event(alert_id + 1000),
    )
    .await;
    let keyword = |id: i64, domain: &str| {
        json!({"keyword_id": id, "keyword": "crm", "domain": domain,
            "excerpt": "We launched a new CRM"})
    };
    record(
        &app,
        b.account_id,
        EventType::KeywordMatch,
        keyword(3, "b.com"),
    )
    .await;
    fan_out(&app).await;
    assert!(runs_of(&app, &a.api_key, on_alert).await.is_empty());
    assert!(runs_of(&app, &a.api_key, on_keyword).await.is_empty());

    record(
        &app,
        a.account_id,
        EventType::SearchAlert,
        alert_event(alert_id),
    )
    .await;
    record(
        &app,
        a.account_id,
        EventType::KeywordMatch,
        keyword(7, "k.com"),
    )
    .await;
    fan_out(&app).await;
    let runs = runs_of(&app, &a.api_key, on_alert).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["trigger_event"], "search.alert");
    assert_eq!(runs[0]["domain_count"], 1);
    assert_eq!(runs[0]["status"], "success", "{}", runs[0]);
    assert_eq!(runs[0]["trigger_data"]["data"]["alert_id"], alert_id);
    let runs = runs_of(&app, &a.api_key, on_keyword).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["trigger_event"], "keyword.match");
    assert_eq!(runs[0]["domain_count"], 1);
    assert_eq!(runs[0]["status"], "success", "{}", runs[0]);
    assert_eq!(runs[0]["trigger_data"]["data"]["domain"], "k.com");
}
