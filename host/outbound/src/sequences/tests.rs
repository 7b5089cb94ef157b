//! Sequences through the router, on either backend.

use serde_json::json;

use crate::testkit::{insert_send_account, sequence, step};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

#[tokio::test]
async fn create_applies_defaults_ranges_and_the_sender_rule() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let mailbox = insert_send_account(&app, acct.account_id, "Seller@Acme.io").await;

    let r = app
        .post(
            "/v1/sequences",
            key,
            json!({"name": "Q4 outreach", "from_email": "seller@acme.io"}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{:?}", r.body);
    let s = &r.body;
    assert_eq!(s["status"], "draft");
    assert_eq!(s["daily_send_limit"], 50);
    assert_eq!(s["warmup_enabled"], false);
    assert_eq!(s["warmup_start_volume"], 10);
    assert_eq!(s["warmup_increment"], 5);
    assert_eq!(s["goal_type"], "none");
    assert_eq!(s["enable_unsubscribe"], true);
    assert_eq!(s["auto_pause_bounce_rate"], 5.0);
    assert_eq!(s["settings"], json!({}));
    assert_eq!(s["send_account_id"], mailbox);
    assert_eq!(
        (s["step_count"].clone(), s["enrollment_count"].clone()),
        (json!(0), json!(0))
    );

    let long = "x".repeat(201);
    for (body, needle) in [
        (json!({}), "name"),
        (json!({"name": ""}), "name"),
        (json!({"name": long}), "name"),
        (
            json!({"name": "a", "description": "d".repeat(1001)}),
            "description",
        ),
        (
            json!({"name": "a", "daily_send_limit": 0}),
            "daily_send_limit",
        ),
        (
            json!({"name": "a", "daily_send_limit": 10001}),
            "daily_send_limit",
        ),
        (
            json!({"name": "a", "from_email": "nobody@acme.io"}),
            "from_email",
        ),
        (json!({"name": "a", "goal_type": "revenue"}), "goal_type"),
        (json!({"name": "a", "goal_type": "url_click"}), "goal_url"),
        (
            json!({"name": "a", "auto_pause_bounce_rate": 101}),
            "auto_pause_bounce_rate",
        ),
        (
            json!({"name": "a", "settings": {"send_window": {"timezone": "Mars/Base"}}}),
            "Mars/Base",
        ),
        (json!({"name": "a", "settings": []}), "settings"),
        (json!({"name": "a", "status": "active"}), "status"),
    ] {
        let r = app.post("/v1/sequences", key, body.clone()).await;
        assert_eq!(r.status.as_u16(), 400, "{body}");
        assert!(r.detail().contains(needle), "{body}: {}", r.detail());
    }
    // Nothing of the refused requests was written.
    assert_eq!(app.get("/v1/sequences", key).await.body["count"], 1);

    // Writable goal fields, settings as given, and null clears.
    let id = s["id"].as_i64().unwrap();
    let settings = json!({"send_window": {"start": "08:00", "end": "16:00", "timezone": "recipient"},
        "track_opens": false, "custom": [1, 2]});
    let r = app
        .call(
            "PUT",
            &format!("/v1/sequences/{id}"),
            Some(key),
            Some(json!({
            "goal_type": "url_click", "goal_url": "https://acme.io/demo",
            "auto_pause_bounce_rate": 2.5, "enable_unsubscribe": false,
            "settings": settings, "description": "d"})),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{:?}", r.body);
    assert_eq!(r.body["settings"], settings);
    assert_eq!(r.body["goal_url"], "https://acme.io/demo");
    assert_eq!(r.body["auto_pause_bounce_rate"], 2.5);
    assert_eq!(r.body["name"], "Q4 outreach");
    let r = app
        .call(
            "PUT",
            &format!("/v1/sequences/{id}"),
            Some(key),
            Some(json!({"description": null})),
        )
        .await;
    assert_eq!(r.body["description"], json!(null));
    assert_eq!(r.body["enable_unsubscribe"], false);
}

#[tokio::test]
async fn quota_status_operations_clone_and_delete() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "Main"})).await;

    // Activate needs an actionable step; a delay is not one.
    let activate = format!("/v1/sequences/{id}/activate");
    let pause = format!("/v1/sequences/{id}/pause");
    assert_eq!(app.post(&pause, key, json!({})).await.status, 400);
    step(
        &app,
        key,
        id,
        json!({"step_type": "delay", "delay_days": 1}),
    )
    .await;
    let r = app.post(&activate, key, json!({})).await;
    assert_eq!(r.status.as_u16(), 400);
    assert!(r.detail().contains("actionable"), "{}", r.detail());
    let first = step(
        &app,
        key,
        id,
        json!({"subject": "Hi {{first_name}}", "body_html": "<p>Hello</p>"}),
    )
    .await;
    let cond = step(
        &app,
        key,
        id,
        json!({"step_type": "manual_task",
        "condition_type": "not_replied", "condition_step_id": first}),
    )
    .await;
    let r = app.post(&activate, key, json!({})).await;
    assert_eq!(
        (r.status.as_u16(), r.body["status"].clone()),
        (200, json!("active"))
    );
    assert_eq!(
        app.post(&activate, key, json!({})).await.body["status"],
        "active"
    );
    assert_eq!(
        app.post(&pause, key, json!({})).await.body["status"],
        "paused"
    );
    assert_eq!(app.post(&pause, key, json!({})).await.status, 400);
    // Activate from paused resumes.
    assert_eq!(
        app.post(&activate, key, json!({})).await.body["status"],
        "active"
    );

    // Clone: a draft with the steps, conditions pointing at the copies.
    let r = app
        .post(&format!("/v1/sequences/{id}/clone"), key, json!({}))
        .await;
    assert_eq!(r.status.as_u16(), 201, "{:?}", r.body);
    assert_eq!(
        (r.body["name"].clone(), r.body["status"].clone()),
        (json!("Copy of Main"), json!("draft"))
    );
    assert_eq!(r.body["step_count"], 3);
    let copy = r.body["id"].as_i64().unwrap();
    let steps = app
        .get(&format!("/v1/sequences/{copy}/steps"), key)
        .await
        .body;
    let copied_first = steps[1]["id"].as_i64().unwrap();
    assert_ne!(copied_first, first);
    assert_eq!(steps[2]["condition_step_id"], copied_first);
    assert_ne!(steps[2]["id"], cond);

    // The Starter quota is 5 sequences; list reports it.
    for n in 0..3 {
        sequence(&app, key, json!({"name": format!("S{n}")})).await;
    }
    let list = app.get("/v1/sequences", key).await.body;
    assert_eq!(
        (
            list["count"].clone(),
            list["limit"].clone(),
            list["remaining"].clone()
        ),
        (json!(5), json!(5), json!(0))
    );
    let r = app
        .post("/v1/sequences", key, json!({"name": "one too many"}))
        .await;
    assert_eq!(r.status.as_u16(), 400);
    assert!(r.detail().contains("Plan limit"), "{}", r.detail());
    assert_eq!(
        app.post(&format!("/v1/sequences/{id}/clone"), key, json!({}))
            .await
            .status,
        400
    );

    // Other accounts get 404 everywhere; Free gets 403.
    let other = app.account(Plan::Pro).await;
    for (method, path) in [
        ("GET", format!("/v1/sequences/{id}")),
        ("PUT", format!("/v1/sequences/{id}")),
        ("POST", activate.clone()),
        ("POST", format!("/v1/sequences/{id}/clone")),
        ("GET", format!("/v1/sequences/{id}/steps")),
        ("DELETE", format!("/v1/sequences/{id}")),
    ] {
        let r = app
            .call(method, &path, Some(&other.api_key), Some(json!({})))
            .await;
        assert_eq!(r.status.as_u16(), 404, "{method} {path}");
    }
    let free = app.account(Plan::Free).await;
    let r = app.get("/v1/sequences", &free.api_key).await;
    assert_eq!(r.status.as_u16(), 403);
    assert_eq!(r.detail(), "API key does not have access to this resource");

    // Delete cascades to steps and enrollments.
    app.post(
        &format!("/v1/sequences/{id}/enroll"),
        key,
        json!({"contacts": [{"domain": "acme.com", "contact_email": "jane@acme.com"}]}),
    )
    .await;
    assert_eq!(
        app.call("DELETE", &format!("/v1/sequences/{id}"), Some(key), None)
            .await
            .status,
        204
    );
    assert_eq!(
        app.get(&format!("/v1/sequences/{id}"), key).await.status,
        404
    );
    let left: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM sequence_steps WHERE sequence_id = $1")
            .bind(id)
            .fetch_one(&app.state.db.pool)
            .await
            .unwrap();
    let enrolled: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM enrollments WHERE sequence_id = $1")
            .bind(id)
            .fetch_one(&app.state.db.pool)
            .await
            .unwrap();
    assert_eq!((left, enrolled), (0, 0));
}

#[tokio::test]
async fn detail_carries_steps_and_the_most_recent_enrollments() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "Detail"})).await;
    step(
        &app,
        key,
        id,
        json!({"subject": "S", "body_html": "B", "delay_days": 2, "delay_hours": 3}),
    )
    .await;
    let contacts: Vec<_> = (0..120)
        .map(|i| json!({"domain": "acme.com", "contact_email": format!("p{i}@acme.com")}))
        .collect();
    let r = app
        .post(
            &format!("/v1/sequences/{id}/enroll"),
            key,
            json!({"contacts": contacts}),
        )
        .await;
    assert_eq!(r.body["enrolled"], 120, "{:?}", r.body);
    let d = app.get(&format!("/v1/sequences/{id}"), key).await.body;
    assert_eq!(d["steps"].as_array().unwrap().len(), 1);
    let e = d["enrollments"].as_array().unwrap();
    assert_eq!(e.len(), 100);
    assert_eq!(d["enrollment_count"], 120);
    assert_eq!(e[0]["lead_temperature"], "cold");
    assert_eq!(e[0]["current_step"], 1);
    // First send = enrollment time + 2 days 3 hours.
    let at = |f: &str| chrono::DateTime::parse_from_rfc3339(e[0][f].as_str().unwrap()).unwrap();
    assert_eq!((at("next_send_at") - at("enrolled_at")).num_hours(), 51);
}
