//! Effects that need more than one message or a vendor: soft bounces that
//! retry and then turn hard, ARF complaints, and the LLM classifier on the
//! account's AI key. Messages go straight to `ingest` (the poller is
//! covered by `collect_tests`).

use serde_json::json;

use super::Inbox;
use super::collect_tests::world;
use super::effects::{SOFT_BOUNCE_LIMIT, SOFT_BOUNCE_RETRY_MS};
use super::ingest::{Ingested, Mailbox, ingest};
use crate::sender::worker::run_once;
use crate::testkit::{scalar, text};
use outreach_core::testing::TestApp;
use outreach_core::testing::stub::{Canned, Stub};

async fn deliver(app: &TestApp, account_id: i64, mailbox: i64, raw: &[u8]) -> Ingested {
    let inbox = app.state.ext::<Inbox>();
    let target = Mailbox {
        account_id,
        send_account_id: mailbox,
    };
    ingest(&app.state, &inbox.spoof, &target, raw)
        .await
        .unwrap()
}

fn soft_dsn(n: usize, recipient: &str, original: &str) -> Vec<u8> {
    format!(
        "From: MAILER-DAEMON@mx.acme.test\r\nTo: sam@seller.test\r\nSubject: Delivery Status Notification (Failure)\r\n\
         Message-ID: <soft-{n}@mx.acme.test>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/report; report-type=delivery-status; boundary=\"s\"\r\n\r\n\
         --s\r\nContent-Type: text/plain\r\n\r\nThe recipient's mailbox is full.\r\n\r\n\
         --s\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.acme.test\r\n\r\n\
         Final-Recipient: rfc822; {recipient}\r\nAction: failed\r\nStatus: 4.2.2\r\n\
         Diagnostic-Code: smtp; 452 4.2.2 Mailbox full\r\n\r\n\
         --s\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <{original}>\r\nSubject: Quick question\r\n\r\n--s--\r\n"
    )
    .into_bytes()
}

#[tokio::test]
async fn soft_bounces_resend_the_step_and_turn_hard_at_the_limit() {
    let w = world().await;
    let ann = w.message_id("ann@acme.test").await;
    let sent_before = w.smtp.messages().len();
    for n in 1..SOFT_BOUNCE_LIMIT {
        let got = deliver(
            &w.app,
            w.account_id,
            w.mailbox,
            &soft_dsn(n as usize, "ann@acme.test", &ann),
        )
        .await;
        assert!(matches!(got, Ingested::Stored { .. }), "{got:?}");
        w.classify().await;
        assert_eq!(w.status("ann@acme.test").await, "active");
        let (step, due) = (
            scalar(
                &w.app,
                "SELECT current_step FROM enrollments WHERE contact_email = 'ann@acme.test'",
                &[],
            )
            .await,
            scalar(
                &w.app,
                "SELECT next_send_at FROM enrollments WHERE contact_email = 'ann@acme.test'",
                &[],
            )
            .await,
        );
        let now = w.app.state.clock.now_ms();
        assert_eq!(
            (step, due),
            (1, now + SOFT_BOUNCE_RETRY_MS),
            "the bounced step waits"
        );
        // When it falls due the same message goes out again, same Message-ID.
        w.app.clock.advance(std::time::Duration::from_millis(
            SOFT_BOUNCE_RETRY_MS as u64,
        ));
        run_once(&w.app.state).await.unwrap();
        let resent = w.smtp.messages();
        assert_eq!(resent.len(), sent_before + n as usize);
        assert_eq!(
            resent.last().unwrap().header("Message-ID"),
            Some(format!("<{ann}>"))
        );
    }
    let bounced = w.outbox("sequence.bounced").await;
    assert_eq!(bounced.len() as i64, SOFT_BOUNCE_LIMIT - 1);
    assert!(bounced.iter().all(|b| b["bounce_type"] == "soft"));
    let last = SOFT_BOUNCE_LIMIT as usize;
    deliver(
        &w.app,
        w.account_id,
        w.mailbox,
        &soft_dsn(last, "ann@acme.test", &ann),
    )
    .await;
    w.classify().await;
    assert_eq!(
        w.status("ann@acme.test").await,
        "bounced",
        "the limit turns it hard"
    );
    let bounced = w.outbox("sequence.bounced").await;
    assert_eq!(bounced.last().unwrap()["bounce_type"], "hard");
    let reason = text(
        &w.app,
        "SELECT reason FROM suppression_entries WHERE email = 'ann@acme.test'",
        &[],
    )
    .await;
    assert_eq!(reason.as_deref(), Some("bounce"));
}

#[tokio::test]
async fn a_complaint_unsubscribes_and_suppresses() {
    let w = world().await;
    let bob = w.message_id("bob@acme.test").await;
    let arf = format!(
        "From: feedback@fbl.acme.test\r\nTo: sam@seller.test\r\nSubject: FW: Quick question\r\n\
         Message-ID: <arf-1@fbl.acme.test>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/report; report-type=feedback-report; boundary=\"f\"\r\n\r\n\
         --f\r\nContent-Type: text/plain\r\n\r\nThis is an email abuse report.\r\n\r\n\
         --f\r\nContent-Type: message/feedback-report\r\n\r\nFeedback-Type: abuse\r\nUser-Agent: FBL/1.0\r\n\
         Version: 1\r\nOriginal-Rcpt-To: bob@acme.test\r\n\r\n\
         --f\r\nContent-Type: message/rfc822\r\n\r\nFrom: sam@seller.test\r\nTo: bob@acme.test\r\n\
         Subject: Quick question\r\nMessage-ID: <{bob}>\r\n\r\nHi\r\n--f--\r\n"
    );
    assert!(matches!(
        deliver(&w.app, w.account_id, w.mailbox, arf.as_bytes()).await,
        Ingested::Stored { .. }
    ));
    w.classify().await;
    assert_eq!(w.status("bob@acme.test").await, "unsubscribed");
    let reason = text(
        &w.app,
        "SELECT reason FROM suppression_entries WHERE email = 'bob@acme.test'",
        &[],
    )
    .await;
    assert_eq!(reason.as_deref(), Some("complaint"));
    let events = w.outbox("sequence.unsubscribed").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["source"], "complaint");
    let complaints = scalar(
        &w.app,
        "SELECT CAST(SUM(complaints) AS BIGINT) FROM sequence_days WHERE sequence_id = $1",
        &[w.sequence_id],
    )
    .await;
    assert_eq!(complaints, 1);
}

#[tokio::test]
async fn human_replies_go_to_the_llm_classifier_on_the_accounts_ai_key() {
    let w = world().await;
    let stub = Stub::start().await;
    let compatible = outreach_vendors::vendor_keys::catalogue::providers(
        &w.app.state,
        outreach_vendors::vendor_keys::catalogue::Family::Ai,
    )
    .into_iter()
    .find(|p| p.supports_endpoint_url == Some(true))
    .unwrap()
    .provider;
    let answer = |content: &str| {
        Canned::json(
            200,
            json!({"model": "classifier-model",
            "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 90, "completion_tokens": 8}}),
        )
    };
    stub.set("/llm/v1/chat/completions", answer("OK"));
    let r = w
        .app
        .post(
            "/v1/ai/providers",
            &w.key,
            json!({"provider": compatible, "api_key": "local-key-123",
            "validation_model": "classifier-model", "endpoint_url": stub.url("/llm")}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    stub.set(
        "/llm/v1/chat/completions",
        answer(r#"{"label": "not_now", "confidence": 0.83}"#),
    );

    let cat = w.message_id("cat@acme.test").await;
    let reply = format!(
        "From: cat@acme.test\r\nTo: sam@seller.test\r\nSubject: Re: Quick question\r\n\
         Message-ID: <llm-1@acme.test>\r\nIn-Reply-To: <{cat}>\r\n\r\nWe are busy with a migration, ask me again next quarter.\r\n"
    );
    deliver(&w.app, w.account_id, w.mailbox, reply.as_bytes()).await;
    let bob = w.message_id("bob@acme.test").await;
    deliver(
        &w.app,
        w.account_id,
        w.mailbox,
        &soft_dsn(9, "bob@acme.test", &bob),
    )
    .await;
    assert_eq!(w.classify().await, 2);

    let row = |from: &'static str| {
        let app = &w.app;
        async move {
            let r: (String, f64, String, String) = sqlx::query_as(
                "SELECT classification_label, classification_confidence, classification_model,
                        classification_provider FROM inbox_replies WHERE from_email LIKE $1",
            )
            .bind(from)
            .fetch_one(&app.state.db.pool)
            .await
            .unwrap();
            r
        }
    };
    let (label, confidence, model, provider) = row("cat@%").await;
    assert_eq!(
        (label.as_str(), model.as_str(), provider.as_str()),
        ("not_now", "classifier-model", compatible.as_str())
    );
    assert!((confidence - 0.83).abs() < 1e-6);
    assert_eq!(w.status("cat@acme.test").await, "replied", "stop_on_reply");
    let ledger = scalar(
        &w.app,
        "SELECT COUNT(*) FROM vendor_calls WHERE action_type = 'reply_classifier' AND success = 1",
        &[],
    )
    .await;
    assert_eq!(ledger, 1, "one completion, in the ledger");
    // The bounce is labelled by the rules plugin, never by the LLM.
    let (label, _, model, provider) = row("mailer-daemon@%").await;
    assert_eq!(
        (label.as_str(), model.as_str(), provider.as_str()),
        ("bounce", "rules-v1", "reply-classifier-rules")
    );

    // A failing AI key falls back to the rules classifier.
    stub.set(
        "/llm/v1/chat/completions",
        Canned::json(500, json!({"error": "down"})),
    );
    let dan = w.message_id("dan@acme.test").await;
    let reply = format!(
        "From: dan@acme.test\r\nTo: sam@seller.test\r\nSubject: Re: Quick question\r\n\
         Message-ID: <llm-2@acme.test>\r\nIn-Reply-To: <{dan}>\r\n\r\nPlease unsubscribe me from this list.\r\n"
    );
    deliver(&w.app, w.account_id, w.mailbox, reply.as_bytes()).await;
    assert_eq!(w.classify().await, 1);
    let (label, _, model, _) = row("dan@%").await;
    assert_eq!(
        (label.as_str(), model.as_str()),
        ("unsubscribe", "rules-v1")
    );
}

/// One fetch batch is matched before any of it is stored: a copy of a
/// message in the same batch is a duplicate, and a follow-up that carries
/// neither our Message-ID nor our subject still joins the thread an earlier
/// message of the batch opens. The batch and the progress past it are
/// stored together.
#[tokio::test]
async fn a_batch_stores_its_replies_and_progress_together() {
    use super::ingest::{Progress, ingest_batch};
    let w = world().await;
    let ann = w.message_id("ann@acme.test").await;
    let first = format!(
        "From: ann@acme.test\r\nTo: sam@seller.test\r\nSubject: Demo next week\r\n\
         Message-ID: <b1@acme.test>\r\nIn-Reply-To: <{ann}>\r\n\r\nYes, interested.\r\n"
    );
    // Our subject was "Quick question": only the thread key (sender and
    // subject) ties this one to the first.
    let follow_up = "From: ann@acme.test\r\nTo: sam@seller.test\r\nSubject: Re: Demo next week\r\n\
         Message-ID: <b2@acme.test>\r\n\r\nAlso: Tuesday works.\r\n";
    let stranger = "From: zed@elsewhere.test\r\nTo: sam@seller.test\r\nSubject: Lunch\r\n\
         Message-ID: <z1@elsewhere.test>\r\n\r\nLunch?\r\n";
    let inbox = w.app.state.ext::<Inbox>();
    let target = Mailbox {
        account_id: w.account_id,
        send_account_id: w.mailbox,
    };
    let batch: Vec<&[u8]> = vec![
        first.as_bytes(),
        first.as_bytes(),
        follow_up.as_bytes(),
        stranger.as_bytes(),
    ];
    let progress = Progress {
        uidvalidity: 7,
        last_uid: 40,
    };
    let got = ingest_batch(
        &w.app.state,
        &inbox.spoof,
        &target,
        &batch,
        Some((w.mailbox, progress)),
    )
    .await
    .unwrap();
    assert!(matches!(got[0], Ingested::Stored { .. }), "{got:?}");
    assert_eq!(got[1], Ingested::Duplicate);
    assert!(matches!(got[2], Ingested::Stored { .. }), "{got:?}");
    assert_eq!(got[3], Ingested::Unmatched);
    let (
        Ingested::Stored {
            thread_row_id: a, ..
        },
        Ingested::Stored {
            thread_row_id: b, ..
        },
    ) = (&got[0], &got[2])
    else {
        unreachable!()
    };
    assert_eq!(a, b, "the follow-up joins the thread the batch opened");
    let message_count = async || {
        scalar(
            &w.app,
            "SELECT message_count FROM inbox_threads WHERE id = $1",
            &[*a],
        )
        .await
    };
    assert_eq!(message_count().await, 2);
    let saved = scalar(
        &w.app,
        "SELECT inbox_last_uid FROM send_accounts WHERE id = $1",
        &[w.mailbox],
    )
    .await;
    assert_eq!(saved, 40, "the progress was saved with the batch");

    // The same batch again (a crash after the commit, before the poller
    // learned of it): everything is a duplicate and no thread counts twice.
    let again = ingest_batch(&w.app.state, &inbox.spoof, &target, &batch, None)
        .await
        .unwrap();
    assert_eq!(
        again,
        vec![
            Ingested::Duplicate,
            Ingested::Duplicate,
            Ingested::Duplicate,
            Ingested::Unmatched
        ]
    );
    assert_eq!(message_count().await, 2);
}
