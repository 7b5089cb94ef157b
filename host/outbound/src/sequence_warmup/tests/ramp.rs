//! Presets, adjust, the phase moves and the dashboard's formulas.

use std::time::Duration;

use serde_json::{Value, json};

use super::{DAY_MS, sending_sequence};
use crate::sequence_events::day_of;
use crate::sequence_warmup::service::note_effective_limits;
use crate::testkit::{exec, scalar, sequence, text};
use outreach_core::accounts::plans::Plan;
use outreach_core::platform::clock::iso;
use outreach_core::testing::TestApp;

async fn volumes(app: &TestApp, id: i64) -> (i64, i64, i64, Option<String>) {
    (
        scalar(
            app,
            "SELECT warmup_start_volume FROM sequences WHERE id = $1",
            &[id],
        )
        .await,
        scalar(
            app,
            "SELECT warmup_increment FROM sequences WHERE id = $1",
            &[id],
        )
        .await,
        scalar(
            app,
            "SELECT daily_send_limit FROM sequences WHERE id = $1",
            &[id],
        )
        .await,
        text(
            app,
            "SELECT warmup_preset FROM sequences WHERE id = $1",
            &[id],
        )
        .await,
    )
}

#[tokio::test]
async fn presets_apply_the_spec_table_and_custom_keeps_the_values() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "P"})).await;
    let path = format!("/v1/sequence-warmup/{id}/preset");
    for (name, start, inc, limit) in [
        ("conservative", 5, 2, 30),
        ("moderate", 10, 5, 50),
        ("aggressive", 25, 10, 200),
    ] {
        let r = app.post(&path, key, json!({"preset": name})).await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        assert_eq!(r.body["warmup_start_volume"], start);
        assert_eq!(r.body["warmup_increment"], inc);
        assert_eq!(r.body["daily_send_limit"], limit);
        assert_eq!(r.body["warmup_preset"], name);
        assert!(r.body["message"].as_str().unwrap().contains(name));
        assert_eq!(
            volumes(&app, id).await,
            (start, inc, limit, Some(name.into()))
        );
    }
    let r = app.post(&path, key, json!({"preset": "custom"})).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        volumes(&app, id).await,
        (25, 10, 200, Some("custom".into()))
    );

    // Bad input: 400 {"detail"}, nothing written.
    for body in [
        json!({"preset": "turbo"}),
        json!({"preset": "moderate", "extra": 1}),
        json!({}),
    ] {
        let r = app.post(&path, key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}");
        assert!(!r.detail().is_empty());
    }
    assert_eq!(
        volumes(&app, id).await,
        (25, 10, 200, Some("custom".into()))
    );
    let dash = app
        .get(&format!("/v1/sequence-warmup/{id}/dashboard"), key)
        .await;
    assert_eq!(dash.body["warmup_preset"], "custom");

    // Other accounts' ids are 404; Free is refused.
    let other = app.account(Plan::Pro).await;
    let r = app
        .post(&path, &other.api_key, json!({"preset": "moderate"}))
        .await;
    assert_eq!(r.status, 404);
    let free = app.account(Plan::Free).await;
    assert_eq!(
        app.get(
            &format!("/v1/sequence-warmup/{id}/dashboard"),
            &free.api_key
        )
        .await
        .status,
        403
    );
}

#[tokio::test]
async fn adjust_checks_its_ranges_and_changes_nothing_on_a_400() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "A"})).await;
    let path = format!("/v1/sequence-warmup/{id}/adjust");
    for (body, field) in [
        (json!({}), "at least one"),
        (json!({"start_volume": 0}), "start_volume"),
        (json!({"start_volume": 1001}), "start_volume"),
        (json!({"increment": 0}), "increment"),
        (json!({"increment": 101}), "increment"),
        (json!({"daily_limit": 0}), "daily_limit"),
        (json!({"daily_limit": 10001}), "daily_limit"),
        // A good field beside a bad one is not written either.
        (json!({"start_volume": 20, "increment": 500}), "increment"),
        (json!({"start_volume": "ten"}), "start_volume"),
        (json!({"start_volume": 20, "ramp": 3}), "ramp"),
    ] {
        let r = app.post(&path, key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}");
        assert!(r.detail().contains(field), "{body}: {}", r.detail());
    }
    assert_eq!(volumes(&app, id).await, (10, 5, 50, None));

    let r = app.post(&path, key, json!({"increment": 7})).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        json!({"message": "Warmup adjusted", "warmup_start_volume": 10, "warmup_increment": 7,
               "daily_send_limit": 50, "warmup_preset": "custom"})
    );
    let r = app
        .post(
            &path,
            key,
            json!({"start_volume": 1000, "increment": 100, "daily_limit": 10000}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        volumes(&app, id).await,
        (1000, 100, 10000, Some("custom".into()))
    );
    let r = app
        .post(
            &path,
            key,
            json!({"start_volume": 1, "increment": 1, "daily_limit": 1}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(volumes(&app, id).await, (1, 1, 1, Some("custom".into())));
}

fn dash_tuple(d: &Value) -> (Value, Value, Value, Value) {
    (
        d["warmup_phase"].clone(),
        d["current_effective_limit"].clone(),
        d["days_since_start"].clone(),
        d["days_until_full_volume"].clone(),
    )
}

#[tokio::test]
async fn pause_resume_and_reset_follow_the_state_rules_on_the_clock() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let id = sending_sequence(&app, key, acct.account_id, "seller@acme.io", true, false).await;
    let dash = format!("/v1/sequence-warmup/{id}/dashboard");
    let pause = format!("/v1/sequence-warmup/{id}/pause");
    let resume = format!("/v1/sequence-warmup/{id}/resume");
    let reset = format!("/v1/sequence-warmup/{id}/reset");

    // A draft with warmup on has not started: day 0's cap, full ramp ahead.
    let d = app.get(&dash, key).await.body;
    assert_eq!(
        dash_tuple(&d),
        (json!("not_started"), json!(10), json!(0), json!(8))
    );
    assert_eq!(d["warmup_progress_pct"], 20.0);
    let r = app.post(&pause, key, json!({})).await;
    assert_eq!(
        (r.status.as_u16(), r.detail().contains("not started")),
        (400, true)
    );
    let r = app.post(&resume, key, json!({})).await;
    assert_eq!(
        (r.status.as_u16(), r.detail().contains("never started")),
        (400, true)
    );

    // Activation starts the ramp.
    app.post(&format!("/v1/sequences/{id}/activate"), key, json!({}))
        .await;
    let started = app.state.clock.now_ms();
    let d = app.get(&dash, key).await.body;
    assert_eq!(d["warmup_started_at"], iso(started));
    assert_eq!(
        dash_tuple(&d),
        (json!("ramping"), json!(10), json!(0), json!(8))
    );
    app.clock
        .advance(Duration::from_millis((2 * DAY_MS + 3_600_000) as u64));
    let d = app.get(&dash, key).await.body;
    assert_eq!(
        dash_tuple(&d),
        (json!("ramping"), json!(20), json!(2), json!(6))
    );
    assert_eq!(d["warmup_progress_pct"], 40.0);

    // Pause freezes the ramp; a second pause is 400.
    let r = app.post(&pause, key, json!({})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let paused_at = app.state.clock.now_ms();
    assert_eq!(r.body["warmup_enabled"], false);
    assert_eq!(r.body["warmup_paused_at"], iso(paused_at));
    assert_eq!(r.body["warmup_phase"], "paused");
    let r = app.post(&pause, key, json!({})).await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (400, "Warmup is already inactive")
    );
    app.clock
        .advance(Duration::from_millis((5 * DAY_MS) as u64));
    let d = app.get(&dash, key).await.body;
    assert_eq!(
        dash_tuple(&d),
        (json!("paused"), json!(20), json!(2), json!(6))
    );
    let seq = app.get(&format!("/v1/sequences/{id}"), key).await.body;
    assert_eq!(seq["warmup_enabled"], false);

    // Resume moves the start forward by the five days paused.
    let r = app.post(&resume, key, json!({})).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["warmup_started_at"], iso(started + 5 * DAY_MS));
    assert_eq!(r.body["warmup_paused_at"], Value::Null);
    assert_eq!(
        (
            r.body["warmup_phase"].clone(),
            r.body["current_effective_limit"].clone()
        ),
        (json!("ramping"), json!(20))
    );
    assert_eq!(r.body["days_since_start"], 2);
    let r = app.post(&resume, key, json!({})).await;
    assert_eq!(
        (r.status.as_u16(), r.body["message"].clone()),
        (200, json!("Warmup is already running"))
    );
    app.clock.advance(Duration::from_millis(DAY_MS as u64));
    assert_eq!(
        app.get(&dash, key).await.body["current_effective_limit"],
        25
    );
    app.clock
        .advance(Duration::from_millis((10 * DAY_MS) as u64));
    let d = app.get(&dash, key).await.body;
    assert_eq!(
        dash_tuple(&d),
        (json!("at_limit"), json!(50), json!(13), json!(0))
    );
    assert_eq!(d["warmup_progress_pct"], 100.0);

    // Reset wipes the log and restarts an active ramp at once.
    let today = day_of(app.state.clock.now_ms());
    exec(
        &app,
        "INSERT INTO sequence_days (sequence_id, day, account_id, sent, effective_limit) VALUES ($1, $2, $3, 40, 50)",
        &[id, today - 1, acct.account_id],
    )
    .await;
    let r = app.post(&reset, key, json!({})).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["warmup_started_at"], iso(app.state.clock.now_ms()));
    assert_eq!(
        (
            r.body["warmup_phase"].clone(),
            r.body["current_effective_limit"].clone()
        ),
        (json!("ramping"), json!(10))
    );
    let kept = scalar(
        &app,
        "SELECT sent FROM sequence_days WHERE sequence_id = $1 AND day = $2",
        &[id, today - 1],
    )
    .await;
    let log = scalar(
        &app,
        "SELECT COUNT(*) FROM sequence_days WHERE sequence_id = $1 AND effective_limit IS NOT NULL",
        &[id],
    )
    .await;
    assert_eq!((kept, log), (40, 0));

    // Reset of a paused ramp leaves it not started; resume is then 400.
    app.clock.advance(Duration::from_millis(DAY_MS as u64));
    assert_eq!(app.post(&pause, key, json!({})).await.status, 200);
    let r = app.post(&reset, key, json!({})).await;
    assert_eq!(
        (
            r.body["warmup_phase"].clone(),
            r.body["warmup_started_at"].clone(),
            r.body["warmup_paused_at"].clone()
        ),
        (json!("not_started"), Value::Null, Value::Null)
    );
    assert_eq!(app.post(&resume, key, json!({})).await.status, 400);

    // Another account's sequence: 404 for every move.
    let other = app.account(Plan::Pro).await;
    for path in [&pause, &resume, &reset] {
        assert_eq!(app.post(path, &other.api_key, json!({})).await.status, 404);
    }
}

#[tokio::test]
async fn the_dashboard_computes_its_formulas_from_days_and_events() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let id = sending_sequence(&app, key, acct.account_id, "seller@acme.io", false, true).await;
    let dash = format!("/v1/sequence-warmup/{id}/dashboard");

    // Warmup off: no ramp, full volume, nothing sent yet.
    let d = app.get(&dash, key).await.body;
    assert_eq!(
        dash_tuple(&d),
        (json!("not_started"), json!(50), json!(0), json!(0))
    );
    assert_eq!(d["reputation_estimate"], 100.0);
    assert_eq!(d["estimated_inbox_rate"], Value::Null);
    let chart = d["daily_volume_chart"].as_array().unwrap();
    assert_eq!(chart.len(), 30);
    assert_eq!(chart[29]["date"], "2026-11-21");
    assert_eq!(chart[0]["date"], "2026-10-23");
    assert_eq!(
        chart[0],
        json!({"date": "2026-10-23", "sent_count": 0, "bounce_count": 0, "complaint_count": 0, "effective_limit": null})
    );

    // 200 sent, 4 bounces (2%), 1 complaint (0.5%) in the window; a day
    // outside it does not count.
    let today = day_of(app.state.clock.now_ms());
    let a = acct.account_id;
    for (day, sent, bounced, complaints) in [
        (today, 100, 2, 0),
        (today - 3, 100, 2, 1),
        (today - 40, 1000, 900, 50),
    ] {
        exec(
            &app,
            "INSERT INTO sequence_days (sequence_id, day, account_id, sent, bounced, complaints, effective_limit) \
             VALUES ($1, $2, $3, $4, $5, $6, 120)",
            &[id, day, a, sent, bounced, complaints],
        )
        .await;
    }
    let now = app.state.clock.now_ms();
    for (kind, at) in [
        ("delivered", now - 1000),
        ("delivered", now - 20 * DAY_MS),
        ("delivered", now - 31 * DAY_MS),
        ("opened", now - 5),
        ("opened", now - 2 * DAY_MS),
        ("clicked", now),
    ] {
        exec(
            &app,
            &format!(
                "INSERT INTO sequence_events (account_id, sequence_id, event_type, first_of_kind, created_at) \
                 VALUES ($1, $2, '{kind}', 1, $3)"
            ),
            &[a, id, at],
        )
        .await;
    }
    let d = app.get(&dash, key).await.body;
    assert_eq!(d["reputation_estimate"], 80.0);
    assert_eq!(d["estimated_inbox_rate"], 78.4);
    assert_eq!(
        (
            d["delivered_count_30d"].clone(),
            d["opened_count_30d"].clone()
        ),
        (json!(2), json!(2))
    );
    let chart = d["daily_volume_chart"].as_array().unwrap();
    assert_eq!(
        chart[26],
        json!({"date": "2026-11-18", "sent_count": 100, "bounce_count": 2, "complaint_count": 1, "effective_limit": 120})
    );
    assert_eq!(chart[29]["sent_count"], 100);

    // The estimate is clamped at 0.
    exec(
        &app,
        "UPDATE sequence_days SET bounced = 90 WHERE sequence_id = $1 AND day = $2",
        &[id, today],
    )
    .await;
    assert_eq!(app.get(&dash, key).await.body["reputation_estimate"], 0.0);

    // The hourly pass logs today's cap of active ramps.
    let other = sending_sequence(&app, key, a, "ramp@acme.io", true, true).await;
    app.clock
        .advance(Duration::from_millis((3 * DAY_MS) as u64));
    assert_eq!(note_effective_limits(&app.state).await.unwrap(), 1);
    let d = app
        .get(&format!("/v1/sequence-warmup/{other}/dashboard"), key)
        .await
        .body;
    assert_eq!(d["daily_volume_chart"][29]["effective_limit"], 25);
    assert_eq!(d["daily_volume_chart"][29]["sent_count"], 0);
}
