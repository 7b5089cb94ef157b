//! Approvals through the router and the workers' passes, on either
//! backend: the email link, the page, the decision and the new run, the
//! Slack announcement, expiry on the injected clock, hostile input, and
//! two servers racing on one decision.

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use serde_json::{Value, json};

use super::notify;
use crate::workflows::runs::drain;
use crate::workflows::tests::{Receiver, run, starter};
use outreach_core::accounts::plans::Plan;
use outreach_core::smtp_capture::CaptureServer;
use outreach_core::testing::{TestAccount, TestApp, TestResponse};

async fn app_with_smtp(smtp: &CaptureServer) -> TestApp {
    let port = smtp.port;
    TestApp::with_areas(
        &[outreach_leads::AREA, outreach_outbound::AREA, crate::AREA],
        move |c| {
            c.smtp.host = "127.0.0.1".into();
            c.smtp.port = port;
            c.smtp.security = "none".into();
            c.smtp.from = "workflows@outreach.test".into();
            c.public_base_url = "https://outreach.example".into();
        },
    )
    .await
}

/// A webhook workflow: a wait, then a call to `rx` with the decision.
async fn waiting_workflow(
    app: &TestApp,
    a: &TestAccount,
    wait: Value,
    rx: &Receiver,
) -> (i64, String) {
    let actions = json!([
        {"type": "wait_for_approval", "config": wait},
        {"type": "http_request", "config": {"method": "POST", "url": rx.url,
            "body": {"decision": "{{trigger.approval_decision}}", "domains": "{{domains}}"}}},
    ]);
    let r = app
        .post(
            "/v1/workflows",
            &a.api_key,
            json!({"name": "Needs <b>review</b>", "trigger_type": "webhook", "actions": actions}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    (
        r.body["id"].as_i64().unwrap(),
        r.body["webhook_token"].as_str().unwrap().to_owned(),
    )
}

/// Starts a run with `domains`; answers the waiting run.
async fn start(app: &TestApp, a: &TestAccount, id: i64, token: &str, domains: Value) -> Value {
    let r = app
        .call(
            "POST",
            &format!("/v1/workflows/incoming/{token}"),
            None,
            Some(json!({"domains": domains})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    drain(&app.state).await.unwrap();
    run(app, &a.api_key, id, r.body["run_id"].as_i64().unwrap()).await
}

/// The message as a reader sees it: soft line breaks joined and `=XX`
/// escapes decoded (lettre sends the body quoted-printable).
fn quoted_printable(data: &str) -> String {
    let joined = data.replace("=\r\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'=', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn token_of(url: &str) -> String {
    url.rsplit('/').next().unwrap().to_owned()
}

async fn decide(app: &TestApp, token: &str, body: Value) -> TestResponse {
    app.call(
        "POST",
        &format!("/v1/workflows/approvals/{token}"),
        None,
        Some(body),
    )
    .await
}

async fn decide_form(app: &TestApp, token: &str, form: &str) -> TestResponse {
    let req = Request::builder()
        .method("POST")
        .uri(format!("/v1/workflows/approvals/{token}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(form.to_owned()))
        .unwrap();
    app.send(req).await
}

async fn page(app: &TestApp, token: &str) -> TestResponse {
    app.call(
        "GET",
        &format!("/v1/workflows/approvals/{token}"),
        None,
        None,
    )
    .await
}

async fn approval_runs(app: &TestApp, id: i64) -> Vec<i64> {
    sqlx::query_scalar(
        "SELECT id FROM workflow_runs WHERE workflow_id = $1 AND trigger_event = 'approval_received' ORDER BY id",
    )
    .bind(id)
    .fetch_all(&app.state.db.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn the_email_link_opens_a_page_whose_decision_starts_a_run_after_the_wait() {
    let smtp = CaptureServer::start("pw").await;
    let app = app_with_smtp(&smtp).await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({"ok": true})).await;
    let wait = json!({"email": "boss@example.com", "message": "Send to <script>alert(1)</script> {{domains}}?"});
    let (id, token) = waiting_workflow(&app, &a, wait, &rx).await;
    let waiting = start(&app, &a, id, &token, json!(["a.com", "b.com"])).await;

    // The run ends at the wait, recorded as waiting with the page's link.
    assert_eq!(waiting["status"], "success", "{waiting}");
    let actions = waiting["actions_executed"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "{waiting}");
    assert_eq!(actions[0]["status"], "waiting");
    let url = actions[0]["result"]["approval_url"].as_str().unwrap();
    assert!(
        url.starts_with("https://outreach.example/v1/workflows/approvals/apr_"),
        "{url}"
    );
    assert_eq!(actions[0]["result"]["domains_waiting"], 2);
    assert_eq!(rx.hits(), 0);

    // The announcement: one email with the link, the domains, the message.
    notify::run_once(&app.state, "test").await.unwrap();
    let mail = smtp.messages();
    assert_eq!(mail.len(), 1);
    assert_eq!(mail[0].to, vec!["boss@example.com".to_owned()]);
    let text = quoted_printable(&mail[0].data);
    assert!(text.contains(url), "{text}");
    assert!(text.contains("- a.com"));
    let token = token_of(url);

    // The page: escaped, no script allowed, not cached, two buttons.
    let p = page(&app, &token).await;
    assert_eq!(p.status, 200);
    let html = p.body.as_str().unwrap();
    assert!(!html.contains("<script>"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt; a.com, b.com"),
        "{html}"
    );
    assert!(html.contains("Needs &lt;b&gt;review&lt;/b&gt;"));
    assert!(html.contains("value=\"approved\"") && html.contains("value=\"rejected\""));
    assert!(html.contains("<li>b.com</li>"));
    assert_eq!(p.header("cache-control"), Some("no-store"));
    let csp = p.header("content-security-policy").unwrap();
    assert!(
        csp.contains("default-src 'none'") && !csp.contains("unsafe"),
        "{csp}"
    );

    // Deciding: the new run starts after the wait and reads the decision.
    let d = decide(&app, &token, json!({"decision": "approved"})).await;
    assert_eq!(d.status, 200, "{:?}", d.body);
    assert_eq!(d.body["status"], "approved");
    assert_eq!(d.body["workflow_id"], id);
    let run_id = d.body["run_id"].as_i64().unwrap();
    drain(&app.state).await.unwrap();
    let next = run(&app, &a.api_key, id, run_id).await;
    assert_eq!(next["status"], "success", "{next}");
    assert_eq!(next["trigger_event"], "approval_received");
    assert_eq!(next["actions_executed"].as_array().unwrap().len(), 1);
    assert_eq!(next["actions_executed"][0]["type"], "http_request");
    assert_eq!(next["actions_executed"][0]["index"], 1);
    assert_eq!(
        rx.got.lock().unwrap()[0],
        json!({"decision": "approved", "domains": ["a.com", "b.com"]})
    );

    // Every later decision, either one, changes nothing.
    for again in ["rejected", "approved"] {
        let d = decide(&app, &token, json!({"decision": again})).await;
        assert_eq!(d.status, 409, "{:?}", d.body);
        assert_eq!(d.body["status"], "already_decided");
        assert_eq!(d.body["decision"], "approved");
        assert_eq!(d.body["run_id"], run_id);
    }
    assert_eq!(approval_runs(&app, id).await, vec![run_id]);
    let p = page(&app, &token).await;
    let html = p.body.as_str().unwrap();
    assert!(
        html.contains("data-status=\"approved\"") && !html.contains("<form"),
        "{html}"
    );

    // Another account's key cannot see the run; the link needs no key.
    let other = app.account(Plan::Starter).await;
    let r = app
        .get(&format!("/v1/workflows/{id}/runs/{run_id}"), &other.api_key)
        .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn a_form_post_rejects_and_answers_a_page() {
    let smtp = CaptureServer::start("pw").await;
    let app = app_with_smtp(&smtp).await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({})).await;
    let wait = json!({"email": "boss@example.com", "message": "ok?"});
    let (id, token) = waiting_workflow(&app, &a, wait, &rx).await;
    let waiting = start(&app, &a, id, &token, json!(["a.com"])).await;
    let token = token_of(
        waiting["actions_executed"][0]["result"]["approval_url"]
            .as_str()
            .unwrap(),
    );

    // Without the field, or with another value: 400 and nothing decided.
    for form in ["", "other=1", "decision=maybe"] {
        let r = decide_form(&app, &token, form).await;
        assert_eq!(r.status, 400, "{form}: {:?}", r.body);
    }
    for body in [json!({}), json!({"decision": 1}), json!("approved")] {
        assert_eq!(decide(&app, &token, body).await.status, 400);
    }
    assert!(approval_runs(&app, id).await.is_empty());

    let r = decide_form(&app, &token, "decision=rejected").await;
    assert_eq!(r.status, 200);
    let html = r.body.as_str().unwrap();
    assert!(html.contains("data-status=\"rejected\""), "{html}");
    drain(&app.state).await.unwrap();
    assert_eq!(rx.got.lock().unwrap()[0]["decision"], "rejected");
    // The browser gets a page saying so; a JSON client a 409.
    let r = decide_form(&app, &token, "decision=approved").await;
    assert_eq!(r.status, 200);
    assert!(
        r.body
            .as_str()
            .unwrap()
            .contains("data-status=\"already_decided\"")
    );
}

#[tokio::test]
async fn expiry_unknown_tokens_and_nested_waits() {
    let smtp = CaptureServer::start("pw").await;
    let app = app_with_smtp(&smtp).await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({})).await;
    let wait = json!({"email": "boss@example.com", "message": "ok?", "expires_in_hours": 1.5});
    let (id, token) = waiting_workflow(&app, &a, wait, &rx).await;
    let waiting = start(&app, &a, id, &token, json!(["a.com"])).await;
    let result = &waiting["actions_executed"][0]["result"];
    let token = token_of(result["approval_url"].as_str().unwrap());

    app.clock.advance(Duration::from_secs(90 * 60 + 1));
    let d = decide(&app, &token, json!({"decision": "approved"})).await;
    assert_eq!(d.status, 410, "{:?}", d.body);
    assert_eq!(d.body["status"], "expired");
    assert_eq!(d.body["expires_at"], result["expires_at"]);
    assert!(approval_runs(&app, id).await.is_empty());
    let html = page(&app, &token).await.body.as_str().unwrap().to_owned();
    assert!(html.contains("data-status=\"expired\"") && !html.contains("<form"));

    for unknown in ["apr_nope", "x"] {
        assert_eq!(page(&app, unknown).await.status, 404);
        let d = decide(&app, unknown, json!({"decision": "approved"})).await;
        assert_eq!(d.status, 404);
        assert!(d.body["detail"].is_string());
    }

    // A wait inside a branch could not end the run: refused at save; so
    // are a missing recipient and a zero or negative expiry.
    let nested = json!([{"type": "conditional_branch", "config": {"branches": [
        {"when": {"field": "domain", "op": "exists"}, "then": [
            {"type": "wait_for_approval", "config": {"email": "a@b.co", "message": "m"}}]}]}}]);
    for actions in [
        nested,
        json!([{"type": "wait_for_approval", "config": {"message": "m"}}]),
        json!([{"type": "wait_for_approval", "config": {"email": "a@b.co", "message": "m", "expires_in_hours": 0}}]),
        json!([{"type": "wait_for_approval", "config": {"email": "a@b.co", "message": "m", "expires_in_hours": -1}}]),
        json!([{"type": "wait_for_approval", "config": {"slack_url": "ftp://x", "message": "m"}}]),
    ] {
        let r = app
            .post(
                "/v1/workflows",
                &a.api_key,
                json!({"name": "n", "trigger_type": "manual", "actions": actions}),
            )
            .await;
        assert_eq!(r.status, 400, "{actions}: {:?}", r.body);
    }
}

#[tokio::test]
async fn slack_announces_with_the_link_through_the_outbound_policy() {
    let smtp = CaptureServer::start("pw").await;
    let app = app_with_smtp(&smtp).await;
    let a = starter(&app).await;
    let slack = Receiver::start(json!({})).await;
    let rx = Receiver::start(json!({})).await;
    let wait = json!({"slack_url": slack.url, "message": "Go?"});
    let (id, token) = waiting_workflow(&app, &a, wait, &rx).await;
    let waiting = start(&app, &a, id, &token, json!(["a.com"])).await;
    let url = waiting["actions_executed"][0]["result"]["approval_url"]
        .as_str()
        .unwrap()
        .to_owned();
    notify::run_once(&app.state, "test").await.unwrap();
    let got = slack.got.lock().unwrap()[0].clone();
    assert!(got["text"].as_str().unwrap().contains(&url), "{got}");
    assert_eq!(got["blocks"][1]["elements"][0]["url"], url.as_str());
    assert!(smtp.messages().is_empty());
    // The Slack URL is sealed at rest, not in the approval row in clear.
    let target: String = sqlx::query_scalar("SELECT target_sealed FROM workflow_approvals")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert!(!target.contains("127.0.0.1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_racing_on_one_decision_decide_once() {
    let smtp = CaptureServer::start("pw").await;
    let app = app_with_smtp(&smtp).await;
    let second = app.another_server().await;
    let a = starter(&app).await;
    let rx = Receiver::start(json!({})).await;
    let wait = json!({"email": "boss@example.com", "message": "ok?"});
    let (id, token) = waiting_workflow(&app, &a, wait, &rx).await;
    let waiting = start(&app, &a, id, &token, json!(["a.com"])).await;
    let token = token_of(
        waiting["actions_executed"][0]["result"]["approval_url"]
            .as_str()
            .unwrap(),
    );

    let calls = (0..8).map(|i| {
        let server = if i % 2 == 0 { &app } else { &second };
        let decision = if i % 3 == 0 { "rejected" } else { "approved" };
        decide(server, &token, json!({"decision": decision}))
    });
    let answers = futures::future::join_all(calls).await;
    let won: Vec<&TestResponse> = answers.iter().filter(|r| r.status == 200).collect();
    assert_eq!(won.len(), 1, "{answers:?}");
    assert!(
        answers.iter().all(|r| r.status == 200 || r.status == 409),
        "{answers:?}"
    );
    let runs = approval_runs(&app, id).await;
    assert_eq!(runs, vec![won[0].body["run_id"].as_i64().unwrap()]);
}
