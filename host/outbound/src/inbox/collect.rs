//! The IMAP poller: one leased mailbox (send account) at a time per server.
//!
//! A pass leases the send accounts whose next poll is due, and each leased
//! mailbox is watched by its own task:
//! 1. log in (TLS by the port rule of `mail/`), `SELECT INBOX`;
//! 2. when the server's UIDVALIDITY is not the one we saved (first poll, or
//!    the server renumbered the mailbox) search the messages that arrived
//!    since the week before the account was connected, else the UIDs above
//!    the last one handled; fetch them in batches (the first
//!    [`MAX_FETCH_BYTES`] of each), hand each batch to `ingest_batch`,
//!    which stores its replies and the progress past them in one
//!    transaction;
//! 3. when the server offers IDLE, wait in IDLE for new mail (up to the poll
//!    interval, renewing the lease) and go back to 2 on the same
//!    connection; otherwise release the mailbox until the next interval.
//!
//! A failed poll backs off: the interval doubles with each consecutive
//! failure, up to an hour, and the server's words are kept on the account.
//! A message that cannot be parsed is stored as far as it parses; only a
//! database error stops a poll, and then its batch is fetched again.

use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use tokio::sync::Semaphore;
use tracing::Instrument;

use super::ingest::{Ingested, Mailbox, Progress, ingest_batch};
use super::reply_store::{self as store, LeasedMailbox};
use super::spoofing::SpoofCheck;
use crate::mail::{ImapSession, imap_failure, open_session};
use crate::send_accounts::service::connection;
use outreach_core::state::AppState;

/// Messages fetched per `UID FETCH`.
pub const FETCH_BATCH: usize = 50;

/// Bytes of one message fetched at most (a partial fetch); the parser keeps
/// no more than this anyway.
pub const MAX_FETCH_BYTES: usize = outreach_mail_analysis::MAX_RAW_BYTES;

/// Mailboxes one server watches at once (an IDLE connection is a socket
/// and a small task).
const MAX_WATCHED: usize = 256;

/// IDLE rounds (each up to one poll interval) before a watched mailbox goes
/// back to the queue as due, so that with more mailboxes than watch slots
/// every mailbox is still polled about every `MAX_IDLE_ROUNDS` intervals.
const MAX_IDLE_ROUNDS: u32 = 10;

/// The longest a failing mailbox waits between attempts.
const MAX_BACKOFF_MS: i64 = 3_600_000;

/// Timeout of one IMAP exchange (login, search, one fetch batch).
const IMAP_TIMEOUT: Duration = Duration::from_secs(60);

/// How often the loop looks for mailboxes that fell due.
const CLAIM_EVERY: Duration = Duration::from_secs(1);

/// The inbox's shared pieces, a typed extension of the state.
#[derive(Clone)]
pub struct Inbox {
    pub spoof: SpoofCheck,
    owner: Arc<str>,
}

impl Inbox {
    pub fn new(state: &AppState) -> Inbox {
        Inbox {
            // The configuration was checked at start-up; only building
            // the resolver is left to fail, and then nothing could work.
            spoof: SpoofCheck::from_config(&state.config)
                .expect("the inbox's DNS resolver can be built"),
            owner: format!("inbox-{}", uuid::Uuid::new_v4().simple()).into(),
        }
    }
}

fn interval_ms(state: &AppState) -> i64 {
    state.config.inbox_poll_interval_secs as i64 * 1000
}

/// A lease outlives one interval of IDLE plus a slow fetch.
fn lease_ms(state: &AppState) -> i64 {
    interval_ms(state) + 5 * 60_000
}

/// The poller loop `outreach serve` runs.
pub async fn run(state: AppState) {
    let watching = Arc::new(Semaphore::new(MAX_WATCHED));
    loop {
        let free = watching.available_permits() as i64;
        if free > 0 {
            let owner = state.ext::<Inbox>().owner.clone();
            let now = state.clock.now_ms();
            match store::claim_mailboxes(&state.db, &owner, now, now + lease_ms(&state), free).await
            {
                Ok(leased) => {
                    for m in leased {
                        let Ok(permit) = watching.clone().acquire_owned().await else {
                            return;
                        };
                        let state = state.clone();
                        let span = tracing::info_span!(
                            "job",
                            name = "inbox.poll",
                            send_account_id = m.send_account_id
                        );
                        tokio::spawn(
                            async move {
                                watch(&state, m).await;
                                drop(permit);
                            }
                            .instrument(span),
                        );
                    }
                }
                Err(e) => tracing::error!(error = %e, "leasing mailboxes failed"),
            }
        }
        tokio::time::sleep(CLAIM_EVERY).await;
    }
}

/// Watches one leased mailbox until it is released (no IDLE, a failure, or
/// the lease lost).
pub(crate) async fn watch(state: &AppState, m: LeasedMailbox) {
    let inbox = state.ext::<Inbox>();
    let mut session = None;
    let mut m = m;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let polled = poll(state, &m, session.take()).await;
        let now = state.clock.now_ms();
        match polled {
            Ok(Polled {
                session: Some(s),
                progress,
            }) => {
                m.uidvalidity = Some(progress.0);
                m.last_uid = progress.1;
                match idle(s, Duration::from_millis(interval_ms(state) as u64)).await {
                    Ok(s) => session = Some(s),
                    Err(e) => tracing::debug!(error = %e, "IDLE ended"),
                }
                let until = state.clock.now_ms() + lease_ms(state);
                match store::renew_mailbox(&state.db, m.send_account_id, &inbox.owner, until).await
                {
                    Ok(true) if session.is_some() && rounds < MAX_IDLE_ROUNDS => continue,
                    Ok(true) => {
                        // The IDLE connection broke, or the mailbox had its
                        // rounds: due again now, behind mailboxes waiting longer.
                        if let Some(mut s) = session.take() {
                            let _ = s.logout().await;
                        }
                        release(state, &m, now, None).await;
                        return;
                    }
                    _ => return,
                }
            }
            Ok(Polled { session: None, .. }) => {
                release(state, &m, now + interval_ms(state), None).await;
                return;
            }
            Err(e) => {
                let backoff = (interval_ms(state) << (m.failures + 1).min(10)).min(MAX_BACKOFF_MS);
                tracing::warn!(send_account_id = m.send_account_id, error = %e,
                    "polling the mailbox failed");
                release(state, &m, now + backoff, Some(&e)).await;
                return;
            }
        }
    }
}

async fn release(state: &AppState, m: &LeasedMailbox, next_at: i64, error: Option<&str>) {
    let now = state.clock.now_ms();
    if let Err(e) = store::finish_poll(&state.db, m.send_account_id, now, next_at, error).await {
        tracing::error!(error = %e, "saving the poll failed");
    }
}

/// A finished poll: the session when the server offers IDLE (kept for it),
/// and the (UIDVALIDITY, last UID) reached.
pub(crate) struct Polled {
    pub(crate) session: Option<ImapSession>,
    pub(crate) progress: (i64, i64),
}

/// Polls one mailbox once, on `session` when given (after IDLE), else on
/// a new connection. Tests call it directly.
pub(crate) async fn poll(
    state: &AppState,
    m: &LeasedMailbox,
    session: Option<ImapSession>,
) -> Result<Polled, String> {
    let mut session = match session {
        Some(s) => s,
        None => {
            let c = connection(state, m.account_id, m.send_account_id)
                .await
                .map_err(|e| e.to_string())?;
            open_session(
                &state.outbound,
                &c.imap,
                c.allow_plaintext_imap(),
                IMAP_TIMEOUT,
            )
            .await
            .map_err(|e| e.to_string())?
        }
    };
    let within = |what: &'static str| move |_| format!("IMAP {what} timed out");
    let mailbox = tokio::time::timeout(IMAP_TIMEOUT, session.select("INBOX"))
        .await
        .map_err(within("SELECT"))?
        .map_err(|e| imap_failure("IMAP SELECT INBOX failed", &e).to_string())?;
    let validity = i64::from(mailbox.uid_validity.unwrap_or(0));
    let fresh = m.uidvalidity != Some(validity);
    let query = if fresh {
        // First poll, or the server renumbered: replies can only be newer
        // than the account (a week of slack for clocks and late mail).
        format!("SINCE {}", imap_date(m.connected_at - 7 * 86_400_000))
    } else {
        format!("UID {}:*", m.last_uid + 1)
    };
    let found = tokio::time::timeout(IMAP_TIMEOUT, session.uid_search(&query))
        .await
        .map_err(within("SEARCH"))?
        .map_err(|e| imap_failure("IMAP SEARCH failed", &e).to_string())?;
    let floor = if fresh { 0 } else { m.last_uid };
    let mut uids: Vec<u32> = found
        .into_iter()
        .filter(|u| i64::from(*u) > floor)
        .collect();
    uids.sort_unstable();

    let inbox = state.ext::<Inbox>();
    let target = Mailbox {
        account_id: m.account_id,
        send_account_id: m.send_account_id,
    };
    let mut last = if fresh { 0 } else { m.last_uid };
    for batch in uids.chunks(FETCH_BATCH) {
        let set = batch
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let query = format!("(UID BODY.PEEK[]<0.{MAX_FETCH_BYTES}>)");
        let fetched: Vec<_> = tokio::time::timeout(IMAP_TIMEOUT, async {
            session.uid_fetch(&set, &query).await?.try_collect().await
        })
        .await
        .map_err(within("FETCH"))?
        .map_err(|e: async_imap::error::Error| imap_failure("IMAP FETCH failed", &e).to_string())?;
        let mut messages: Vec<(u32, &[u8])> = fetched
            .iter()
            .filter_map(|f| Some((f.uid?, f.body().unwrap_or_default())))
            .collect();
        messages.sort_by_key(|(uid, _)| *uid);
        let raws: Vec<&[u8]> = messages.iter().map(|(_, raw)| *raw).collect();
        // The batch's UIDs are all handled once it is stored, those the
        // server no longer had included.
        let reached = batch.iter().map(|u| i64::from(*u)).fold(last, i64::max);
        let progress = Progress {
            uidvalidity: validity,
            last_uid: reached,
        };
        // A failed batch stores nothing and saves no progress: the next
        // poll fetches it again.
        let outcomes = ingest_batch(
            state,
            &inbox.spoof,
            &target,
            &raws,
            Some((m.send_account_id, progress)),
        )
        .await
        .map_err(|e| format!("storing a reply failed: {e}"))?;
        for ((uid, _), outcome) in messages.iter().zip(outcomes) {
            if let Ingested::Stored { reply_id, .. } = outcome {
                tracing::info!(uid, reply_id, "reply collected");
            }
        }
        last = reached;
    }
    if uids.is_empty() {
        let mut conn = state.db.pool.acquire().await.map_err(|e| e.to_string())?;
        store::save_progress(&mut conn, m.send_account_id, validity, last)
            .await
            .map_err(|e| e.to_string())?;
    }
    let idle = tokio::time::timeout(IMAP_TIMEOUT, session.capabilities())
        .await
        .ok()
        .and_then(Result::ok)
        .is_some_and(|c| c.has_str("IDLE"));
    let session = if idle {
        Some(session)
    } else {
        let _ = session.logout().await;
        None
    };
    Ok(Polled {
        session,
        progress: (validity, last),
    })
}

/// Waits in IDLE until the server reports a change or `wait` passes, and
/// gives the session back for the next poll.
async fn idle(session: ImapSession, wait: Duration) -> Result<ImapSession, String> {
    let mut handle = session.idle();
    handle
        .init()
        .await
        .map_err(|e| format!("IDLE failed: {e}"))?;
    let (answer, _stop) = handle.wait_with_timeout(wait);
    answer.await.map_err(|e| format!("IDLE failed: {e}"))?;
    handle
        .done()
        .await
        .map_err(|e| format!("IDLE DONE failed: {e}"))
}

/// `dd-Mon-yyyy` of RFC 3501's SEARCH dates, in UTC.
pub(crate) fn imap_date(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms.max(0))
        .unwrap_or_default()
        .format("%d-%b-%Y")
        .to_string()
}

/// Polls one send account once, now, outside the lease loop (tests drive
/// it; it saves the progress like the loop does).
pub async fn poll_now(state: &AppState, send_account_id: i64) -> Result<(), String> {
    let m = store::mailbox(&state.db, send_account_id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("no such send account")?;
    let polled = poll(state, &m, None).await?;
    if let Some(s) = polled.session {
        let mut s = s;
        let _ = s.logout().await;
    }
    Ok(())
}

#[cfg(test)]
mod unit {
    #[test]
    fn search_dates_are_rfc3501() {
        assert_eq!(super::imap_date(0), "01-Jan-1970");
        assert_eq!(super::imap_date(1_764_028_800_000), "25-Nov-2025");
    }
}
