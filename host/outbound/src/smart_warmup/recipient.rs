//! The recipient side: each pass leases the members whose mailbox is due
//! and reads it over IMAP (the inbox's client, through the outbound
//! policy).
//!
//! 1. The spam folder (the mailbox LIST marks `\Junk` per RFC 6154, else
//!    the first of the common names; none is not an error): pool messages
//!    to this member are recorded as placed in spam and moved to INBOX.
//!    Anything else there, a pool member's sequence mail included, is left
//!    untouched.
//! 2. INBOX: pool messages to this member are recorded as placed in the
//!    inbox (unless already found in spam), marked read and flagged at
//!    [`READ_RATE`] and [`FLAG_RATE`], and answered when the thread says so
//!    ([`reply_rate`]). A delivery report quoting a pool message this member
//!    sent is a bounce: a hard one pauses the recipient member.
//!
//! A message is the pool's when it carries the token of a message this
//! server sent, in the marker header or, where a server stripped it, in
//! the body. Each folder's UIDVALIDITY and last UID are kept, so a pass
//! reads only what arrived since the last one.

use std::collections::HashMap;
use std::time::Duration;

use async_imap::imap_proto::NameAttribute;
use futures::TryStreamExt;

use super::SmartWarmup;
use super::exchange::{login_failed, member_bounced, tick_ms};
use super::messages::{self, PoolMessage};
use super::store::{self, Member, Protocol, Side};
use super::writing::{chance, tokens_in};
use crate::inbox::collect::{MAX_FETCH_BYTES, imap_date};
use crate::mail::{ImapSession, imap_failure, open_session};
use crate::send_accounts::service::connection;
use outreach_core::state::AppState;
use outreach_mail_analysis::{self as analysis, BounceType, Kind};

/// Share of pool messages marked read.
pub const READ_RATE: f64 = 0.9;
/// Share of pool messages flagged (starred) as important.
pub const FLAG_RATE: f64 = 0.15;
/// The longest thread, in messages.
pub const MAX_THREAD_LENGTH: i64 = 4;
/// An answer is due 10 to 90 minutes after its message was found.
const REPLY_DELAY_MS: (i64, i64) = (10 * 60_000, 90 * 60_000);

/// Chance that the `depth`-th message of a thread is answered.
pub fn reply_rate(depth: i64) -> f64 {
    match depth {
        1 => 0.5,
        2 => 0.35,
        3 => 0.2,
        _ => 0.0,
    }
}

/// Names a spam folder commonly has when the server marks none `\Junk`.
const SPAM_NAMES: &[&str] = &[
    "Junk",
    "Spam",
    "Junk E-mail",
    "Junk Email",
    "Bulk Mail",
    "[Gmail]/Spam",
    "INBOX.Junk",
    "INBOX.Spam",
    "INBOX/Junk",
    "INBOX/Spam",
];

const IMAP_TIMEOUT: Duration = Duration::from_secs(60);
const FETCH_BATCH: usize = 50;
const CONCURRENT_MAILBOXES: usize = 16;

/// One pass: the mailboxes due now, each read. Returns the pool messages found.
pub async fn pass(state: &AppState) -> anyhow::Result<usize> {
    let sw = state.ext::<SmartWarmup>();
    let now = state.clock.now_ms();
    let due = store::claim(
        &state.db,
        Side::Scan,
        &sw.owner,
        now,
        now + 10 * 60_000,
        256,
    )
    .await?;
    let mut found = 0;
    let mut tasks = tokio::task::JoinSet::new();
    for m in due {
        while tasks.len() >= CONCURRENT_MAILBOXES {
            found += tasks.join_next().await.and_then(Result::ok).unwrap_or(0);
        }
        let (state, owner) = (state.clone(), sw.owner.clone());
        tasks.spawn(async move {
            let id = m.send_account_id;
            let next = state.clock.now_ms() + tick_ms(&state);
            let (n, next) = match scan(&state, &m).await {
                Ok(n) => (n, next),
                Err(Failure::Login(e)) => (0, login_failed(&state, &m, Protocol::Imap, e, next).await.unwrap_or(next)),
                Err(Failure::Other(e)) => {
                    tracing::warn!(send_account_id = id, error = %e, "reading a warmup mailbox failed");
                    (0, next)
                }
            };
            if let Err(e) = store::release(&state.db, Side::Scan, id, &owner, next).await {
                tracing::error!(send_account_id = id, error = %e, "releasing a warmup mailbox failed");
            }
            n
        });
    }
    while let Some(n) = tasks.join_next().await {
        found += n.unwrap_or(0);
    }
    Ok(found)
}

pub enum Failure {
    Login(crate::mail::MailError),
    Other(String),
}

impl From<sqlx::Error> for Failure {
    fn from(e: sqlx::Error) -> Self {
        Failure::Other(e.to_string())
    }
}

/// Reads member `m`'s spam folder and INBOX once; returns the pool
/// messages to it that were found.
pub async fn scan(state: &AppState, m: &Member) -> Result<usize, Failure> {
    let c = connection(state, m.account_id, m.send_account_id)
        .await
        .map_err(|e| Failure::Other(e.to_string()))?;
    let mut session = open_session(
        &state.outbound,
        &c.imap,
        c.allow_plaintext_imap(),
        IMAP_TIMEOUT,
    )
    .await
    .map_err(Failure::Login)?;
    store::note_login(
        &state.db,
        m.send_account_id,
        Protocol::Imap,
        None,
        state.clock.now_ms(),
    )
    .await?;
    let result = async {
        let mut found = 0;
        let spam = spam_folder(&mut session).await?;
        if let Some(folder) = &spam {
            found += read_folder(state, m, &mut session, Some(folder)).await?;
        }
        found += read_folder(state, m, &mut session, None).await?;
        Ok::<usize, Failure>(found)
    }
    .await;
    let _ = tokio::time::timeout(Duration::from_secs(5), session.logout()).await;
    result
}

fn timed_out(what: &'static str) -> impl Fn(tokio::time::error::Elapsed) -> Failure {
    move |_| Failure::Other(format!("IMAP {what} timed out"))
}

/// The spam folder: the one LIST marks `\Junk`, else the first common name
/// the account has, else none.
async fn spam_folder(session: &mut ImapSession) -> Result<Option<String>, Failure> {
    let names: Vec<_> = tokio::time::timeout(IMAP_TIMEOUT, async {
        session
            .list(Some(""), Some("*"))
            .await?
            .try_collect::<Vec<_>>()
            .await
    })
    .await
    .map_err(timed_out("LIST"))?
    .map_err(|e| Failure::Other(imap_failure("IMAP LIST failed", &e).to_string()))?;
    if let Some(n) = names
        .iter()
        .find(|n| n.attributes().contains(&NameAttribute::Junk))
    {
        return Ok(Some(n.name().to_owned()));
    }
    Ok(SPAM_NAMES.iter().find_map(|wanted| {
        names
            .iter()
            .find(|n| {
                n.name().eq_ignore_ascii_case(wanted)
                    && !n.attributes().contains(&NameAttribute::NoSelect)
            })
            .map(|n| n.name().to_owned())
    }))
}

/// One fetched message: its UID, its pool message to this member if any,
/// and what it is otherwise.
struct Seen {
    uid: u32,
    mine: Option<PoolMessage>,
    bounce: Option<(PoolMessage, BounceType, String)>,
}

/// Reads the folder (`spam`, else INBOX) from where the last pass stopped.
async fn read_folder(
    state: &AppState,
    m: &Member,
    session: &mut ImapSession,
    spam: Option<&str>,
) -> Result<usize, Failure> {
    let folder = spam.unwrap_or("INBOX");
    let selected = tokio::time::timeout(IMAP_TIMEOUT, session.select(folder))
        .await
        .map_err(timed_out("SELECT"))?
        .map_err(|e| {
            Failure::Other(imap_failure(&format!("IMAP SELECT {folder} failed"), &e).to_string())
        })?;
    let validity = i64::from(selected.uid_validity.unwrap_or(0));
    let (saved_validity, saved_last) = match spam {
        Some(_) if m.spam_folder.as_deref() == Some(folder) => {
            (m.spam_uidvalidity, m.spam_last_uid)
        }
        Some(_) => (None, 0),
        None => (m.inbox_uidvalidity, m.inbox_last_uid),
    };
    let fresh = saved_validity != Some(validity);
    let query = if fresh {
        format!("SINCE {}", imap_date(m.started_at - 86_400_000))
    } else {
        format!("UID {}:*", saved_last + 1)
    };
    let floor = if fresh { 0 } else { saved_last };
    let mut uids: Vec<u32> = tokio::time::timeout(IMAP_TIMEOUT, session.uid_search(&query))
        .await
        .map_err(timed_out("SEARCH"))?
        .map_err(|e| Failure::Other(imap_failure("IMAP SEARCH failed", &e).to_string()))?
        .into_iter()
        .filter(|u| i64::from(*u) > floor)
        .collect();
    uids.sort_unstable();
    let mut last = floor;
    let mut found = 0;
    for batch in uids.chunks(FETCH_BATCH) {
        let seen = fetch(state, m, session, batch).await?;
        let mine: Vec<&Seen> = seen.iter().filter(|s| s.mine.is_some()).collect();
        found += mine.len();
        match spam {
            Some(_) => rescue(state, session, &mine).await?,
            None => engage(state, m, session, &mine).await?,
        }
        for s in &seen {
            if let Some((sent, kind, reason)) = &s.bounce {
                bounced(state, sent, *kind, reason).await?;
            }
        }
        last = last.max(batch.iter().copied().max().map_or(0, i64::from));
        store::save_progress(
            &state.db,
            m.send_account_id,
            spam.is_some(),
            spam,
            validity,
            last,
        )
        .await?;
    }
    if uids.is_empty() && fresh {
        store::save_progress(
            &state.db,
            m.send_account_id,
            spam.is_some(),
            spam,
            validity,
            last,
        )
        .await?;
    }
    Ok(found)
}

/// Fetches a batch and tells pool messages to `m` and bounce reports of
/// messages `m` sent from the rest.
async fn fetch(
    state: &AppState,
    m: &Member,
    session: &mut ImapSession,
    batch: &[u32],
) -> Result<Vec<Seen>, Failure> {
    let set = batch
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let query = format!("(UID BODY.PEEK[]<0.{}>)", MAX_FETCH_BYTES);
    let fetched: Vec<_> = tokio::time::timeout(IMAP_TIMEOUT, async {
        session.uid_fetch(&set, &query).await?.try_collect().await
    })
    .await
    .map_err(timed_out("FETCH"))?
    .map_err(|e: async_imap::error::Error| {
        Failure::Other(imap_failure("IMAP FETCH failed", &e).to_string())
    })?;
    let raws: Vec<(u32, Vec<String>, &[u8])> = fetched
        .iter()
        .filter_map(|f| {
            let raw = f.body().unwrap_or_default();
            Some((f.uid?, tokens_in(raw), raw))
        })
        .collect();
    let all: Vec<String> = raws
        .iter()
        .flat_map(|(_, t, _)| t.iter().cloned())
        .collect();
    let known: HashMap<String, PoolMessage> = messages::by_tokens(&state.db, &all)
        .await?
        .into_iter()
        .map(|p| (p.token.clone(), p))
        .collect();
    let mut seen = Vec::new();
    for (uid, tokens, raw) in raws {
        let ours: Vec<&PoolMessage> = tokens.iter().filter_map(|t| known.get(t)).collect();
        let mine = ours
            .iter()
            .filter(|p| p.recipient_id == m.send_account_id)
            .max_by_key(|p| p.depth)
            .map(|p| (*p).clone());
        let mut bounce = None;
        if mine.is_none()
            && let Some(sent) = ours.iter().find(|p| p.sender_id == m.send_account_id)
        {
            let parsed = analysis::parse(raw);
            let inspection = analysis::inspect(raw, &parsed);
            if inspection.kind == Kind::Bounce {
                let reason = inspection
                    .status
                    .clone()
                    .unwrap_or_else(|| "delivery report".into());
                bounce = Some((
                    (*sent).clone(),
                    inspection.bounce_type.unwrap_or(BounceType::Soft),
                    reason,
                ));
            }
        }
        seen.push(Seen { uid, mine, bounce });
    }
    Ok(seen)
}

fn uid_set(seen: &[&Seen]) -> String {
    seen.iter()
        .map(|s| s.uid.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Pool messages found in spam: recorded as such, then moved to INBOX
/// (MOVE where offered, else COPY, \Deleted and EXPUNGE).
async fn rescue(
    state: &AppState,
    session: &mut ImapSession,
    mine: &[&Seen],
) -> Result<(), Failure> {
    if mine.is_empty() {
        return Ok(());
    }
    let now = state.clock.now_ms();
    let mut conn = state.db.pool.acquire().await?;
    for s in mine {
        let p = s.mine.as_ref().expect("mine");
        messages::record_found(&mut conn, p.id, "spam", now, false, false, None).await?;
    }
    drop(conn);
    let set = uid_set(mine);
    let can_move = tokio::time::timeout(IMAP_TIMEOUT, session.capabilities())
        .await
        .ok()
        .and_then(Result::ok)
        .is_some_and(|c| c.has_str("MOVE"));
    let moved = tokio::time::timeout(IMAP_TIMEOUT, async {
        if can_move {
            session.uid_mv(&set, "INBOX").await
        } else {
            session.uid_copy(&set, "INBOX").await?;
            session
                .uid_store(&set, "+FLAGS.SILENT (\\Deleted)")
                .await?
                .try_collect::<Vec<_>>()
                .await?;
            session
                .expunge()
                .await?
                .try_collect::<Vec<_>>()
                .await
                .map(|_| ())
        }
    })
    .await
    .map_err(timed_out("MOVE"))?;
    moved.map_err(|e| Failure::Other(imap_failure("IMAP MOVE to INBOX failed", &e).to_string()))
}

/// Pool messages found in INBOX: recorded, marked read and flagged at the
/// documented rates, and answered when the thread says so.
async fn engage(
    state: &AppState,
    m: &Member,
    session: &mut ImapSession,
    mine: &[&Seen],
) -> Result<(), Failure> {
    let now = state.clock.now_ms();
    let mut read = Vec::new();
    let mut flagged = Vec::new();
    let mut conn = state.db.pool.acquire().await?;
    for s in mine {
        let p = s.mine.as_ref().expect("mine");
        let is_read = chance(&p.token, "read") < READ_RATE;
        let is_flagged = chance(&p.token, "flag") < FLAG_RATE;
        let reply_due = (m.status == "active"
            && p.reply_due_at.is_none()
            && p.replied_at.is_none()
            && p.depth < MAX_THREAD_LENGTH
            && chance(&p.token, "reply") < reply_rate(p.depth))
        .then(|| {
            let (lo, hi) = REPLY_DELAY_MS;
            now + lo + ((hi - lo) as f64 * chance(&p.token, "delay")) as i64
        });
        messages::record_found(
            &mut conn, p.id, "inbox", now, is_read, is_flagged, reply_due,
        )
        .await?;
        if let Some(at) = reply_due {
            store::send_by(&mut conn, m.send_account_id, at).await?;
        }
        // STORE +FLAGS is idempotent, so a message read again after the
        // server renumbered the folder is simply marked again.
        if is_read {
            read.push(s.uid);
        }
        if is_flagged {
            flagged.push(s.uid);
        }
    }
    drop(conn);
    for (uids, flags) in [
        (read, "+FLAGS.SILENT (\\Seen)"),
        (flagged, "+FLAGS.SILENT (\\Flagged)"),
    ] {
        if uids.is_empty() {
            continue;
        }
        let set = uids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        tokio::time::timeout(IMAP_TIMEOUT, async {
            session
                .uid_store(&set, flags)
                .await?
                .try_collect::<Vec<_>>()
                .await
        })
        .await
        .map_err(timed_out("STORE"))?
        .map_err(|e| Failure::Other(imap_failure("IMAP STORE failed", &e).to_string()))?;
    }
    Ok(())
}

/// A report that pool message `sent` bounced: recorded, and a hard bounce
/// pauses the recipient member.
async fn bounced(
    state: &AppState,
    sent: &PoolMessage,
    kind: BounceType,
    reason: &str,
) -> Result<(), Failure> {
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    let changed = sqlx::query(
        "UPDATE smart_warmup_messages SET status = 'bounced', error = $1
         WHERE id = $2 AND status = 'sent'",
    )
    .bind(reason)
    .bind(sent.id)
    .execute(&mut *tx)
    .await?;
    if changed.rows_affected() == 1 && kind == BounceType::Hard {
        let email: Option<String> =
            sqlx::query_scalar("SELECT email FROM smart_warmup_members WHERE send_account_id = $1")
                .bind(sent.recipient_id)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some(email) = email {
            member_bounced(
                &mut tx,
                sent.recipient_id,
                sent.recipient_account_id,
                &email,
                reason,
                now,
            )
            .await?;
        }
    }
    tx.commit().await?;
    Ok(())
}
