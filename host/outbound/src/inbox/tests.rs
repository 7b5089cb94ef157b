//! The thread API through the router, on either backend. Threads and
//! replies are written with SQL (collection has its own tests).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::testkit::{exec, scalar, sequence, step, text};
use outreach_core::accounts::plans::Plan;
use outreach_core::accounts::service::add_member;
use outreach_core::testing::{TestAccount, TestApp};

mod actions;

const THREADS: &str = "/v1/inbox/threads";
const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;

/// A thread to insert; times are minutes before now.
#[derive(Clone, Copy)]
struct T {
    domain: &'static str,
    received_ago: i64,
    label: Option<&'static str>,
    status: &'static str,
    /// Milliseconds from now (negative: elapsed).
    snoozed_for: Option<i64>,
}

impl Default for T {
    fn default() -> T {
        T {
            domain: "acme.com",
            received_ago: 10,
            label: None,
            status: "open",
            snoozed_for: None,
        }
    }
}

static NEXT: AtomicU64 = AtomicU64::new(1);

async fn thread(app: &TestApp, account_id: i64, t: T) -> i64 {
    let now = app.state.clock.now_ms();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    sqlx::query_scalar(
        "INSERT INTO inbox_threads (account_id, thread_id, domain, contact_email, subject,
             last_received_at, last_classification, last_classification_confidence,
             message_count, status, snoozed_until, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10, $11, $11) RETURNING id",
    )
    .bind(account_id)
    .bind(format!("thread-{n}"))
    .bind(t.domain)
    .bind(format!("jane{n}@{}", t.domain))
    .bind(format!("Re: Subject {n}"))
    .bind(now - t.received_ago * MIN)
    .bind(t.label)
    .bind(t.label.map(|_| 0.8))
    .bind(t.status)
    .bind(t.snoozed_for.map(|d| now + d))
    .bind(now - HOUR)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap()
}

/// A reply to insert.
#[derive(Clone, Copy, Default)]
struct R {
    received_ago: i64,
    body: &'static str,
    label: Option<&'static str>,
    kind: Option<&'static str>,
    spoofing: bool,
    enrollment_id: Option<i64>,
    step_id: Option<i64>,
}

async fn reply(app: &TestApp, account_id: i64, thread_row_id: i64, r: R) -> i64 {
    let now = app.state.clock.now_ms();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let received = now - r.received_ago * MIN;
    sqlx::query_scalar(
        "INSERT INTO inbox_replies (account_id, thread_row_id, message_key, message_id,
             in_reply_to, from_email, from_name, subject, body_text, full_text, headers,
             received_at, domain, enrollment_id, sequence_step_id, kind, spoofing_suspected,
             classification_label, classification_confidence, classification_model,
             classification_provider, classified_at, created_at)
         VALUES ($1, $2, $3, $3, $4, 'jane@acme.com', 'Jane Doe', 'Re: Hello', $5, $5, '[]',
             $6, 'acme.com', $7, $8, $9, $10, $11, $12, $13, $14, $15, $6) RETURNING id",
    )
    // Not cached: sqlx's `Any` driver binds a null f64 as a PostgreSQL
    // float4, which a statement then keeps for the confidence of later rows.
    .persistent(false)
    .bind(account_id)
    .bind(thread_row_id)
    .bind(format!("m{n}@mail.acme.com"))
    .bind("otr.1.1.abc@seller.io")
    .bind(r.body)
    .bind(received)
    .bind(r.enrollment_id)
    .bind(r.step_id)
    .bind(r.kind.unwrap_or("reply"))
    .bind(i64::from(r.spoofing))
    .bind(r.label)
    .bind(r.label.map(|_| 0.8))
    .bind(r.label.map(|_| "rules-v1"))
    .bind(r.label.map(|_| "outreach"))
    .bind(r.label.map(|_| received + 1000))
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap()
}

fn ids(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_i64().unwrap())
        .collect()
}

async fn put(
    app: &TestApp,
    key: &str,
    id: i64,
    body: Value,
) -> outreach_core::testing::TestResponse {
    app.call("PUT", &format!("{THREADS}/{id}"), Some(key), Some(body))
        .await
}

/// A sequence with one step and an enrolled contact: (step id, enrollment id).
async fn enrollment(app: &TestApp, acct: &TestAccount) -> (i64, i64) {
    let key = &acct.api_key;
    let sid = sequence(app, key, json!({"name": "Inbox"})).await;
    let step_id = step(
        app,
        key,
        sid,
        json!({"subject": "Quick question about pipelines", "body_html": "<p>Hi</p>"}),
    )
    .await;
    let r = app
        .post(
            &format!("/v1/sequences/{sid}/enroll"),
            key,
            json!({"contacts": [{"domain": "acme.com", "contact_email": "jane@acme.com"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let e = scalar(
        app,
        "SELECT id FROM enrollments WHERE sequence_id = $1",
        &[sid],
    )
    .await;
    (step_id, e)
}

#[tokio::test]
async fn lists_filter_sort_page_and_count() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let a = acct.account_id;
    let t_a = thread(
        &app,
        a,
        T {
            label: Some("interested"),
            ..T::default()
        },
    )
    .await;
    let t_b = thread(
        &app,
        a,
        T {
            domain: "beta.io",
            received_ago: 20,
            label: Some("not_now"),
            status: "handled",
            ..T::default()
        },
    )
    .await;
    let t_c = thread(
        &app,
        a,
        T {
            received_ago: 30,
            label: Some("objection"),
            status: "snoozed",
            snoozed_for: Some(2 * HOUR),
            ..T::default()
        },
    )
    .await;
    // Snoozed, but the window elapsed: open.
    let t_d = thread(
        &app,
        a,
        T {
            domain: "beta.io",
            received_ago: 5,
            label: Some("ooo"),
            status: "snoozed",
            snoozed_for: Some(-HOUR),
        },
    )
    .await;
    let t_e = thread(
        &app,
        a,
        T {
            received_ago: 1,
            ..T::default()
        },
    )
    .await;
    let other = app.account(Plan::Pro).await;
    thread(
        &app,
        other.account_id,
        T {
            label: Some("interested"),
            ..T::default()
        },
    )
    .await;

    let all = app.get(THREADS, key).await;
    assert_eq!(all.status, 200, "{:?}", all.body);
    assert_eq!(
        (
            all.body["total"].clone(),
            all.body["limit"].clone(),
            all.body["offset"].clone()
        ),
        (json!(5), json!(50), json!(0))
    );
    assert_eq!(ids(&all.body["items"]), vec![t_e, t_d, t_a, t_b, t_c]);
    let d = &all.body["items"][1];
    assert_eq!(
        (d["status"].clone(), d["last_classification"].clone()),
        (json!("open"), json!("ooo"))
    );
    assert!(d["snoozed_until"].as_str().unwrap().ends_with('Z'));
    assert_eq!(all.body["items"][0]["last_classification"], Value::Null);

    for (query, expected) in [
        ("status=open", vec![t_e, t_d, t_a]),
        ("status=snoozed", vec![t_c]),
        ("status=handled", vec![t_b]),
        ("classification=interested", vec![t_a]),
        ("classification=ooo&status=open", vec![t_d]),
        ("domain=BETA.io", vec![t_d, t_b]),
        ("assigned_to=0&domain=acme.com", vec![t_e, t_a, t_c]),
        ("limit=2&offset=1", vec![t_d, t_a]),
        ("status=", vec![t_e, t_d, t_a, t_b, t_c]),
    ] {
        let r = app.get(&format!("{THREADS}?{query}"), key).await;
        assert_eq!(r.status, 200, "{query}: {:?}", r.body);
        assert_eq!(ids(&r.body["items"]), expected, "{query}");
    }
    assert_eq!(
        app.get(&format!("{THREADS}?limit=2&offset=1"), key)
            .await
            .body["total"],
        5
    );
    for bad in [
        "limit=0",
        "limit=201",
        "offset=10001",
        "offset=-1",
        "status=closed",
        "classification=spam",
        "assigned_to=-1",
        "assigned_to=x",
    ] {
        let r = app.get(&format!("{THREADS}?{bad}"), key).await;
        assert_eq!(r.status, 400, "{bad}");
    }

    // Assignment filter.
    let member = add_member(&app.state, a, "rep@acme-seller.io", "member", None)
        .await
        .unwrap();
    assert_eq!(
        put(&app, key, t_a, json!({"assigned_to_user_id": member.id}))
            .await
            .status,
        200
    );
    let r = app
        .get(&format!("{THREADS}?assigned_to={}", member.id), key)
        .await;
    assert_eq!(ids(&r.body["items"]), vec![t_a]);
    let r = app.get(&format!("{THREADS}?assigned_to=0"), key).await;
    assert_eq!(r.body["total"], 4);

    // Counts: each facet ignores its own filter; total respects all.
    let counts = |q: &'static str| {
        let app = &app;
        async move {
            let r = app.get(&format!("{THREADS}/counts{q}"), key).await;
            assert_eq!(r.status, 200, "{q}: {:?}", r.body);
            r.body
        }
    };
    let c = counts("").await;
    assert_eq!(
        c["by_status"],
        json!({"open": 3, "handled": 1, "snoozed": 1})
    );
    assert_eq!(
        c["by_classification"],
        json!({"interested": 1, "not_now": 1, "ooo": 1, "objection": 1, "unsubscribe": 0, "bounce": 0, "other": 0})
    );
    assert_eq!(c["total"], 5);
    let c = counts("?status=open&classification=interested").await;
    assert_eq!(
        c["by_status"],
        json!({"open": 1, "handled": 0, "snoozed": 0})
    );
    assert_eq!(
        c["by_classification"],
        json!({"interested": 1, "not_now": 0, "ooo": 1, "objection": 0, "unsubscribe": 0, "bounce": 0, "other": 0})
    );
    assert_eq!(c["total"], 1);
    let c = counts("?domain=acme.com&status=snoozed").await;
    assert_eq!(
        c["by_status"],
        json!({"open": 2, "handled": 0, "snoozed": 1})
    );
    assert_eq!(c["by_classification"]["objection"], 1);
    assert_eq!(c["by_classification"]["interested"], 0);
    assert_eq!(c["total"], 1);
    assert_eq!(
        app.get(&format!("{THREADS}/counts?status=later"), key)
            .await
            .status,
        400
    );

    // The snooze runs out: no job needed.
    app.clock.advance(Duration::from_secs(3 * 3600));
    let c = counts("").await;
    assert_eq!(
        c["by_status"],
        json!({"open": 4, "handled": 1, "snoozed": 0})
    );
    let r = app.get(&format!("{THREADS}?status=open"), key).await;
    assert_eq!(ids(&r.body["items"]), vec![t_e, t_d, t_a, t_c]);

    // Other accounts see only their own; Free gets 403.
    assert_eq!(app.get(THREADS, &other.api_key).await.body["total"], 1);
    let free = app.account(Plan::Free).await;
    for path in [
        THREADS.to_owned(),
        format!("{THREADS}/counts"),
        format!("{THREADS}/{t_a}"),
    ] {
        assert_eq!(app.get(&path, &free.api_key).await.status, 403, "{path}");
    }
}

#[tokio::test]
async fn detail_and_update_with_overrides_surviving_reclassification() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let a = acct.account_id;
    let (step_id, enrollment_id) = enrollment(&app, &acct).await;
    let id = thread(
        &app,
        a,
        T {
            label: Some("objection"),
            ..T::default()
        },
    )
    .await;
    // Inserted newest first: the detail sorts them.
    let latest = reply(
        &app,
        a,
        id,
        R {
            received_ago: 10,
            body: "Too expensive for us.",
            label: Some("objection"),
            enrollment_id: Some(enrollment_id),
            step_id: Some(step_id),
            ..R::default()
        },
    )
    .await;
    let older = reply(
        &app,
        a,
        id,
        R {
            received_ago: 60,
            body: "Maybe next quarter.",
            label: Some("not_now"),
            ..R::default()
        },
    )
    .await;
    let spoofed = reply(
        &app,
        a,
        id,
        R {
            received_ago: 90,
            body: "Wire the money.",
            spoofing: true,
            ..R::default()
        },
    )
    .await;
    exec(
        &app,
        "UPDATE inbox_replies SET effects_applied_at = 5 WHERE id = $1",
        &[older],
    )
    .await;

    let r = app.get(&format!("{THREADS}/{id}"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["thread"]["id"], id);
    assert_eq!(ids(&r.body["replies"]), vec![spoofed, older, latest]);
    let s = &r.body["replies"][0];
    assert_eq!(
        (s["spoofing_suspected"].clone(), s["kind"].clone()),
        (json!(true), json!("reply"))
    );
    assert_eq!(
        s["classification"],
        json!({"label": null, "confidence": null, "manually_overridden_to": null, "model": null, "provider": null, "classified_at": null})
    );
    let l = &r.body["replies"][2];
    assert_eq!(
        (l["sequence_step_id"].clone(), l["body_text"].clone()),
        (json!(step_id), json!("Too expensive for us."))
    );
    assert_eq!(
        (
            l["classification"]["label"].clone(),
            l["classification"]["model"].clone()
        ),
        (json!("objection"), json!("rules-v1"))
    );
    assert_eq!(l["spoofing_suspected"], false);

    // Override on the latest reply: the thread shows it at 1.0; interested makes the lead hot.
    let r = put(
        &app,
        key,
        id,
        json!({"classification_override": "interested"}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        (
            r.body["last_classification"].clone(),
            r.body["last_classification_confidence"].clone()
        ),
        (json!("interested"), json!(1.0))
    );
    assert_eq!(
        text(
            &app,
            "SELECT lead_temperature FROM enrollments WHERE id = $1",
            &[enrollment_id]
        )
        .await
        .as_deref(),
        Some("hot")
    );
    let r = app.get(&format!("{THREADS}/{id}"), key).await;
    let c = &r.body["replies"][2]["classification"];
    assert_eq!(
        (
            c["label"].clone(),
            c["manually_overridden_to"].clone(),
            c["confidence"].clone()
        ),
        (json!("objection"), json!("interested"), json!(1.0))
    );

    // Reclassify clears the others and keeps the override.
    let other = app.account(Plan::Pro).await;
    let foreign = thread(&app, other.account_id, T::default()).await;
    reply(
        &app,
        other.account_id,
        foreign,
        R {
            label: Some("other"),
            ..R::default()
        },
    )
    .await;
    let r = app
        .post(
            "/v1/inbox/reclassify-bulk",
            key,
            json!({"thread_ids": [id, foreign, id]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({"queued": 1, "preserved_overrides": 1, "thread_ids": [id], "next_run_within_seconds": super::CLASSIFY_INTERVAL_SECS})
    );
    let r = app.get(&format!("{THREADS}/{id}"), key).await;
    assert_eq!(r.body["replies"][1]["classification"]["label"], Value::Null);
    assert_eq!(
        r.body["replies"][1]["classification"]["classified_at"],
        Value::Null
    );
    assert_eq!(
        r.body["replies"][2]["classification"]["manually_overridden_to"],
        "interested"
    );
    assert_eq!(r.body["replies"][2]["classification"]["label"], "objection");
    assert_eq!(r.body["thread"]["last_classification"], "interested");
    assert_eq!(
        scalar(
            &app,
            "SELECT effects_applied_at FROM inbox_replies WHERE id = $1",
            &[older]
        )
        .await,
        5
    );
    assert_eq!(scalar(&app, "SELECT COUNT(*) FROM inbox_replies WHERE thread_row_id = $1 AND classified_at IS NOT NULL", &[foreign]).await, 1);
    // The worker's next pass relabels the cleared reply; the override holds.
    assert_eq!(
        super::classify::classify_due(&app.state, "test-worker")
            .await
            .unwrap(),
        1
    );
    let r = app.get(&format!("{THREADS}/{id}"), key).await;
    assert!(r.body["replies"][1]["classification"]["label"].is_string());
    assert_eq!(r.body["replies"][0]["classification"]["label"], Value::Null);
    assert_eq!(
        r.body["replies"][2]["classification"]["manually_overridden_to"],
        "interested"
    );
    assert_eq!(
        (
            r.body["thread"]["last_classification"].clone(),
            r.body["thread"]["last_classification_confidence"].clone()
        ),
        (json!("interested"), json!(1.0))
    );
    for bad in [
        json!({"thread_ids": []}),
        json!({"thread_ids": (1..=501).collect::<Vec<i64>>()}),
        json!({"thread_ids": [id], "force": true}),
    ] {
        assert_eq!(
            app.post("/v1/inbox/reclassify-bulk", key, bad).await.status,
            400
        );
    }

    // Status moves and snoozing.
    let now = app.state.clock.now_ms();
    for (body, detail) in [
        (json!({"status": "snoozed"}), "snooze_hours"),
        (
            json!({"status": "snoozed", "snooze_hours": 0}),
            "snooze_hours",
        ),
        (json!({"snooze_hours": 721}), "snooze_hours"),
        (
            json!({"status": "handled", "snooze_hours": 2}),
            "snooze_hours",
        ),
        (json!({"status": "closed"}), "status"),
        (
            json!({"classification_override": "spam"}),
            "classification_override",
        ),
        (json!({"colour": "red"}), "colour"),
        (json!({"notes": "x".repeat(10_001)}), "notes"),
    ] {
        let r = put(&app, key, id, body.clone()).await;
        assert_eq!(r.status, 400, "{body}");
        assert!(r.detail().contains(detail), "{body}: {}", r.detail());
    }
    let r = put(&app, key, id, json!({"snooze_hours": 24})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["status"], "snoozed");
    assert_eq!(
        scalar(
            &app,
            "SELECT snoozed_until FROM inbox_threads WHERE id = $1",
            &[id]
        )
        .await,
        now + 24 * HOUR
    );
    let r = put(
        &app,
        key,
        id,
        json!({"status": "snoozed", "snooze_hours": 720, "notes": "Call back in May"}),
    )
    .await;
    assert_eq!(
        (r.body["status"].clone(), r.body["notes"].clone()),
        (json!("snoozed"), json!("Call back in May"))
    );
    let r = put(&app, key, id, json!({"status": "handled"})).await;
    assert_eq!(
        (
            r.body["status"].clone(),
            r.body["snoozed_until"].clone(),
            r.body["notes"].clone()
        ),
        (json!("handled"), Value::Null, json!("Call back in May"))
    );
    let before = r.body["updated_at"].clone();
    app.clock.advance(Duration::from_secs(5));
    let r = put(&app, key, id, json!({})).await;
    assert_eq!(
        (r.status.as_u16(), r.body["updated_at"].clone()),
        (200, before)
    );
    let r = put(&app, key, id, json!({"notes": null, "status": "open"})).await;
    assert_eq!(
        (r.body["status"].clone(), r.body["notes"].clone()),
        (json!("open"), Value::Null)
    );

    // Assignment: members of the organisation only.
    let member = add_member(&app.state, a, "rep2@acme-seller.io", "member", None)
        .await
        .unwrap();
    for user in [other.user_id, 999_999] {
        let r = put(&app, key, id, json!({"assigned_to_user_id": user})).await;
        assert_eq!(r.status, 400, "{user}");
        assert!(r.detail().contains("member"), "{}", r.detail());
    }
    let r = put(&app, key, id, json!({"assigned_to_user_id": member.id})).await;
    assert_eq!(r.body["assigned_to_user_id"], member.id);
    assert_eq!(
        put(&app, key, id, json!({"assigned_to_user_id": acct.user_id}))
            .await
            .body["assigned_to_user_id"],
        acct.user_id
    );
    let r = put(&app, key, id, json!({"assigned_to_user_id": null})).await;
    assert_eq!(r.body["assigned_to_user_id"], Value::Null);

    // Another account's thread is not found.
    assert_eq!(
        app.get(&format!("{THREADS}/{foreign}"), key).await.status,
        404
    );
    assert_eq!(
        put(&app, key, foreign, json!({"status": "handled"}))
            .await
            .status,
        404
    );
    assert_eq!(
        put(&app, &other.api_key, id, json!({"notes": "mine"}))
            .await
            .status,
        404
    );
    assert_eq!(app.get(&format!("{THREADS}/abc"), key).await.status, 404);
    assert_eq!(
        text(
            &app,
            "SELECT status FROM inbox_threads WHERE id = $1",
            &[foreign]
        )
        .await
        .as_deref(),
        Some("open")
    );
}
