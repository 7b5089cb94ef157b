//! Tracking through the public router, on either backend: messages are
//! written as the sender writes them (a `sequence_messages` row, then
//! `sent` and `delivered` events).

use serde_json::{Value, json};

use super::{Token, TrackingKey, TrackingOptions, track};
use crate::sequence_events::{self, Kind, NewEvent};
use crate::testkit::{sequence, step};
use outreach_core::accounts::plans::Plan;
use outreach_core::events::{self, EventType};
use outreach_core::testing::{TestAccount, TestApp};

/// A Starter account with a sequence of one email step.
pub(crate) struct Fixture {
    pub app: TestApp,
    pub acct: TestAccount,
    pub sequence_id: i64,
    pub step_id: i64,
}

pub(crate) async fn fixture(sequence_body: Value) -> Fixture {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let sequence_id = sequence(&app, &acct.api_key, sequence_body).await;
    let step_id = step(
        &app,
        &acct.api_key,
        sequence_id,
        json!({"subject": "Hi", "body_html": "<p>Hello</p>"}),
    )
    .await;
    Fixture {
        app,
        acct,
        sequence_id,
        step_id,
    }
}

/// Enrolls `emails` and returns their enrollment ids in the same order.
pub(crate) async fn enroll(
    app: &TestApp,
    key: &str,
    sequence_id: i64,
    emails: &[String],
) -> Vec<i64> {
    let contacts: Vec<Value> = emails
        .iter()
        .map(|e| json!({"domain": "acme.io", "contact_email": e}))
        .collect();
    let r = app
        .post(
            &format!("/v1/sequences/{sequence_id}/enroll"),
            key,
            json!({ "contacts": contacts }),
        )
        .await;
    assert_eq!(r.body["enrolled"], emails.len(), "{:?}", r.body);
    let list = app
        .get(
            &format!("/v1/sequences/{sequence_id}/enrollments?limit=500"),
            key,
        )
        .await;
    emails
        .iter()
        .map(|e| {
            list.body["enrollments"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["contact_email"] == e.to_lowercase())
                .unwrap()["id"]
                .as_i64()
                .unwrap()
        })
        .collect()
}

/// Writes a sent message of `enrollment_id` at `step_id` as the sender
/// does (the row, then `sent` and `delivered`) and returns its row id.
pub(crate) async fn sent_message(
    app: &TestApp,
    account_id: i64,
    sequence_id: i64,
    enrollment_id: i64,
    step_id: i64,
    variant: Option<&str>,
    links: &[&str],
) -> i64 {
    let now = app.state.clock.now_ms();
    let mut tx = app.state.db.pool.begin().await.unwrap();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO sequence_messages (account_id, sequence_id, enrollment_id, step_id, \
         step_position, variant, message_id, to_email, subject, links, status, created_at, sent_at) \
         SELECT $1, $2, $3, $4, 1, $5, $6, contact_email, 'Hi', $7, 'sent', $8, $9 \
         FROM enrollments WHERE id = $10 RETURNING id",
    )
    .bind(account_id)
    .bind(sequence_id)
    .bind(enrollment_id)
    .bind(step_id)
    .bind(variant)
    .bind(format!("{enrollment_id}.{step_id}@test"))
    .bind(serde_json::to_string(links).unwrap())
    .bind(now)
    .bind(now)
    .bind(enrollment_id)
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    let event = |kind| NewEvent {
        account_id,
        sequence_id,
        step_id: Some(step_id),
        enrollment_id: Some(enrollment_id),
        message_id: Some(id),
        send_account_id: None,
        kind,
        variant: variant.map(str::to_owned),
        url: None,
        detail: None,
        at: now,
    };
    sequence_events::record(&mut tx, &[event(Kind::Sent), event(Kind::Delivered)])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    id
}

/// The message's events as (type, first_of_kind, url), oldest first.
pub(crate) async fn events_of(app: &TestApp, message: i64) -> Vec<(String, i64, Option<String>)> {
    sqlx::query_as(
        "SELECT event_type, first_of_kind, url FROM sequence_events WHERE message_id = $1 ORDER BY id",
    )
    .bind(message)
    .fetch_all(&app.state.db.pool)
    .await
    .unwrap()
}

/// The account's outbox events of `kind`, oldest first.
async fn outbox(app: &TestApp, account_id: i64, kind: EventType) -> Vec<Value> {
    let mut all = events::for_account(&app.state.db, account_id, 1000)
        .await
        .unwrap();
    all.reverse();
    all.into_iter()
        .filter(|e| e.event_type == kind)
        .map(|e| e.data)
        .collect()
}

async fn enrollment(f: &Fixture, id: i64) -> Value {
    let list = f
        .app
        .get(
            &format!("/v1/sequences/{}/enrollments?limit=500", f.sequence_id),
            &f.acct.api_key,
        )
        .await;
    list.body["enrollments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

fn key(app: &TestApp) -> TrackingKey {
    TrackingKey::new(&app.state.secrets)
}

fn path(app: &TestApp, token: Token) -> String {
    let text = key(app).sign(token);
    match token {
        Token::Open { .. } => format!("/t/o/{text}"),
        Token::Click { .. } => format!("/t/c/{text}"),
        Token::Unsubscribe { .. } => format!("/t/u/{text}"),
    }
}

/// One enrolled contact with one sent message carrying `links`.
async fn one_message(f: &Fixture, links: &[&str]) -> (i64, i64) {
    let e = enroll(
        &f.app,
        &f.acct.api_key,
        f.sequence_id,
        &["jane@acme.io".to_owned()],
    )
    .await[0];
    let m = sent_message(
        &f.app,
        f.acct.account_id,
        f.sequence_id,
        e,
        f.step_id,
        None,
        links,
    )
    .await;
    (e, m)
}

#[tokio::test]
async fn links_from_track_redirect_and_bad_tokens_record_nothing() {
    let f = fixture(json!({"name": "Track"})).await;
    let app = &f.app;
    let e = enroll(
        app,
        &f.acct.api_key,
        f.sequence_id,
        &["jane@acme.io".into()],
    )
    .await[0];
    // The sender's order: reserve the row, rewrite with its id, store links.
    let m = sent_message(
        app,
        f.acct.account_id,
        f.sequence_id,
        e,
        f.step_id,
        None,
        &[],
    )
    .await;
    let body = r#"<p><a href="https://acme.io/pricing?a=1&amp;b=2">Pricing</a>
        <a href="mailto:sales@acme.io">Mail</a> <a href="https://acme.io/docs">Docs</a></p>"#;
    let all = TrackingOptions {
        opens: true,
        clicks: true,
        unsubscribe: true,
    };
    let t = track(&key(app), "https://t.acme.test/", m, body, all);
    assert_eq!(
        t.links,
        ["https://acme.io/pricing?a=1&b=2", "https://acme.io/docs"]
    );
    sqlx::query("UPDATE sequence_messages SET links = $1 WHERE id = $2")
        .bind(serde_json::to_string(&t.links).unwrap())
        .bind(m)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    let tracked: Vec<String> = t
        .body_html
        .split('"')
        .filter_map(|s| s.strip_prefix("https://t.acme.test"))
        .map(str::to_owned)
        .collect();
    assert_eq!(tracked.len(), 4, "{}", t.body_html);
    let (clicks, rest): (Vec<_>, Vec<_>) = tracked.iter().partition(|p| p.starts_with("/t/c/"));
    for (path, want) in clicks.iter().zip(&t.links) {
        let r = app.call("GET", path, None, None).await;
        assert_eq!(r.status, 302, "{path}");
        assert_eq!(r.header("location"), Some(want.as_str()));
        assert_eq!(r.header("referrer-policy"), Some("no-referrer"));
    }
    assert!(rest.iter().any(|p| p.starts_with("/t/u/")));
    assert!(rest.iter().any(|p| p.starts_with("/t/o/")));

    // Only the two clicks so far.
    let before = events_of(app, m).await.len();
    assert_eq!(before, 4);
    let good = key(app).sign(Token::Click {
        message: m,
        link: 0,
    });
    let mut tampered = good.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let foreign = TrackingKey::from_bytes(&[9; 32]).sign(Token::Open { message: m });
    for bad in [
        format!("/t/c/{tampered}"),
        format!("/t/o/{tampered}"),
        format!("/t/u/{tampered}"),
        format!("/t/o/{foreign}"),
        "/t/o/{token}".to_owned(),
        "/t/c/AAAAAAAAAAAAAAAAAAAAAAAAAAAA".to_owned(),
        // A valid token on another kind's path.
        format!("/t/o/{good}"),
        format!("/t/u/{good}"),
        path(app, Token::Open { message: m }).replace("/t/o/", "/t/c/"),
        // Signed, but the message has only two links.
        path(
            app,
            Token::Click {
                message: m,
                link: 2,
            },
        ),
    ] {
        for method in ["GET", "POST"] {
            let r = app.call(method, &bad, None, None).await;
            if method == "POST" && !bad.starts_with("/t/u/") {
                assert_eq!(r.status, 405, "{method} {bad}");
                continue;
            }
            assert_eq!(r.status, 404, "{method} {bad}");
            assert_eq!(r.detail(), "Tracking link not found");
        }
    }
    assert_eq!(events_of(app, m).await.len(), before);
    let suppressed = app.get("/v1/sequences/suppression", &f.acct.api_key).await;
    assert_eq!(suppressed.body["total"], 0);
    assert_eq!(enrollment(&f, e).await["status"], "active");
    assert!(
        outbox(app, f.acct.account_id, EventType::SequenceOpened)
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn the_pixel_records_one_open_and_always_answers_a_gif() {
    let f = fixture(json!({"name": "Opens"})).await;
    let (e, m) = one_message(&f, &[]).await;
    let open = path(&f.app, Token::Open { message: m });
    for _ in 0..3 {
        let r = f.app.call("GET", &open, None, None).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("image/gif"));
        assert!(r.header("cache-control").unwrap().contains("no-store"));
        assert!(r.body.as_str().unwrap().starts_with("GIF89a"));
    }
    let opened: Vec<_> = events_of(&f.app, m)
        .await
        .into_iter()
        .filter(|(k, ..)| k == "opened")
        .collect();
    assert_eq!(opened.len(), 1);
    let data = outbox(&f.app, f.acct.account_id, EventType::SequenceOpened).await;
    assert_eq!(
        data,
        [
            json!({"sequence_id": f.sequence_id, "enrollment_id": e, "step_id": f.step_id,
            "email": "jane@acme.io"})
        ]
    );
    let en = enrollment(&f, e).await;
    assert_eq!(
        (
            en["engagement_score"].clone(),
            en["lead_temperature"].clone()
        ),
        (json!(1), json!("cold"))
    );
}

#[tokio::test]
async fn every_click_counts_and_the_first_is_the_unique_one() {
    let f = fixture(json!({"name": "Clicks"})).await;
    let (e, m) = one_message(&f, &["https://acme.io/a", "https://acme.io/b"]).await;
    for link in [0, 0, 1] {
        let r = f
            .app
            .call(
                "GET",
                &path(&f.app, Token::Click { message: m, link }),
                None,
                None,
            )
            .await;
        assert_eq!(r.status, 302);
    }
    let clicks: Vec<_> = events_of(&f.app, m)
        .await
        .into_iter()
        .filter(|(k, ..)| k == "clicked")
        .map(|(_, first, url)| (first, url.unwrap()))
        .collect();
    assert_eq!(
        clicks,
        [
            (1, "https://acme.io/a".to_owned()),
            (0, "https://acme.io/a".to_owned()),
            (0, "https://acme.io/b".to_owned())
        ]
    );
    let data = outbox(&f.app, f.acct.account_id, EventType::SequenceClicked).await;
    assert_eq!(data.len(), 3);
    assert_eq!(
        data[2],
        json!({"sequence_id": f.sequence_id, "enrollment_id": e, "step_id": f.step_id,
            "email": "jane@acme.io", "url": "https://acme.io/b"})
    );
    // Only the unique click scores: 3 points, which makes the lead warm;
    // the goal is none, so nothing completes.
    let en = enrollment(&f, e).await;
    assert_eq!(en["engagement_score"], 3);
    assert_eq!(en["lead_temperature"], "warm");
    assert_eq!(en["status"], "active");
    assert_eq!(en["goal_completed"], false);
    assert!(
        outbox(&f.app, f.acct.account_id, EventType::SequenceCompleted)
            .await
            .is_empty()
    );
    // An open afterwards adds its point; warm stays warm.
    f.app
        .call("GET", &path(&f.app, Token::Open { message: m }), None, None)
        .await;
    assert_eq!(enrollment(&f, e).await["engagement_score"], 4);
}

#[tokio::test]
async fn a_click_on_the_goal_url_completes_the_enrollment_once() {
    let f = fixture(json!({"name": "Goal", "goal_type": "url_click",
        "goal_url": "https://acme.io/pricing"}))
    .await;
    let (e, m) = one_message(
        &f,
        &["https://acme.io/docs", "https://acme.io/pricing?plan=pro"],
    )
    .await;
    let click = |link| path(&f.app, Token::Click { message: m, link });
    f.app.call("GET", &click(0), None, None).await;
    let en = enrollment(&f, e).await;
    assert_eq!(
        (en["status"].clone(), en["goal_completed"].clone()),
        (json!("active"), json!(false))
    );
    for _ in 0..2 {
        assert_eq!(f.app.call("GET", &click(1), None, None).await.status, 302);
    }
    let en = enrollment(&f, e).await;
    assert_eq!(en["status"], "completed");
    assert_eq!(en["goal_completed"], true);
    assert_eq!(en["goal_completed_at"], "2026-11-21T12:00:00Z");
    assert_eq!(
        en["goal_metadata"],
        json!({"type": "url_click", "url": "https://acme.io/pricing?plan=pro", "step_id": f.step_id})
    );
    assert!(en["next_send_at"].is_null());
    assert_eq!(
        outbox(&f.app, f.acct.account_id, EventType::SequenceCompleted).await,
        [json!({"sequence_id": f.sequence_id, "enrollment_id": e, "email": "jane@acme.io"})]
    );
}

#[tokio::test]
async fn goal_click_is_met_by_any_tracked_link() {
    let f = fixture(json!({"name": "Any click", "goal_type": "click"})).await;
    let (e, m) = one_message(&f, &["https://elsewhere.test/"]).await;
    f.app
        .call(
            "GET",
            &path(
                &f.app,
                Token::Click {
                    message: m,
                    link: 0,
                },
            ),
            None,
            None,
        )
        .await;
    let en = enrollment(&f, e).await;
    assert_eq!(en["status"], "completed");
    assert_eq!(en["goal_metadata"]["type"], "click");
    assert_eq!(
        outbox(&f.app, f.acct.account_id, EventType::SequenceCompleted)
            .await
            .len(),
        1
    );
}

#[tokio::test]
async fn the_unsubscribe_page_changes_nothing_and_its_post_unsubscribes_once() {
    let f = fixture(json!({"name": "Unsub"})).await;
    let (e, m) = one_message(&f, &[]).await;
    let unsub = path(&f.app, Token::Unsubscribe { message: m });
    let page = f.app.call("GET", &unsub, None, None).await;
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    let html = page.body.as_str().unwrap();
    assert!(
        html.contains("<form method=\"post\">") && html.contains("One-Click"),
        "{html}"
    );
    assert_eq!(events_of(&f.app, m).await.len(), 2);
    assert_eq!(enrollment(&f, e).await["status"], "active");
    let list = f
        .app
        .get("/v1/sequences/suppression", &f.acct.api_key)
        .await;
    assert_eq!(list.body["total"], 0);

    // RFC 8058's body, then a bare POST (the page's form, or a repeat).
    let mut req = axum::http::Request::builder()
        .method("POST")
        .uri(&unsub)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(axum::body::Body::from("List-Unsubscribe=One-Click"))
        .unwrap();
    req.extensions_mut().insert(axum::extract::ConnectInfo(
        "127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap(),
    ));
    let done = f.app.send(req).await;
    assert_eq!(done.status, 200);
    assert!(done.body.as_str().unwrap().contains("You are unsubscribed"));
    let again = f.app.call("POST", &unsub, None, None).await;
    assert_eq!(again.status, 200);

    let en = enrollment(&f, e).await;
    assert_eq!(en["status"], "unsubscribed");
    assert!(en["next_send_at"].is_null());
    let list = f
        .app
        .get("/v1/sequences/suppression", &f.acct.api_key)
        .await;
    assert_eq!(list.body["total"], 1);
    assert_eq!(list.body["entries"][0]["email"], "jane@acme.io");
    assert_eq!(list.body["entries"][0]["reason"], "unsubscribe");
    let kinds: Vec<String> = events_of(&f.app, m)
        .await
        .into_iter()
        .map(|x| x.0)
        .collect();
    assert_eq!(kinds, ["sent", "delivered", "unsubscribed"]);
    assert_eq!(
        outbox(&f.app, f.acct.account_id, EventType::SequenceUnsubscribed).await,
        [
            json!({"sequence_id": f.sequence_id, "enrollment_id": e, "email": "jane@acme.io",
            "source": "link"})
        ]
    );
}

#[tokio::test]
async fn tokens_of_deleted_enrollments_are_a_quiet_no_op() {
    let f = fixture(json!({"name": "Gone"})).await;
    let (e, m) = one_message(&f, &["https://acme.io/"]).await;
    let r = f
        .app
        .call(
            "DELETE",
            &format!("/v1/sequences/{}/enrollments/{e}", f.sequence_id),
            Some(&f.acct.api_key),
            None,
        )
        .await;
    assert!(r.status.is_success(), "{:?}", r.body);
    let pixel = f
        .app
        .call("GET", &path(&f.app, Token::Open { message: m }), None, None)
        .await;
    assert_eq!(
        (pixel.status.as_u16(), pixel.header("content-type")),
        (200, Some("image/gif"))
    );
    let click = f
        .app
        .call(
            "GET",
            &path(
                &f.app,
                Token::Click {
                    message: m,
                    link: 0,
                },
            ),
            None,
            None,
        )
        .await;
    assert_eq!(click.status, 200);
    assert!(click.body.as_str().unwrap().contains("no longer available"));
    let unsub = f
        .app
        .call(
            "POST",
            &path(&f.app, Token::Unsubscribe { message: m }),
            None,
            None,
        )
        .await;
    assert_eq!(unsub.status, 200);
    assert!(unsub.body.as_str().unwrap().contains("Link expired"));
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sequence_events WHERE sequence_id = $1")
        .bind(f.sequence_id)
        .fetch_one(&f.app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(n, 0);
    assert!(
        events::for_account(&f.app.state.db, f.acct.account_id, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn concurrent_opens_and_clicks_agree_on_what_was_first() {
    let f = fixture(json!({"name": "Race"})).await;
    let (e, m) = one_message(&f, &["https://acme.io/a"]).await;
    let open = path(&f.app, Token::Open { message: m });
    let click = path(
        &f.app,
        Token::Click {
            message: m,
            link: 0,
        },
    );
    let calls = (0..8).flat_map(|_| [open.as_str(), click.as_str()]);
    let answers = futures::future::join_all(calls.map(|p| f.app.call("GET", p, None, None))).await;
    assert!(answers.iter().all(|r| r.status == 200 || r.status == 302));
    let events = events_of(&f.app, m).await;
    let opens = events.iter().filter(|(k, ..)| k == "opened").count();
    let clicks: Vec<i64> = events
        .iter()
        .filter(|(k, ..)| k == "clicked")
        .map(|(_, first, _)| *first)
        .collect();
    assert_eq!(opens, 1);
    assert_eq!(clicks.len(), 8);
    assert_eq!(clicks.iter().sum::<i64>(), 1, "{clicks:?}");
    assert_eq!(
        outbox(&f.app, f.acct.account_id, EventType::SequenceOpened)
            .await
            .len(),
        1
    );
    assert_eq!(enrollment(&f, e).await["engagement_score"], 4);
}
