//! The email finder through the router: observed patterns first, common
//! ones after, and verification through the account's verifier chain (the
//! real example-verifier component talking to a local stub).

use serde_json::json;

use super::pipeline::save::{self, Findings};
use super::store;
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;
use outreach_core::testing::stub::{Canned, Stub};

async fn app() -> (TestApp, Stub) {
    let stub = Stub::start().await;
    let ev = stub.url("/ev");
    let app = TestApp::with_areas(&[crate::AREA, outreach_vendors::AREA], move |c| {
        c.vendor_base_urls.insert("example-verifier".into(), ev);
        c.rdap_bootstrap_url = "http://127.0.0.1:9/".into();
    })
    .await;
    (app, stub)
}

fn verdict(deliverability: &str) -> Canned {
    Canned::json(
        200,
        json!({"result": deliverability, "disposable": false, "role": false, "accept_all": false, "score": 90}),
    )
}

fn emails(body: &serde_json::Value) -> Vec<String> {
    body["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["email"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn candidates_follow_the_observed_pattern_then_verification() {
    let (app, stub) = app().await;
    let a = app.account(Plan::Starter).await;
    let path = "/v1/enrichment/email-finder?domain=www.acme-gmbh.de&first_name=J%C3%BCrgen&last_name=M%C3%BCller";

    // Unknown to the pool: queued, and the common patterns are guessed.
    let r = app.get(path, &a.api_key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["domain"], "acme-gmbh.de");
    assert_eq!(r.body["domain_status"], "queued");
    assert_eq!(r.body["verified"], false);
    assert_eq!(emails(&r.body)[0], "juergen.mueller@acme-gmbh.de");
    assert!(r.body["candidates"][0]["verification"].is_null());

    // The company's pages show `initial.surname`.
    let now = app.state.clock.now_ms();
    let id = store::find(&app.state.db, "acme-gmbh.de")
        .await
        .unwrap()
        .expect("the finder queued the domain")
        .id;
    let findings = Findings {
        emails_seen: vec!["info@acme-gmbh.de".into(), "k.lang@acme-gmbh.de".into()],
        intent_level: "cold".into(),
        social_links: json!({}),
        ..Findings::default()
    };
    save::save(&app.state, id, &findings, now, now + 1)
        .await
        .unwrap();
    let r = app.get(path, &a.api_key).await;
    assert_eq!(r.body["domain_status"], "enriched");
    let found = emails(&r.body);
    assert_eq!(found[0], "j.mueller@acme-gmbh.de");
    assert_eq!(r.body["candidates"][0]["source"], "observed");
    assert_eq!(found[1], "juergen.mueller@acme-gmbh.de");

    // With a verifier: the observed guess bounces, the next one is
    // deliverable and verification stops there.
    stub.set("/ev/v1/credits", Canned::json(200, json!({"credits": 10})));
    stub.set("/ev/v1/verify", verdict("undeliverable"));
    stub.set(
        "/ev/v1/verify?email=juergen.mueller%40",
        verdict("deliverable"),
    );
    let r = app
        .post(
            "/v1/email-verifiers/providers",
            &a.api_key,
            json!({"provider": "example-verifier", "api_key": "ev-key-1", "label": "main"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = app.get(path, &a.api_key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["verified"], true);
    let best = &r.body["candidates"][0];
    assert_eq!(
        best["email"], "juergen.mueller@acme-gmbh.de",
        "{:#}",
        r.body
    );
    assert_eq!(best["deliverability"], "deliverable");
    assert_eq!(best["score"], 0.99);
    let last = r.body["candidates"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["email"], "j.mueller@acme-gmbh.de");
    assert_eq!(last["deliverability"], "undeliverable");
    assert_eq!(
        stub.hits("/ev/v1/verify") + stub.hits("/ev/v1/verify?email=juergen.mueller%40"),
        2
    );
}

#[tokio::test]
async fn bad_finder_input_is_refused() {
    let (app, _stub) = app().await;
    let a = app.account(Plan::Starter).await;
    let long = "a".repeat(101);
    for query in [
        "domain=localhost&first_name=Anna".to_owned(),
        "domain=acme.de&first_name=".to_owned(),
        "domain=acme.de&first_name=%21%21".to_owned(),
        format!("domain=acme.de&first_name=Anna&last_name={long}"),
        "domain=acme.de".to_owned(),
    ] {
        let r = app
            .get(&format!("/v1/enrichment/email-finder?{query}"), &a.api_key)
            .await;
        assert_eq!(r.status, 400, "{query}: {:?}", r.body);
        assert!(!r.detail().is_empty());
    }
}
