//! Smart warmup benchmark: 1,000 pool members at full volume (40 messages
//! a day each, spread over the working hours) through one simulated day on
//! embedded SQLite, the injected clock moved one tick (60 s) at a time
//! (run by `tests/bench/smart_warmup.sh` in release mode; not a test).
//!
//! Every message is written, recorded and sent over SMTP to Postfix's
//! smtp-sink (`tests/support/mail.sh`), which accepts and discards. The
//! reference, measured in the same run against the same sink, is bare SMTP:
//! the same number of messages over one connection with the same lettre
//! transaction, nothing written. Prints messages per second of both and
//! their ratio, the exchange pass's time per tick, and peak RSS.

use std::time::{Duration, Instant};

use outreach_core::accounts::Plan;
use outreach_core::testing::{TestApp, mail_peers};
use outreach_outbound::send_accounts::store::{self as send_accounts, SendAccountRow};
use outreach_outbound::smart_warmup::{exchange, service, store};

fn members() -> usize {
    std::env::var("WARMUP_BENCH_MEMBERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000)
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Bare SMTP to the sink: `n` messages over one connection.
async fn reference(app: &TestApp, n: usize) -> f64 {
    use lettre::message::Mailbox;
    let server = outreach_outbound::mail::MailServer {
        host: "127.0.0.1".into(),
        port: mail_peers::SMTP_PORT,
        username: "bench".into(),
        password: "bench".into(),
    };
    let mut conn = outreach_outbound::mail::connect_smtp(
        &app.state.outbound,
        &server,
        outreach_outbound::mail::Encryption::None,
        Duration::from_secs(30),
    )
    .await
    .expect("smtp-sink answers on 127.0.0.1:12525 (tests/support/mail.sh)");
    let started = Instant::now();
    for i in 0..n {
        let m = lettre::Message::builder()
            .from(Mailbox::new(None, "ref-a@bench.test".parse().unwrap()))
            .to(Mailbox::new(None, "ref-b@bench.test".parse().unwrap()))
            .subject(format!("Reference {i}"))
            .body(format!(
                "Hi,\n\nA reference message of about the same size, number {i}.\n\nBest,\nSam\n"
            ))
            .unwrap();
        let envelope = m.envelope().clone();
        let r =
            outreach_outbound::sender::lanes::send_on(&mut conn, &envelope, &m.formatted()).await;
        assert!(
            matches!(r, outreach_outbound::sender::record::SmtpResult::Delivered),
            "the sink accepted the reference message"
        );
    }
    n as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let n = members();
    let app = TestApp::with_areas(&[outreach_vendors::AREA, outreach_outbound::AREA], |c| {
        c.smart_warmup.start_volume = 40;
        c.smart_warmup.target_volume = 40;
        c.smart_warmup.hold_days = 30;
        c.log = "error".into();
    })
    .await;
    // Midnight of the simulated day.
    app.clock.set(
        chrono::DateTime::parse_from_rfc3339("2026-11-22T00:00:00Z")
            .unwrap()
            .into(),
    );
    let now = app.state.clock.now_ms();
    let mut tenants = Vec::new();
    for _ in 0..10 {
        tenants.push(app.account(Plan::Enterprise).await);
    }
    let creds = serde_json::json!({"smtp_username": "bench", "smtp_password": "bench",
        "imap_username": "bench", "imap_password": "bench"})
    .to_string();
    for i in 0..n {
        let owner = &tenants[i % tenants.len()];
        let email = format!("member{i}@pool{}.test", i % 50);
        let row = SendAccountRow {
            id: 0,
            account_id: owner.account_id,
            email: email.clone(),
            display_name: None,
            provider: "smtp".into(),
            status: "active".into(),
            warmup_enabled: false,
            warmup_progress_pct: 0.0,
            daily_send_limit: 50,
            emails_sent_today: 0,
            sent_day: 0,
            smtp_host: "127.0.0.1".into(),
            smtp_port: mail_peers::SMTP_PORT as i64,
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
        let (secrets, creds) = (app.state.secrets.clone(), creds.clone());
        let id = send_accounts::insert(&app.state.db, &row, move |id| {
            secrets.encrypt(&format!("send_account:{id}"), &creds)
        })
        .await
        .unwrap()
        .unwrap();
        let mut member = store::NewMember {
            send_account_id: id,
            account_id: owner.account_id,
            email,
            persona: outreach_outbound::smart_warmup::writing::persona(&row.email, None),
            provider: service::provider_of_exchanges(&[]),
            now,
        };
        member.now = now;
        let mut conn = app.state.db.pool.acquire().await.unwrap();
        store::insert_member(&mut conn, &member).await.unwrap();
    }

    let tick = Duration::from_secs(app.state.config.smart_warmup.tick_seconds);
    let ticks = 86_400 / tick.as_secs() as usize;
    let mut busy = Vec::new();
    let mut idle = Vec::new();
    let mut sent = 0;
    let started = Instant::now();
    for _ in 0..ticks {
        let t = Instant::now();
        let n = exchange::pass(&app.state).await.unwrap();
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if n > 0 {
            busy.push(ms)
        } else {
            idle.push(ms)
        }
        sent += n;
        app.clock.advance(tick);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let rate = sent as f64 / elapsed;
    let reference = reference(&app, 5000.min(sent.max(1))).await;
    busy.sort_by(f64::total_cmp);
    idle.sort_by(f64::total_cmp);
    println!(
        "smart warmup: {n} members, one simulated day in {ticks} ticks of {} s",
        tick.as_secs()
    );
    println!("  messages sent: {sent} in {elapsed:.1} s = {rate:.0} messages/s");
    println!("  reference (bare SMTP to the same sink, one connection): {reference:.0} messages/s");
    println!("  ratio: {:.2}", rate / reference);
    if !busy.is_empty() {
        println!(
            "  exchange pass, ticks that sent ({}): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            busy.len(),
            percentile(&busy, 0.5),
            percentile(&busy, 0.99),
            busy[busy.len() - 1]
        );
    }
    if !idle.is_empty() {
        println!(
            "  exchange pass, ticks with nothing due ({}): p50 {:.2} ms, p99 {:.2} ms",
            idle.len(),
            percentile(&idle, 0.5),
            percentile(&idle, 0.99)
        );
    }
    println!("  peak RSS: {:.0} MiB", peak_rss_mib());
}
