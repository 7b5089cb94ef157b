//! REST hooks through the router and single passes of the scanner and the
//! webhooks deliverer, against a real receiver on loopback: subscription
//! rules, the seed, each new item delivered once in the signed envelope,
//! and unsubscribing.

use serde_json::{Value, json};

use super::scan::{SCAN_EVERY_MS, scan_once};
use crate::webhooks::deliver::deliver_due_once;
use crate::webhooks::signing::{service_signature, standard_signature};
use crate::webhooks::tests::Receiver;
use crate::workflows::tests::pool as import;
use outreach_core::accounts::Plan;
use outreach_core::testing::{TestAccount, TestApp};

async fn app() -> TestApp {
    TestApp::with_areas(&[outreach_leads::AREA, crate::AREA], |_| {}).await
}

fn record(domain: &str, industry: &str) -> Value {
    json!({"domain": domain, "industry": industry, "confidence": 0.9, "registrant_country": "DE"})
}

async fn subscribe(app: &TestApp, acct: &TestAccount, body: Value) -> Value {
    let r = app.post("/v1/zapier/hooks", &acct.api_key, body).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body
}

/// One scan after the hooks' interval, then the deliverer.
async fn pass(app: &TestApp) -> usize {
    app.clock
        .advance(std::time::Duration::from_millis(SCAN_EVERY_MS as u64));
    scan_once(&app.state).await.unwrap();
    deliver_due_once(&app.state, 1000).await.unwrap()
}

#[tokio::test]
async fn new_items_reach_the_hook_once_signed_in_the_webhook_envelope() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let acct = app.account(Plan::Starter).await;
    import(&app, &[record("old.com", "Software")]).await;
    let hook = subscribe(
        &app,
        &acct,
        json!({"event": "new-domain", "target_url": receiver.url, "industry": "software"}),
    )
    .await;
    assert_eq!(hook["event"], "new-domain");
    assert_eq!(hook["target_url"], receiver.url.as_str());
    let secret = hook["secret"].as_str().unwrap().to_owned();
    // What existed at subscription is not replayed.
    assert_eq!(pass(&app).await, 0);

    app.clock.advance(std::time::Duration::from_secs(60));
    import(
        &app,
        &[record("new.com", "Software"), record("shop.com", "Retail")],
    )
    .await;
    assert_eq!(pass(&app).await, 1);
    assert_eq!(pass(&app).await, 0, "an item goes out once");
    let got = receiver.received();
    assert_eq!(got.len(), 1);
    let body: Value = serde_json::from_str(&got[0].body).unwrap();
    assert_eq!(body["event"], "zapier.new-domain");
    assert_eq!(body["webhook_id"], hook["id"]);
    assert_eq!(body["data"]["id"], "new.com");
    assert_eq!(body["data"]["industry"], "Software");
    assert_eq!(body["data"]["confidence"], 90);
    let h = |name: &str| got[0].headers[name].to_str().unwrap().to_owned();
    assert_eq!(
        h("x-service-signature"),
        service_signature(&secret, got[0].body.as_bytes())
    );
    let ts: i64 = h("webhook-timestamp").parse().unwrap();
    assert_eq!(
        h("webhook-signature"),
        standard_signature(&secret, &h("webhook-id"), ts, got[0].body.as_bytes())
    );

    // Hooks are not the account's webhooks.
    let r = app.get("/v1/webhooks", &acct.api_key).await;
    assert_eq!(r.body["count"], 0, "{:?}", r.body);

    // Unsubscribed: nothing more, and a second delete is 404.
    let id = hook["id"].as_i64().unwrap();
    let path = format!("/v1/zapier/hooks/{id}");
    let r = app.call("DELETE", &path, Some(&acct.api_key), None).await;
    assert_eq!(r.status, 204);
    let r = app.call("DELETE", &path, Some(&acct.api_key), None).await;
    assert_eq!(r.status, 404);
    import(&app, &[record("later.com", "Software")]).await;
    assert_eq!(pass(&app).await, 0);
}

#[tokio::test]
async fn subscriptions_are_checked_and_owned() {
    let app = app().await;
    let acct = app.account(Plan::Pro).await;
    let stranger = app.account(Plan::Pro).await;
    let free = app.account(Plan::Free).await;
    let url = "https://hooks.example.com/catch/1";
    for body in [
        json!({"event": "new-thing", "target_url": url}),
        json!({"event": "new-domain", "target_url": "ftp://x.example.com"}),
        json!({"event": "new-domain", "target_url": "http://hooks.example.com/x"}),
        json!({"event": "new-domain", "target_url": url, "min_confidence": 101}),
        json!({"event": "new-domain", "target_url": url, "threshold": 50}),
        json!({"event": "score-threshold", "target_url": url, "threshold": 150}),
        json!({"event": "domain-enriched"}),
    ] {
        let r = app
            .post("/v1/zapier/hooks", &acct.api_key, body.clone())
            .await;
        assert_eq!(r.status, 400, "{body}: {:?}", r.body);
    }
    let r = app
        .post(
            "/v1/zapier/hooks",
            &free.api_key,
            json!({"event": "new-domain", "target_url": url}),
        )
        .await;
    assert_eq!(r.status, 403);
    let hook = subscribe(
        &app,
        &acct,
        json!({"event": "score-threshold", "target_url": url, "threshold": 70}),
    )
    .await;
    let path = format!("/v1/zapier/hooks/{}", hook["id"]);
    let r = app
        .call("DELETE", &path, Some(&stranger.api_key), None)
        .await;
    assert_eq!(r.status, 404);
    // An ordinary webhook's id is not a hook.
    let w = app
        .post(
            "/v1/webhooks",
            &acct.api_key,
            json!({"url": url, "events": ["*"]}),
        )
        .await;
    assert_eq!(w.status, 201, "{:?}", w.body);
    let r = app
        .call(
            "DELETE",
            &format!("/v1/zapier/hooks/{}", w.body["id"]),
            Some(&acct.api_key),
            None,
        )
        .await;
    assert_eq!(r.status, 404);
    let r = app.call("DELETE", &path, Some(&acct.api_key), None).await;
    assert_eq!(r.status, 204);
}
