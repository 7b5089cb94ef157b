//! Steps through the router, on either backend.

use serde_json::{Value, json};

use crate::testkit::{sequence, step};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

fn ids(steps: &Value) -> Vec<i64> {
    steps
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_i64().unwrap())
        .collect()
}

fn positions(steps: &Value) -> Vec<i64> {
    steps
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["position"].as_i64().unwrap())
        .collect()
}

#[tokio::test]
async fn fields_are_checked_and_nothing_is_written_on_refusal() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "Steps"})).await;
    let other_seq = sequence(&app, key, json!({"name": "Other"})).await;
    let foreign = step(
        &app,
        key,
        other_seq,
        json!({"subject": "s", "body_html": "b"}),
    )
    .await;
    let first = step(&app, key, id, json!({"subject": "s", "body_html": "b"})).await;
    let path = format!("/v1/sequences/{id}/steps");
    let variants = |w1: i64, w2: i64, l2: &str| {
        json!([
        {"label": "a", "subject": "s1", "body_html": "b1", "weight": w1},
        {"label": l2, "subject": "s2", "body_html": "b2", "weight": w2}])
    };
    for (body, needle) in [
        (json!({"step_type": "fax"}), "step_type"),
        (json!({"subject": "s"}), "need a body_html"),
        (
            json!({"step_type": "email", "body_html": "  ", "subject": "s"}),
            "need a body_html",
        ),
        (
            json!({"step_type": "delay", "delay_days": -1}),
            "delay_days",
        ),
        (
            json!({"step_type": "delay", "delay_hours": 24}),
            "delay_hours",
        ),
        (
            json!({"subject": "s", "body_html": "b", "variants": variants(50, 40, "b")}),
            "sum to 100",
        ),
        (
            json!({"subject": "s", "body_html": "b", "variants": variants(50, 50, "a")}),
            "unique",
        ),
        (
            json!({"subject": "s", "body_html": "b", "variants": [variants(100, 0, "b")[0]]}),
            "2 to 10",
        ),
        (
            json!({"subject": "s", "body_html": "b", "ab_test_enabled": true}),
            "variant_b",
        ),
        (
            json!({"step_type": "sms", "condition_type": "replied"}),
            "go together",
        ),
        (
            json!({"step_type": "sms", "condition_type": "bounced", "condition_step_id": first}),
            "condition_type",
        ),
        (
            json!({"step_type": "sms", "condition_type": "replied", "condition_step_id": foreign}),
            "earlier step",
        ),
        (
            json!({"step_type": "sms", "condition_type": "replied", "condition_step_id": first, "position": 1}),
            "earlier step",
        ),
        (json!({"step_type": "sms", "position": 3}), "position"),
    ] {
        let r = app.post(&path, key, body.clone()).await;
        assert_eq!(r.status.as_u16(), 400, "{body}");
        assert!(r.detail().contains(needle), "{body}: {}", r.detail());
    }
    assert_eq!(ids(&app.get(&path, key).await.body), vec![first]);

    // The accepted shapes: A/B, variants, every negated condition.
    let ab = step(
        &app,
        key,
        id,
        json!({"subject": "A", "body_html": "a",
        "ab_test_enabled": true, "variant_b_subject": "B"}),
    )
    .await;
    let mv = app
        .post(
            &path,
            key,
            json!({"subject": "s", "body_html": "b",
        "variants": variants(70, 30, "b"), "condition_type": "not_opened",
        "condition_step_id": ab}),
        )
        .await;
    assert_eq!(mv.status.as_u16(), 201, "{:?}", mv.body);
    assert_eq!(mv.body["variants"][1]["weight"], 30);
    assert_eq!(mv.body["position"], 3);

    // Another account's sequence, and a step of another sequence: 404.
    let stranger = app.account(Plan::Pro).await;
    let r = app
        .post(&path, &stranger.api_key, json!({"step_type": "sms"}))
        .await;
    assert_eq!(r.status.as_u16(), 404);
    let r = app
        .call(
            "PUT",
            &format!("/v1/sequences/{id}/steps/{foreign}"),
            Some(key),
            Some(json!({"delay_days": 1})),
        )
        .await;
    assert_eq!(r.status.as_u16(), 404);
}

#[tokio::test]
async fn positions_stay_contiguous_through_inserts_moves_and_deletes() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "Order"})).await;
    let path = format!("/v1/sequences/{id}/steps");
    let a = step(&app, key, id, json!({"step_type": "phone_call"})).await;
    let b = step(&app, key, id, json!({"step_type": "linkedin_connect"})).await;
    let c = step(
        &app,
        key,
        id,
        json!({"step_type": "manual_task", "condition_type": "replied", "condition_step_id": b}),
    )
    .await;
    // Insert at the front.
    let z = step(&app, key, id, json!({"step_type": "sms", "position": 1})).await;
    let s = app.get(&path, key).await.body;
    assert_eq!(
        (ids(&s), positions(&s)),
        (vec![z, a, b, c], vec![1, 2, 3, 4])
    );

    // Moving c before b would break its condition: refused, nothing moves.
    let put = |step: i64| format!("/v1/sequences/{id}/steps/{step}");
    let r = app
        .call("PUT", &put(c), Some(key), Some(json!({"position": 2})))
        .await;
    assert_eq!(r.status.as_u16(), 400, "{:?}", r.body);
    // Moving z to the end is fine.
    let r = app
        .call(
            "PUT",
            &put(z),
            Some(key),
            Some(json!({"position": 4, "delay_hours": 5})),
        )
        .await;
    assert_eq!(
        (
            r.status.as_u16(),
            r.body["position"].clone(),
            r.body["delay_hours"].clone()
        ),
        (200, json!(4), json!(5))
    );
    let s = app.get(&path, key).await.body;
    assert_eq!(
        (ids(&s), positions(&s)),
        (vec![a, b, c, z], vec![1, 2, 3, 4])
    );

    // A contact waiting on c (position 3) keeps waiting on c when b goes.
    app.post(
        &format!("/v1/sequences/{id}/enroll"),
        key,
        json!({"contacts": [{"domain": "acme.com", "contact_email": "jane@acme.com"}]}),
    )
    .await;
    sqlx::query("UPDATE enrollments SET current_step = 3 WHERE sequence_id = $1")
        .bind(id)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(
        app.call("DELETE", &put(b), Some(key), None).await.status,
        204
    );
    let s = app.get(&path, key).await.body;
    assert_eq!((ids(&s), positions(&s)), (vec![a, c, z], vec![1, 2, 3]));
    // c's condition checked b, which is gone: the condition goes too.
    assert_eq!(s[1]["condition_step_id"], json!(null));
    assert_eq!(s[1]["condition_type"], json!(null));
    let e = app
        .get(&format!("/v1/sequences/{id}/enrollments"), key)
        .await
        .body;
    assert_eq!(e["enrollments"][0]["current_step"], 2);
    assert_eq!(
        app.call("DELETE", &put(b), Some(key), None).await.status,
        404
    );

    // Clearing the body of an email step is refused (an empty subject makes
    // it a reply in the thread); null clears optional fields.
    let mail = step(
        &app,
        key,
        id,
        json!({"subject": "s", "body_html": "b", "variant_b_subject": "v"}),
    )
    .await;
    let r = app
        .call(
            "PUT",
            &put(mail),
            Some(key),
            Some(json!({"body_html": null})),
        )
        .await;
    assert_eq!(r.status.as_u16(), 400);
    let r = app
        .call(
            "PUT",
            &put(mail),
            Some(key),
            Some(json!({"variant_b_subject": null})),
        )
        .await;
    assert_eq!(
        (r.status.as_u16(), r.body["variant_b_subject"].clone()),
        (200, json!(null))
    );
}

#[tokio::test]
async fn the_first_email_step_needs_a_subject() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "Subjects"})).await;
    let path = format!("/v1/sequences/{id}/steps");
    let need = crate::steps::service::FIRST_SUBJECT_NEEDED;

    // Created first without a subject: refused, nothing written.
    let r = app.post(&path, key, json!({"body_html": "b"})).await;
    assert_eq!((r.status.as_u16(), r.detail()), (400, need));
    let r = app
        .post(&path, key, json!({"subject": "  ", "body_html": "b"}))
        .await;
    assert_eq!((r.status.as_u16(), r.detail()), (400, need));
    assert_eq!(app.get(&path, key).await.body, json!([]));

    // A task before the first email does not make the email a follow-up.
    let task = step(&app, key, id, json!({"step_type": "linkedin_connect"})).await;
    let r = app.post(&path, key, json!({"body_html": "b"})).await;
    assert_eq!((r.status.as_u16(), r.detail()), (400, need));

    // A follow-up may leave it empty to reply in the thread.
    let first = step(&app, key, id, json!({"subject": "Hello", "body_html": "a"})).await;
    let follow = step(&app, key, id, json!({"body_html": "b", "delay_days": 2})).await;

    // Clearing the first one's subject, moving the follow-up into first
    // place, or inserting a subject-less email before it: refused.
    let r = app
        .call(
            "PUT",
            &format!("{path}/{first}"),
            Some(key),
            Some(json!({"subject": null})),
        )
        .await;
    assert_eq!((r.status.as_u16(), r.detail()), (400, need));
    let r = app
        .call(
            "PUT",
            &format!("{path}/{follow}"),
            Some(key),
            Some(json!({"position": 1})),
        )
        .await;
    assert_eq!((r.status.as_u16(), r.detail()), (400, need));
    let r = app
        .post(&path, key, json!({"body_html": "c", "position": 1}))
        .await;
    assert_eq!((r.status.as_u16(), r.detail()), (400, need));
    // Deleting the first email would promote the follow-up: refused too.
    let r = app
        .call("DELETE", &format!("{path}/{first}"), Some(key), None)
        .await;
    assert_eq!((r.status.as_u16(), r.detail()), (400, need));
    let steps = app.get(&path, key).await.body;
    assert_eq!(ids(&steps), [task, first, follow], "nothing moved");
    assert_eq!(steps[1]["subject"], "Hello");

    // With a subject the follow-up may move up, and the sequence activates.
    let r = app
        .call(
            "PUT",
            &format!("{path}/{follow}"),
            Some(key),
            Some(json!({"position": 1, "subject": "Now first"})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = app
        .post(&format!("/v1/sequences/{id}/activate"), key, json!({}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

#[tokio::test]
async fn activation_refuses_a_first_email_step_without_a_subject() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "Stored before the rule"})).await;
    let s = step(&app, key, id, json!({"subject": "Hi", "body_html": "a"})).await;
    // A step stored before the rule existed, as an older version wrote it.
    sqlx::query("UPDATE sequence_steps SET subject = NULL WHERE id = $1")
        .bind(s)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    let r = app
        .post(&format!("/v1/sequences/{id}/activate"), key, json!({}))
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert_eq!(r.detail(), crate::steps::service::FIRST_SUBJECT_NEEDED);
    let r = app.get(&format!("/v1/sequences/{id}"), key).await;
    assert_eq!(r.body["status"], "draft");
}
