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
//!    `sent` and `delivered` events, the enrollment's next step) before its
//!    connection carries the next message, in group commits.
//!
//! Crash safety: the message row exists before the SMTP transaction and is
//! marked sent in the transaction that advances the enrollment, so a restart
//! resends only a message whose answer had not been recorded, with the same
//! Message-ID; at most one such message per open connection.

pub mod compose;
pub mod lanes;
pub mod plan;
pub mod record;
pub mod store;
pub mod worker;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use hmac::{Hmac, Mac};

use outreach_core::state::AppState;

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
    /// On SQLite, the plan and the recorder take turns here before they
    /// begin a write transaction: queueing in the process is fair and
    /// immediate, while two writers meeting in SQLite wait in its busy
    /// handler's sleeps (up to 100 ms each).
    pub write_gate: Arc<tokio::sync::Mutex<()>>,
}

impl Sender {
    pub fn new(state: &AppState) -> Sender {
        let write_gate = Arc::new(tokio::sync::Mutex::new(()));
        Sender {
            owner: format!("sender-{}", uuid::Uuid::new_v4().simple()).into(),
            lease_ms: state.config.sender_lease_secs as i64 * 1000,
            tracking: TrackingKey::new(&state.secrets),
            message_id_key: state.secrets.derive("message-id"),
            lanes: lanes::Lanes::default(),
            recorder: record::Recorder::start(state.db.clone(), write_gate.clone()),
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
pub fn start_workers(state: &AppState) {
    tokio::spawn(worker::run(state.clone()));
}
