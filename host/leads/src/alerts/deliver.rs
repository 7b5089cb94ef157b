//! Delivering alert history entries by email (to the account owner,
//! through the server's `[smtp]`) and to Slack (an incoming webhook,
//! through the outbound policy). One job per entry and channel on the
//! `alert_delivery` queue, written with the entry; a failed attempt is
//! retried after 30 s, 2 min, 10 min and 1 h, then left undelivered. A
//! channel never waits for another: each is its own job.

use std::time::Duration;

use serde_json::json;
use sqlx::AnyConnection;

use super::service::slack_aad;
use super::store::{self, HistoryRow, RuleRow};
use outreach_core::platform::jobs::{ClaimedJob, JobFailure as Failure, JobQueue, NewJob};
use outreach_core::platform::slack::SlackClient;
use outreach_core::state::AppState;
use outreach_core::store::Backend;

pub const QUEUE: &str = "alert_delivery";
/// Waits before the retries: spec/2's webhook schedule without its 6 h.
const RETRIES: [Duration; 4] = [
    Duration::from_secs(30),
    Duration::from_secs(120),
    Duration::from_secs(600),
    Duration::from_secs(3600),
];
const LEASE: Duration = Duration::from_secs(60);
/// Queues the rule's email and Slack deliveries of entry `history_id` on
/// `conn`, the transaction that records the entry.
pub async fn enqueue(
    conn: &mut AnyConnection,
    backend: Backend,
    rule: &RuleRow,
    history_id: i64,
    now: i64,
) -> sqlx::Result<()> {
    let jobs: Vec<NewJob> = [("email", rule.via_email), ("slack", rule.via_slack)]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(channel, _)| NewJob {
            idempotency_key: Some(format!("{history_id}:{channel}")),
            max_attempts: 1 + RETRIES.len() as i64,
            ..NewJob::new(QUEUE, json!({"history_id": history_id, "channel": channel}))
        })
        .collect();
    JobQueue::enqueue_many_on(conn, backend, &jobs, now).await?;
    Ok(())
}

/// The lines both channels send.
fn summary(entry: &HistoryRow) -> (String, String) {
    let n = entry.matched_domains.len();
    let subject = format!(
        "Alert \"{}\": {n} new matching domain{}",
        entry.alert_name,
        if n == 1 { "" } else { "s" }
    );
    let lines: Vec<String> = entry
        .matched_domains
        .iter()
        .map(|d| format!("- {} (intent {}, {})", d.domain, d.intent_score, d.level))
        .collect();
    (subject, lines.join("\n"))
}

fn fail(reason: impl Into<String>, retry: bool) -> Failure {
    Failure::new(reason, retry)
}

async fn send_email(state: &AppState, entry: &HistoryRow) -> Result<(), Failure> {
    if state.config.smtp.host.is_empty() {
        let (subject, body) = summary(entry);
        tracing::info!(
            history_id = entry.id,
            subject,
            body,
            "alert email not sent: no [smtp] configured"
        );
        return Err(fail("no [smtp] configured", false));
    }
    let to = store::owner_email(&state.db, entry.account_id)
        .await
        .map_err(|e| fail(e.to_string(), true))?
        .ok_or_else(|| fail("the account has no user to write to", false))?;
    let (subject, body) = summary(entry);
    let body = format!("{body}\n\nEvery alert is also in GET /v1/alerts/history.\n");
    state
        .mailer
        .send(&to, &subject, &body)
        .await
        .map_err(|e| fail(format!("{e:#}"), true))
}

async fn send_slack(state: &AppState, entry: &HistoryRow) -> Result<(), Failure> {
    let mut conn = state
        .db
        .pool
        .acquire()
        .await
        .map_err(|e| fail(e.to_string(), true))?;
    let rule = store::get(&mut conn, entry.account_id, entry.alert_id)
        .await
        .map_err(|e| fail(e.to_string(), true))?;
    drop(conn);
    let sealed = rule
        .and_then(|r| r.slack_webhook_url)
        .ok_or_else(|| fail("the rule or its Slack URL is gone", false))?;
    let url = state
        .secrets
        .decrypt(&slack_aad(entry.alert_id), &sealed)
        .map_err(|_| fail("the Slack URL could not be opened", false))?;
    let (subject, body) = summary(entry);
    let payload = json!({"text": format!("*{subject}*\n{body}")});
    state.ext::<SlackClient>().post(&url, &payload).await
}

async fn handle(state: &AppState, job: &ClaimedJob) -> Result<(), Failure> {
    let history_id = job.payload["history_id"].as_i64().unwrap_or(0);
    let channel = job.payload["channel"].as_str().unwrap_or("");
    let entry = store::history_entry(&state.db, history_id)
        .await
        .map_err(|e| fail(e.to_string(), true))?
        .ok_or_else(|| fail("the history entry is gone", false))?;
    match channel {
        "email" => send_email(state, &entry).await?,
        "slack" => send_slack(state, &entry).await?,
        other => return Err(fail(format!("unknown channel {other}"), false)),
    }
    store::mark_delivered(&state.db, history_id, channel)
        .await
        .map_err(|e| fail(e.to_string(), true))
}

/// Attempts the due deliveries once; returns how many it attempted.
pub async fn run_once(state: &AppState, owner: &str) -> anyhow::Result<usize> {
    state
        .jobs
        .work_once(QUEUE, owner, LEASE, 20, &RETRIES, |job| async move {
            handle(state, &job).await
        })
        .await
}

/// The delivery worker `serve` starts.
pub async fn run(state: AppState) {
    let owner = format!("alerts-{}", uuid::Uuid::new_v4().simple());
    let (state, owner) = (&state, owner.as_str());
    JobQueue::keep_working("alert delivery pass failed", || run_once(state, owner)).await;
}
