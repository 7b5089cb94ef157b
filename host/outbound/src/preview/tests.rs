//! Preview through the router, on either backend.

use serde_json::json;

use crate::testkit::{sequence, step};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

#[tokio::test]
async fn a_step_renders_for_a_sample_contact_or_an_enrollment() {
    let app = TestApp::with_areas(&[outreach_vendors::AREA, crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "Preview"})).await;
    let s = step(
        &app,
        key,
        id,
        json!({
        "subject": "Hi {{first_name|there}} at {{company}}",
        "body_html": "<p>Hello {{first_name}}, about {{domain}} and {{unknown_token}}</p>",
        "ab_test_enabled": true, "variant_b_subject": "B for {{domain}}"}),
    )
    .await;
    let path = format!("/v1/sequences/{id}/preview");

    let r = app
        .post(
            &path,
            key,
            json!({"step_id": s, "contact": {"contact_email": "jane@acme.com",
        "metadata": {"first_name": "<Jane>", "company": "Acme"}}}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{:?}", r.body);
    assert_eq!(r.body["subject"], "Hi <Jane> at Acme");
    assert_eq!(
        r.body["body_html"],
        "<p>Hello &lt;Jane&gt;, about acme.com and {{unknown_token}}</p>"
    );
    assert!(
        r.body["body_text"]
            .as_str()
            .unwrap()
            .contains("Hello <Jane>, about acme.com"),
        "{}",
        r.body["body_text"]
    );
    assert_eq!(r.body["missing_tokens"], json!(["unknown_token"]));
    for t in ["first_name", "company", "domain"] {
        assert!(
            r.body["tokens_used"]
                .as_array()
                .unwrap()
                .contains(&json!(t)),
            "{t}"
        );
    }

    // Variant b, by position, for an enrollment; fallbacks apply.
    app.post(
        &format!("/v1/sequences/{id}/enroll"),
        key,
        json!({"contacts": [{"domain": "beta.io", "contact_email": "joe@beta.io"}]}),
    )
    .await;
    let listed = app
        .get(&format!("/v1/sequences/{id}/enrollments"), key)
        .await
        .body;
    let eid = listed["enrollments"][0]["id"].clone();
    let r = app
        .post(
            &path,
            key,
            json!({"step_position": 1, "enrollment_id": eid, "variant": "b"}),
        )
        .await;
    assert_eq!(r.body["subject"], "B for beta.io", "{:?}", r.body);
    let r = app
        .post(
            &path,
            key,
            json!({"step_position": 1, "enrollment_id": eid}),
        )
        .await;
    assert_eq!(r.body["subject"], "Hi there at {{company}}");

    for body in [
        json!({"contact": {"contact_email": "a@b.com"}}),
        json!({"step_id": s}),
        json!({"step_id": s, "step_position": 1, "enrollment_id": eid}),
        json!({"step_id": s, "enrollment_id": eid, "variant": "z"}),
    ] {
        assert_eq!(
            app.post(&path, key, body.clone()).await.status,
            400,
            "{body}"
        );
    }
    assert_eq!(
        app.post(
            &path,
            key,
            json!({"step_position": 9, "enrollment_id": eid})
        )
        .await
        .status,
        404
    );
    assert_eq!(
        app.post(&path, key, json!({"step_id": s, "enrollment_id": 999_999}))
            .await
            .status,
        404
    );
    let other = app.account(Plan::Pro).await;
    assert_eq!(
        app.post(
            &path,
            &other.api_key,
            json!({"step_id": s, "enrollment_id": eid})
        )
        .await
        .status,
        404
    );
}
