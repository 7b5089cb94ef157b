//! Joining, the transitions and their errors, failures and bounces, the AI
//! writer, and the daily limit shared with sequences.

use super::*;
use outreach_core::events::{self, EventType};
use outreach_core::testing::stub::{Canned, Stub};
use outreach_vendors::vendor_keys::catalogue::{self, Family};

async fn post(
    app: &TestApp,
    key: &str,
    id: i64,
    action: &str,
) -> outreach_core::testing::TestResponse {
    app.post(
        &format!("/v1/send-accounts/{id}/smart-warmup/{action}"),
        key,
        json!({}),
    )
    .await
}

async fn outbox(app: &TestApp, account_id: i64) -> Vec<Value> {
    events::for_account(&app.state.db, account_id, 1000)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.event_type == EventType::WarmupMemberPaused)
        .map(|e| e.data)
        .collect()
}

#[tokio::test]
async fn transitions_answer_400_where_they_cannot_happen_and_404_across_tenants() {
    let dns = TestDns::start().await;
    let app = app(&dns, |_| {}).await;
    let (alpha, beta) = two_tenants(&app).await;
    let free = app.account(Plan::Free).await;
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    let id = mailbox(
        &app,
        &alpha,
        &address("t", "alpha.test"),
        &smtp,
        IMAP_PASSWORD,
        50,
    )
    .await;
    let key = &alpha.api_key;

    assert_eq!(post(&app, &free.api_key, id, "start").await.status, 403);
    for action in ["start", "pause", "resume", "stop"] {
        let r = post(&app, &beta.api_key, id, action).await;
        assert_eq!(r.status, 404, "{action}: {:?}", r.body);
    }
    assert_eq!(
        app.get(
            &format!("/v1/send-accounts/{id}/smart-warmup/status"),
            &beta.api_key
        )
        .await
        .status,
        404
    );
    let s = status(&app, &alpha, id).await;
    assert_eq!(
        (s["warmup_status"].clone(), s["persona"].clone()),
        (Value::Null, Value::Null)
    );

    let r = post(&app, key, id, "pause").await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (400, "Smart warmup is not active for this send account")
    );
    let r = post(&app, key, id, "resume").await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (400, "Smart warmup was never started for this send account")
    );
    assert_eq!(post(&app, key, id, "stop").await.status, 400);

    let r = post(&app, key, id, "start").await;
    assert_eq!(
        (r.body["warmup_status"].as_str(), r.body["status"].as_str()),
        (Some("active"), Some("warming"))
    );
    assert_eq!(post(&app, key, id, "start").await.status, 400);
    let s = status(&app, &alpha, id).await;
    assert_eq!(s["warmup_started_at"], "2026-11-21T12:00:00Z");
    assert_eq!(
        (
            s["current_daily_volume"].as_i64(),
            s["target_daily_volume"].as_i64()
        ),
        (Some(2), Some(40))
    );
    assert_eq!(s["next_ramp_up_at"], "2026-11-22T00:00:00Z");
    assert_eq!(
        s["subscriptions"],
        json!({"active": 0, "newsletters": 0, "engagement_rate": 0.0})
    );

    // Paused two days: the ramp stands still, then resumes where it was.
    assert_eq!(
        post(&app, key, id, "pause").await.body["warmup_status"],
        "paused"
    );
    assert_eq!(post(&app, key, id, "pause").await.status, 400);
    let account = app.get(&format!("/v1/send-accounts/{id}"), key).await;
    assert_eq!(
        (
            account.body["status"].as_str(),
            account.body["warmup_enabled"].as_bool()
        ),
        (Some("warming"), Some(true))
    );
    app.clock.advance(hours(48));
    assert_eq!(
        post(&app, key, id, "resume").await.body["warmup_status"],
        "active"
    );
    assert_eq!(status(&app, &alpha, id).await["current_daily_volume"], 2);
    app.clock.advance(hours(24));
    assert_eq!(status(&app, &alpha, id).await["current_daily_volume"], 4);

    let r = post(&app, key, id, "stop").await;
    assert_eq!(
        (r.body["warmup_status"].clone(), r.body["status"].as_str()),
        (Value::Null, Some("active"))
    );
    let account = app.get(&format!("/v1/send-accounts/{id}"), key).await;
    assert_eq!(
        (
            account.body["status"].as_str(),
            account.body["warmup_enabled"].as_bool()
        ),
        (Some("active"), Some(false))
    );
    assert_eq!(post(&app, key, id, "stop").await.status, 400);

    for days in ["0", "91", "x"] {
        let r = app
            .get(
                &format!("/v1/send-accounts/smart-warmup/analytics?days={days}"),
                key,
            )
            .await;
        assert_eq!(r.status, 400, "days={days}");
    }
    assert_eq!(
        app.get("/v1/send-accounts/smart-warmup/analytics?days=90", key)
            .await
            .status,
        200
    );
    assert_eq!(
        app.get("/v1/send-accounts/warmup-pool/stats", &free.api_key)
            .await
            .status,
        403
    );
}

#[tokio::test]
async fn connecting_with_warmup_enabled_joins_the_pool_and_a_pool_of_one_sends_nothing() {
    let dns = TestDns::start().await;
    dns.mx("gmail-like.test", 5, "alt1.gmail-smtp-in.l.google.com");
    let app = app(&dns, |_| {}).await;
    let (alpha, _) = two_tenants(&app).await;
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    let email = address("solo", "gmail-like.test");
    let r = app
        .post("/v1/send-accounts", &alpha.api_key, json!({
            "email": email, "smtp_host": "127.0.0.1", "smtp_port": smtp.port, "smtp_username": email,
            "smtp_password": SMTP_PASSWORD, "smtp_encryption": "none", "imap_host": "127.0.0.1",
            "imap_port": mail_peers::IMAP_PORT, "imap_password": IMAP_PASSWORD, "enable_warmup": true}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.body["status"], "warming");
    let id: i64 = r.body["id"].as_str().unwrap().parse().unwrap();
    assert_eq!(status(&app, &alpha, id).await["warmup_status"], "active");
    let stats = app
        .get("/v1/send-accounts/warmup-pool/stats", &alpha.api_key)
        .await;
    assert_eq!(
        stats.body["provider_distribution"],
        json!({"google": 100.0})
    );
    for _ in 0..3 {
        round(&app).await;
        app.clock.advance(hours(1));
    }
    assert!(
        smtp.messages().is_empty(),
        "a pool of one has nobody to write to"
    );
}

/// A member that found the pool empty sends to a partner that joins later
/// the same day, at its next tick (the e2e test's two mailboxes joining a
/// moment apart once waited for the next day).
#[tokio::test]
async fn a_member_alone_in_the_pool_writes_to_a_partner_that_joins_the_same_day() {
    let dns = TestDns::start().await;
    let app = app(&dns, |_| {}).await;
    let (alpha, beta) = two_tenants(&app).await;
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    let first = address("first", "alpha.test");
    let id_first = mailbox(&app, &alpha, &first, &smtp, IMAP_PASSWORD, 50).await;
    join(&app, &alpha, id_first).await;
    round(&app).await;
    assert!(smtp.messages().is_empty(), "nobody to write to yet");
    let later = address("later", "beta.test");
    let id_later = mailbox(&app, &beta, &later, &smtp, IMAP_PASSWORD, 50).await;
    join(&app, &beta, id_later).await;
    app.clock.advance(Duration::from_secs(
        app.state.config.smart_warmup.tick_seconds,
    ));
    round(&app).await;
    let sent = per_sender(&smtp.messages());
    assert!(
        sent.get(&first).copied().unwrap_or(0) > 0,
        "the first member waited past the partner's joining: {sent:?}"
    );
}

#[tokio::test]
async fn a_hard_bounce_at_rcpt_or_in_a_report_pauses_the_member_and_tells_only_its_owner() {
    let dns = TestDns::start().await;
    let app = app(&dns, |_| {}).await;
    let (alpha, beta) = two_tenants(&app).await;
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    let sender = address("sender", "alpha.test");
    // The capture server refuses recipients whose local part starts with "bounce".
    let gone = address("bounce", "beta.test");
    let id_sender = mailbox(&app, &alpha, &sender, &smtp, IMAP_PASSWORD, 50).await;
    let id_gone = mailbox(&app, &beta, &gone, &smtp, IMAP_PASSWORD, 50).await;
    join(&app, &alpha, id_sender).await;
    join(&app, &beta, id_gone).await;
    // Only the bouncing address is a partner: pause the other side's
    // sending by giving it no daily sends.
    sqlx::query("UPDATE send_accounts SET daily_send_limit = 0 WHERE id = $1")
        .bind(id_gone)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    round(&app).await;
    let s = status(&app, &beta, id_gone).await;
    assert_eq!(s["warmup_status"], "paused");
    assert!(s["last_error"].as_str().unwrap().contains("550"), "{s}");
    let told = outbox(&app, beta.account_id).await;
    assert_eq!(told.len(), 1);
    assert_eq!(told[0]["send_account_id"], id_gone.to_string());
    assert_eq!(told[0]["email"], gone);
    assert!(
        outbox(&app, alpha.account_id).await.is_empty(),
        "the sender's owner is not told"
    );
    assert_eq!(
        status(&app, &alpha, id_sender).await["deliverability"]["bounce_rate"],
        100.0
    );

    // A third member; a delivery report of pool mail to it arrives in the
    // sender's INBOX: a hard bounce pauses it too.
    let third = address("third", "beta.test");
    let id_third = mailbox(&app, &beta, &third, &smtp, IMAP_PASSWORD, 50).await;
    join(&app, &beta, id_third).await;
    app.clock.advance(hours(24));
    round(&app).await;
    let to_third: Vec<Captured> = smtp
        .messages()
        .into_iter()
        .filter(|m| m.to[0] == third)
        .collect();
    assert!(!to_third.is_empty());
    let token = token_of(&to_third[0]);
    let dsn = format!(
        "From: MAILER-DAEMON@mx.beta.test\r\nTo: {sender}\r\nSubject: Undelivered Mail Returned to Sender\r\n\
         Message-ID: <dsn-1@mx.beta.test>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/report; report-type=delivery-status; boundary=\"b\"\r\n\r\n\
         --b\r\nContent-Type: text/plain\r\n\r\nYour message could not be delivered.\r\n\r\n\
         --b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.beta.test\r\n\r\n\
         Final-Recipient: rfc822; {third}\r\nAction: failed\r\nStatus: 5.1.1\r\n\
         Diagnostic-Code: smtp; 550 5.1.1 <{third}>: Recipient address rejected: User unknown\r\n\r\n\
         --b\r\nContent-Type: text/rfc822-headers\r\n\r\nFrom: {sender}\r\nTo: {third}\r\nX-Outreach-Warmup: {token}\r\n\r\n--b--\r\n"
    );
    file(&sender, "INBOX", dsn.as_bytes()).await;
    app.clock.advance(hours(1));
    round(&app).await;
    assert_eq!(
        status(&app, &beta, id_third).await["warmup_status"],
        "paused"
    );
    assert_eq!(outbox(&app, beta.account_id).await.len(), 2);
    // The report is the warmup's, not the unified inbox's.
    crate::inbox::collect::poll_now(&app.state, id_sender)
        .await
        .unwrap();
    assert_eq!(
        app.get("/v1/inbox/threads", &alpha.api_key).await.body["total"],
        0
    );
}

#[tokio::test]
async fn a_wrong_imap_password_fails_the_member_after_three_tries_and_the_pool_goes_on() {
    let dns = TestDns::start().await;
    let app = app(&dns, |_| {}).await;
    let (alpha, beta) = two_tenants(&app).await;
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    let broken = mailbox(
        &app,
        &alpha,
        &address("broken", "alpha.test"),
        &smtp,
        "wrong-password",
        50,
    )
    .await;
    let a = mailbox(
        &app,
        &alpha,
        &address("a", "alpha.test"),
        &smtp,
        IMAP_PASSWORD,
        50,
    )
    .await;
    let b = mailbox(
        &app,
        &beta,
        &address("b", "beta.test"),
        &smtp,
        IMAP_PASSWORD,
        50,
    )
    .await;
    for (owner, id) in [(&alpha, broken), (&alpha, a), (&beta, b)] {
        join(&app, owner, id).await;
    }
    let mut attempts = Vec::new();
    for _ in 0..3 {
        let before = app.state.clock.now_ms();
        crate::smart_warmup::recipient::pass(&app.state)
            .await
            .unwrap();
        let next: i64 = scalar(
            &app,
            "SELECT next_scan_at FROM smart_warmup_members WHERE send_account_id = $1",
            broken,
        )
        .await;
        attempts.push(next - before);
        app.clock.advance(std::time::Duration::from_secs(30));
    }
    assert_eq!(&attempts[..2], &[30_000, 30_000], "retried 30 s apart");
    let s = status(&app, &alpha, broken).await;
    assert_eq!(s["warmup_status"], "failed", "{s}");
    assert!(
        s["last_error"]
            .as_str()
            .unwrap()
            .contains("IMAP login failed"),
        "{s}"
    );
    let account = app
        .get(&format!("/v1/send-accounts/{broken}"), &alpha.api_key)
        .await;
    assert_eq!(account.body["status"], "error");
    // The other two go on with each other, never with the failed member.
    crate::smart_warmup::exchange::pass(&app.state)
        .await
        .unwrap();
    let sent = smtp.messages();
    assert_eq!(sent.len(), 4);
    assert!(sent.iter().all(|m| !m.to[0].starts_with("broken")));
    // Resuming a failed member tries again from scratch.
    assert_eq!(
        post(&app, &alpha.api_key, broken, "resume").await.body["warmup_status"],
        "active"
    );
}

#[tokio::test]
async fn messages_are_written_on_the_accounts_ai_key_and_share_the_daily_limit_with_sequences() {
    let dns = TestDns::start().await;
    let stub = Stub::start().await;
    let app = app(&dns, |_| {}).await;
    let (alpha, beta) = two_tenants(&app).await;
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    let a = mailbox(
        &app,
        &alpha,
        &address("writer", "alpha.test"),
        &smtp,
        IMAP_PASSWORD,
        10,
    )
    .await;
    let b = mailbox(
        &app,
        &beta,
        &address("reader", "beta.test"),
        &smtp,
        IMAP_PASSWORD,
        10,
    )
    .await;
    stub.set(
        "/llm/v1/chat/completions",
        Canned::json(200, json!({"model": "warm-model", "choices": [{"message": {"role": "assistant",
            "content": "Subject: Lunch on Friday\n\nHi Reader,\n\nAre we still on for lunch on Friday? I found a new place near the office.\n\nBest,\nWriter"},
            "finish_reason": "stop"}], "usage": {"prompt_tokens": 90, "completion_tokens": 40}})),
    );
    let compatible = catalogue::providers(&app.state, Family::Ai)
        .into_iter()
        .find(|p| p.supports_endpoint_url == Some(true))
        .unwrap()
        .provider;
    let k = app
        .post(
            "/v1/ai/providers",
            &alpha.api_key,
            json!({"provider": compatible, "api_key": "local-key-123",
            "validation_model": "warm-model", "endpoint_url": stub.url("/llm")}),
        )
        .await;
    assert_eq!(k.status, 201, "{:?}", k.body);
    join(&app, &alpha, a).await;
    join(&app, &beta, b).await;
    // Sequences already sent 9 of the writer's 10 today.
    sqlx::query("UPDATE send_accounts SET emails_sent_today = 9, sent_day = $1 WHERE id = $2")
        .bind(crate::send_accounts::service::today(&app.state))
        .bind(a)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    crate::smart_warmup::exchange::pass(&app.state)
        .await
        .unwrap();
    let from_writer: Vec<Captured> = smtp
        .messages()
        .into_iter()
        .filter(|m| m.from.starts_with("writer"))
        .collect();
    assert_eq!(
        from_writer.len(),
        1,
        "one send was left under the daily limit"
    );
    assert_eq!(
        scalar(
            &app,
            "SELECT emails_sent_today FROM send_accounts WHERE id = $1",
            a
        )
        .await,
        10
    );
    assert_eq!(from_writer[0].header("Subject").unwrap(), "Lunch on Friday");
    assert!(from_writer[0].data.contains("Are we still on for lunch"));
    // The reader has no AI key: the phrase bank wrote its two.
    assert_eq!(smtp.messages().len(), 3);
    let calls = scalar(&app, "SELECT COUNT(*) FROM vendor_calls WHERE account_id = $1 AND action_type = 'warmup_pool_generator' AND success = 1", alpha.account_id).await;
    assert!(calls >= 1);
    crate::smart_warmup::stats::refresh(&app.state, true)
        .await
        .unwrap();
    let r = app
        .get("/v1/send-accounts/smart-warmup/analytics", &alpha.api_key)
        .await;
    let costs = &r.body["generation_costs"];
    assert_eq!(
        (
            costs["total_emails_generated"].as_i64(),
            costs["ai_tokens_used"].as_i64()
        ),
        (Some(1), Some(130))
    );
    assert_eq!(costs["period_end"], "2026-11-21");
}
