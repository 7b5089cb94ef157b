//! The inbox through the real binary against Dovecot: a sequence sends to
//! four contacts through a capturing SMTP server, then a reply, a DSN for a
//! sent message, an auto-reply and a spoofed reply are dropped into the
//! account's Maildir (tests/support/mail.sh's Dovecot, any user with the
//! password below). The poller picks them up, threads and classifies them
//! and applies every effect; the API shows the result.

use std::os::unix::fs::chown;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use outreach_core::smtp_capture::CaptureServer;
use outreach_e2e::{Deployment, Server, client, get, post_json};
use serde_json::{Value, json};

const IMAP_PORT: u16 = 11143;
const IMAP_PASSWORD: &str = "inbox-pass-1";
const SMTP_PASSWORD: &str = "smtp-pass-1";
/// Dovecot's mail owner (tests/support/mail.sh).
const MAIL_UID: u32 = 65534;

fn maildir(user: &str) -> PathBuf {
    let base = std::env::var("OUTREACH_MAIL_DIR").unwrap_or_else(|_| "/tmp/outreach-mail".into());
    PathBuf::from(base).join("mail").join(user).join("Maildir")
}

/// Writes `raw` into `tmp/` and renames it into `new/`, as an MTA delivers.
fn drop_into(user: &str, name: &str, raw: &[u8]) {
    let dir = maildir(user);
    for sub in ["", "tmp", "new", "cur"] {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).unwrap();
        chown(&d, Some(MAIL_UID), Some(MAIL_UID)).unwrap();
    }
    // The user's home above the Maildir is Dovecot's to read too.
    chown(dir.parent().unwrap(), Some(MAIL_UID), Some(MAIL_UID)).unwrap();
    let tmp = dir.join("tmp").join(name);
    std::fs::write(&tmp, raw).unwrap();
    chown(&tmp, Some(MAIL_UID), Some(MAIL_UID)).unwrap();
    std::fs::rename(&tmp, dir.join("new").join(name)).unwrap();
}

async fn call(server: &Server, key: &str, path: &str, body: Value) -> Value {
    let r = post_json(&client(), &server.url(path), Some(key), &body).await;
    assert!(r.status < 300, "{path}: {} {:?}", r.status, r.json);
    r.json
}

/// Polls `path` until `done` holds (or 60 s pass) and returns the last body.
async fn eventually(
    server: &Server,
    key: &str,
    path: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = get(&client(), &server.url(path), Some(key)).await;
        assert_eq!(r.status, 200, "{path}: {:?}", r.json);
        if done(&r.json) || Instant::now() > deadline {
            return r.json;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// A Dovecot user of its own for one test (any name logs in).
fn mail_user(prefix: &str) -> String {
    let unique = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{unique}-{}@outreach.test", std::process::id())
}

/// Connects sam@seller.test: SMTP to the capturing server on `smtp_port`,
/// IMAP to Dovecot as `user`.
async fn connect_mailbox(server: &Server, key: &str, smtp_port: u16, user: &str) {
    call(
        server,
        key,
        "/v1/send-accounts",
        json!({"email": "sam@seller.test",
        "smtp_host": "127.0.0.1", "smtp_port": smtp_port, "smtp_encryption": "none",
        "smtp_username": "sam", "smtp_password": SMTP_PASSWORD,
        "imap_host": "127.0.0.1", "imap_port": IMAP_PORT, "imap_username": user,
        "imap_password": IMAP_PASSWORD, "daily_send_limit": 100}),
    )
    .await;
}

#[tokio::test]
async fn replies_dropped_into_the_maildir_are_threaded_classified_and_applied() {
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    let user = mail_user("e2e");
    let deployment = Deployment::new()
        .with_env("OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK", "true")
        .with_env("OUTREACH_INBOX_POLL_INTERVAL_SECS", "1")
        .with_env("OUTREACH_INBOX_TRUSTED_AUTHSERV_IDS", "mx.seller.test");
    let account = deployment.create_account("seller@example.com", "pro");
    let server = deployment.start();
    let key = account.api_key.clone();
    connect_mailbox(&server, &key, smtp.port, &user).await;
    let seq = call(
        &server,
        &key,
        "/v1/sequences",
        json!({"name": "Launch",
        "from_email": "sam@seller.test", "from_name": "Sam"}),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    call(
        &server,
        &key,
        &format!("/v1/sequences/{seq}/steps"),
        json!({"subject": "Quick question", "body_html": "<p>Hi</p>"}),
    )
    .await;
    call(
        &server,
        &key,
        &format!("/v1/sequences/{seq}/steps"),
        json!({"delay_days": 3, "subject": "Following up", "body_html": "<p>Again</p>"}),
    )
    .await;
    let contacts = ["ann", "bob", "cat", "eve"]
        .map(|n| json!({"domain": "acme.test", "contact_email": format!("{n}@acme.test")}));
    call(
        &server,
        &key,
        &format!("/v1/sequences/{seq}/enroll"),
        json!({"contacts": contacts}),
    )
    .await;
    call(
        &server,
        &key,
        &format!("/v1/sequences/{seq}/activate"),
        json!({}),
    )
    .await;

    let deadline = Instant::now() + Duration::from_secs(30);
    while smtp.messages().len() < 4 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let sent = smtp.messages();
    assert_eq!(sent.len(), 4, "{}", server.log());
    let id_of = |to: &str| {
        sent.iter()
            .find(|m| m.to == vec![to.to_owned()])
            .and_then(|m| m.header("Message-ID"))
            .unwrap()
    };

    drop_into(
        &user,
        "1.reply",
        format!(
            "From: Ann <ann@acme.test>\r\nTo: sam@seller.test\r\nSubject: Re: Quick question\r\n\
         Message-ID: <r1@acme.test>\r\nIn-Reply-To: {}\r\nContent-Type: text/plain\r\n\r\n\
         Yes, interested - can we book a demo on Tuesday?\r\n",
            id_of("ann@acme.test")
        )
        .as_bytes(),
    );
    drop_into(&user, "2.dsn", format!(
        "From: MAILER-DAEMON@mx.acme.test\r\nTo: sam@seller.test\r\nSubject: Undelivered Mail Returned to Sender\r\n\
         Message-ID: <d1@mx.acme.test>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/report; report-type=delivery-status; boundary=\"b\"\r\n\r\n\
         --b\r\nContent-Type: text/plain\r\n\r\nDelivery failed.\r\n\
         --b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.acme.test\r\n\r\n\
         Final-Recipient: rfc822; bob@acme.test\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n\
         --b\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: {}\r\nSubject: Quick question\r\n\r\n--b--\r\n",
        id_of("bob@acme.test")).as_bytes());
    drop_into(&user, "3.ooo", format!(
        "From: cat@acme.test\r\nTo: sam@seller.test\r\nSubject: Out of Office: Quick question\r\n\
         Message-ID: <o1@acme.test>\r\nIn-Reply-To: {}\r\nAuto-Submitted: auto-replied\r\n\r\n\
         I am away until 14 December 2026 and will reply when I am back.\r\n", id_of("cat@acme.test")).as_bytes());
    drop_into(&user, "4.spoof", format!(
        "Authentication-Results: mx.seller.test; spf=fail smtp.mailfrom=acme.test; dkim=none; dmarc=fail header.from=acme.test\r\n\
         Received: from bad.example.net (bad.example.net [203.0.113.9]) by mx.seller.test; Tue, 24 Nov 2026 10:00:00 +0000\r\n\
         From: eve@acme.test\r\nTo: sam@seller.test\r\nSubject: Re: Quick question\r\n\
         Message-ID: <s1@bad.example.net>\r\nIn-Reply-To: {}\r\n\r\nUnsubscribe me now.\r\n", id_of("eve@acme.test")).as_bytes());

    let threads = eventually(&server, &key, "/v1/inbox/threads", |b| b["total"] == 4).await;
    assert_eq!(threads["total"], 4, "{threads:?}\n{}", server.log());
    let counts = eventually(&server, &key, "/v1/inbox/threads/counts", |b| {
        b["by_classification"]["interested"] == 1
            && b["by_classification"]["bounce"] == 1
            && b["by_classification"]["ooo"] == 1
    })
    .await;
    assert_eq!(counts["by_classification"]["interested"], 1, "{counts:?}");
    assert_eq!(counts["by_status"]["open"], 4);

    let enrollments = get(
        &client(),
        &server.url(&format!("/v1/sequences/{seq}/enrollments?limit=50")),
        Some(&key),
    )
    .await;
    let status = |email: &str| {
        enrollments.json["enrollments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["contact_email"] == email)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status("ann@acme.test"), "replied");
    assert_eq!(status("bob@acme.test"), "bounced");
    assert_eq!(status("cat@acme.test"), "active");
    assert_eq!(
        status("eve@acme.test"),
        "active",
        "a spoofed reply changes nothing"
    );
    let suppression = get(
        &client(),
        &server.url("/v1/sequences/suppression"),
        Some(&key),
    )
    .await;
    let listed: Vec<&str> = suppression.json["items"]
        .as_array()
        .or(suppression.json["entries"].as_array())
        .map(|a| a.iter().filter_map(|e| e["email"].as_str()).collect())
        .unwrap_or_default();
    assert!(listed.contains(&"bob@acme.test"), "{:?}", suppression.json);
    assert!(!listed.contains(&"eve@acme.test"));

    let spoofed = threads["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["contact_email"] == "eve@acme.test")
        .unwrap()
        .clone();
    assert!(
        spoofed["last_classification"].is_null(),
        "classification deferred"
    );
    let detail = get(
        &client(),
        &server.url(&format!("/v1/inbox/threads/{}", spoofed["id"])),
        Some(&key),
    )
    .await;
    assert_eq!(
        detail.json["replies"][0]["spoofing_suspected"], true,
        "{:?}",
        detail.json
    );
}

async fn count(conn: &mut sqlx::AnyConnection, sql: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(conn)
        .await
        .unwrap()
}

/// The poller stores each fetch batch's replies, threads and progress in
/// one transaction, and the classifier a pass's verdicts and effects in
/// another. A SIGKILL while both work on 1,500 replies loses none and
/// stores none twice: after the restart every reply is stored once, every
/// thread counts one reply, and every effect happened once.
#[tokio::test]
async fn a_sigkill_mid_batch_loses_no_reply_and_stores_none_twice() {
    const REPLIES: i64 = 1_500;
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    let user = mail_user("kill");
    let deployment = Deployment::new()
        .with_env("OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK", "true")
        .with_env("OUTREACH_INBOX_POLL_INTERVAL_SECS", "1");
    let account = deployment.create_account("killed-inbox@example.com", "pro");
    let server = deployment.start();
    let key = account.api_key.clone();
    connect_mailbox(&server, &key, smtp.port, &user).await;
    let seq = call(
        &server,
        &key,
        "/v1/sequences",
        json!({"name": "Launch", "from_email": "sam@seller.test"}),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    call(
        &server,
        &key,
        &format!("/v1/sequences/{seq}/steps"),
        json!({"subject": "Quick question", "body_html": "<p>Hi</p>"}),
    )
    .await;

    // The sent messages the replies answer, written as the sender would.
    let mut conn = deployment.db().await;
    let send_account: i64 =
        sqlx::query_scalar("SELECT id FROM send_accounts WHERE email = 'sam@seller.test'")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    let step: i64 = sqlx::query_scalar("SELECT id FROM sequence_steps WHERE sequence_id = $1")
        .bind(seq)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    {
        use sqlx::Connection;
        let mut tx = conn.begin().await.unwrap();
        for n in 0..REPLIES {
            let enrollment: i64 = sqlx::query_scalar(
                "INSERT INTO enrollments (account_id, sequence_id, domain, contact_email, metadata,
                     status, current_step, lead_temperature, enrolled_at, updated_at)
                 VALUES ($1, $2, 'acme.test', $3, '{}', 'active', 2, 'cold', 0, 0) RETURNING id",
            )
            .bind(account.account_id)
            .bind(seq)
            .bind(format!("c{n}@acme.test"))
            .fetch_one(&mut *tx)
            .await
            .unwrap();
            sqlx::query(
                "INSERT INTO sequence_messages (account_id, sequence_id, enrollment_id, step_id,
                     step_position, send_account_id, message_id, to_email, subject, status,
                     created_at, sent_at)
                 VALUES ($1, $2, $3, $4, 1, $5, $6, $7, 'Quick question', 'sent', 0, 0)",
            )
            .bind(account.account_id)
            .bind(seq)
            .bind(enrollment)
            .bind(step)
            .bind(send_account)
            .bind(format!("m{n}@seller.test"))
            .bind(format!("c{n}@acme.test"))
            .execute(&mut *tx)
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
    }
    for n in 0..REPLIES {
        drop_into(
            &user,
            &format!("{n}.reply"),
            format!(
                "From: c{n}@acme.test\r\nTo: sam@seller.test\r\nSubject: Re: Quick question\r\n\
                 Message-ID: <r{n}@acme.test>\r\nIn-Reply-To: <m{n}@seller.test>\r\n\
                 Content-Type: text/plain\r\n\r\nYes, interested - can we book a demo on Tuesday?\r\n"
            )
            .as_bytes(),
        );
    }

    // SIGKILL as soon as the first batch is stored.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut stored = 0;
    while stored == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
        stored = count(&mut conn, "SELECT COUNT(*) FROM inbox_replies").await;
    }
    drop(server);
    let at_kill = count(&mut conn, "SELECT COUNT(*) FROM inbox_replies").await;
    assert!(
        (1..REPLIES).contains(&at_kill),
        "the kill should land mid-way: {at_kill} stored"
    );

    // The dead server's leases run out (five minutes; set here), and the
    // restarted server fetches and classifies what the kill interrupted.
    sqlx::query("UPDATE send_accounts SET inbox_lease_until = 0, inbox_next_poll_at = 0")
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::query("UPDATE inbox_replies SET classify_lease_until = 0 WHERE classified_at IS NULL")
        .execute(&mut conn)
        .await
        .unwrap();
    let server = deployment.start();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let classified = count(
            &mut conn,
            "SELECT COUNT(*) FROM inbox_replies WHERE classified_at IS NOT NULL",
        )
        .await;
        if classified >= REPLIES || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let checks = [
        ("SELECT COUNT(*) FROM inbox_replies", "replies"),
        (
            "SELECT COUNT(DISTINCT message_key) FROM inbox_replies",
            "distinct replies",
        ),
        (
            "SELECT COUNT(*) FROM inbox_replies WHERE classification_label = 'interested'",
            "classified replies",
        ),
        ("SELECT COUNT(*) FROM inbox_threads", "threads"),
        (
            "SELECT CAST(SUM(message_count) AS BIGINT) FROM inbox_threads",
            "replies counted by threads",
        ),
        (
            "SELECT COUNT(*) FROM sequence_events WHERE event_type = 'replied'",
            "replied events",
        ),
        (
            "SELECT COUNT(*) FROM event_outbox WHERE event_type = 'sequence.replied'",
            "sequence.replied events",
        ),
        (
            "SELECT COUNT(*) FROM enrollments WHERE status = 'replied' AND lead_temperature = 'hot'",
            "replied enrollments",
        ),
    ];
    for (sql, what) in checks {
        assert_eq!(
            count(&mut conn, sql).await,
            REPLIES,
            "{what} (killed at {at_kill} stored)\n{}",
            server.log()
        );
    }
    let progress: i64 =
        sqlx::query_scalar("SELECT inbox_last_uid FROM send_accounts WHERE id = $1")
            .bind(send_account)
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert_eq!(progress, REPLIES, "every UID handled");
}
