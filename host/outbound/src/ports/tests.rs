//! The outbound port as workflows call it, on the backend the suite runs
//! (`OUTREACH_TEST_BACKEND`): enrolment with the endpoint's rules and
//! tenancy, and automatic replies sent through the capturing SMTP server.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::testkit::{insert_smtp_account, scalar, sequence, step, text};
use outreach_core::accounts::plans::Plan;
use outreach_core::error::details::NO_ACCESS;
use outreach_core::ports::{Actor, AutoReply, PortError, SharedOutboundPort};
use outreach_core::smtp_capture::CaptureServer;
use outreach_core::testing::{TestAccount, TestApp};

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |_| {}).await
}

/// The port as the workflow engine finds it: through the state.
fn port(app: &TestApp) -> SharedOutboundPort {
    app.state.ext::<SharedOutboundPort>().clone()
}

fn actor(a: &TestAccount, plan: Plan) -> Actor {
    Actor {
        account_id: a.account_id,
        plan,
    }
}

fn refusal(e: PortError) -> String {
    match e {
        PortError::Refused(detail) => detail,
        PortError::Internal(e) => panic!("internal error instead of a refusal: {e:?}"),
    }
}

/// A sequence of `a`'s with one email step.
async fn one_step_sequence(app: &TestApp, a: &TestAccount, body: Value) -> i64 {
    let id = sequence(app, &a.api_key, body).await;
    step(
        app,
        &a.api_key,
        id,
        json!({"subject": "Hello", "body_html": "<p>Hi</p>"}),
    )
    .await;
    id
}

#[tokio::test]
async fn enroll_applies_the_endpoints_rules_for_the_actors_sequences_only() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    let seq = one_step_sequence(&app, &a, json!({"name": "Workflow"})).await;
    let r = app
        .post(
            "/v1/sequences/suppression",
            &a.api_key,
            json!({"email": "gone@acme.com"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    let port = port(&app);
    let contacts = vec![
        json!({"email": "Jane@Acme.com", "domain": "acme.com", "first_name": "Jane",
            "metadata": {"plan": "gold"}}),
        json!({"email": "gone@acme.com", "domain": "acme.com"}),
        json!({"email": "jane@acme.com"}),
        json!({"contact_email": "joe@beta.example", "company": "Beta"}),
        json!({"first_name": "No address"}),
        json!({"email": "info@acme.com"}),
    ];
    let r = port
        .enroll(&app.state, actor(&a, Plan::Pro), seq, &contacts)
        .await
        .unwrap();
    assert_eq!(r, json!({"enrolled": 2, "skipped": 4}));
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT contact_email, domain, metadata FROM enrollments WHERE sequence_id = $1 \
         ORDER BY contact_email",
    )
    .bind(seq)
    .fetch_all(&app.state.db.pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.as_str()),
        ("jane@acme.com", "acme.com")
    );
    let meta: Value = serde_json::from_str(&rows[0].2).unwrap();
    assert_eq!(meta, json!({"first_name": "Jane", "plan": "gold"}));
    assert_eq!(
        (rows[1].0.as_str(), rows[1].1.as_str()),
        ("joe@beta.example", "beta.example")
    );
    // Enrolled once: a second run skips them as live.
    let again = port
        .enroll(&app.state, actor(&a, Plan::Pro), seq, &contacts[..1])
        .await
        .unwrap();
    assert_eq!(again, json!({"enrolled": 0, "skipped": 1}));

    // Another account's sequence, an unknown one, and a plan without sequences.
    for (who, id) in [(&b, seq), (&a, seq + 100)] {
        let e = port
            .enroll(&app.state, actor(who, Plan::Pro), id, &contacts)
            .await
            .unwrap_err();
        assert_eq!(refusal(e), "Sequence not found");
    }
    let e = port
        .enroll(&app.state, actor(&a, Plan::Free), seq, &contacts)
        .await
        .unwrap_err();
    assert_eq!(refusal(e), NO_ACCESS);
    assert_eq!(
        scalar(
            &app,
            "SELECT COUNT(*) FROM enrollments WHERE sequence_id = $1",
            &[seq]
        )
        .await,
        2
    );
}

static NEXT: AtomicU64 = AtomicU64::new(1);

/// A classified reply from `from` received `ago_min` minutes ago at
/// mailbox `send_account_id`, in a thread of its own; returns its id.
struct Reply<'a> {
    from: &'a str,
    label: &'a str,
    ago_min: i64,
    sequence_id: Option<i64>,
    enrollment_id: Option<i64>,
}

async fn reply(app: &TestApp, account_id: i64, send_account_id: i64, r: Reply<'_>) -> i64 {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let now = app.state.clock.now_ms();
    let received = now - r.ago_min * 60_000;
    let domain = r.from.rsplit_once('@').unwrap().1;
    let thread: i64 = sqlx::query_scalar(
        "INSERT INTO inbox_threads (account_id, thread_id, domain, contact_email, subject,
             last_received_at, message_count, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'Re: Hello', $5, 1, 'open', $5, $5) RETURNING id",
    )
    .bind(account_id)
    .bind(format!("port-thread-{n}"))
    .bind(domain)
    .bind(r.from)
    .bind(received)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap();
    sqlx::query_scalar(
        "INSERT INTO inbox_replies (account_id, thread_row_id, send_account_id, message_key,
             message_id, in_reply_to, from_email, from_name, subject, body_text, full_text,
             headers, received_at, domain, sequence_id, enrollment_id, kind,
             classification_label, classification_confidence, classification_model,
             classification_provider, classified_at, created_at)
         VALUES ($1, $2, $3, $4, $4, 'otr.1.1.abc@seller.test', $5, 'Jane Doe', 'Re: Hello',
             'Sounds good', 'Sounds good', '[]', $6, $7, $8, $9, 'reply', $10, 0.9,
             'rules-v1', 'outreach', $6, $6) RETURNING id",
    )
    .persistent(false)
    .bind(account_id)
    .bind(thread)
    .bind(send_account_id)
    .bind(format!("m{n}@mail.{domain}"))
    .bind(r.from)
    .bind(received)
    .bind(domain)
    .bind(r.sequence_id)
    .bind(r.enrollment_id)
    .bind(r.label)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap()
}

fn items(domains: &[&str]) -> Vec<Value> {
    domains.iter().map(|d| json!({"domain": d})).collect()
}

#[tokio::test]
async fn auto_reply_answers_the_latest_matching_reply_once_through_its_mailbox() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    let smtp = CaptureServer::start("pw").await;
    let mailbox = insert_smtp_account(&app, a.account_id, "sam@seller.test", smtp.port, "pw").await;
    let seq = one_step_sequence(
        &app,
        &a,
        json!({"name": "Outreach", "from_email": "sam@seller.test"}),
    )
    .await;
    let r = app
        .post(
            &format!("/v1/sequences/{seq}/enroll"),
            &a.api_key,
            json!({"contacts": [{"domain": "acme.com", "contact_email": "jane@acme.com",
                "metadata": {"first_name": "Jane"}}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let enrollment = scalar(
        &app,
        "SELECT id FROM enrollments WHERE sequence_id = $1",
        &[seq],
    )
    .await;
    let older = reply(
        &app,
        a.account_id,
        mailbox,
        Reply {
            from: "jane@acme.com",
            label: "interested",
            ago_min: 90,
            sequence_id: Some(seq),
            enrollment_id: Some(enrollment),
        },
    )
    .await;
    let latest = reply(
        &app,
        a.account_id,
        mailbox,
        Reply {
            from: "jane@acme.com",
            label: "interested",
            ago_min: 10,
            sequence_id: Some(seq),
            enrollment_id: Some(enrollment),
        },
    )
    .await;
    // Not in only_classes; a suppressed sender; no reply at all.
    reply(
        &app,
        a.account_id,
        mailbox,
        Reply {
            from: "max@beta.example",
            label: "not_now",
            ago_min: 5,
            sequence_id: None,
            enrollment_id: None,
        },
    )
    .await;
    reply(
        &app,
        a.account_id,
        mailbox,
        Reply {
            from: "lee@gone.example",
            label: "interested",
            ago_min: 5,
            sequence_id: None,
            enrollment_id: None,
        },
    )
    .await;
    let r = app
        .post(
            "/v1/sequences/suppression",
            &a.api_key,
            json!({"email": "@gone.example"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    let port = port(&app);
    let answer = AutoReply {
        subject: String::new(),
        body: "Hi {{first_name|there}},\nthanks & talk soon".into(),
        only_classes: vec!["interested".into(), "objection".into()],
    };
    let batch = items(&[
        "acme.com",
        "beta.example",
        "gone.example",
        "nobody.example",
        "ACME.com",
        "not a domain",
    ]);
    let r = port
        .auto_reply(&app.state, actor(&a, Plan::Pro), &answer, &batch)
        .await
        .unwrap();
    assert_eq!(r, json!({"replied": 1, "skipped": 5}));
    let sent = smtp.messages();
    assert_eq!(sent.len(), 1);
    let m = &sent[0];
    assert_eq!(m.to, vec!["jane@acme.com"]);
    assert_eq!(m.from, "sam@seller.test");
    assert_eq!(m.header("Subject").as_deref(), Some("Re: Hello"));
    let theirs = text(
        &app,
        "SELECT message_id FROM inbox_replies WHERE id = $1",
        &[latest],
    )
    .await
    .unwrap();
    assert_eq!(
        m.header("In-Reply-To"),
        Some(format!("<{theirs}>")),
        "it answers the latest reply"
    );
    assert!(m.data.contains("Hi Jane,"), "{}", m.data);
    assert!(m.data.contains("thanks &amp; talk soon"), "{}", m.data);
    let stored = text(
        &app,
        "SELECT auto_reply_message_id FROM inbox_replies WHERE id = $1",
        &[latest],
    )
    .await
    .unwrap();
    assert_eq!(m.header("Message-ID"), Some(format!("<{stored}>")));
    assert_eq!(
        scalar(
            &app,
            "SELECT COUNT(*) FROM inbox_replies WHERE auto_replied_at IS NOT NULL AND id <> $1",
            &[latest]
        )
        .await,
        0,
        "only the latest reply ({older} is older) was answered"
    );

    // A second run finds it answered; another account finds nothing.
    let r = port
        .auto_reply(&app.state, actor(&a, Plan::Pro), &answer, &batch)
        .await
        .unwrap();
    assert_eq!(r, json!({"replied": 0, "skipped": 6}));
    let r = port
        .auto_reply(&app.state, actor(&b, Plan::Pro), &answer, &batch)
        .await
        .unwrap();
    assert_eq!(r, json!({"replied": 0, "skipped": 6}));
    assert_eq!(smtp.messages().len(), 1);

    // Any label when only_classes is empty; a refused send is reported and
    // released, so a later run can answer it.
    let deferred = reply(
        &app,
        a.account_id,
        mailbox,
        Reply {
            from: "defer@delta.example",
            label: "other",
            ago_min: 1,
            sequence_id: None,
            enrollment_id: None,
        },
    )
    .await;
    let any = AutoReply {
        subject: "Thanks".into(),
        body: "<p>Noted.</p>".into(),
        only_classes: vec![],
    };
    let r = port
        .auto_reply(
            &app.state,
            actor(&a, Plan::Pro),
            &any,
            &items(&["delta.example", "beta.example"]),
        )
        .await
        .unwrap();
    assert_eq!(r["replied"], 1, "{r}");
    assert_eq!(r["skipped"], 1, "{r}");
    assert_eq!(r["errors"][0]["domain"], "delta.example", "{r}");
    let last = smtp.messages().pop().unwrap();
    assert_eq!(last.to, vec!["max@beta.example"]);
    assert_eq!(last.header("Subject").as_deref(), Some("Thanks"));
    assert_eq!(
        scalar(
            &app,
            "SELECT COUNT(*) FROM inbox_replies WHERE id = $1 AND auto_replied_at IS NULL",
            &[deferred]
        )
        .await,
        1
    );

    // Refusals: an unknown class, a plan without the inbox.
    let bad = AutoReply {
        only_classes: vec!["hot".into()],
        ..any.clone()
    };
    let e = port
        .auto_reply(&app.state, actor(&a, Plan::Pro), &bad, &batch)
        .await
        .unwrap_err();
    assert!(refusal(e).starts_with("only_classes must be among interested"));
    let e = port
        .auto_reply(&app.state, actor(&a, Plan::Free), &any, &batch)
        .await
        .unwrap_err();
    assert_eq!(refusal(e), NO_ACCESS);
}
