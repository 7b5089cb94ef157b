//! Collection end to end inside the crate: the sender sends a sequence step
//! to the capturing SMTP server, replies are appended to a private Dovecot
//! mailbox (tests/support/mail.sh), and the poller and the classifier
//! thread, label and apply them. Both backends, the manual clock.

use serde_json::{Value, json};

use super::classify::classify_due;
use super::collect::poll_now;
use crate::send_accounts::store;
use crate::sender::worker::run_once;
use crate::testkit::{exec, scalar, sequence, step, text};
use outreach_core::accounts::Plan;
use outreach_core::smtp_capture::CaptureServer;
use outreach_core::testing::{TestApp, mail_peers};

/// The password of every per-test Dovecot user.
const IMAP_PASSWORD: &str = "inbox-pass-1";

const CONTACTS: [&str; 5] = [
    "ann@acme.test",
    "bob@acme.test",
    "cat@acme.test",
    "dan@acme.test",
    "eve@acme.test",
];

pub(super) struct World {
    pub app: TestApp,
    pub key: String,
    pub account_id: i64,
    pub mailbox: i64,
    imap_user: String,
    pub smtp: CaptureServer,
    pub sequence_id: i64,
}

pub(super) async fn world() -> World {
    let app = TestApp::with_areas(&[outreach_vendors::AREA, crate::AREA], |c| {
        c.inbox_trusted_authserv_ids = vec!["mx.seller.test".into()];
    })
    .await;
    let a = app.account(Plan::Pro).await;
    let smtp = CaptureServer::start("mail-pass").await;
    let imap_user = format!("inbox-{}@outreach.test", uuid::Uuid::new_v4().simple());
    let now = app.state.clock.now_ms();
    let row = store::SendAccountRow {
        id: 0,
        account_id: a.account_id,
        email: "sam@seller.test".into(),
        display_name: Some("Sam".into()),
        provider: "smtp".into(),
        status: "active".into(),
        warmup_enabled: false,
        warmup_progress_pct: 0.0,
        daily_send_limit: 1000,
        emails_sent_today: 0,
        sent_day: 0,
        smtp_host: "127.0.0.1".into(),
        smtp_port: smtp.port as i64,
        smtp_encryption: "none".into(),
        imap_host: "127.0.0.1".into(),
        imap_port: mail_peers::IMAP_PORT as i64,
        credentials: String::new(),
        smtp_verified: true,
        imap_verified: true,
        connected_at: now,
        last_activity_at: None,
        created_at: now,
        updated_at: now,
    };
    let creds = json!({"smtp_username": "sam", "smtp_password": "mail-pass",
        "imap_username": imap_user, "imap_password": IMAP_PASSWORD})
    .to_string();
    let secrets = app.state.secrets.clone();
    let mailbox = store::insert(&app.state.db, &row, move |id| {
        secrets.encrypt(&format!("send_account:{id}"), &creds)
    })
    .await
    .unwrap()
    .unwrap();
    let key = a.api_key.clone();
    let sequence_id = sequence(
        &app,
        &key,
        json!({"name": "Outreach", "from_email": "sam@seller.test", "from_name": "Sam"}),
    )
    .await;
    step(
        &app,
        &key,
        sequence_id,
        json!({"subject": "Quick question", "body_html": "<p>Hi</p>"}),
    )
    .await;
    step(
        &app,
        &key,
        sequence_id,
        json!({"delay_days": 2, "subject": "Following up", "body_html": "<p>Again</p>"}),
    )
    .await;
    let r = app
        .post(
            &format!("/v1/sequences/{sequence_id}/activate"),
            &key,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let contacts: Vec<Value> = CONTACTS
        .iter()
        .map(|c| json!({"domain": "acme.test", "contact_email": c}))
        .collect();
    let r = app
        .post(
            &format!("/v1/sequences/{sequence_id}/enroll"),
            &key,
            json!({"contacts": contacts}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(run_once(&app.state).await.unwrap(), CONTACTS.len());
    World {
        app,
        key,
        account_id: a.account_id,
        mailbox,
        imap_user,
        smtp,
        sequence_id,
    }
}

impl World {
    pub async fn message_id(&self, to: &str) -> String {
        text(
            &self.app,
            &format!("SELECT message_id FROM sequence_messages WHERE to_email = '{to}'"),
            &[],
        )
        .await
        .unwrap()
    }

    /// Appends raw messages to the test user's INBOX over IMAP.
    async fn deliver(&self, messages: &[Vec<u8>]) {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", mail_peers::IMAP_PORT))
            .await
            .expect("Dovecot runs (tests/support/mail.sh)");
        let mut client = async_imap::Client::new(tcp);
        client.read_response().await.unwrap();
        let mut session = client
            .login(&self.imap_user, IMAP_PASSWORD)
            .await
            .map_err(|(e, _)| e)
            .unwrap();
        for m in messages {
            session.append("INBOX", None, None, m).await.unwrap();
        }
        session.logout().await.unwrap();
    }

    async fn poll(&self) {
        poll_now(&self.app.state, self.mailbox).await.unwrap();
    }

    pub async fn classify(&self) -> usize {
        classify_due(&self.app.state, "test-worker").await.unwrap()
    }

    pub async fn status(&self, email: &str) -> String {
        text(
            &self.app,
            &format!("SELECT status FROM enrollments WHERE contact_email = '{email}'"),
            &[],
        )
        .await
        .unwrap()
    }

    pub async fn outbox(&self, event: &str) -> Vec<Value> {
        let rows: Vec<String> = sqlx::query_scalar(
            "SELECT data FROM event_outbox WHERE account_id = $1 AND event_type = $2 ORDER BY id",
        )
        .bind(self.account_id)
        .bind(event)
        .fetch_all(&self.app.state.db.pool)
        .await
        .unwrap();
        rows.iter()
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    pub async fn replies(&self) -> i64 {
        scalar(
            &self.app,
            "SELECT COUNT(*) FROM inbox_replies WHERE account_id = $1",
            &[self.account_id],
        )
        .await
    }
}

fn reply(from: &str, in_reply_to: &str, subject: &str, text: &str) -> Vec<u8> {
    format!(
        "From: {from}\r\nTo: sam@seller.test\r\nSubject: {subject}\r\n\
         Message-ID: <{}@acme.test>\r\nIn-Reply-To: <{in_reply_to}>\r\n\
         Date: Sat, 21 Nov 2026 13:00:00 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n",
        uuid::Uuid::new_v4().simple()
    )
    .into_bytes()
}

fn dsn(recipient: &str, original_id: &str) -> Vec<u8> {
    format!(
        "From: Mail Delivery System <MAILER-DAEMON@mx.acme.test>\r\nTo: sam@seller.test\r\n\
         Subject: Undelivered Mail Returned to Sender\r\nMessage-ID: <dsn-{}@mx.acme.test>\r\n\
         Auto-Submitted: auto-replied\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/report; report-type=delivery-status; boundary=\"b1\"\r\n\r\n\
         --b1\r\nContent-Type: text/plain\r\n\r\nThis is the mail system. Your message could not be delivered.\r\n\r\n\
         --b1\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.acme.test\r\n\r\n\
         Final-Recipient: rfc822; {recipient}\r\nAction: failed\r\nStatus: 5.1.1\r\n\
         Diagnostic-Code: smtp; 550 5.1.1 <{recipient}>: Recipient address rejected: User unknown\r\n\r\n\
         --b1\r\nContent-Type: text/rfc822-headers\r\n\r\nFrom: sam@seller.test\r\nTo: {recipient}\r\n\
         Subject: Quick question\r\nMessage-ID: <{original_id}>\r\n\r\n--b1--\r\n",
        uuid::Uuid::new_v4().simple()
    )
    .into_bytes()
}

#[tokio::test]
async fn replies_bounces_auto_replies_and_unsubscribes_are_collected_and_applied() {
    let w = world().await;
    let ann = w.message_id("ann@acme.test").await;
    let bob = w.message_id("bob@acme.test").await;
    let cat = w.message_id("cat@acme.test").await;
    let dan = w.message_id("dan@acme.test").await;
    let ooo = format!(
        "From: cat@acme.test\r\nTo: sam@seller.test\r\nSubject: Automatic reply: Quick question\r\n\
         Message-ID: <ooo-1@acme.test>\r\nIn-Reply-To: <{cat}>\r\nAuto-Submitted: auto-replied\r\n\
         Content-Type: text/plain\r\n\r\nI am out of the office until 3 December 2026 with limited access to email.\r\n"
    )
    .into_bytes();
    // A spoofed "reply": the receiving server (trusted) says DMARC failed,
    // and it came from a host that is not acme.test's.
    let spoofed = format!(
        "Authentication-Results: mx.seller.test; spf=fail smtp.mailfrom=acme.test; dkim=none; dmarc=fail header.from=acme.test\r\n\
         Received: from evil.example.net (evil.example.net [203.0.113.66]) by mx.seller.test with ESMTP id 1; Sat, 21 Nov 2026 13:00:00 +0000\r\n\
         From: eve@acme.test\r\nTo: sam@seller.test\r\nSubject: Re: Quick question\r\n\
         Message-ID: <spoof-1@evil.example.net>\r\nIn-Reply-To: <{}>\r\n\r\nPlease remove me from your list.\r\n",
        w.message_id("eve@acme.test").await
    )
    .into_bytes();
    w.deliver(&[
        reply(
            "Ann <ann@acme.test>",
            &ann,
            "Re: Quick question",
            "Sounds interesting! Can we set up a call next week?\r\n\r\nOn Sat, Sam wrote:\r\n> Hi",
        ),
        dsn("bob@acme.test", &bob),
        ooo,
        reply(
            "dan@acme.test",
            &dan,
            "Re: Quick question",
            "Please remove me from your mailing list.",
        ),
        // Someone else's mail: nothing of ours.
        reply(
            "friend@other.test",
            "unrelated@other.test",
            "Lunch?",
            "Lunch tomorrow?",
        ),
        spoofed,
    ])
    .await;
    w.poll().await;
    assert_eq!(w.replies().await, 5, "the unrelated message stays out");
    assert_eq!(w.classify().await, 4, "the spoofed reply is not classified");

    // Ann: interested, replied, hot.
    assert_eq!(w.status("ann@acme.test").await, "replied");
    let hot = text(
        &w.app,
        "SELECT lead_temperature FROM enrollments WHERE contact_email = 'ann@acme.test'",
        &[],
    )
    .await;
    assert_eq!(hot.as_deref(), Some("hot"));
    let replied = w.outbox("sequence.replied").await;
    assert_eq!(replied.len(), 1, "{replied:?}");
    assert_eq!(replied[0]["email"], "ann@acme.test");
    assert_eq!(replied[0]["classification"], "interested");
    // Bob: hard bounce, suppressed.
    assert_eq!(w.status("bob@acme.test").await, "bounced");
    let bounced = w.outbox("sequence.bounced").await;
    assert_eq!(bounced.len(), 1);
    assert_eq!(bounced[0]["bounce_type"], "hard");
    assert_eq!(bounced[0]["email"], "bob@acme.test");
    let suppressed = |email: &'static str, reason: &'static str| {
        let app = &w.app;
        async move {
            scalar(
                app,
                &format!(
                    "SELECT COUNT(*) FROM suppression_entries WHERE email = '{email}' AND reason = '{reason}'"
                ),
                &[],
            )
            .await
                == 1
        }
    };
    assert!(suppressed("bob@acme.test", "bounce").await);
    // Cat: out of office, still active, the next step waits past 3 December.
    assert_eq!(w.status("cat@acme.test").await, "active");
    let due = scalar(
        &w.app,
        "SELECT next_send_at FROM enrollments WHERE contact_email = 'cat@acme.test'",
        &[],
    )
    .await;
    let back = chrono::DateTime::parse_from_rfc3339("2026-12-04T00:00:00Z")
        .unwrap()
        .timestamp_millis();
    assert_eq!(due, back);
    // Dan: unsubscribed and suppressed.
    assert_eq!(w.status("dan@acme.test").await, "unsubscribed");
    assert!(suppressed("dan@acme.test", "unsubscribe").await);
    let unsubscribed = w.outbox("sequence.unsubscribed").await;
    assert_eq!(unsubscribed.len(), 1);
    assert_eq!(unsubscribed[0]["source"], "reply");
    // Eve: held as spoofing; nothing happened to her enrollment.
    assert_eq!(w.status("eve@acme.test").await, "active");
    assert!(!suppressed("eve@acme.test", "unsubscribe").await);
    let held = scalar(
        &w.app,
        "SELECT spoofing_suspected FROM inbox_replies WHERE from_email = 'eve@acme.test'",
        &[],
    )
    .await;
    assert_eq!(held, 1);

    // The threads API shows them, bounce beside its contact's thread.
    let r = w.app.get("/v1/inbox/threads?limit=50", &w.key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["total"], 5);
    let thread = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["contact_email"] == "ann@acme.test")
        .unwrap()
        .clone();
    assert_eq!(thread["last_classification"], "interested");
    assert_eq!(thread["subject"], "Quick question");
    let detail = w
        .app
        .get(&format!("/v1/inbox/threads/{}", thread["id"]), &w.key)
        .await;
    assert_eq!(detail.status, 200);
    let first = &detail.body["replies"][0];
    assert_eq!(
        first["body_text"],
        "Sounds interesting! Can we set up a call next week?"
    );
    assert_eq!(first["classification"]["label"], "interested");
    assert!(first["sequence_step_id"].as_i64().is_some());

    // Nothing new: a second poll stores nothing; a new reply is picked up
    // incrementally and joins Ann's thread.
    w.poll().await;
    assert_eq!(w.replies().await, 5);
    w.deliver(&[reply(
        "ann@acme.test",
        &ann,
        "RE: Quick question",
        "Also, what does it cost?",
    )])
    .await;
    w.poll().await;
    assert_eq!(w.replies().await, 6);
    let count = scalar(
        &w.app,
        "SELECT message_count FROM inbox_threads WHERE contact_email = 'ann@acme.test'",
        &[],
    )
    .await;
    assert_eq!(count, 2);

    // The server renumbered the mailbox (UIDVALIDITY changed): everything
    // is fetched again and nothing is stored twice.
    exec(
        &w.app,
        "UPDATE send_accounts SET inbox_uidvalidity = 1, inbox_last_uid = 0 WHERE id = $1",
        &[w.mailbox],
    )
    .await;
    w.poll().await;
    assert_eq!(w.replies().await, 6);
    let _ = w.sequence_id;
}

#[tokio::test]
async fn hostile_messages_are_stored_as_far_as_they_parse_and_never_stop_the_poller() {
    let w = world().await;
    let ann = w.message_id("ann@acme.test").await;
    let big = "A".repeat(76);
    let attachment: String = (0..40_000).map(|_| format!("{big}\r\n")).collect();
    let mut bomb = String::new();
    for i in 0..5_000 {
        bomb.push_str(&format!("X-Bomb-{i}: {}\r\n", "b".repeat(20)));
    }
    let messages = vec![
        // Broken MIME: a boundary that never closes.
        format!("From: ann@acme.test\r\nSubject: Re: Quick question\r\nIn-Reply-To: <{ann}>\r\nMessage-ID: <h1@acme.test>\r\nContent-Type: multipart/mixed; boundary=\"zz\"\r\n\r\n--zz\r\nContent-Type: text/plain\r\n\r\nThanks, interested\r\n--zz\r\nContent-Type: applica").into_bytes(),
        // A charset that does not exist.
        format!("From: ann@acme.test\r\nSubject: Re: Quick question\r\nIn-Reply-To: <{ann}>\r\nMessage-ID: <h2@acme.test>\r\nContent-Type: text/plain; charset=x-no-such-charset\r\n\r\nHello there\r\n").into_bytes(),
        // A 3 MB attachment.
        format!("From: ann@acme.test\r\nSubject: Re: Quick question\r\nIn-Reply-To: <{ann}>\r\nMessage-ID: <h3@acme.test>\r\nContent-Type: multipart/mixed; boundary=\"q\"\r\n\r\n--q\r\nContent-Type: text/plain\r\n\r\nSee attached\r\n--q\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n{attachment}--q--\r\n").into_bytes(),
        // A header bomb.
        format!("From: ann@acme.test\r\n{bomb}Subject: Re: Quick question\r\nIn-Reply-To: <{ann}>\r\nMessage-ID: <h4@acme.test>\r\n\r\nStill here\r\n").into_bytes(),
        b"\x00\x01\x02 not a message at all \xff\xfe".to_vec(),
    ];
    w.deliver(&messages).await;
    w.poll().await;
    let stored = w.replies().await;
    assert!(stored >= 4, "{stored} stored");
    assert!(w.classify().await >= 4);
    let last_uid = scalar(
        &w.app,
        "SELECT inbox_last_uid FROM send_accounts WHERE id = $1",
        &[w.mailbox],
    )
    .await;
    assert_eq!(last_uid, 5, "every message was handled");
}

#[tokio::test]
async fn a_failing_mailbox_backs_off_and_keeps_the_servers_words() {
    let w = world().await;
    exec(
        &w.app,
        "UPDATE send_accounts SET imap_port = 1 WHERE id = $1",
        &[w.mailbox],
    )
    .await;
    let now = w.app.state.clock.now_ms();
    let m = super::reply_store::claim_mailboxes(&w.app.state.db, "t", now, now + 60_000, 10)
        .await
        .unwrap();
    assert_eq!(m.len(), 1);
    // Another claim sees the lease.
    let again = super::reply_store::claim_mailboxes(&w.app.state.db, "u", now, now + 60_000, 10)
        .await
        .unwrap();
    assert!(again.is_empty());
    super::collect::watch(&w.app.state, m[0].clone()).await;
    let interval = w.app.state.config.inbox_poll_interval_secs as i64 * 1000;
    let next = scalar(
        &w.app,
        "SELECT inbox_next_poll_at FROM send_accounts WHERE id = $1",
        &[w.mailbox],
    )
    .await;
    assert_eq!(
        next,
        now + 2 * interval,
        "the first failure doubles the interval"
    );
    let error = text(
        &w.app,
        "SELECT inbox_error FROM send_accounts WHERE id = $1",
        &[w.mailbox],
    )
    .await;
    assert!(error.unwrap().contains("IMAP"));
    // Released: due again at its backoff time, not before.
    let early = super::reply_store::claim_mailboxes(&w.app.state.db, "u", now, now + 60_000, 10)
        .await
        .unwrap();
    assert!(early.is_empty());
    let due = super::reply_store::claim_mailboxes(&w.app.state.db, "u", next, next + 60_000, 10)
        .await
        .unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].failures, 1);
}
