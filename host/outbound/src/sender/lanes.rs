//! SMTP delivery: per send account, up to `sender_connections_per_account`
//! (configuration, default 4) lanes, each
//! a task holding one authenticated connection (from `mail::connect_smtp`,
//! so every socket passes the outbound policy) that carries message after
//! message. lettre's own pool dials by itself, which would bypass the SSRF
//! guard, so the pooling is here over lettre's connection type.
//!
//! On SQLite a lane journals each 250 (see `journal`) and goes straight on
//! to its next message; the recorder commits behind it in large batches.
//! Without a journal (PostgreSQL) a lane hands its answer to the recorder,
//! and while
//! that commits, the lane already issues the next message's MAIL, RCPT and
//! DATA, and it sends the next body only once the commit is done, so a
//! crash can still leave at most one delivered-but-unrecorded message per
//! connection while the database and the server work at the same time.
//! (lettre exposes no raw writes, so the commands cannot be pipelined in
//! the RFC 2920 sense; overlapping them with the commit is what a lane can
//! do.) The SMTP commands are
//! issued one by one so a refused recipient (a bounce) is told apart from a
//! refused sender (the mailbox's problem) and the connection is reset and
//! kept.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lettre::address::Envelope;
use lettre::transport::smtp::client::AsyncSmtpConnection;
use lettre::transport::smtp::commands::{Data, Mail, Rcpt, Rset};
use lettre::transport::smtp::extension::{Extension, MailBodyParameter, MailParameter};
use tokio::sync::oneshot;
use tracing::Instrument;

use super::Sender;
use super::plan::ERROR_RETRY_MS;
use super::record::{Committing, Outcome, SmtpResult};
use crate::mail::{MailError, connect_smtp};
use crate::send_accounts::service::{Connection, connection};
use outreach_core::state::AppState;

/// One SMTP command, or connecting with authentication.
pub const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

/// A lane with nothing to send closes its connection after this long.
const IDLE: Duration = Duration::from_secs(30);

/// A composed message on its way to a lane.
pub struct Delivery {
    pub outcome: Outcome,
    pub envelope: Envelope,
    pub bytes: Vec<u8>,
    /// Told when the answer is recorded.
    pub done: oneshot::Sender<()>,
}

#[derive(Clone, Default)]
pub struct Lanes {
    accounts: Arc<Mutex<HashMap<i64, AccountLanes>>>,
}

#[derive(Clone)]
struct AccountLanes {
    tx: async_channel::Sender<Delivery>,
    rx: async_channel::Receiver<Delivery>,
    running: Arc<AtomicUsize>,
    /// When and why the mailbox last refused us (a login or the sender):
    /// messages queued within [`ERROR_RETRY_MS`] of it fail the same way
    /// without dialling again, so a changed password costs one login.
    refused: Arc<Mutex<Option<(i64, String)>>>,
}

impl Lanes {
    /// Queues `d` on its send account's lanes, opening a lane when none is
    /// free and fewer than `sender_connections_per_account` run.
    pub async fn deliver(&self, state: &AppState, d: Delivery) {
        let send_account_id = d.outcome.send_account_id;
        let lanes = {
            let mut map = self.accounts.lock().expect("lanes lock");
            map.entry(send_account_id)
                .or_insert_with(|| {
                    let lanes = state.config.sender_connections_per_account as usize;
                    let (tx, rx) = async_channel::bounded(lanes * 8);
                    AccountLanes {
                        tx,
                        rx,
                        running: Arc::new(AtomicUsize::new(0)),
                        refused: Arc::default(),
                    }
                })
                .clone()
        };
        let _ = lanes.tx.send(d).await;
        if !lanes.rx.is_empty() || lanes.running.load(Ordering::SeqCst) == 0 {
            open_lane(state, send_account_id, &lanes);
        }
    }
}

fn open_lane(state: &AppState, send_account_id: i64, lanes: &AccountLanes) {
    let taken = lanes
        .running
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < state.config.sender_connections_per_account as usize).then_some(n + 1)
        });
    if taken.is_err() {
        return;
    }
    let span = tracing::info_span!("job", name = "sender.lane", send_account_id);
    tokio::spawn(lane(state.clone(), send_account_id, lanes.clone()).instrument(span));
}

/// The previous message's answer on its way to the database, and the
/// dispatcher to tell once it is there.
pub(crate) struct InFlight {
    committing: Committing,
    done: oneshot::Sender<()>,
}

impl InFlight {
    async fn settle(self) {
        self.committing.wait().await;
        let _ = self.done.send(());
    }
}

async fn lane(state: AppState, send_account_id: i64, lanes: AccountLanes) {
    let mut conn: Option<AsyncSmtpConnection> = None;
    let mut previous: Option<InFlight> = None;
    loop {
        // With nothing queued the previous record is awaited now, so its
        // dispatcher is not held until the next message comes.
        if lanes.rx.is_empty()
            && let Some(p) = previous.take()
        {
            p.settle().await;
        }
        let d = match tokio::time::timeout(IDLE, lanes.rx.recv()).await {
            Ok(Ok(d)) => d,
            _ => {
                lanes.running.fetch_sub(1, Ordering::SeqCst);
                // A message queued while this lane was leaving still gets one.
                if !lanes.rx.is_empty() {
                    open_lane(&state, send_account_id, &lanes);
                }
                break;
            }
        };
        let now = state.clock.now_ms();
        let recent = lanes
            .refused
            .lock()
            .expect("refusal lock")
            .clone()
            .filter(|(at, _)| now < at + ERROR_RETRY_MS);
        let result = match recent {
            Some((_, reason)) => SmtpResult::AccountFailed(reason),
            None => send_one(&state, &mut conn, &d, &mut previous).await,
        };
        // A message that ended before its body left the previous record
        // waiting; one record in flight per lane keeps the bound above.
        if let Some(p) = previous.take() {
            p.settle().await;
        }
        if let SmtpResult::AccountFailed(reason) = &result {
            *lanes.refused.lock().expect("refusal lock") = Some((now, reason.clone()));
        }
        let mut outcome = d.outcome;
        outcome.result = result;
        outcome.at = state.clock.now_ms();
        let sender = state.ext::<Sender>();
        if let Some(journal) = &sender.journal {
            // A journaled answer survives a kill, so the lane goes on at
            // once; a failed append falls back to waiting for the commit.
            let journaled = match outcome.result {
                SmtpResult::Delivered => journal.append(&outcome).map(Some),
                _ => Ok(None),
            };
            match journaled {
                Ok(segment) => {
                    outcome.journal_segment = segment;
                    sender.recorder.hand_over(outcome, d.done).await;
                    continue;
                }
                Err(e) => tracing::error!(error = %e, "journaling a delivery failed"),
            }
        }
        let committing = sender.recorder.submit(outcome).await;
        previous = Some(InFlight {
            committing,
            done: d.done,
        });
    }
    if let Some(p) = previous.take() {
        p.settle().await;
    }
    if let Some(mut c) = conn {
        let _ = tokio::time::timeout(Duration::from_secs(5), c.quit()).await;
    }
}

/// One SMTP transaction on the lane's connection, opening it first when
/// needed.
async fn send_one(
    state: &AppState,
    conn: &mut Option<AsyncSmtpConnection>,
    d: &Delivery,
    previous: &mut Option<InFlight>,
) -> SmtpResult {
    if conn.as_ref().is_none_or(|c| c.has_broken()) {
        match open(state, d.outcome.account_id, d.outcome.send_account_id).await {
            Ok(c) => *conn = Some(c),
            Err(result) => return result,
        }
    }
    let c = conn.as_mut().expect("opened above");
    let result = transaction(c, &d.envelope, &d.bytes, previous).await;
    if matches!(result, SmtpResult::Deferred(_)) || c.has_broken() {
        // An I/O error or timeout leaves the session in an unknown state.
        if let Some(mut old) = conn.take() {
            old.abort().await;
        }
    }
    result
}

async fn open(
    state: &AppState,
    account_id: i64,
    send_account_id: i64,
) -> Result<AsyncSmtpConnection, SmtpResult> {
    let server = connection(state, account_id, send_account_id)
        .await
        .map_err(|e| SmtpResult::AccountFailed(format!("send account unavailable: {e}")))?;
    match connect_smtp(
        &state.outbound,
        &server.smtp,
        server.encryption,
        SMTP_TIMEOUT,
    )
    .await
    {
        Ok(c) => Ok(c),
        Err(MailError::Blocked(reason)) => Err(SmtpResult::AccountFailed(reason)),
        // A refused login (a changed password) needs the owner; a server
        // that is down or slow is tried again soon.
        Err(MailError::Failed(reason)) if reason.contains("authentication failed") => {
            Err(SmtpResult::AccountFailed(reason))
        }
        Err(MailError::Failed(reason)) => Err(SmtpResult::Deferred(reason)),
    }
}

/// How one SMTP command ended when it did not succeed.
enum Refusal {
    /// 5xx: the server will not take this.
    Permanent(String),
    /// 4xx, an I/O error or a timeout: try again later.
    Transient(String),
}

async fn step<T>(
    fut: impl Future<Output = Result<T, lettre::transport::smtp::Error>>,
) -> Result<T, Refusal> {
    match tokio::time::timeout(SMTP_TIMEOUT, fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) if e.is_permanent() => Err(Refusal::Permanent(e.to_string())),
        Ok(Err(e)) => Err(Refusal::Transient(e.to_string())),
        Err(_) => Err(Refusal::Transient("SMTP command timed out".into())),
    }
}

/// One message over a connection of its own, closed after it: test sends
/// and the inbox's automatic replies, which go out one at a time outside
/// the lanes (and record nothing in the sender's tables). `Err` when the
/// server could not be reached or refused the login.
pub async fn send_once(
    state: &AppState,
    server: &Connection,
    envelope: &Envelope,
    bytes: &[u8],
) -> Result<SmtpResult, MailError> {
    let mut conn = connect_smtp(
        &state.outbound,
        &server.smtp,
        server.encryption,
        SMTP_TIMEOUT,
    )
    .await?;
    let result = transaction(&mut conn, envelope, bytes, &mut None).await;
    let _ = conn.quit().await;
    Ok(result)
}

/// One message on an open connection, its answer classified: the smart
/// warmup's sends (and its benchmark's reference).
pub async fn send_on(c: &mut AsyncSmtpConnection, envelope: &Envelope, bytes: &[u8]) -> SmtpResult {
    transaction(c, envelope, bytes, &mut None).await
}

/// MAIL, RCPT, DATA and the message, each answer classified. The body goes
/// out only after `previous` (the lane's last answer) is recorded.
pub(crate) async fn transaction(
    c: &mut AsyncSmtpConnection,
    envelope: &Envelope,
    bytes: &[u8],
    previous: &mut Option<InFlight>,
) -> SmtpResult {
    let mut options = Vec::new();
    let non_ascii = envelope
        .to()
        .iter()
        .chain(envelope.from())
        .any(|a| !AsRef::<str>::as_ref(a).is_ascii());
    if non_ascii {
        if !c.server_info().supports_feature(Extension::SmtpUtfEight) {
            return SmtpResult::Bounced(
                "the recipient's address needs SMTPUTF8, which the server does not offer".into(),
            );
        }
        options.push(MailParameter::SmtpUtfEight);
    }
    if !bytes.is_ascii() && c.server_info().supports_feature(Extension::EightBitMime) {
        options.push(MailParameter::Body(MailBodyParameter::EightBitMime));
    }
    match step(c.command(Mail::new(envelope.from().cloned(), options))).await {
        Ok(_) => {}
        Err(Refusal::Permanent(e)) => {
            let _ = step(c.command(Rset)).await;
            return SmtpResult::AccountFailed(format!("the server refused the sender: {e}"));
        }
        Err(Refusal::Transient(e)) => return SmtpResult::Deferred(e),
    }
    for to in envelope.to() {
        match step(c.command(Rcpt::new(to.clone(), vec![]))).await {
            Ok(_) => {}
            // The session stays usable after a refused recipient.
            Err(Refusal::Permanent(e)) => {
                let _ = step(c.command(Rset)).await;
                return SmtpResult::Bounced(e);
            }
            Err(Refusal::Transient(e)) => {
                let _ = step(c.command(Rset)).await;
                return SmtpResult::Deferred(e);
            }
        }
    }
    if let Err(Refusal::Permanent(e) | Refusal::Transient(e)) = step(c.command(Data)).await {
        return SmtpResult::Deferred(e);
    }
    if let Some(p) = previous.take() {
        p.settle().await;
    }
    match step(c.message(bytes)).await {
        Ok(_) => SmtpResult::Delivered,
        Err(Refusal::Permanent(e)) => SmtpResult::Bounced(e),
        Err(Refusal::Transient(e)) => SmtpResult::Deferred(e),
    }
}
