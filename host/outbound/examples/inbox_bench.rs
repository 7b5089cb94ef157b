//! Inbox benchmark: parse, match, store and classify 10,000 replies (run by
//! `tests/bench/inbox.sh` in release mode; not a test).
//!
//! The replies answer 10,000 sent sequence messages of one account on an
//! embedded SQLite store: 70 % human replies (the labelled set of
//! `outreach-mail-analysis`, in seven languages), 20 % DSNs naming the
//! original Message-ID and 10 % out-of-office auto-replies. The reference,
//! measured in the same run on the same messages and store, is the least
//! any inbox must do per message: the MIME parse (`mail_parser`) and one
//! durable insert of its sender, subject and text.

use std::time::Instant;

use serde_json::{Value, json};

use outreach_core::accounts::Plan;
use outreach_core::testing::TestApp;
use outreach_outbound::inbox::Inbox;
use outreach_outbound::inbox::classify::classify_due;
use outreach_outbound::inbox::collect::FETCH_BATCH;
use outreach_outbound::inbox::ingest::{Ingested, Mailbox, ingest_batch};
use outreach_outbound::send_accounts::store::{self as send_accounts, SendAccountRow};

/// Replies measured; `INBOX_BENCH_REPLIES` sets another count (for profiling).
fn reply_count() -> usize {
    std::env::var("INBOX_BENCH_REPLIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000)
}

fn labelled() -> Vec<(String, String)> {
    let text = include_str!("../../mail-analysis/tests/data/replies.jsonl");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| {
            (
                v["subject"].as_str().unwrap_or("Re: Hello").to_owned(),
                v["text"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn message(i: usize, to: &str, original: &str, samples: &[(String, String)]) -> Vec<u8> {
    match i % 10 {
        0 | 1 => format!(
            "From: MAILER-DAEMON@mx.acme.test\r\nTo: sam@seller.test\r\nSubject: Undelivered Mail Returned to Sender\r\n\
             Message-ID: <dsn-{i}@mx.acme.test>\r\nMIME-Version: 1.0\r\n\
             Content-Type: multipart/report; report-type=delivery-status; boundary=\"b\"\r\n\r\n\
             --b\r\nContent-Type: text/plain\r\n\r\nThis is the mail system at host mx.acme.test. Your message could not be delivered.\r\n\r\n\
             --b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.acme.test\r\n\r\n\
             Final-Recipient: rfc822; {to}\r\nAction: failed\r\nStatus: 5.1.1\r\n\
             Diagnostic-Code: smtp; 550 5.1.1 <{to}>: Recipient address rejected: User unknown\r\n\r\n\
             --b\r\nContent-Type: text/rfc822-headers\r\n\r\nFrom: sam@seller.test\r\nTo: {to}\r\nSubject: Quick question\r\n\
             Message-ID: <{original}>\r\n\r\n--b--\r\n"
        ),
        2 => format!(
            "From: {to}\r\nTo: sam@seller.test\r\nSubject: Automatic reply: Quick question\r\n\
             Message-ID: <ooo-{i}@acme.test>\r\nIn-Reply-To: <{original}>\r\nAuto-Submitted: auto-replied\r\n\
             Content-Type: text/plain; charset=utf-8\r\n\r\nThank you for your message. I am out of the office until \
             14 December 2026 with limited access to email.\r\n"
        ),
        _ => {
            let (subject, text) = &samples[i % samples.len()];
            format!(
                "From: {to}\r\nTo: sam@seller.test\r\nSubject: {subject}\r\nMessage-ID: <r-{i}@acme.test>\r\n\
                 In-Reply-To: <{original}>\r\nReferences: <{original}>\r\nMIME-Version: 1.0\r\n\
                 Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
                 {text}\r\n\r\nOn Mon, 23 Nov 2026 at 09:00, Sam <sam@seller.test> wrote:\r\n> Hi,\r\n> a quick question about your outbound process.\r\n"
            )
        }
    }
    .into_bytes()
}

/// Moves SQLite's write-ahead log into the database file, so the reference
/// and the pipeline each start from an empty log instead of one of them
/// paying for the set-up's checkpoint (the reference varied from 4,400 to
/// 15,900 messages a second without it).
async fn checkpoint(app: &TestApp) {
    if app.state.db.backend == outreach_core::store::Backend::Sqlite {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&app.state.db.pool)
            .await
            .unwrap();
    }
}

#[tokio::main]
async fn main() {
    let replies = reply_count();
    let app = TestApp::with_areas(&[outreach_outbound::AREA], |_| {}).await;
    let a = app.account(Plan::Enterprise).await;
    let now = app.state.clock.now_ms();
    let row = SendAccountRow {
        id: 0,
        account_id: a.account_id,
        email: "sam@seller.test".into(),
        display_name: None,
        provider: "smtp".into(),
        status: "active".into(),
        warmup_enabled: false,
        warmup_progress_pct: 0.0,
        daily_send_limit: 10_000,
        emails_sent_today: 0,
        sent_day: 0,
        smtp_host: "127.0.0.1".into(),
        smtp_port: 25,
        smtp_encryption: "none".into(),
        imap_host: "127.0.0.1".into(),
        imap_port: 143,
        credentials: String::new(),
        smtp_verified: true,
        imap_verified: true,
        connected_at: now,
        last_activity_at: None,
        created_at: now,
        updated_at: now,
    };
    let send_account_id = send_accounts::insert(&app.state.db, &row, |_| "sealed".into())
        .await
        .unwrap()
        .unwrap();
    let r = app
        .post(
            "/v1/sequences",
            &a.api_key,
            json!({"name": "Bench", "from_email": "sam@seller.test"}),
        )
        .await;
    let sequence_id = r.body["id"].as_i64().expect("sequence created");

    // 10,000 enrollments, each with its sent step-1 message.
    let mut tx = app.state.db.pool.begin().await.unwrap();
    let mut sent = Vec::with_capacity(replies);
    for i in 0..replies {
        let to = format!("contact{i}@acme{}.test", i % 500);
        let enrollment: i64 = sqlx::query_scalar(
            "INSERT INTO enrollments (account_id, sequence_id, domain, contact_email, metadata,
                 status, current_step, lead_temperature, enrolled_at, updated_at)
             VALUES ($1, $2, $3, $4, '{}', 'active', 2, 'cold', $5, $5) RETURNING id",
        )
        .bind(a.account_id)
        .bind(sequence_id)
        .bind(format!("acme{}.test", i % 500))
        .bind(&to)
        .bind(now)
        .fetch_one(&mut *tx)
        .await
        .unwrap();
        let message_id = format!("m{i}.bench@seller.test");
        sqlx::query(
            "INSERT INTO sequence_messages (account_id, sequence_id, enrollment_id, step_id,
                 step_position, send_account_id, message_id, to_email, subject, status,
                 created_at, sent_at)
             VALUES ($1, $2, $3, 1, 1, $4, $5, $6, 'Quick question', 'sent', $7, $7)",
        )
        .bind(a.account_id)
        .bind(sequence_id)
        .bind(enrollment)
        .bind(send_account_id)
        .bind(&message_id)
        .bind(&to)
        .bind(now)
        .execute(&mut *tx)
        .await
        .unwrap();
        sent.push((to, message_id));
    }
    tx.commit().await.unwrap();

    let samples = labelled();
    let raws: Vec<Vec<u8>> = sent
        .iter()
        .enumerate()
        .map(|(i, (to, id))| message(i, to, id, &samples))
        .collect();
    let bytes: usize = raws.iter().map(Vec::len).sum();

    // Reference: what any inbox must do per message at the least, on the
    // same store: the MIME parse, and the sender, subject and text written
    // durably, one transaction per message as the poller commits them.
    sqlx::query(
        "CREATE TABLE bench_reference (id INTEGER PRIMARY KEY, sender TEXT, subject TEXT, body TEXT)",
    )
    .execute(&app.state.db.pool)
    .await
    .unwrap();
    checkpoint(&app).await;
    let started = Instant::now();
    let mut parts = 0usize;
    for raw in &raws {
        let Some(m) = mail_parser::MessageParser::default().parse(raw) else {
            continue;
        };
        parts += m.parts.len();
        let sender = m
            .from()
            .and_then(|f| f.first())
            .and_then(|a| a.address())
            .unwrap_or_default()
            .to_owned();
        let mut tx = app.state.db.pool.begin().await.unwrap();
        sqlx::query("INSERT INTO bench_reference (sender, subject, body) VALUES ($1, $2, $3)")
            .bind(sender)
            .bind(m.subject().unwrap_or_default().to_owned())
            .bind(m.body_text(0).unwrap_or_default().into_owned())
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
    let reference = started.elapsed();
    assert!(parts >= replies);

    checkpoint(&app).await;
    let inbox = app.state.ext::<Inbox>();
    let mailbox = Mailbox {
        account_id: a.account_id,
        send_account_id,
    };
    let started = Instant::now();
    let mut stored = 0;
    // In the poller's fetch batches, each stored in one transaction.
    for batch in raws.chunks(FETCH_BATCH) {
        let batch: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
        for outcome in ingest_batch(&app.state, &inbox.spoof, &mailbox, &batch, None)
            .await
            .unwrap()
        {
            if let Ingested::Stored { .. } = outcome {
                stored += 1;
            }
        }
    }
    let ingest_time = started.elapsed();
    assert_eq!(stored, replies, "every reply matched its message");

    let started = Instant::now();
    let mut classified = 0;
    loop {
        let n = classify_due(&app.state, "bench").await.unwrap();
        if n == 0 {
            break;
        }
        classified += n;
    }
    let classify_time = started.elapsed();
    assert_eq!(classified, replies);

    let rate = |d: std::time::Duration| replies as f64 / d.as_secs_f64();
    let total = ingest_time + classify_time;
    println!(
        "replies: {replies} ({:.1} MB), backend: {:?}",
        bytes as f64 / 1e6,
        app.state.db.backend
    );
    println!(
        "reference (MIME parse and one durable insert a message): {:.0} messages/s",
        rate(reference)
    );
    println!(
        "ingest (parse, inspect, match, thread, store): {:.0} messages/s",
        rate(ingest_time)
    );
    println!(
        "classify (rules plugin, effects, thread label): {:.0} messages/s",
        rate(classify_time)
    );
    println!("whole pipeline: {:.0} messages/s", rate(total));
    println!(
        "ratio whole pipeline / reference: {:.3}",
        rate(total) / rate(reference)
    );
}
