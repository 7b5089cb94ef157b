//! A simulated week of three accounts of two tenants.

use std::collections::HashMap;

use super::*;
use crate::smart_warmup::recipient::{FLAG_RATE, READ_RATE};
use crate::smart_warmup::writing::chance;

#[tokio::test]
async fn three_accounts_of_two_tenants_exchange_rescue_and_answer_over_a_week() {
    let dns = TestDns::start().await;
    dns.mx("alpha.test", 10, "aspmx.l.google.com");
    let app = app(&dns, |c| {
        c.smart_warmup.start_volume = 2;
        c.smart_warmup.daily_increase = 2;
        c.smart_warmup.target_volume = 6;
        c.smart_warmup.hold_days = 2;
    })
    .await;
    let (alpha, beta) = two_tenants(&app).await;
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    let (a1, a2, b1) = (
        address("a1", "alpha.test"),
        address("a2", "alpha.test"),
        address("b1", "beta.test"),
    );
    // a1's server has a SPECIAL-USE \Junk folder, a2's a folder named
    // Spam, b1's none (and b1's server strips unknown headers).
    create_folder(&a1, "Junk").await;
    create_folder(&a2, "Spam").await;
    let sequence_mail = format!(
        "From: {a2}\r\nTo: {a1}\r\nSubject: Our pricing\r\nMessage-ID: <seq-1@alpha.test>\r\n\r\nHi, a sequence email.\r\n"
    );
    file(&a1, "Junk", sequence_mail.as_bytes()).await;
    let id_a1 = mailbox(&app, &alpha, &a1, &smtp, IMAP_PASSWORD, 5).await;
    let id_a2 = mailbox(&app, &alpha, &a2, &smtp, IMAP_PASSWORD, 50).await;
    let id_b1 = mailbox(&app, &beta, &b1, &smtp, IMAP_PASSWORD, 50).await;
    for (owner, id) in [(&alpha, id_a1), (&alpha, id_a2), (&beta, id_b1)] {
        join(&app, owner, id).await;
    }
    let s = status(&app, &alpha, id_a1).await;
    assert_eq!(
        (
            s["warmup_status"].as_str(),
            s["current_daily_volume"].as_i64()
        ),
        (Some("active"), Some(2))
    );
    let route = |m: &Captured| {
        let to = m.to[0].as_str();
        if to == a1 && m.from == b1 {
            Filing::Folder("Junk")
        } else if to == a2 && m.from == a1 {
            Filing::Folder("Spam")
        } else if to == b1 {
            Filing::StrippedInbox
        } else {
            Filing::Inbox
        }
    };

    let mut delivered = 0;
    let mut days: Vec<HashMap<String, usize>> = Vec::new();
    let mut all: Vec<Captured> = Vec::new();
    for day in 0..5 {
        let mut today: Vec<Captured> = Vec::new();
        for _ in 0..6 {
            round(&app).await;
            today.extend(deliver(&smtp, &mut delivered, &route).await);
            let sent_today = scalar(
                &app,
                "SELECT emails_sent_today FROM send_accounts WHERE id = $1",
                id_a1,
            )
            .await;
            assert!(
                sent_today <= 5,
                "day {day}: a1 sent {sent_today}, over its daily limit"
            );
            app.clock.advance(hours(1) / 2);
        }
        days.push(per_sender(&today));
        all.extend(today);
        app.clock.advance(hours(21));
    }
    // The last messages are read too.
    round(&app).await;

    // The ramp, day by day: 2, 4, 6, 6 (a1 held to its daily limit of 5),
    // then the target has held two days and the warmup is completed.
    let volumes = |who: &str| {
        days.iter()
            .map(|d| d.get(who).copied().unwrap_or(0))
            .collect::<Vec<_>>()
    };
    assert_eq!(volumes(&a1), vec![2, 4, 5, 5, 0]);
    assert_eq!(volumes(&a2), vec![2, 4, 6, 6, 0]);
    assert_eq!(volumes(&b1), vec![2, 4, 6, 6, 0]);
    // Never to itself, never outside the pool.
    let members = [a1.as_str(), a2.as_str(), b1.as_str()];
    for m in &all {
        assert_ne!(m.from, m.to[0]);
        assert!(members.contains(&m.to[0].as_str()), "{:?}", m.to);
        assert!(m.header("X-Outreach-Warmup").is_some());
    }

    // Replies thread: In-Reply-To names an earlier message between the same
    // two mailboxes, the subject is its "Re:".
    let by_id: HashMap<String, &Captured> = all
        .iter()
        .map(|m| (m.header("Message-ID").unwrap(), m))
        .collect();
    let replies: Vec<&Captured> = all
        .iter()
        .filter(|m| m.header("In-Reply-To").is_some())
        .collect();
    assert!(replies.len() >= 3, "{} replies", replies.len());
    for r in &replies {
        let parent = by_id[&r.header("In-Reply-To").unwrap()];
        assert_eq!(
            (parent.from.as_str(), parent.to[0].as_str()),
            (r.to[0].as_str(), r.from.as_str())
        );
        let subject = parent.header("Subject").unwrap();
        let expected = if subject.starts_with("Re: ") {
            subject
        } else {
            format!("Re: {subject}")
        };
        assert_eq!(r.header("Subject").unwrap(), expected);
        assert!(
            r.header("References")
                .unwrap()
                .ends_with(&parent.header("Message-ID").unwrap())
        );
    }

    // Rescued from spam: the folders hold only the sequence email, the
    // inboxes every pool message, read and flagged at the documented rates.
    let junk = folder(&a1, "Junk").await;
    assert_eq!(junk.len(), 1);
    assert!(junk[0].0.contains("a sequence email"));
    assert!(folder(&a2, "Spam").await.is_empty());
    for (who, id) in [(&a1, id_a1), (&a2, id_a2), (&b1, id_b1)] {
        let inbox = folder(who, "INBOX").await;
        let sent_to: Vec<&Captured> = all.iter().filter(|m| &m.to[0] == who).collect();
        assert_eq!(inbox.len(), sent_to.len(), "{who}");
        for (raw, flags) in &inbox {
            let token = crate::smart_warmup::writing::tokens_in(raw.as_bytes())[0].clone();
            let seen = flags.iter().any(|f| f == "Seen");
            let flagged = flags.iter().any(|f| f == "Flagged");
            assert_eq!(seen, chance(&token, "read") < READ_RATE, "{flags:?}");
            assert_eq!(flagged, chance(&token, "flag") < FLAG_RATE, "{flags:?}");
        }
        let found = scalar(&app, "SELECT COUNT(*) FROM smart_warmup_messages WHERE recipient_id = $1 AND placement IS NOT NULL", id).await;
        assert_eq!(
            found as usize,
            sent_to.len(),
            "{who}: every message found, marker or not"
        );
    }
    let spam_filed = all
        .iter()
        .filter(|m| (m.to[0] == a1 && m.from == b1) || (m.to[0] == a2 && m.from == a1))
        .count();
    let spam_found = scalar(
        &app,
        "SELECT COUNT(*) FROM smart_warmup_messages WHERE placement = 'spam' AND sender_id > $1",
        0,
    )
    .await;
    assert_eq!(spam_found as usize, spam_filed);
    assert!(spam_filed > 0);

    // Nothing reaches the unified inbox, even when it polls these mailboxes.
    for id in [id_a1, id_a2, id_b1] {
        crate::inbox::collect::poll_now(&app.state, id)
            .await
            .unwrap();
    }
    for owner in [&alpha, &beta] {
        let r = app.get("/v1/inbox/threads", &owner.api_key).await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        assert_eq!(r.body["total"].as_i64(), Some(0), "{:?}", r.body);
    }

    // The status: completed, against what the peers hold.
    let s = status(&app, &alpha, id_a1).await;
    assert_eq!(s["warmup_status"], "completed");
    assert_eq!(s["warmup_progress_pct"], 100.0);
    assert_eq!(s["pool_count"], 2);
    let a1_sent: Vec<&Captured> = all.iter().filter(|m| m.from == a1).collect();
    let a1_spam = a1_sent.iter().filter(|m| m.to[0] == a2).count();
    let expected_inbox =
        ((a1_sent.len() - a1_spam) as f64 * 1000.0 / a1_sent.len() as f64).round() / 10.0;
    assert_eq!(
        s["deliverability"]["inbox_rate"].as_f64(),
        Some(expected_inbox),
        "{s}"
    );
    assert_eq!(s["deliverability"]["bounce_rate"].as_f64(), Some(0.0));
    assert!(s["persona"]["name"].is_string() && s["persona"]["tone"].is_string());
    let account = app
        .get(&format!("/v1/send-accounts/{id_a1}"), &alpha.api_key)
        .await;
    assert_eq!(
        (
            account.body["status"].as_str(),
            account.body["warmup_progress_pct"].as_f64()
        ),
        (Some("active"), Some(100.0))
    );

    // The pool, aggregated: counts and rates only.
    let r = app
        .get("/v1/send-accounts/warmup-pool/stats", &alpha.api_key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["pool_size"], 3);
    assert_eq!(r.body["your_accounts_in_pool"], 2);
    assert_eq!(
        r.body["provider_distribution"],
        json!({"google": 66.7, "other": 33.3})
    );
    assert!(
        !r.body.to_string().contains(&b1),
        "no other tenant's address"
    );
    let r = app
        .get("/v1/send-accounts/warmup-pool/stats", &beta.api_key)
        .await;
    assert_eq!(r.body["your_accounts_in_pool"], 1);

    // The analytics come from the roll-up: nothing before a refresh.
    let r = app
        .get(
            "/v1/send-accounts/smart-warmup/analytics?days=7",
            &alpha.api_key,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["generation_costs"]["total_emails_generated"], 0);
    crate::smart_warmup::stats::refresh(&app.state, true)
        .await
        .unwrap();
    let r = app
        .get(
            "/v1/send-accounts/smart-warmup/analytics?days=7",
            &alpha.api_key,
        )
        .await;
    let alpha_sent = all.iter().filter(|m| m.from == a1 || m.from == a2).count() as i64;
    assert_eq!(
        r.body["generation_costs"]["total_emails_generated"],
        alpha_sent
    );
    let providers = r.body["provider_deliverability"].as_array().unwrap();
    let to_beta = all
        .iter()
        .filter(|m| (m.from == a1 || m.from == a2) && m.to[0] == b1)
        .count() as i64;
    let other = providers.iter().find(|p| p["provider"] == "other").unwrap();
    assert_eq!(
        (
            other["sent"].as_i64(),
            other["delivered"].as_i64(),
            other["bounced"].as_i64()
        ),
        (Some(to_beta), Some(to_beta), Some(0))
    );
    let google = providers
        .iter()
        .find(|p| p["provider"] == "google")
        .unwrap();
    assert_eq!(google["sent"].as_i64(), Some(alpha_sent - to_beta));
    assert!(
        r.body["conversation_stats"]["total_conversations"]
            .as_i64()
            .unwrap()
            > 0
    );
    assert_eq!(r.body["subscription_health"]["active_subscriptions"], 0);
    assert_eq!(r.body["pool_stats"]["total_accounts"], 2);
    let r = app
        .get(
            "/v1/send-accounts/smart-warmup/analytics?provider=google",
            &beta.api_key,
        )
        .await;
    let beta_to_google = all.iter().filter(|m| m.from == b1).count() as i64;
    assert_eq!(
        r.body["provider_deliverability"][0]["sent"].as_i64(),
        Some(beta_to_google)
    );
    assert_eq!(
        r.body["provider_deliverability"].as_array().unwrap().len(),
        1
    );
}
