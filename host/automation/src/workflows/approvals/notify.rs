//! Announcing an approval: one job per channel on the
//! `workflow_approval_notice` queue, queued with the approval. Email goes
//! through the server's `[smtp]`, Slack through the outbound policy (the
//! URL is the user's). A failed attempt is retried after 30 s, 2 min,
//! 10 min and 1 h; the link stays in the run record either way.

use std::time::Duration;

use serde_json::{Value, json};
use sqlx::AnyConnection;

use super::service::{approval_url, open_token, sealed_as};
use super::store::{self, ApprovalRow};
use outreach_core::platform::clock::iso;
use outreach_core::platform::jobs::{ClaimedJob, JobFailure, JobQueue, NewJob};
use outreach_core::platform::slack::SlackClient;
use outreach_core::state::AppState;
use outreach_core::store::Backend;

pub const QUEUE: &str = "workflow_approval_notice";
const RETRIES: [Duration; 4] = [
    Duration::from_secs(30),
    Duration::from_secs(120),
    Duration::from_secs(600),
    Duration::from_secs(3600),
];
const LEASE: Duration = Duration::from_secs(60);
/// Domains an announcement lists; the page lists more.
const LISTED: usize = 20;

pub async fn enqueue(
    conn: &mut AnyConnection,
    backend: Backend,
    approval_id: i64,
    channels: &[&str],
    now: i64,
) -> sqlx::Result<()> {
    let jobs: Vec<NewJob> = channels
        .iter()
        .map(|channel| NewJob {
            idempotency_key: Some(format!("{approval_id}:{channel}")),
            max_attempts: 1 + RETRIES.len() as i64,
            ..NewJob::new(
                QUEUE,
                json!({"approval_id": approval_id, "channel": channel}),
            )
        })
        .collect();
    JobQueue::enqueue_many_on(conn, backend, &jobs, now).await?;
    Ok(())
}

fn fail(reason: impl Into<String>, retry: bool) -> JobFailure {
    JobFailure::new(reason, retry)
}

/// The subject and the plain-text body both channels send.
fn announcement(row: &ApprovalRow, link: &str) -> (String, String) {
    let subject = format!("Approval needed: workflow \"{}\"", row.workflow_name);
    let mut lines: Vec<String> = row
        .items
        .iter()
        .take(LISTED)
        .filter_map(|i| i.get("domain").and_then(Value::as_str))
        .map(|d| format!("- {d}"))
        .collect();
    if row.items.len() > LISTED {
        lines.push(format!("... and {} more", row.items.len() - LISTED));
    }
    let body = format!(
        "{}\n\n{} domain(s) wait for a decision:\n{}\n\nApprove or reject: {link}\n\
         The link expires at {}.\n",
        row.message,
        row.items.len(),
        lines.join("\n"),
        iso(row.expires_at),
    );
    (subject, body)
}

async fn handle(state: &AppState, job: &ClaimedJob) -> Result<(), JobFailure> {
    let id = job.payload["approval_id"].as_i64().unwrap_or(0);
    let channel = job.payload["channel"].as_str().unwrap_or("");
    let mut conn = state
        .db
        .pool
        .acquire()
        .await
        .map_err(|e| fail(e.to_string(), true))?;
    let row = store::by_id(&mut conn, id)
        .await
        .map_err(|e| fail(e.to_string(), true))?
        .ok_or_else(|| fail("the approval is gone", false))?;
    drop(conn);
    if row.decision.is_some() {
        return Ok(()); // decided before it was announced: nothing to ask
    }
    let token = open_token(state, &row).map_err(|_| fail("the link could not be opened", false))?;
    let target: Value = state
        .secrets
        .decrypt(
            &sealed_as(row.run_id, row.action_index, "target"),
            &row.target_sealed,
        )
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| fail("the recipient could not be opened", false))?;
    let link = approval_url(state, &token);
    let (subject, body) = announcement(&row, &link);
    match channel {
        "email" => {
            if state.config.smtp.host.is_empty() {
                return Err(fail("no [smtp] configured", false));
            }
            let to = target["email"]
                .as_str()
                .ok_or_else(|| fail("no email address", false))?;
            state
                .mailer
                .send(to, &subject, &body)
                .await
                .map_err(|e| fail(format!("{e:#}"), true))?;
        }
        "slack" => {
            let url = target["slack_url"]
                .as_str()
                .ok_or_else(|| fail("no Slack URL", false))?;
            let payload = json!({
                "text": format!("*{subject}*\n{body}"),
                "blocks": [
                    {"type": "section", "text": {"type": "mrkdwn", "text": format!("*{subject}*\n{body}")}},
                    {"type": "actions", "elements": [{"type": "button",
                        "text": {"type": "plain_text", "text": "Open the approval page"}, "url": link}]},
                ],
            });
            state.ext::<SlackClient>().post(url, &payload).await?;
        }
        other => return Err(fail(format!("unknown channel {other}"), false)),
    }
    let mut conn = state
        .db
        .pool
        .acquire()
        .await
        .map_err(|e| fail(e.to_string(), true))?;
    store::mark_notified(&mut conn, row.id, state.clock.now_ms())
        .await
        .map_err(|e| fail(e.to_string(), true))
}

/// Sends the due announcements once; answers how many it attempted.
pub async fn run_once(state: &AppState, owner: &str) -> anyhow::Result<usize> {
    state
        .jobs
        .work_once(QUEUE, owner, LEASE, 20, &RETRIES, |job| async move {
            handle(state, &job).await
        })
        .await
}

/// The announcement worker `serve` starts.
pub fn start(state: &AppState) {
    let state = state.clone();
    tokio::spawn(async move {
        let owner = format!("approvals-{}", uuid::Uuid::new_v4().simple());
        let (state, owner) = (&state, owner.as_str());
        JobQueue::keep_working("approval announcements", || run_once(state, owner)).await;
    });
}
