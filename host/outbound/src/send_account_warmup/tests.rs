//! The send-account warmup reports and the roll-up, on either backend.

use std::time::Duration;

use serde_json::{Value, json};

use super::rollup::{hourly_pass, roll_up};
use crate::sequence_events::day_of;
use crate::sequence_warmup::tests::{DAY_MS, app_with_dns, publish_acme};
use crate::testkit::{exec, insert_send_account, scalar, sequence};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

/// Records `n` events of `kind` for the send account at `at`.
async fn events(
    app: &TestApp,
    account: i64,
    seq: i64,
    send_account: i64,
    kind: &str,
    n: usize,
    at: i64,
) {
    for _ in 0..n {
        exec(
            app,
            &format!(
                "INSERT INTO sequence_events (account_id, sequence_id, send_account_id, event_type, first_of_kind, created_at) \
                 VALUES ($1, $2, $3, '{kind}', 1, $4)"
            ),
            &[account, seq, send_account, at],
        )
        .await;
    }
}

#[tokio::test]
async fn deliverability_reports_dns_blacklists_and_reputation_cached_an_hour() {
    let (app, dns) = app_with_dns().await;
    publish_acme(&dns);
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let sa = insert_send_account(&app, acct.account_id, "seller@acme.io").await;
    let path = format!("/v1/send-accounts/{sa}/warmup/deliverability");
    let r = app.get(&path, key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let d = r.body;
    assert_eq!(
        (d["account_id"].clone(), d["email"].clone()),
        (json!(sa.to_string()), json!("seller@acme.io"))
    );
    assert_eq!(d["checked_at"], "2026-11-21T12:00:00Z");
    let auth = d["dns_authentication"].as_array().unwrap();
    let kinds: Vec<&str> = auth.iter().map(|a| a["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["SPF", "DKIM", "DMARC"]);
    assert!(auth.iter().all(|a| a["passed"] == true));
    assert_eq!(
        (auth[1]["selector"].clone(), auth[2]["policy"].clone()),
        (json!("google"), json!("quarantine"))
    );
    let mut keys: Vec<&String> = auth[0].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        vec!["details", "passed", "policy", "record", "selector", "type"]
    );
    let b = &d["blacklist_check"];
    assert_eq!(b["listed"], true);
    assert_eq!(
        b["flagged_lists"],
        json!(["zen.spamhaus.org", "dbl.spamhaus.org"])
    );
    assert_eq!(b["checked_lists"].as_array().unwrap().len(), 11);
    assert_eq!(b["clean_lists"].as_array().unwrap().len(), 9);
    assert_eq!(
        d["reputation"],
        json!({"sender_score": null, "inbox_placement_rate": null, "spam_complaint_rate": null,
               "bounce_rate": null, "domain_age_days": null})
    );
    assert_eq!(d["overall_score"], 71);
    assert!(
        d["recommendations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().unwrap().contains("turn on warmup"))
    );

    // Ten sends and a bounce: the cached report stands for an hour.
    let seq = sequence(&app, key, json!({"name": "S", "send_account_id": sa})).await;
    let now = app.state.clock.now_ms();
    events(&app, acct.account_id, seq, sa, "sent", 10, now - 1000).await;
    events(&app, acct.account_id, seq, sa, "bounced", 1, now - 500).await;
    app.clock.advance(Duration::from_secs(59 * 60));
    let again = app.get(&path, key).await.body;
    assert_eq!(again, d);
    app.clock.advance(Duration::from_secs(2 * 60));
    let fresh = app.get(&path, key).await.body;
    assert_eq!(fresh["checked_at"], "2026-11-21T13:01:00Z");
    assert_eq!(
        fresh["reputation"],
        json!({"sender_score": 50.0, "inbox_placement_rate": 45.0, "spam_complaint_rate": null,
               "bounce_rate": 10.0, "domain_age_days": null})
    );
    // 45 + 5 + 50 x 0.3 = 65 of 100.
    assert_eq!(fresh["overall_score"], 65);

    // The hourly pass drops checks once they expire: the report after an
    // hour, the blacklist result after a day.
    let cached = "SELECT COUNT(*) FROM dns_check_cache";
    assert_eq!(scalar(&app, cached, &[]).await, 2);
    app.clock.advance(Duration::from_secs(3600));
    hourly_pass(&app.state).await.unwrap();
    assert_eq!(scalar(&app, cached, &[]).await, 1);
    app.clock.advance(Duration::from_secs(23 * 3600));
    hourly_pass(&app.state).await.unwrap();
    assert_eq!(scalar(&app, cached, &[]).await, 0);

    // Others' ids are 404; Free is refused.
    let other = app.account(Plan::Pro).await;
    assert_eq!(app.get(&path, &other.api_key).await.status, 404);
    let free = app.account(Plan::Free).await;
    assert_eq!(app.get(&path, &free.api_key).await.status, 403);
}

#[tokio::test]
async fn the_roll_up_writes_one_row_per_account_and_day_with_activity() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let a = acct.account_id;
    let sa = insert_send_account(&app, a, "seller@acme.io").await;
    let quiet = insert_send_account(&app, a, "quiet@acme.io").await;
    let seq = sequence(&app, key, json!({"name": "S"})).await;
    let now = app.state.clock.now_ms();
    let today = day_of(now);
    events(&app, a, seq, sa, "sent", 3, (today - 10) * DAY_MS + 5).await;
    events(&app, a, seq, sa, "sent", 4, (today - 2) * DAY_MS + 10).await;
    events(&app, a, seq, sa, "bounced", 1, (today - 2) * DAY_MS + 20).await;
    events(&app, a, seq, sa, "opened", 2, (today - 1) * DAY_MS + 30).await;
    events(&app, a, seq, sa, "sent", 5, now - 1000).await;
    // Another tenant's mailbox gets its own rows, never the caller's.
    let other = app.account(Plan::Starter).await;
    let osa = insert_send_account(&app, other.account_id, "x@rival.io").await;
    let oseq = sequence(&app, &other.api_key, json!({"name": "O"})).await;
    events(
        &app,
        other.account_id,
        oseq,
        osa,
        "sent",
        1,
        (today - 1) * DAY_MS,
    )
    .await;

    assert_eq!(roll_up(&app.state).await.unwrap(), 4);
    let path = format!("/v1/send-accounts/{sa}/warmup/reputation-history");
    let h = app.get(&path, key).await;
    assert_eq!(h.status, 200, "{:?}", h.body);
    assert_eq!(
        h.body,
        json!({"account_id": sa, "days": 30, "points": [
            {"date": "2026-11-11", "reputation_score": 100.0, "bounce_rate": 0.0, "complaint_rate": null, "total_sent": 3},
            {"date": "2026-11-19", "reputation_score": 0.0, "bounce_rate": 25.0, "complaint_rate": null, "total_sent": 4},
            {"date": "2026-11-20", "reputation_score": 100.0, "bounce_rate": null, "complaint_rate": null, "total_sent": 0},
        ]})
    );
    let h = app.get(&format!("{path}?days=7"), key).await.body;
    assert_eq!(h["days"], 7);
    assert_eq!(h["points"].as_array().unwrap().len(), 2);
    let q = app
        .get(
            &format!("/v1/send-accounts/{quiet}/warmup/reputation-history"),
            key,
        )
        .await
        .body;
    assert_eq!(q["points"], json!([]));
    assert_eq!(app.get(&path, &other.api_key).await.status, 404);

    // Passes are idempotent; today is written once it has ended (and the
    // grace period after midnight has passed).
    assert_eq!(roll_up(&app.state).await.unwrap(), 0);
    app.clock
        .set(chrono::DateTime::from_timestamp_millis((today + 1) * DAY_MS + 10 * 60_000).unwrap());
    assert_eq!(roll_up(&app.state).await.unwrap(), 0);
    app.clock.advance(Duration::from_secs(6 * 60));
    assert_eq!(roll_up(&app.state).await.unwrap(), 1);
    let h = app.get(&path, key).await.body;
    let last = h["points"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["date"].clone(), last["total_sent"].clone()),
        (json!("2026-11-21"), json!(5))
    );
}

#[tokio::test]
async fn reputation_history_days_must_be_7_to_180() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let sa = insert_send_account(&app, acct.account_id, "seller@acme.io").await;
    let path = format!("/v1/send-accounts/{sa}/warmup/reputation-history");
    for days in ["6", "181", "0", "-7", "abc", "7.5"] {
        let r = app.get(&format!("{path}?days={days}"), key).await;
        assert_eq!(r.status, 400, "days={days}");
        assert!(!r.detail().is_empty());
    }
    for days in [7, 180] {
        let r = app.get(&format!("{path}?days={days}"), key).await;
        assert_eq!(
            (r.status.as_u16(), r.body["days"].clone()),
            (200, json!(days))
        );
    }
    assert_eq!(
        app.get(
            &format!("/v1/send-accounts/{}/warmup/reputation-history", sa + 100),
            key
        )
        .await
        .status,
        404
    );
    let r = app
        .get(
            &format!("/v1/send-accounts/{sa}/warmup/reputation-history"),
            key,
        )
        .await;
    assert_eq!(r.body["points"], Value::Array(vec![]));
}
