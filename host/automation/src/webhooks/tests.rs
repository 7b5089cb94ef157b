//! The webhooks area through the router and the workers' single passes, on
//! either backend, against a real HTTP receiver on loopback.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::deliver::deliver_due_once;
use super::dispatch::dispatch_once;
use super::signing::{service_signature, standard_signature};
use outreach_core::accounts::plans::Plan;
use outreach_core::events::{self, EventType};
use outreach_core::testing::{TestAccount, TestApp};

/// How the receiver answers.
#[derive(Clone, Debug)]
pub(crate) enum Answer {
    Status(u16),
    After(Duration, u16),
    Redirect,
    /// This status with a 50 MB body.
    Huge(u16),
}

#[derive(Clone, Debug)]
pub(crate) struct Received {
    pub(crate) headers: HeaderMap,
    pub(crate) body: String,
}

/// A receiver on loopback that records every request.
#[derive(Clone)]
pub(crate) struct Receiver {
    pub(crate) url: String,
    answer: Arc<Mutex<Answer>>,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub(crate) async fn start() -> Receiver {
        let answer = Arc::new(Mutex::new(Answer::Status(200)));
        let got = Arc::new(Mutex::new(Vec::new()));
        let (a, g) = (answer.clone(), got.clone());
        let app = axum::Router::new().fallback(move |headers: HeaderMap, body: Bytes| {
            let (a, g) = (a.clone(), g.clone());
            async move {
                g.lock().unwrap().push(Received {
                    headers,
                    body: String::from_utf8_lossy(&body).into_owned(),
                });
                let answer = a.lock().unwrap().clone();
                respond(answer).await
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { url, answer, got }
    }

    pub(crate) fn answer(&self, a: Answer) {
        *self.answer.lock().unwrap() = a;
    }

    pub(crate) fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }
}

async fn respond(answer: Answer) -> Response {
    let status = |s: u16| StatusCode::from_u16(s).unwrap();
    match answer {
        Answer::Status(s) => (status(s), "ok").into_response(),
        Answer::After(d, s) => {
            tokio::time::sleep(d).await;
            (status(s), "late").into_response()
        }
        Answer::Redirect => (
            StatusCode::FOUND,
            [("location", "http://127.0.0.1:1/elsewhere")],
        )
            .into_response(),
        Answer::Huge(s) => (status(s), vec![b'x'; 50 * 1024 * 1024]).into_response(),
    }
}

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |_| {}).await
}

async fn create(app: &TestApp, acct: &TestAccount, url: &str, events: Value) -> Value {
    let r = app
        .post(
            "/v1/webhooks",
            &acct.api_key,
            json!({"url": url, "events": events, "name": "crm"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body
}

async fn emit(app: &TestApp, account_id: i64, t: EventType, data: Value) -> i64 {
    let mut tx = app.state.db.pool.begin().await.unwrap();
    let id = events::record(&mut tx, account_id, t, &data, app.state.clock.now_ms())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    id
}

async fn pass(app: &TestApp) -> usize {
    dispatch_once(&app.state, 1000).await.unwrap();
    deliver_due_once(&app.state, 1000).await.unwrap()
}

async fn deliveries(app: &TestApp, acct: &TestAccount, query: &str) -> Value {
    let r = app
        .get(&format!("/v1/webhooks/deliveries{query}"), &acct.api_key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body
}

#[tokio::test]
async fn subscriptions_are_validated_and_the_secret_is_shown_once() {
    let app = app().await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let created = create(
        &app,
        &acct,
        "http://127.0.0.1:9/hook",
        json!([
            "alert.domain_matched",
            "search.alert",
            "sequence.email_replied"
        ]),
    )
    .await;
    assert_eq!(
        created["events"],
        json!(["search.alert", "sequence.replied"])
    );
    assert_eq!(created["name"], "crm");
    assert_eq!(created["is_active"], true);
    let secret = created["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"), "{secret}");
    let id = created["id"].as_i64().unwrap();

    let listed = app.get("/v1/webhooks", key).await;
    assert_eq!(listed.status, 200);
    assert_eq!(
        (
            listed.body["count"].clone(),
            listed.body["limit"].clone(),
            listed.body["remaining"].clone()
        ),
        (json!(1), json!(2), json!(1))
    );
    assert!(listed.body["webhooks"][0].get("secret").is_none());
    // Sealed at rest.
    let stored: String = sqlx::query_scalar("SELECT secret FROM webhooks WHERE id = $1")
        .bind(id)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert!(!stored.contains(&secret[6..]));

    let bad = [
        (
            json!({"url": "http://example.com/hook", "events": ["*"]}),
            "HTTPS",
        ),
        (
            json!({"url": "https://10.0.0.8/hook", "events": ["*"]}),
            "Blocked by SSRF guard",
        ),
        (
            json!({"url": "https://169.254.169.254/latest", "events": ["*"]}),
            "Blocked by SSRF guard",
        ),
        (
            json!({"url": "https://[::ffff:192.168.1.1]/", "events": ["*"]}),
            "Blocked by SSRF guard",
        ),
        (json!({"url": "not a url", "events": ["*"]}), "Invalid url"),
        (json!({"url": "https://example.com/", "events": []}), "1-20"),
        (
            json!({"url": "https://example.com/", "events": vec!["search.alert"; 21]}),
            "1-20",
        ),
        (
            json!({"url": "https://example.com/", "events": ["list.deleted"]}),
            "Unknown event type",
        ),
        (
            json!({"url": "https://example.com/", "events": ["*"], "name": ""}),
            "name",
        ),
        (json!({"events": ["*"]}), "url"),
    ];
    for (body, detail) in bad {
        let r = app.post("/v1/webhooks", key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {:?}", r.body);
        assert!(r.detail().contains(detail), "{body}: {}", r.detail());
    }
    assert_eq!(app.get("/v1/webhooks", key).await.body["count"], 1);

    // PUT and PATCH change the same fields; bad input changes nothing.
    let path = format!("/v1/webhooks/{id}");
    let r = app
        .call(
            "PATCH",
            &path,
            Some(key),
            Some(json!({"events": ["list.item_added"], "name": "ops"})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        (r.body["events"].clone(), r.body["name"].clone()),
        (json!(["list.item_added"]), json!("ops"))
    );
    let r = app
        .call("PUT", &path, Some(key), Some(json!({"is_active": false})))
        .await;
    assert_eq!(r.body["is_active"], false);
    let r = app
        .call(
            "PUT",
            &path,
            Some(key),
            Some(json!({"events": ["nope"], "name": "changed"})),
        )
        .await;
    assert_eq!(r.status, 400);
    let r = app
        .call(
            "PATCH",
            &path,
            Some(key),
            Some(json!({"url": "https://10.1.2.3/"})),
        )
        .await;
    assert_eq!(r.status, 400);
    let now = app.get("/v1/webhooks", key).await.body["webhooks"][0].clone();
    assert_eq!(
        (now["name"].clone(), now["url"].clone()),
        (json!("ops"), json!("http://127.0.0.1:9/hook"))
    );

    // The Starter cap is 2, with the spec's 400.
    create(&app, &acct, "https://127.0.0.1/b", json!(["*"])).await;
    let r = app
        .post(
            "/v1/webhooks",
            key,
            json!({"url": "https://127.0.0.1/c", "events": ["*"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.detail().contains("Plan limit"), "{}", r.detail());

    // Free accounts get 403; other accounts' ids are 404 everywhere.
    let free = app.account(Plan::Free).await;
    assert_eq!(app.get("/v1/webhooks", &free.api_key).await.status, 403);
    let other = app.account(Plan::Pro).await;
    let ok = &other.api_key;
    for (method, p) in [
        ("PUT", path.clone()),
        ("PATCH", path.clone()),
        ("DELETE", path.clone()),
        ("POST", format!("{path}/test")),
        ("GET", format!("{path}/deliveries")),
        ("GET", format!("/v1/webhooks/deliveries?webhook_id={id}")),
    ] {
        let r = app
            .call(method, &p, Some(ok), Some(json!({"name": "x"})))
            .await;
        assert_eq!(r.status, 404, "{method} {p}: {:?}", r.body);
    }
    let r = app.call("DELETE", &path, Some(key), None).await;
    assert_eq!(r.status, 204);
    assert_eq!(app.get("/v1/webhooks", key).await.body["count"], 1);
}

#[tokio::test]
async fn events_fan_out_to_interested_subscriptions_signed_as_spec2_says() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let acct = app.account(Plan::Pro).await;
    let stranger = app.account(Plan::Pro).await;
    let lists = create(&app, &acct, &receiver.url, json!(["list.item_added"])).await;
    let all = create(&app, &acct, &receiver.url, json!(["*"])).await;
    create(&app, &stranger, &receiver.url, json!(["*"])).await;

    emit(
        &app,
        acct.account_id,
        EventType::ListItemAdded,
        json!({"list_id": 7, "domain": "acme.com"}),
    )
    .await;
    emit(
        &app,
        acct.account_id,
        EventType::SequenceOpened,
        json!({"sequence_id": 3}),
    )
    .await;
    assert_eq!(pass(&app).await, 3);
    assert_eq!(pass(&app).await, 0, "nothing is delivered twice");

    let got = receiver.received();
    assert_eq!(got.len(), 3);
    for r in &got {
        let body: Value = serde_json::from_str(&r.body).unwrap();
        let webhook_id = body["webhook_id"].as_i64().unwrap();
        let secret = if webhook_id == lists["id"].as_i64().unwrap() {
            &lists
        } else {
            &all
        }["secret"]
            .as_str()
            .unwrap()
            .to_owned();
        let h = |n: &str| r.headers.get(n).unwrap().to_str().unwrap().to_owned();
        assert_eq!(h("content-type"), "application/json");
        assert_eq!(h("user-agent"), "Service-Webhook/1.0");
        assert_eq!(h("x-service-event"), body["event"].as_str().unwrap());
        assert_eq!(
            h("x-service-signature"),
            service_signature(&secret, r.body.as_bytes())
        );
        assert_eq!(h("x-service-delivery-id"), h("x-service-delivery"));
        assert_eq!(h("webhook-id"), h("x-service-delivery-id"));
        let ts: i64 = h("webhook-timestamp").parse().unwrap();
        assert_eq!(ts, app.state.clock.now_ms() / 1000);
        assert_eq!(
            h("webhook-signature"),
            standard_signature(&secret, &h("webhook-id"), ts, r.body.as_bytes())
        );
        assert_eq!(body["timestamp"], "2026-11-21T12:00:00Z");
        assert!(body["data"].is_object());
    }
    let events: Vec<&str> = got
        .iter()
        .map(|r| r.headers["x-service-event"].to_str().unwrap())
        .collect();
    assert_eq!(
        events.iter().filter(|e| **e == "list.item_added").count(),
        2
    );

    let log = deliveries(&app, &acct, "").await;
    assert_eq!(log["deliveries"].as_array().unwrap().len(), 3);
    assert_eq!(log["summary"]["total_delivered"], 3);
    assert_eq!(log["summary"]["success_rate"], 100.0);
    let first = &log["deliveries"][0];
    assert_eq!(
        (
            first["status"].clone(),
            first["status_code"].clone(),
            first["attempt"].clone()
        ),
        (json!("delivered"), json!(200), json!(1))
    );
    let filtered = deliveries(&app, &acct, "?event_type=sequence.opened&limit=5").await;
    assert_eq!(filtered["deliveries"].as_array().unwrap().len(), 1);
    assert_eq!(
        deliveries(&app, &acct, "?limit=1").await["deliveries"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        app.get("/v1/webhooks/deliveries?limit=201", &acct.api_key)
            .await
            .status,
        400
    );
    let one = app
        .get(
            &format!("/v1/webhooks/{}/deliveries", lists["id"]),
            &acct.api_key,
        )
        .await;
    assert_eq!(one.body["deliveries"].as_array().unwrap().len(), 1);
    assert_eq!(
        deliveries(&app, &stranger, "").await["deliveries"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

/// Advances the manual clock and runs one delivery pass.
async fn after(app: &TestApp, by: Duration) -> usize {
    app.clock.advance(by);
    pass(app).await
}

#[tokio::test]
async fn retries_follow_the_schedule_and_a_receiver_that_comes_back_gets_exactly_one_delivery() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let acct = app.account(Plan::Starter).await;
    let hook = create(&app, &acct, &receiver.url, json!(["*"])).await;
    receiver.answer(Answer::Status(503));
    emit(
        &app,
        acct.account_id,
        EventType::DomainEnriched,
        json!({"domain": "acme.com"}),
    )
    .await;

    assert_eq!(pass(&app).await, 1);
    let d = &deliveries(&app, &acct, "").await["deliveries"][0];
    assert_eq!(
        (
            d["status"].clone(),
            d["status_code"].clone(),
            d["attempt"].clone()
        ),
        (json!("retrying"), json!(503), json!(1))
    );
    assert_eq!(d["next_attempt_at"], "2026-11-21T12:00:30Z");
    // Not before it is due.
    assert_eq!(after(&app, Duration::from_secs(29)).await, 0);
    assert_eq!(after(&app, Duration::from_secs(1)).await, 1); // retry 1 at +30 s
    assert_eq!(after(&app, Duration::from_secs(119)).await, 0);
    assert_eq!(after(&app, Duration::from_secs(1)).await, 1); // retry 2 at +2 min
    receiver.answer(Answer::Status(204));
    assert_eq!(after(&app, Duration::from_secs(599)).await, 0);
    assert_eq!(after(&app, Duration::from_secs(1)).await, 1); // retry 3 at +10 min: up
    assert_eq!(after(&app, Duration::from_secs(86_400)).await, 0);

    let got = receiver.received();
    assert_eq!(got.len(), 4);
    // The same body and delivery id on every attempt, signed afresh.
    assert!(
        got.iter()
            .all(|r| r.body == got[0].body
                && r.headers["webhook-id"] == got[0].headers["webhook-id"])
    );
    let d = &deliveries(&app, &acct, "").await["deliveries"][0];
    assert_eq!(
        (d["status"].clone(), d["attempt"].clone()),
        (json!("delivered"), json!(4))
    );
    let detail = app
        .get(
            &format!("/v1/webhooks/{}/deliveries/{}", hook["id"], d["id"]),
            &acct.api_key,
        )
        .await;
    let codes: Vec<i64> = detail.body["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status_code"].as_i64().unwrap())
        .collect();
    assert_eq!(codes, vec![503, 503, 503, 204]);
    assert_eq!(detail.body["payload"]["event"], "domain.enriched");
}

#[tokio::test]
async fn after_the_fifth_retry_the_delivery_fails_and_can_be_replayed() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let acct = app.account(Plan::Starter).await;
    let hook = create(&app, &acct, &receiver.url, json!(["*"])).await;
    receiver.answer(Answer::Status(500));
    emit(
        &app,
        acct.account_id,
        EventType::ExportCompleted,
        json!({"export_id": 1}),
    )
    .await;
    assert_eq!(pass(&app).await, 1);
    for delay in [30, 120, 600, 3600, 21_600] {
        assert_eq!(after(&app, Duration::from_secs(delay)).await, 1);
    }
    assert_eq!(after(&app, Duration::from_secs(30 * 86_400)).await, 0);
    let log = deliveries(&app, &acct, "").await;
    let d = &log["deliveries"][0];
    assert_eq!(
        (d["status"].clone(), d["attempt"].clone()),
        (json!("failed"), json!(6))
    );
    assert_eq!(log["summary"]["total_failed"], 1);
    assert_eq!(log["summary"]["success_rate"], 0.0);

    // The retry endpoint tries now, for the owner only.
    let path = format!("/v1/webhooks/{}/deliveries/{}/retry", hook["id"], d["id"]);
    let other = app.account(Plan::Pro).await;
    assert_eq!(app.post(&path, &other.api_key, json!({})).await.status, 404);
    let r = app.post(&path, &acct.api_key, json!({})).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        (r.body["status"].clone(), r.body["attempt"].clone()),
        (json!("failed"), json!(7))
    );
    receiver.answer(Answer::Status(200));
    let r = app.post(&path, &acct.api_key, json!({})).await;
    assert_eq!(
        (r.body["status"].clone(), r.body["attempt"].clone()),
        (json!("delivered"), json!(8))
    );
    assert_eq!(r.body["attempts"].as_array().unwrap().len(), 8);
    assert_eq!(receiver.received().len(), 8);
    let missing = format!("/v1/webhooks/{}/deliveries/999999/retry", hook["id"]);
    assert_eq!(
        app.post(&missing, &acct.api_key, json!({})).await.status,
        404
    );
}

#[tokio::test]
async fn slow_redirecting_and_huge_answers_are_judged_by_status_in_time() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let acct = app.account(Plan::Starter).await;
    let hook = create(&app, &acct, &receiver.url, json!(["*"])).await;
    let test = format!("/v1/webhooks/{}/test", hook["id"]);

    receiver.answer(Answer::Huge(200));
    let r = app.post(&test, &acct.api_key, json!({})).await;
    assert_eq!(
        (r.body["success"].clone(), r.body["status_code"].clone()),
        (json!(true), json!(200)),
        "{:?}",
        r.body
    );
    let detail = app
        .get(
            &format!(
                "/v1/webhooks/{}/deliveries/{}",
                hook["id"], r.body["delivery_id"]
            ),
            &acct.api_key,
        )
        .await;
    assert_eq!(
        detail.body["attempts"][0]["response_excerpt"]
            .as_str()
            .unwrap()
            .len(),
        1024
    );
    assert_eq!(detail.body["event_type"], "webhook.test");

    receiver.answer(Answer::Huge(500));
    let r = app.post(&test, &acct.api_key, json!({})).await;
    assert_eq!(
        (r.body["success"].clone(), r.body["status_code"].clone()),
        (json!(false), json!(500))
    );

    receiver.answer(Answer::Redirect);
    let r = app.post(&test, &acct.api_key, json!({})).await;
    assert_eq!(
        (r.body["success"].clone(), r.body["status_code"].clone()),
        (json!(false), json!(302))
    );
    assert!(
        r.body["error"]
            .as_str()
            .unwrap()
            .contains("Redirect not followed")
    );

    receiver.answer(Answer::After(Duration::from_secs(6), 200));
    let r = app.post(&test, &acct.api_key, json!({})).await;
    assert_eq!(
        (r.body["success"].clone(), r.body["status_code"].clone()),
        (json!(false), Value::Null)
    );
    assert_eq!(r.body["error"], "No answer within 5 seconds");
    assert!(r.body["response_ms"].as_i64().unwrap() < 5_900);
    // Test deliveries are logged but never retried.
    assert_eq!(after(&app, Duration::from_secs(86_400)).await, 0);
    let log = deliveries(&app, &acct, "").await;
    assert_eq!(
        (
            log["summary"]["total_delivered"].clone(),
            log["summary"]["total_failed"].clone()
        ),
        (json!(1), json!(3))
    );
    assert_eq!(log["summary"]["success_rate"], 25.0);
}

#[tokio::test]
async fn the_address_is_checked_again_at_every_delivery() {
    // A stored URL that the policy refuses now (an operator narrowed the
    // allowlist, or a name started resolving to a private address) fails
    // its attempt with the guard's reason and is retried on schedule.
    let app = app().await;
    let acct = app.account(Plan::Starter).await;
    let hook = create(&app, &acct, "https://127.0.0.1:9/hook", json!(["*"])).await;
    sqlx::query("UPDATE webhooks SET url = 'https://10.0.0.8/hook' WHERE id = $1")
        .bind(hook["id"].as_i64().unwrap())
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    emit(
        &app,
        acct.account_id,
        EventType::AudienceUpdated,
        json!({"audience_id": 1}),
    )
    .await;
    assert_eq!(pass(&app).await, 1);
    let d = &deliveries(&app, &acct, "").await["deliveries"][0];
    assert_eq!(d["status"], "retrying");
    assert!(
        d["error"]
            .as_str()
            .unwrap()
            .starts_with("Blocked by SSRF guard"),
        "{d}"
    );
    assert_eq!(d["url"], "https://10.0.0.8/hook");
}

#[tokio::test]
async fn a_subscription_failing_for_five_days_is_disabled_and_the_account_told() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let acct = app.account(Plan::Pro).await;
    let failing = create(&app, &acct, &receiver.url, json!(["list.item_added"])).await;
    let watcher = Receiver::start().await;
    create(&app, &acct, &watcher.url, json!(["webhook.disabled"])).await;
    receiver.answer(Answer::Status(500));
    for day in 0..=5 {
        emit(
            &app,
            acct.account_id,
            EventType::ListItemAdded,
            json!({"day": day}),
        )
        .await;
        pass(&app).await;
        if day < 5 {
            let w = app.get("/v1/webhooks", &acct.api_key).await.body["webhooks"][0].clone();
            assert_eq!(w["is_active"], true, "day {day}");
            assert_eq!(w["failing_since"], "2026-11-21T12:00:00Z");
        }
        app.clock.advance(Duration::from_secs(86_400));
    }
    let w = app.get("/v1/webhooks", &acct.api_key).await.body["webhooks"][0].clone();
    assert_eq!(w["is_active"], false);
    assert!(w["disabled_reason"].as_str().unwrap().contains("5 days"));
    // Nothing of it waits any more, and the account was told.
    let log = app
        .get(
            &format!("/v1/webhooks/{}/deliveries", failing["id"]),
            &acct.api_key,
        )
        .await;
    assert!(
        log.body["deliveries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["status"] == "failed" || d["status"] == "delivered")
    );
    pass(&app).await;
    let told = watcher.received();
    assert_eq!(told.len(), 1);
    let body: Value = serde_json::from_str(&told[0].body).unwrap();
    assert_eq!(body["event"], "webhook.disabled");
    assert_eq!(body["data"]["webhook_id"], failing["id"]);
    // Turning it on again restarts the clock.
    let r = app
        .call(
            "PATCH",
            &format!("/v1/webhooks/{}", failing["id"]),
            Some(&acct.api_key),
            Some(json!({"is_active": true})),
        )
        .await;
    assert_eq!(
        (r.body["is_active"].clone(), r.body["failing_since"].clone()),
        (json!(true), Value::Null)
    );
}

#[tokio::test]
async fn two_servers_deliver_every_event_exactly_once() {
    let app = app().await;
    let second = app.another_server().await;
    let receiver = Receiver::start().await;
    let acct = app.account(Plan::Starter).await;
    create(&app, &acct, &receiver.url, json!(["*"])).await;
    for i in 0..300 {
        emit(
            &app,
            acct.account_id,
            EventType::ListItemAdded,
            json!({"i": i}),
        )
        .await;
    }
    let run = |a: &TestApp| {
        let state = a.state.clone();
        tokio::spawn(async move {
            loop {
                let fanned = dispatch_once(&state, 40).await.unwrap();
                let sent = deliver_due_once(&state, 25).await.unwrap();
                if fanned == 0 && sent == 0 {
                    return;
                }
            }
        })
    };
    let (a, b) = (run(&app), run(&second));
    a.await.unwrap();
    b.await.unwrap();
    pass(&app).await;
    let mut seen: Vec<i64> = receiver
        .received()
        .iter()
        .map(|r| {
            serde_json::from_str::<Value>(&r.body).unwrap()["data"]["i"]
                .as_i64()
                .unwrap()
        })
        .collect();
    seen.sort();
    assert_eq!(seen, (0..300).collect::<Vec<_>>());
}

#[tokio::test]
async fn housekeeping_keeps_waiting_work_and_recent_history() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let acct = app.account(Plan::Starter).await;
    create(&app, &acct, &receiver.url, json!(["*"])).await;
    emit(
        &app,
        acct.account_id,
        EventType::ListItemAdded,
        json!({"n": 1}),
    )
    .await;
    pass(&app).await; // delivered
    receiver.answer(Answer::Status(500));
    emit(
        &app,
        acct.account_id,
        EventType::ListItemAdded,
        json!({"n": 2}),
    )
    .await;
    pass(&app).await; // retrying
    let pruned = super::housekeeping::prune(&app.state).await.unwrap();
    assert_eq!((pruned.outbox_events, pruned.deliveries), (0, 0));

    app.clock.advance(Duration::from_secs(31 * 86_400));
    let pruned = super::housekeeping::prune(&app.state).await.unwrap();
    assert_eq!((pruned.outbox_events, pruned.deliveries), (2, 1));
    let log = deliveries(&app, &acct, "").await;
    assert_eq!(log["deliveries"][0]["status"], "retrying");
    assert_eq!(log["deliveries"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_webhook_deleted_mid_attempt_does_not_lose_the_batch() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let acct = app.account(Plan::Starter).await;
    let doomed = create(&app, &acct, &receiver.url, json!(["*"])).await;
    let kept = create(&app, &acct, &receiver.url, json!(["*"])).await;
    emit(
        &app,
        acct.account_id,
        EventType::ListItemAdded,
        json!({"n": 1}),
    )
    .await;
    dispatch_once(&app.state, 10).await.unwrap();
    let now = app.state.clock.now_ms();
    let owner = app
        .state
        .ext::<super::deliver::Deliverer>()
        .owner()
        .to_owned();
    let claimed = super::store::claim_due(&app.state.db, &owner, now, now + 15_000, 10)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 2);
    let mut outcomes = Vec::new();
    for d in &claimed {
        outcomes.push(super::deliver::attempt(&app.state, d, false).await);
    }
    let r = app
        .call(
            "DELETE",
            &format!("/v1/webhooks/{}", doomed["id"]),
            Some(&acct.api_key),
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    super::outcomes::record(&app.state.db, &outcomes, now)
        .await
        .unwrap();
    let log = app
        .get(
            &format!("/v1/webhooks/{}/deliveries", kept["id"]),
            &acct.api_key,
        )
        .await;
    assert_eq!(log.body["deliveries"][0]["status"], "delivered");
}
