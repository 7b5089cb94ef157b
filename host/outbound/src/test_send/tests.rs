//! Test-send against the capturing SMTP server.

use serde_json::json;

use crate::testkit::{insert_smtp_account, scalar, sequence, step};
use outreach_core::accounts::Plan;
use outreach_core::smtp_capture::CaptureServer;
use outreach_core::testing::TestApp;

#[tokio::test]
async fn a_test_send_delivers_a_rendered_step_and_records_nothing() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let a = app.account(Plan::Pro).await;
    let key = a.api_key.as_str();
    let smtp = CaptureServer::start("pw").await;
    insert_smtp_account(&app, a.account_id, "sam@seller.test", smtp.port, "pw").await;
    let seq = sequence(
        &app,
        key,
        json!({"name": "T", "from_email": "sam@seller.test",
        "from_name": "Sam"}),
    )
    .await;
    step(
        &app,
        key,
        seq,
        json!({"subject": "Hi {{first_name|there}} at {{company}}",
        "body_html": "<p>Visit <a href=\"https://example.com\">us</a></p>"}),
    )
    .await;
    step(&app, key, seq, json!({"step_type": "phone_call"})).await;
    let path = format!("/v1/sequences/{seq}/test-send");

    let r = app
        .post(
            &path,
            key,
            json!({"to_email": "me@seller.test", "step_position": 1,
            "contact": {"contact_email": "ann@acme.test", "metadata": {"first_name": "Ann",
            "company": "Acme"}}}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["subject"], "Hi Ann at Acme");
    let got = smtp.messages();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].to, vec!["me@seller.test"]);
    assert_eq!(got[0].header("Subject").as_deref(), Some("Hi Ann at Acme"));
    // No tracking and no events for a test.
    assert!(got[0].data.contains("https://example.com"));
    assert!(!got[0].data.contains("/t/c/"));
    assert_eq!(
        scalar(&app, "SELECT COUNT(*) FROM sequence_events", &[]).await,
        0
    );
    assert_eq!(
        scalar(&app, "SELECT COUNT(*) FROM sequence_messages", &[]).await,
        0
    );

    // Bad input: 400 with the spec's body, nothing sent.
    for (body, needle) in [
        (
            json!({"to_email": "not an address", "step_position": 1}),
            "to_email",
        ),
        (
            json!({"to_email": "me@seller.test", "step_position": 9}),
            "step_position",
        ),
        (json!({"to_email": "me@seller.test"}), "step"),
        (
            json!({"to_email": "me@seller.test", "step_position": 2}),
            "email steps",
        ),
    ] {
        let r = app.post(&path, key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {:?}", r.body);
        assert!(r.detail().contains(needle), "{body}: {}", r.detail());
    }
    assert_eq!(smtp.messages().len(), 1);

    // 5 per minute: the first one plus four more pass, the sixth is 429.
    for _ in 0..4 {
        let r = app
            .post(
                &path,
                key,
                json!({"to_email": "me@seller.test", "step_position": 1}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
    let r = app
        .post(
            &path,
            key,
            json!({"to_email": "me@seller.test", "step_position": 1}),
        )
        .await;
    assert_eq!(r.status, 429, "{:?}", r.body);
    assert!(r.header("retry-after").is_some());

    // A refused login is the mail server's answer, 422.
    app.clock.advance(std::time::Duration::from_secs(61));
    smtp.set_password("other");
    let r = app
        .post(
            &path,
            key,
            json!({"to_email": "me@seller.test", "step_position": 1}),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert!(
        r.detail().contains("authentication failed"),
        "{}",
        r.detail()
    );
}
