//! The sending engine: the worker that turns due enrollments of active
//! sequences into delivered email (spec/1 "Sequences", "Enrollment status",
//! "Mailbox pool"; spec/3 "Sequence warmup").
//!
//! One pass, repeated by the loop `outreach serve` starts:
//!
//! 1. **Claim and plan** (`plan.rs`, one transaction per batch): lease due
//!    enrollments (`store::claim`), walk each one's steps (delays, conditions,
//!    tasks, completion), and for an email step check the send window, the
//!    sequence's daily cap (warmup ramp) and the send accounts' daily limits,
//!    pick the mailbox (pool rotation) and write the message row with its
//!    deterministic Message-ID before anything leaves.
//! 2. **Render and compose** (`compose.rs`): the rendering engine, tracking
//!    links, threading and unsubscribe headers, HTML and plain text.
//! 3. **Deliver** (`lanes.rs`): up to `sender_connections_per_account` SMTP
//!    connections per send account (default 4), several messages each.
//! 4. **Record** (`record.rs`): each SMTP answer is written (message status,
//!    `sent` and `delivered` events, the enrollment's next step) in group
//!    commits. Before its connection carries the next message a 250 is in
//!    the delivery journal (`journal.rs`, SQLite) or committed (PostgreSQL).
//!
//! Crash safety: the message row exists before the SMTP transaction and is
//! marked sent in the transaction that advances the enrollment, so a restart
//! resends only a message whose answer had not been recorded, with the same
//! Message-ID; at most one such message per open connection.

pub mod compose;
pub mod journal;
pub mod lanes;
pub mod plan;
pub mod record;
pub mod store;
pub mod worker;

#[cfg(test)]
mod journal_tests;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use hmac::{Hmac, Mac};

use outreach_core::state::AppState;
use outreach_core::store::{Backend, Db};
use sqlx::pool::PoolConnection;
use sqlx::{Any, Transaction};

use crate::tracking::TrackingKey;

/// Enrollments claimed per plan transaction.
pub const CLAIM_BATCH: i64 = 256;

/// The sender's services (a state extension).
#[derive(Clone)]
pub struct Sender {
    /// This process's lease owner name.
    pub owner: Arc<str>,
    /// How long a claimed enrollment stays with its claimer (configuration
    /// `sender_lease_secs`). SMTP transactions time out well before
    /// (`lanes::SMTP_TIMEOUT` per command), so a lease runs out only when
    /// its server died.
    pub lease_ms: i64,
    pub tracking: TrackingKey,
    /// Keys the tag in Message-IDs (not guessable from the ids alone).
    message_id_key: [u8; 32],
    pub lanes: lanes::Lanes,
    pub recorder: record::Recorder,
    /// The delivery journal (SQLite only; see `journal`).
    pub journal: Option<Arc<journal::Journal>>,
    /// On SQLite, the plan and the recorder take turns here before they
    /// begin a write transaction: queueing in the process is fair and
    /// immediate, while two writers meeting in SQLite wait in its busy
    /// handler's sleeps (up to 100 ms each).
    pub write_gate: WriteGate,
}

impl Sender {
    pub fn new(state: &AppState) -> Sender {
        let write_gate = WriteGate::default();
        let owner: Arc<str> = format!("sender-{}", uuid::Uuid::new_v4().simple()).into();
        let journal = match state.db.backend {
            Backend::Sqlite => match journal::Journal::open(&state.config.data_dir, &owner) {
                Ok(j) => Some(Arc::new(j)),
                Err(e) => {
                    // Without it each lane waits for its commit: slower,
                    // as safe.
                    tracing::warn!(error = %e, "no sender journal; lanes wait for each commit");
                    None
                }
            },
            Backend::Postgres => None,
        };
        Sender {
            owner,
            lease_ms: state.config.sender_lease_secs as i64 * 1000,
            tracking: TrackingKey::new(&state.secrets),
            message_id_key: state.secrets.derive("message-id"),
            lanes: lanes::Lanes::default(),
            recorder: record::Recorder::start(
                state.db.clone(),
                write_gate.clone(),
                journal.clone(),
            ),
            journal,
            write_gate,
        }
    }

    /// The Message-ID (without angle brackets) of the send of `step_id` to
    /// `enrollment_id` from `domain`: the same on every attempt, so a
    /// message resent after a crash can be deduplicated by its receivers.
    pub fn message_id(&self, enrollment_id: i64, step_id: i64, domain: &str) -> String {
        let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(&self.message_id_key)
            .expect("HMAC takes any key length");
        mac.update(format!("{enrollment_id}.{step_id}").as_bytes());
        let tag = hex::encode(&mac.finalize().into_bytes()[..6]);
        format!("otr.{enrollment_id}.{step_id}.{tag}@{domain}")
    }
}

/// Starts the sender loop (`outreach serve`).
/// Where the sender's write transactions (claims and recorded answers) run.
///
/// SQLite takes one writer at a time, so on SQLite they take turns on one
/// connection the sender keeps: no SQLITE_BUSY waits between them, and the
/// connection's page cache stays warm (a commit on another connection of
/// the pool empties it, and re-reading the pages cost a tenth of the
/// sender's time). PostgreSQL writes concurrently from the pool.
#[derive(Clone, Default)]
pub struct WriteGate {
    sqlite: Arc<tokio::sync::Mutex<Option<PoolConnection<Any>>>>,
}

/// A turn at writing, held across one transaction.
pub enum Writing<'a> {
    Sqlite(tokio::sync::MutexGuard<'a, Option<PoolConnection<Any>>>),
    Postgres,
}

impl WriteGate {
    /// Waits for the turn (SQLite) or returns at once (PostgreSQL).
    pub async fn enter(&self, db: &Db) -> Writing<'_> {
        match db.backend {
            Backend::Sqlite => Writing::Sqlite(self.sqlite.lock().await),
            Backend::Postgres => Writing::Postgres,
        }
    }
}

impl Writing<'_> {
    /// Begins a transaction on the turn's connection.
    pub async fn begin<'t>(&'t mut self, db: &Db) -> sqlx::Result<Transaction<'t, Any>> {
        match self {
            Writing::Sqlite(kept) => {
                if kept.is_none() {
                    **kept = Some(db.pool.acquire().await?);
                }
                let conn = kept.as_mut().expect("acquired above");
                sqlx::Connection::begin(&mut **conn).await
            }
            Writing::Postgres => db.pool.begin().await,
        }
    }
}

pub fn start_workers(state: &AppState) {
    tokio::spawn(worker::run(state.clone()));
}
