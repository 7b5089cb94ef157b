//! Recording SMTP answers. Lanes hand each answer to one writer task that
//! commits whatever has arrived in one transaction (a group commit) and
//! then releases the lanes, so each connection waits for its own message's
//! record before it carries the next, and a busy server still writes in
//! batches.
//!
//! - Delivered (250): the message becomes `sent`, `sent` and `delivered`
//!   events are recorded and the enrollment moves to its next step, due the
//!   next step's delays after the send, or is `completed` (with
//!   `sequence.completed`) when the step was its last.
//! - Bounced (a permanent refusal of the recipient or the message): `sent`
//!   and `bounced` events, the enrollment `bounced`, the address suppressed
//!   (reason bounce), `sequence.bounced`, and the bounce-rate auto-pause.
//! - Deferred (a temporary failure): the message waits as `deferred`, its
//!   reservation of today's counters is released and the enrollment is due
//!   again in [`RETRY_MS`].
//! - Account failed (the mailbox refused our login or sender): as deferred,
//!   and the send account moves to status `error` with the server's words.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::{AnyConnection, Row};
use tokio::sync::{mpsc, oneshot};

use super::journal::Journal;
use super::plan::ERROR_RETRY_MS;
use super::store::reserve_mailbox;
use super::{WriteGate, Writing};
use crate::sequence_events::{self, Kind, NewEvent, add_to_day};
use crate::suppression::{address, store as suppression};
use outreach_core::events::{self, EventType};
use outreach_core::store::{Backend, Db, id_list, typed_value_rows, value_rows};
use std::sync::Arc;

/// A temporarily failed send is tried again after this long.
pub const RETRY_MS: i64 = 10 * 60 * 1000;

/// Sends a sequence needs before its bounce rate can pause it (issue text).
pub const AUTO_PAUSE_MIN_SENDS: i64 = 20;

/// How often a send account's activity time is written while it delivers.
const TOUCH_MS: i64 = 60_000;

/// Answers written per transaction.
const BATCH: usize = 256;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SmtpResult {
    Delivered,
    Bounced(String),
    Deferred(String),
    AccountFailed(String),
}

/// One send's answer and what recording it needs (also a line of the
/// delivery journal).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    pub message_row_id: i64,
    pub account_id: i64,
    pub sequence_id: i64,
    pub enrollment_id: i64,
    pub step_id: i64,
    pub variant: Option<String>,
    pub send_account_id: i64,
    pub reserved_day: Option<i64>,
    pub to_email: String,
    pub next_delay_ms: Option<i64>,
    pub subject: String,
    pub links: Vec<String>,
    pub result: SmtpResult,
    pub at: i64,
    /// The journal segment holding this answer, when journaled.
    #[serde(skip)]
    pub journal_segment: Option<u64>,
}

type Pending = (Outcome, oneshot::Sender<()>);

/// The handle lanes record through.
#[derive(Clone)]
pub struct Recorder {
    tx: mpsc::Sender<Pending>,
}

impl Recorder {
    /// Starts the writer task on `db`; it tells `journal` what it commits.
    pub fn start(db: Db, write_gate: WriteGate, journal: Option<Arc<Journal>>) -> Recorder {
        let (tx, rx) = mpsc::channel(4096);
        tokio::spawn(writer(db, rx, write_gate, journal));
        Recorder { tx }
    }

    /// Queues `o` for the next group commit; `done` is told once it is
    /// committed. Returns at once.
    pub async fn hand_over(&self, o: Outcome, done: oneshot::Sender<()>) {
        let _ = self.tx.send((o, done)).await;
    }

    /// Records `o`; returns once it is committed (or given up on).
    pub async fn record(&self, o: Outcome) {
        self.submit(o).await.wait().await;
    }

    /// Queues `o` for the next group commit and returns without waiting
    /// for it, so a lane can talk to the server meanwhile.
    pub async fn submit(&self, o: Outcome) -> Committing {
        let (done, wait) = oneshot::channel();
        self.hand_over(o, done).await;
        Committing(wait)
    }
}

/// A submitted answer on its way to the database.
pub struct Committing(oneshot::Receiver<()>);

impl Committing {
    /// Returns once the answer is committed (or given up on: a stopped
    /// writer drops the sender, which ends the wait too).
    pub async fn wait(self) {
        let _ = self.0.await;
    }
}

async fn writer(
    db: Db,
    mut rx: mpsc::Receiver<Pending>,
    write_gate: WriteGate,
    journal: Option<Arc<Journal>>,
) {
    let mut touched: HashMap<i64, i64> = HashMap::new();
    while let Some(first) = rx.recv().await {
        // Answers that arrive while the gate is taken join this batch.
        let mut gate = write_gate.enter(&db).await;
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        let outcomes: Vec<Outcome> = batch.iter().map(|(o, _)| o.clone()).collect();
        // A refused login or sender may have set the account's error: the
        // next delivery through it clears it whatever the minute.
        for o in &outcomes {
            if matches!(o.result, SmtpResult::AccountFailed(_)) {
                touched.remove(&o.send_account_id);
            }
        }
        let mut touch: Vec<(i64, i64)> = outcomes
            .iter()
            .filter(|o| o.result == SmtpResult::Delivered)
            .filter(|o| {
                touched
                    .get(&o.send_account_id)
                    .is_none_or(|t| o.at - t >= TOUCH_MS)
            })
            .map(|o| (o.send_account_id, o.at))
            .collect();
        touch.sort_unstable();
        touch.dedup_by_key(|(id, _)| *id);
        // A failed write is retried: giving up would resend delivered mail
        // once the leases run out.
        for attempt in 0..5u32 {
            let started = std::time::Instant::now();
            let result = write(&mut gate, &db, &outcomes, &touch).await;
            tracing::debug!(
                batch = outcomes.len(),
                ms = started.elapsed().as_secs_f64() * 1e3,
                "recorded sends"
            );
            match result {
                Ok(()) => {
                    touched.extend(touch.iter().copied());
                    if let Some(journal) = &journal {
                        journal.recorded(outcomes.iter().filter_map(|o| o.journal_segment));
                    }
                    break;
                }
                Err(e) => {
                    tracing::error!(error = %e, attempt, "recording sends failed");
                    tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
                }
            }
        }
        drop(gate);
        for (_, done) in batch {
            let _ = done.send(());
        }
    }
}

/// Writes a batch of answers in one transaction.
/// Writes a batch of answers in one transaction; `touch` lists the send
/// accounts whose activity time (and recovery from `error`) to write.
pub(crate) async fn write(
    gate: &mut Writing<'_>,
    db: &Db,
    outcomes: &[Outcome],
    touch: &[(i64, i64)],
) -> sqlx::Result<()> {
    let mut tx = gate.begin(db).await?;
    let delivered: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.result == SmtpResult::Delivered)
        .collect();
    record_delivered(&mut tx, db.backend, &delivered).await?;
    touch_send_accounts(&mut tx, touch).await?;
    for o in outcomes {
        match &o.result {
            SmtpResult::Delivered => {}
            SmtpResult::Bounced(reason) => record_bounce(&mut tx, o, reason).await?,
            SmtpResult::Deferred(reason) => defer(&mut tx, o, reason, o.at + RETRY_MS).await?,
            SmtpResult::AccountFailed(reason) => {
                defer(&mut tx, o, reason, o.at + ERROR_RETRY_MS).await?;
                sqlx::query(
                    "UPDATE send_accounts SET status = 'error', last_error = $1, updated_at = $2
                     WHERE id = $3",
                )
                .bind(reason)
                .bind(o.at)
                .bind(o.send_account_id)
                .execute(&mut *tx)
                .await?;
            }
        }
    }
    // The bounce rate can pass the limit on a bounce and on sends alike
    // (bounces are often answered before the sends around them).
    let mut bounced: Vec<(i64, i64)> = outcomes
        .iter()
        .filter(|o| matches!(o.result, SmtpResult::Bounced(_)))
        .map(|o| (o.sequence_id, o.at))
        .collect();
    bounced.sort_unstable();
    bounced.dedup_by_key(|(s, _)| *s);
    for (sequence_id, at) in bounced {
        auto_pause_if_bouncing(&mut tx, sequence_id, at).await?;
    }
    tx.commit().await
}

async fn record_delivered(
    conn: &mut AnyConnection,
    backend: Backend,
    delivered: &[&Outcome],
) -> sqlx::Result<()> {
    if delivered.is_empty() {
        return Ok(());
    }
    // Only messages still `sending` move: a message another server recorded
    // meanwhile (after a lease ran out) is not advanced twice.
    let sql = format!(
        "WITH v(id, at, subject, links) AS (VALUES {}) \
         UPDATE sequence_messages SET status = 'sent', sent_at = v.at, subject = v.subject, \
             links = v.links, error = NULL \
         FROM v WHERE sequence_messages.id = v.id AND sequence_messages.status = 'sending' \
         RETURNING sequence_messages.id",
        typed_value_rows(
            backend,
            delivered.len(),
            &["BIGINT", "BIGINT", "TEXT", "TEXT"]
        )
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for o in delivered {
        q = q
            .bind(o.message_row_id)
            .bind(o.at)
            .bind(o.subject.clone())
            .bind(serde_json::to_string(&o.links).unwrap_or_else(|_| "[]".into()));
    }
    let fresh: BTreeSet<i64> = q
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| r.try_get::<i64, _>(0))
        .collect::<sqlx::Result<_>>()?;
    let fresh: Vec<&&Outcome> = delivered
        .iter()
        .filter(|o| fresh.contains(&o.message_row_id))
        .collect();
    if fresh.is_empty() {
        return Ok(());
    }

    let sql = format!(
        "INSERT INTO sequence_events (account_id, sequence_id, step_id, enrollment_id, message_id, \
             send_account_id, event_type, variant, created_at) VALUES {} ON CONFLICT DO NOTHING",
        value_rows(backend, fresh.len() * 2, 9)
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for o in &fresh {
        for kind in ["sent", "delivered"] {
            q = q
                .bind(o.account_id)
                .bind(o.sequence_id)
                .bind(o.step_id)
                .bind(o.enrollment_id)
                .bind(o.message_row_id)
                .bind(o.send_account_id)
                .bind(kind)
                .bind(o.variant.clone())
                .bind(o.at);
        }
    }
    q.execute(&mut *conn).await?;

    // The next step falls due its delays after this send. After the last
    // step the enrollment is completed here, with its outbox event, rather
    // than by another plan.
    let (last, more): (Vec<&&&Outcome>, Vec<&&&Outcome>) =
        fresh.iter().partition(|o| o.next_delay_ms.is_none());
    if !more.is_empty() {
        let sql = format!(
            "WITH v(id, at, next_at) AS (VALUES {}) \
             UPDATE enrollments SET current_step = current_step + 1, last_step_at = v.at, \
                 next_send_at = v.next_at, lease_owner = NULL, lease_until = NULL, \
                 updated_at = v.at \
             FROM v WHERE enrollments.id = v.id",
            typed_value_rows(backend, more.len(), &["BIGINT", "BIGINT", "BIGINT"])
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for o in &more {
            q = q
                .bind(o.enrollment_id)
                .bind(o.at)
                .bind(o.at + o.next_delay_ms.unwrap_or(0));
        }
        q.execute(&mut *conn).await?;
    }
    if !last.is_empty() {
        let ids: Vec<i64> = last.iter().map(|o| o.enrollment_id).collect();
        let at = last.iter().map(|o| o.at).max().unwrap_or_default();
        let sql = format!(
            "UPDATE enrollments SET current_step = current_step + 1, last_step_at = $1, \
                 next_send_at = NULL, lease_owner = NULL, lease_until = NULL, updated_at = $1, \
                 status = CASE WHEN status IN ('active', 'paused') THEN 'completed' \
                     ELSE status END \
             WHERE id IN ({}) RETURNING id, status",
            id_list(&ids)
        );
        let completed: BTreeSet<i64> = sqlx::query(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .bind(at)
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .filter(|r| r.try_get::<String, _>(1).is_ok_and(|s| s == "completed"))
            .map(|r| r.try_get::<i64, _>(0))
            .collect::<sqlx::Result<_>>()?;
        let completions: Vec<(i64, serde_json::Value, i64)> = last
            .iter()
            .filter(|o| completed.contains(&o.enrollment_id))
            .map(|o| {
                let data = json!({"sequence_id": o.sequence_id,
                    "enrollment_id": o.enrollment_id, "email": o.to_email});
                (o.account_id, data, o.at)
            })
            .collect();
        events::record_many(conn, backend, EventType::SequenceCompleted, &completions).await?;
    }

    Ok(())
}

/// A delivery proves the mailbox works again. Its activity time moves at
/// most once a [`TOUCH_MS`] per account: the writer remembers what it
/// wrote, so most batches skip the statement (a status another server set
/// to `error` is cleared within that minute).
async fn touch_send_accounts(conn: &mut AnyConnection, touch: &[(i64, i64)]) -> sqlx::Result<()> {
    if touch.is_empty() {
        return Ok(());
    }
    let accounts: Vec<i64> = touch.iter().map(|(id, _)| *id).collect();
    let at = touch.iter().map(|(_, at)| *at).max().unwrap_or_default();
    let sql = format!(
        "UPDATE send_accounts SET last_activity_at = $1, \
             status = CASE WHEN status = 'error' THEN 'active' ELSE status END, \
             last_error = NULL \
         WHERE id IN ({}) AND (status = 'error' OR last_activity_at IS NULL \
             OR last_activity_at < $2)",
        id_list(&accounts)
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(at)
        .bind(at - TOUCH_MS)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn record_bounce(conn: &mut AnyConnection, o: &Outcome, reason: &str) -> sqlx::Result<()> {
    let moved = sqlx::query(
        "UPDATE sequence_messages SET status = 'failed', error = $1, sent_at = $2, subject = $3
         WHERE id = $4 AND status = 'sending'",
    )
    .bind(reason)
    .bind(o.at)
    .bind(&o.subject)
    .bind(o.message_row_id)
    .execute(&mut *conn)
    .await?;
    if moved.rows_affected() == 0 {
        return Ok(());
    }
    // The events module keeps each kind once per message and adds the
    // bounce to the sequence's day.
    let event = |kind, detail: Option<&str>| NewEvent {
        account_id: o.account_id,
        sequence_id: o.sequence_id,
        step_id: Some(o.step_id),
        enrollment_id: Some(o.enrollment_id),
        message_id: Some(o.message_row_id),
        send_account_id: Some(o.send_account_id),
        kind,
        variant: o.variant.clone(),
        url: None,
        detail: detail.map(str::to_owned),
        at: o.at,
    };
    sequence_events::record(
        conn,
        &[event(Kind::Sent, None), event(Kind::Bounced, Some("hard"))],
    )
    .await?;
    sqlx::query(
        "UPDATE enrollments SET status = CASE WHEN status IN ('active', 'paused')
                 THEN 'bounced' ELSE status END,
             next_send_at = NULL, lease_owner = NULL,
             lease_until = NULL, last_step_at = $1, updated_at = $1 WHERE id = $2",
    )
    .bind(o.at)
    .bind(o.enrollment_id)
    .execute(&mut *conn)
    .await?;
    if let Some(target) = address::parse(&o.to_email) {
        suppression::add_on(conn, o.account_id, &target, "bounce", o.at).await?;
    }
    let data = json!({"sequence_id": o.sequence_id, "enrollment_id": o.enrollment_id,
        "step_id": o.step_id, "email": o.to_email, "bounce_type": "hard", "reason": reason});
    events::record(conn, o.account_id, EventType::SequenceBounced, &data, o.at).await?;
    Ok(())
}

/// Puts a temporarily failed send back: the message waits as `deferred`
/// (the next plan reserves it again), today's reservation is released and
/// the enrollment is due at `retry_at`.
async fn defer(
    conn: &mut AnyConnection,
    o: &Outcome,
    reason: &str,
    retry_at: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE sequence_messages SET status = 'deferred', error = $1
         WHERE id = $2 AND status = 'sending'",
    )
    .bind(reason)
    .bind(o.message_row_id)
    .execute(&mut *conn)
    .await?;
    if let Some(day) = o.reserved_day {
        add_to_day(conn, o.sequence_id, day, o.account_id, -1, 0, 0).await?;
        reserve_mailbox(conn, o.send_account_id, -1, day).await?;
    }
    sqlx::query(
        "UPDATE enrollments SET next_send_at = $1, lease_owner = NULL, lease_until = NULL,
             updated_at = $2 WHERE id = $3",
    )
    .bind(retry_at)
    .bind(o.at)
    .bind(o.enrollment_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Pauses an active sequence whose bounce rate (bounced / sent, once it
/// has sent [`AUTO_PAUSE_MIN_SENDS`]) passed its `auto_pause_bounce_rate`,
/// recording why. The inbox calls this too when DSNs arrive.
pub async fn auto_pause_if_bouncing(
    conn: &mut AnyConnection,
    sequence_id: i64,
    now: i64,
) -> sqlx::Result<bool> {
    let row = sqlx::query("SELECT status, auto_pause_bounce_rate FROM sequences WHERE id = $1")
        .bind(sequence_id)
        .fetch_optional(&mut *conn)
        .await?;
    let Some(row) = row else { return Ok(false) };
    let (status, limit): (String, f64) = (row.try_get(0)?, row.try_get(1)?);
    if status != "active" || limit <= 0.0 {
        return Ok(false);
    }
    // The daily counters, not the events: two small rows per day instead
    // of counting every event (sends count from their reservation).
    let row = sqlx::query(
        "SELECT CAST(COALESCE(SUM(sent), 0) AS BIGINT), CAST(COALESCE(SUM(bounced), 0) AS BIGINT) FROM sequence_days
         WHERE sequence_id = $1",
    )
    .bind(sequence_id)
    .fetch_one(&mut *conn)
    .await?;
    let (sent, bounced): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
    if sent < AUTO_PAUSE_MIN_SENDS {
        return Ok(false);
    }
    let rate = bounced as f64 * 100.0 / sent as f64;
    if rate <= limit {
        return Ok(false);
    }
    let reason = format!(
        "Auto-paused: bounce rate {rate:.1}% ({bounced} of {sent} sent) passed \
         auto_pause_bounce_rate {limit}%"
    );
    let done = sqlx::query(
        "UPDATE sequences SET status = 'paused', paused_reason = $1, updated_at = $2
         WHERE id = $3 AND status = 'active'",
    )
    .bind(reason)
    .bind(now)
    .bind(sequence_id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}
