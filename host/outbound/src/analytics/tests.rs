//! Analytics and A/B and multivariate results through the router, on
//! either backend, over messages and events written as the sender, the
//! tracking endpoints and the inbox write them.

use serde_json::{Value, json};

use super::service::{
    Counts, composite_hundredths, leading, rate, rate_tenths, sufficient, two_proportion_z,
};
use crate::sequence_events::{self, Kind, NewEvent};
use crate::testkit::step;
use crate::tracking::tests::{Fixture, enroll, fixture, sent_message};
use crate::tracking::{Token, TrackingKey};
use outreach_core::accounts::plans::Plan;

/// A sent message and whose it is.
#[derive(Clone)]
struct Msg {
    id: i64,
    enrollment: i64,
    step: i64,
    variant: Option<String>,
}

/// Enrolls `n` new contacts and sends each one message of `step` as
/// `variant`.
async fn send(f: &Fixture, step: i64, variant: Option<&str>, n: usize) -> Vec<Msg> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let emails: Vec<String> = (0..n)
        .map(|_| {
            let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            format!("contact{i}@acme.io")
        })
        .collect();
    let ids = enroll(&f.app, &f.acct.api_key, f.sequence_id, &emails).await;
    let mut out = Vec::new();
    for e in ids {
        let id = sent_message(
            &f.app,
            f.acct.account_id,
            f.sequence_id,
            e,
            step,
            variant,
            &["https://acme.io/x", "https://acme.io/goal"],
        )
        .await;
        out.push(Msg {
            id,
            enrollment: e,
            step,
            variant: variant.map(str::to_owned),
        });
    }
    out
}

/// Records an event of `m` directly (replies and bounces come from the
/// inbox, which is not part of this area).
async fn event(f: &Fixture, m: &Msg, kind: Kind, detail: Option<&str>) {
    let mut conn = f.app.state.db.pool.acquire().await.unwrap();
    sequence_events::record(
        &mut conn,
        &[NewEvent {
            account_id: f.acct.account_id,
            sequence_id: f.sequence_id,
            step_id: Some(m.step),
            enrollment_id: Some(m.enrollment),
            message_id: Some(m.id),
            send_account_id: None,
            kind,
            variant: m.variant.clone(),
            url: None,
            detail: detail.map(str::to_owned),
            at: f.app.state.clock.now_ms(),
        }],
    )
    .await
    .unwrap();
}

/// Opens and clicks go through the public endpoints.
async fn hit(f: &Fixture, token: Token) {
    let text = TrackingKey::new(&f.app.state.secrets).sign(token);
    let p = match token {
        Token::Open { .. } => format!("/t/o/{text}"),
        Token::Click { .. } => format!("/t/c/{text}"),
        Token::Unsubscribe { .. } => format!("/t/u/{text}"),
    };
    let method = if p.starts_with("/t/u/") {
        "POST"
    } else {
        "GET"
    };
    let r = f.app.call(method, &p, None, None).await;
    assert!(r.status.as_u16() < 400, "{p}: {:?}", r.body);
}

async fn set_status(f: &Fixture, enrollment: i64, status: &str) {
    sqlx::query("UPDATE enrollments SET status = $1 WHERE id = $2")
        .bind(status)
        .bind(enrollment)
        .execute(&f.app.state.db.pool)
        .await
        .unwrap();
}

#[tokio::test]
async fn analytics_counts_enrollments_events_and_rates() {
    let f = fixture(json!({"name": "Numbers", "goal_type": "url_click",
        "goal_url": "https://acme.io/goal"}))
    .await;
    let key = &f.acct.api_key;
    let second = step(
        &f.app,
        key,
        f.sequence_id,
        json!({"subject": "Bump", "body_html": "<p>b</p>"}),
    )
    .await;
    let wait = step(
        &f.app,
        key,
        f.sequence_id,
        json!({"step_type": "delay", "delay_days": 2}),
    )
    .await;
    let m = send(&f, f.step_id, None, 3).await;
    // Message 0: opened twice (one open), clicked twice, replied interested.
    hit(&f, Token::Open { message: m[0].id }).await;
    hit(&f, Token::Open { message: m[0].id }).await;
    hit(
        &f,
        Token::Click {
            message: m[0].id,
            link: 0,
        },
    )
    .await;
    hit(
        &f,
        Token::Click {
            message: m[0].id,
            link: 0,
        },
    )
    .await;
    event(&f, &m[0], Kind::Replied, Some("interested")).await;
    // Message 1: the goal link (completes it), a reply that is not interested.
    hit(
        &f,
        Token::Click {
            message: m[1].id,
            link: 1,
        },
    )
    .await;
    event(&f, &m[1], Kind::Replied, Some("not_now")).await;
    // Message 2: bounced and unsubscribed.
    event(&f, &m[2], Kind::Bounced, Some("hard")).await;
    hit(&f, Token::Unsubscribe { message: m[2].id }).await;
    // The second step went to contact 0 only.
    let later = sent_message(
        &f.app,
        f.acct.account_id,
        f.sequence_id,
        m[0].enrollment,
        second,
        None,
        &[],
    )
    .await;
    assert!(later > 0);
    set_status(&f, m[0].enrollment, "replied").await;
    let extra = send(&f, second, Some("b"), 2).await;
    set_status(&f, extra[0].enrollment, "bounced").await;
    let r = f
        .app
        .call(
            "POST",
            &format!(
                "/v1/sequences/{}/enrollments/{}/pause",
                f.sequence_id, extra[1].enrollment
            ),
            Some(key),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);

    let a = f
        .app
        .get(&format!("/v1/sequences/{}/analytics", f.sequence_id), key)
        .await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    let b = &a.body;
    assert_eq!(b["sequence_id"], f.sequence_id);
    for (field, want) in [
        ("total_enrolled", 5),
        ("active", 0),
        ("paused", 1),
        ("completed", 1),
        ("bounced_enrollments", 1),
        ("unsubscribed_enrollments", 1),
        ("replied_enrollments", 1),
        ("goal_completed", 1),
        ("interested_replies", 1),
    ] {
        assert_eq!(b[field], want, "{field}: {b}");
    }
    assert_eq!(
        b["rollup"],
        json!({"sent": 6, "delivered": 6, "opened": 1, "clicked": 2, "total_clicks": 3,
            "replied": 2, "bounced": 1, "unsubscribed": 1})
    );
    let steps = b["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert_eq!(
        steps[0],
        json!({"step_id": f.step_id, "position": 1, "step_type": "email", "subject": "Hi",
            "sent": 3, "delivered": 3, "opened": 1, "clicked": 2, "total_clicks": 3,
            "replied": 2, "bounced": 1, "unsubscribed": 1,
            "open_rate": 33.3, "click_rate": 66.7})
    );
    assert_eq!(
        (steps[1]["step_id"].clone(), steps[1]["sent"].clone()),
        (json!(second), json!(3))
    );
    assert_eq!(
        (
            steps[1]["open_rate"].clone(),
            steps[1]["click_rate"].clone()
        ),
        (json!(0.0), json!(0.0))
    );
    assert_eq!(
        steps[2],
        json!({"step_id": wait, "position": 3, "step_type": "delay", "subject": null,
            "sent": 0, "delivered": 0, "opened": 0, "clicked": 0, "total_clicks": 0,
            "replied": 0, "bounced": 0, "unsubscribed": 0, "open_rate": 0.0, "click_rate": 0.0})
    );
}

#[tokio::test]
async fn analytics_of_an_empty_sequence_are_zero_and_other_accounts_get_404() {
    let f = fixture(json!({"name": "Empty"})).await;
    let path = format!("/v1/sequences/{}/analytics", f.sequence_id);
    let a = f.app.get(&path, &f.acct.api_key).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["total_enrolled"], 0);
    assert_eq!(a.body["rollup"]["sent"], 0);
    assert_eq!(a.body["steps"][0]["open_rate"], 0.0);
    assert_eq!(a.body["steps"][0]["click_rate"], 0.0);
    let other = f.app.account(Plan::Pro).await;
    assert_eq!(f.app.get(&path, &other.api_key).await.status, 404);
    let base = format!("/v1/sequences/{}/steps/{}", f.sequence_id, f.step_id);
    for p in [
        format!("{base}/ab-results"),
        format!("{base}/multivariate-results"),
    ] {
        assert_eq!(f.app.get(&p, &other.api_key).await.status, 404, "{p}");
    }
    let r = f
        .app
        .post(
            &format!("{base}/ab-winner"),
            &other.api_key,
            json!({"winner": "a"}),
        )
        .await;
    assert_eq!(r.status, 404);
    let free = f.app.account(Plan::Free).await;
    assert_eq!(f.app.get(&path, &free.api_key).await.status, 403);
    assert_eq!(
        f.app
            .get(
                &format!("/v1/sequences/{}/analytics", f.sequence_id + 1000),
                &f.acct.api_key
            )
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn ab_results_and_a_validated_winner() {
    let f = fixture(json!({"name": "AB"})).await;
    let key = &f.acct.api_key;
    let ab = step(
        &f.app,
        key,
        f.sequence_id,
        json!({"subject": "A", "body_html": "<p>a</p>", "ab_test_enabled": true,
            "variant_b_subject": "B", "variant_b_body_html": "<p>b</p>"}),
    )
    .await;
    let a = send(&f, ab, Some("a"), 3).await;
    let b = send(&f, ab, Some("b"), 1).await;
    hit(&f, Token::Open { message: a[0].id }).await;
    hit(
        &f,
        Token::Click {
            message: a[1].id,
            link: 0,
        },
    )
    .await;
    hit(
        &f,
        Token::Click {
            message: a[1].id,
            link: 1,
        },
    )
    .await;
    hit(&f, Token::Open { message: b[0].id }).await;
    let base = format!("/v1/sequences/{}/steps/{ab}", f.sequence_id);
    let r = f.app.get(&format!("{base}/ab-results"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({"step_id": ab, "ab_test_enabled": true, "ab_winner": null, "variants": {
            "a": {"sent": 3, "opened": 1, "clicked": 1, "total_clicks": 2, "replied": 0,
                  "open_rate": 33.3, "click_rate": 33.3, "reply_rate": 0.0},
            "b": {"sent": 1, "opened": 1, "clicked": 0, "total_clicks": 0, "replied": 0,
                  "open_rate": 100.0, "click_rate": 0.0, "reply_rate": 0.0}}})
    );

    // Bad winners and a step without A/B: 400, nothing changed.
    let plain = format!("/v1/sequences/{}/steps/{}", f.sequence_id, f.step_id);
    for (path, body, detail) in [
        (&base, json!({"winner": "c"}), "winner must be one of: a, b"),
        (&base, json!({"winner": "A"}), "winner must be one of: a, b"),
        (&base, json!({"winner": "a", "extra": 1}), ""),
        (&base, json!({}), ""),
        (
            &plain,
            json!({"winner": "a"}),
            "Step does not have an A/B test",
        ),
    ] {
        let r = f
            .app
            .post(&format!("{path}/ab-winner"), key, body.clone())
            .await;
        assert_eq!(r.status, 400, "{body}: {:?}", r.body);
        if !detail.is_empty() {
            assert_eq!(r.detail(), detail);
        }
    }
    let r = f
        .app
        .post(
            &format!("/v1/sequences/{}/steps/999999/ab-winner", f.sequence_id),
            key,
            json!({"winner": "a"}),
        )
        .await;
    assert_eq!(r.status, 404);
    let steps = f
        .app
        .get(&format!("/v1/sequences/{}/steps", f.sequence_id), key)
        .await;
    assert!(
        steps
            .body
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["ab_winner"].is_null())
    );

    let r = f
        .app
        .post(&format!("{base}/ab-winner"), key, json!({"winner": "b"}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["ab_winner"], "b");
    assert_eq!(r.body["variants"]["a"]["sent"], 3);
    let steps = f
        .app
        .get(&format!("/v1/sequences/{}/steps", f.sequence_id), key)
        .await;
    let stored = steps
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == ab)
        .unwrap()
        .clone();
    assert_eq!(stored["ab_winner"], "b");
    assert_eq!(stored["variant_b_subject"], "B");
    assert_eq!(
        f.app.get(&format!("{base}/ab-results"), key).await.body["ab_winner"],
        "b"
    );

    // A plain step answers with zeros; it has no variants for multivariate.
    let r = f.app.get(&format!("{plain}/ab-results"), key).await;
    assert_eq!(r.body["ab_test_enabled"], false);
    assert_eq!(r.body["variants"]["a"]["sent"], 0);
    let r = f
        .app
        .get(&format!("{plain}/multivariate-results"), key)
        .await;
    assert_eq!(r.status, 400);
    assert!(r.detail().starts_with("Step has no multivariate variants"));
}

fn variants(labels: &[(&str, i64)]) -> Value {
    Value::Array(
        labels
            .iter()
            .map(|(l, w)| json!({"label": l, "subject": format!("S {l}"), "body_html": "<p>v</p>", "weight": w}))
            .collect(),
    )
}

#[tokio::test]
async fn multivariate_scores_lead_from_five_sends() {
    let f = fixture(json!({"name": "MV"})).await;
    let key = &f.acct.api_key;
    let mv = step(
        &f.app,
        key,
        f.sequence_id,
        json!({"subject": "S", "body_html": "<p>s</p>",
            "variants": variants(&[("x", 40), ("y", 30), ("z", 30)])}),
    )
    .await;
    // x: 4 sends, all opened: the best score, but below 5 sends.
    for m in send(&f, mv, Some("x"), 4).await {
        hit(&f, Token::Open { message: m.id }).await;
    }
    // y: 5 sends, one open.
    let y = send(&f, mv, Some("y"), 5).await;
    hit(&f, Token::Open { message: y[0].id }).await;
    // z: 5 sends, one open, one message clicked twice, one reply.
    let z = send(&f, mv, Some("z"), 5).await;
    hit(&f, Token::Open { message: z[0].id }).await;
    hit(
        &f,
        Token::Click {
            message: z[1].id,
            link: 0,
        },
    )
    .await;
    hit(
        &f,
        Token::Click {
            message: z[1].id,
            link: 0,
        },
    )
    .await;
    event(&f, &z[2], Kind::Replied, Some("interested")).await;

    let r = f
        .app
        .get(
            &format!(
                "/v1/sequences/{}/steps/{mv}/multivariate-results",
                f.sequence_id
            ),
            key,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["step_id"], mv);
    assert_eq!(
        r.body["variants"],
        json!([{"label": "x", "subject": "S x", "weight": 40},
               {"label": "y", "subject": "S y", "weight": 30},
               {"label": "z", "subject": "S z", "weight": 30}])
    );
    let res = &r.body["results"];
    assert_eq!(
        res["z"],
        json!({"sent": 5, "opened": 1, "clicked": 1, "total_clicks": 2, "replied": 1,
            "open_rate": 20.0, "click_rate": 20.0, "reply_rate": 20.0, "composite_score": 20.0})
    );
    assert_eq!(res["y"]["composite_score"], 6.0);
    assert_eq!(res["x"]["composite_score"], 30.0);
    assert_eq!(r.body["leading_variant"], "z");
    assert_eq!(r.body["has_sufficient_data"], false);

    // A fifth send lets x lead.
    let x5 = send(&f, mv, Some("x"), 1).await;
    hit(&f, Token::Open { message: x5[0].id }).await;
    let r = f
        .app
        .get(
            &format!(
                "/v1/sequences/{}/steps/{mv}/multivariate-results",
                f.sequence_id
            ),
            key,
        )
        .await;
    assert_eq!(r.body["leading_variant"], "x");
}

#[tokio::test]
async fn sufficient_data_needs_thirty_sends_each_and_a_significant_margin() {
    let f = fixture(json!({"name": "MV big"})).await;
    let key = &f.acct.api_key;
    let mv = step(
        &f.app,
        key,
        f.sequence_id,
        json!({"subject": "S", "body_html": "<p>s</p>",
            "variants": variants(&[("p", 50), ("q", 50)])}),
    )
    .await;
    let p = send(&f, mv, Some("p"), 40).await;
    let q = send(&f, mv, Some("q"), 40).await;
    for m in p.iter().take(12) {
        event(&f, m, Kind::Replied, Some("interested")).await;
    }
    for m in q.iter().take(9) {
        event(&f, m, Kind::Replied, Some("not_now")).await;
    }
    let path = format!(
        "/v1/sequences/{}/steps/{mv}/multivariate-results",
        f.sequence_id
    );
    // 30 % against 22.5 %: p leads, z = 0.76, not significant.
    let r = f.app.get(&path, key).await;
    assert_eq!(r.body["leading_variant"], "p");
    assert_eq!(r.body["results"]["p"]["reply_rate"], 30.0);
    assert_eq!(r.body["results"]["q"]["composite_score"], 9.0);
    assert_eq!(r.body["has_sufficient_data"], false);
    // 60 % against 22.5 %: z = 3.4.
    for m in p.iter().skip(12).take(12) {
        event(&f, m, Kind::Replied, Some("interested")).await;
    }
    let r = f.app.get(&path, key).await;
    assert_eq!(r.body["results"]["p"]["composite_score"], 24.0);
    assert_eq!(r.body["has_sufficient_data"], true);
}

fn counts(sent: i64, opened: i64, clicked: i64, replied: i64) -> Counts {
    Counts {
        sent,
        opened,
        clicked,
        total_clicks: clicked,
        replied,
        ..Counts::default()
    }
}

#[test]
fn rates_round_half_up_to_one_decimal() {
    assert_eq!(rate(1, 3), 33.3);
    assert_eq!(rate(2, 3), 66.7);
    assert_eq!(rate(1, 8), 12.5);
    assert_eq!(rate(1, 16), 6.3);
    assert_eq!(rate(5, 0), 0.0);
    assert_eq!(rate(0, 7), 0.0);
    assert_eq!(rate(7, 7), 100.0);
    assert_eq!(rate_tenths(1, 1_000_000), 0);
    assert_eq!(rate_tenths(1, 2000), 1);
    // 33.3 x 0.3 + 0 + 0 = 9.99 exactly.
    assert_eq!(composite_hundredths(&counts(3, 1, 0, 0)), 999);
    assert_eq!(composite_hundredths(&counts(10, 5, 2, 1)), 1500 + 600 + 400);
}

#[test]
fn the_leader_needs_five_sends_and_ties_go_to_the_earlier_variant() {
    let arm = |l: &str, c| (l.to_owned(), c);
    let arms = [
        arm("a", counts(4, 4, 0, 0)),
        arm("b", counts(5, 1, 0, 0)),
        arm("c", counts(10, 2, 0, 0)),
    ];
    assert_eq!(leading(&arms), Some(1));
    assert_eq!(leading(&arms[..1]), None);
}

#[test]
fn sufficiency_tests_the_strongest_component() {
    let arm = |l: &str, c| (l.to_owned(), c);
    // The z statistic against a known value: 30 % of 40 vs 2.5 % of 40.
    assert!((two_proportion_z(12, 40, 1, 40) - 3.33).abs() < 0.01);
    assert_eq!(two_proportion_z(0, 40, 0, 40), 0.0);
    // Clicks drive the margin (opens equal): 20/50 against 5/50, z = 3.46.
    let arms = [
        arm("a", counts(50, 25, 20, 0)),
        arm("b", counts(50, 25, 5, 0)),
    ];
    assert_eq!(leading(&arms), Some(0));
    assert!(sufficient(&arms, 0));
    // The same margin with 29 sends in one arm is not enough data.
    let arms = [
        arm("a", counts(50, 25, 20, 0)),
        arm("b", counts(29, 14, 3, 0)),
    ];
    assert!(!sufficient(&arms, 0));
    // A lead made of a small open difference is not significant.
    let arms = [
        arm("a", counts(100, 50, 0, 0)),
        arm("b", counts(100, 45, 0, 0)),
    ];
    assert!(!sufficient(&arms, 0));
    // Equal arms: no positive margin.
    let arms = [arm("a", counts(60, 6, 0, 0)), arm("b", counts(60, 6, 0, 0))];
    assert!(!sufficient(&arms, 0));
}
