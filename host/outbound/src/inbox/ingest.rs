//! One fetched message: parsed, matched to the sequence message it answers,
//! checked for spoofing, threaded and stored. Classification and its
//! effects come later, from the classification worker (`classify.rs`).
//!
//! Matching, first hit wins:
//! 1. `In-Reply-To` and `References` against our Message-IDs (for bounces
//!    and complaints also every Message-ID the report quotes: the original
//!    message or its headers are attached);
//! 2. bounces and complaints: the failed (or complained-about) recipient's
//!    latest message;
//! 3. replies: the sender's latest messages whose normalised subject is the
//!    reply's;
//! 4. an existing thread with the same thread key (sender and subject).
//!
//! A message that matches nothing of ours is the mailbox owner's own mail
//! and is left alone, and smart warmup mail (a message carrying a pool
//! message's token, which bounce reports of pool mail quote too) is left to
//! the warmup.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::bytes::Regex;
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, Row};

use super::spoofing::{Authentication, SpoofCheck};
use outreach_core::state::AppState;
use outreach_core::store::{Backend, placeholder, placeholder_list};
use outreach_mail_analysis::{self as analysis, Inspection, Kind, Parsed};

/// The mailbox a message was fetched from.
#[derive(Debug, Clone)]
pub struct Mailbox {
    pub account_id: i64,
    pub send_account_id: i64,
}

/// What happened to one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ingested {
    /// Stored as a reply of a thread.
    Stored { reply_id: i64, thread_row_id: i64 },
    /// Seen before (the same message key in this account).
    Duplicate,
    /// Nothing of ours: left out of the inbox.
    Unmatched,
    /// Smart warmup mail (it carries a pool message's token): the warmup's
    /// recipient side handles it, the inbox leaves it out.
    WarmupMail,
}

/// The sequence message a reply answers.
#[derive(Debug, Clone)]
pub struct Match {
    pub sequence_message_id: i64,
    pub sequence_id: i64,
    pub enrollment_id: i64,
    pub step_id: i64,
    pub to_email: String,
    pub subject: Option<String>,
    pub domain: String,
}

/// Where a poll got to in its mailbox, saved in the transaction of the
/// batch it covers: the batch's replies and the progress past them commit
/// together, so a crash leaves either both or neither (and then the batch is
/// fetched again, its stored replies found by their message keys).
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub uidvalidity: i64,
    pub last_uid: i64,
}

/// Parses, matches, checks and stores `raw`: [`ingest_batch`] of one message.
pub async fn ingest(
    state: &AppState,
    spoof: &SpoofCheck,
    mailbox: &Mailbox,
    raw: &[u8],
) -> sqlx::Result<Ingested> {
    let mut outcomes = ingest_batch(state, spoof, mailbox, &[raw], None).await?;
    Ok(outcomes.pop().expect("one outcome per message"))
}

/// Spoofing checks of a batch run at once (each may wait on DNS).
const CHECKS_AT_ONCE: usize = 8;

/// How often a batch is written again after another mailbox's poll stored
/// one of its messages first; each retry knows one more duplicate.
const MAX_STORE_ATTEMPTS: usize = 5;

/// One fetched message, parsed.
struct Fetched<'a> {
    raw: &'a [u8],
    parsed: Parsed,
    inspection: Inspection,
    key: String,
}

/// A message of the batch that answers one of ours.
struct Matched {
    index: usize,
    found: Match,
    thread: ThreadKey,
}

/// Ingests the messages of one fetch in their order, answering one outcome
/// per message. Parsing never fails (a broken message is stored as far as
/// it parses); only a database error is an error, and then nothing of the
/// batch was written, nor `progress`.
///
/// Three steps: every message is parsed, checked for smart warmup tokens
/// and earlier copies, and matched (reads only; a follow-up matched by its
/// thread key also finds threads opened earlier in the batch); the
/// spoofing checks of the matched ones run outside any transaction (their
/// DNS lookups may be slow); then every reply is stored with its thread,
/// and `progress` saved, in one transaction.
pub async fn ingest_batch(
    state: &AppState,
    spoof: &SpoofCheck,
    mailbox: &Mailbox,
    raws: &[&[u8]],
    progress: Option<(i64, Progress)>,
) -> sqlx::Result<Vec<Ingested>> {
    let fetched: Vec<Fetched> = raws
        .iter()
        .map(|raw| {
            let raw = &raw[..raw.len().min(analysis::MAX_RAW_BYTES)];
            let parsed = analysis::parse(raw);
            let inspection = analysis::inspect(raw, &parsed);
            let key = message_key(&parsed, raw);
            Fetched {
                raw,
                parsed,
                inspection,
                key,
            }
        })
        .collect();
    let mut outcomes = vec![Ingested::Unmatched; fetched.len()];
    let matched = match_batch(state, mailbox, &fetched, &mut outcomes).await?;
    let mut auths: Vec<Authentication> = Vec::with_capacity(matched.len());
    for chunk in matched.chunks(CHECKS_AT_ONCE) {
        let checks = chunk.iter().map(|m| spoof.check(fetched[m.index].raw));
        auths.extend(futures::future::join_all(checks).await);
    }
    let now = state.clock.now_ms();
    let mut taken = HashSet::new();
    for _ in 0..MAX_STORE_ATTEMPTS {
        let mut tx = state.db.pool.begin().await?;
        let mut stored = Vec::with_capacity(matched.len());
        let mut conflict = None;
        for (m, auth) in matched.iter().zip(&auths) {
            if taken.contains(&m.index) {
                continue;
            }
            let f = &fetched[m.index];
            let reply = NewReply {
                mailbox,
                key: &f.key,
                parsed: &f.parsed,
                inspection: &f.inspection,
                found: Some(&m.found),
                thread: &m.thread,
                auth,
                now,
            };
            match super::reply_store::insert_reply(&mut tx, &reply).await? {
                Some(outcome) => stored.push((m.index, outcome)),
                None => {
                    conflict = Some(m.index);
                    break;
                }
            }
        }
        if let Some(index) = conflict {
            // Another mailbox's poll stored this message since it was
            // looked up. The thread change made for it must not stay, so
            // the batch is written again without it.
            tx.rollback().await?;
            taken.insert(index);
            continue;
        }
        if let Some((send_account_id, p)) = progress {
            super::reply_store::save_progress(&mut tx, send_account_id, p.uidvalidity, p.last_uid)
                .await?;
        }
        tx.commit().await?;
        for index in taken {
            outcomes[index] = Ingested::Duplicate;
        }
        for (index, outcome) in stored {
            outcomes[index] = outcome;
        }
        return Ok(outcomes);
    }
    Err(sqlx::Error::Protocol(
        "the batch's messages kept being stored by another poll".into(),
    ))
}

/// The reading step of [`ingest_batch`]: sets the outcome of every message
/// that is not a reply to store (warmup mail, a copy, nothing of ours) and
/// answers the others with their match and thread.
async fn match_batch(
    state: &AppState,
    mailbox: &Mailbox,
    fetched: &[Fetched<'_>],
    outcomes: &mut [Ingested],
) -> sqlx::Result<Vec<Matched>> {
    let backend = state.db.backend;
    let mut conn = state.db.pool.acquire().await?;
    let keys: Vec<&str> = fetched.iter().map(|f| f.key.as_str()).collect();
    let mut seen = stored_keys(&mut conn, backend, mailbox.account_id, &keys).await?;
    // Threads this batch opens or adds to, with the match of their latest
    // reply: what `thread_match` would find once the batch is stored.
    let mut batch_threads: HashMap<String, Match> = HashMap::new();
    let mut matched = Vec::new();
    for (index, f) in fetched.iter().enumerate() {
        let tokens = crate::smart_warmup::writing::tokens_in(f.raw);
        if crate::smart_warmup::messages::any_token_known(&mut conn, backend, &tokens).await? {
            outcomes[index] = Ingested::WarmupMail;
            continue;
        }
        if !seen.insert(f.key.clone()) {
            outcomes[index] = Ingested::Duplicate;
            continue;
        }
        let found = find_match(
            &mut conn,
            backend,
            mailbox.account_id,
            &f.parsed,
            &f.inspection,
            f.raw,
        )
        .await?;
        let sender = f.parsed.from_email.clone().unwrap_or_default();
        let (found, thread) = match found {
            Some(m) => {
                let thread = thread_of(&m, &f.parsed, &f.inspection, &sender);
                (m, thread)
            }
            None => {
                let thread = ThreadKey::of(&sender, &f.parsed.subject);
                let known = match batch_threads.get(&thread.thread_id) {
                    Some(m) => Some(m.clone()),
                    None => thread_match(&mut conn, mailbox.account_id, &thread.thread_id).await?,
                };
                match known {
                    Some(m) => (m, thread),
                    None => {
                        outcomes[index] = Ingested::Unmatched;
                        continue;
                    }
                }
            }
        };
        batch_threads.insert(thread.thread_id.clone(), found.clone());
        matched.push(Matched {
            index,
            found,
            thread,
        });
    }
    Ok(matched)
}

/// Everything the store writes for one reply.
pub struct NewReply<'a> {
    pub mailbox: &'a Mailbox,
    pub key: &'a str,
    pub parsed: &'a Parsed,
    pub inspection: &'a Inspection,
    pub found: Option<&'a Match>,
    pub thread: &'a ThreadKey,
    pub auth: &'a Authentication,
    pub now: i64,
}

/// The thread a reply joins: the stable hash of spec/1 over the contact's
/// address and the normalised subject, with the values the thread shows.
#[derive(Debug, Clone)]
pub struct ThreadKey {
    pub thread_id: String,
    pub contact_email: String,
    pub subject: String,
}

impl ThreadKey {
    fn of(contact: &str, subject: &str) -> ThreadKey {
        let contact = contact.trim().to_lowercase();
        ThreadKey {
            thread_id: analysis::thread_id(&contact, subject),
            subject: analysis::strip_subject_prefixes(subject)
                .chars()
                .take(998)
                .collect(),
            contact_email: contact,
        }
    }
}

/// A bounce or complaint is about the contact, not the mailer daemon that
/// wrote it: it joins the contact's thread under our message's subject, so
/// it sits beside the contact's own replies.
fn thread_of(m: &Match, parsed: &Parsed, inspection: &Inspection, sender: &str) -> ThreadKey {
    match inspection.kind {
        Kind::Bounce | Kind::Complaint => {
            ThreadKey::of(&m.to_email, m.subject.as_deref().unwrap_or(&parsed.subject))
        }
        _ if sender.is_empty() => {
            ThreadKey::of(&m.to_email, m.subject.as_deref().unwrap_or(&parsed.subject))
        }
        _ => ThreadKey::of(sender, &parsed.subject),
    }
}

/// The Message-ID (without brackets), or a hash of the bytes for a message
/// without one, so a refetch (a UIDVALIDITY change, a copy in a second
/// mailbox) stores nothing twice.
pub fn message_key(parsed: &Parsed, raw: &[u8]) -> String {
    match parsed.message_id.as_deref().map(str::trim) {
        Some(id) if !id.is_empty() => id.chars().take(500).collect(),
        _ => format!("sha256:{}", hex::encode(Sha256::digest(raw))),
    }
}

/// The keys among `keys` already stored for the account.
async fn stored_keys(
    conn: &mut AnyConnection,
    backend: Backend,
    account_id: i64,
    keys: &[&str],
) -> sqlx::Result<HashSet<String>> {
    let mut found = HashSet::new();
    for chunk in keys.chunks(MAX_KEYS_PER_QUERY) {
        let sql = format!(
            "SELECT message_key FROM inbox_replies WHERE account_id = {} AND message_key IN ({})",
            placeholder(backend, 1),
            placeholder_list(backend, 2, chunk.len())
        );
        let mut q = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .bind(account_id);
        for key in chunk {
            q = q.bind(*key);
        }
        found.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(found)
}

/// Keys looked up in one statement (well under SQLite's 32,766 variables).
const MAX_KEYS_PER_QUERY: usize = 500;

/// How many Message-IDs of a message are looked up at most (a hostile
/// `References` header can name thousands).
const MAX_REFERENCES: usize = 50;

/// Message-IDs named anywhere in a report: the attached original message or
/// its headers carry our Message-ID even when the report's own headers do
/// not refer to it.
fn quoted_message_ids(raw: &[u8]) -> Vec<String> {
    static ID: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)(?:^|\n)(?:message-id|in-reply-to|references)[ \t]*:[ \t]*(?:\r?\n[ \t]+)?<([^<>\s]{3,250})>")
            .expect("valid regex")
    });
    ID.captures_iter(raw)
        .filter_map(|c| std::str::from_utf8(&c[1]).ok().map(str::to_owned))
        .take(MAX_REFERENCES)
        .collect()
}

async fn find_match(
    conn: &mut AnyConnection,
    backend: Backend,
    account_id: i64,
    parsed: &Parsed,
    inspection: &Inspection,
    raw: &[u8],
) -> sqlx::Result<Option<Match>> {
    let machine = matches!(inspection.kind, Kind::Bounce | Kind::Complaint);
    let mut ids: Vec<String> = parsed
        .in_reply_to
        .iter()
        .chain(parsed.references.iter().rev())
        .map(|id| id.trim_matches(['<', '>', ' ']).to_owned())
        .filter(|id| !id.is_empty())
        .take(MAX_REFERENCES)
        .collect();
    if machine {
        ids.extend(quoted_message_ids(raw));
    }
    if let Some(m) = by_message_ids(conn, backend, account_id, &ids).await? {
        return Ok(Some(m));
    }
    if machine {
        for recipient in &inspection.recipients {
            if let Some(m) = latest_to(conn, account_id, recipient, None).await? {
                return Ok(Some(m));
            }
        }
        return Ok(None);
    }
    let Some(sender) = parsed.from_email.as_deref() else {
        return Ok(None);
    };
    let subject = analysis::normalise_subject(&parsed.subject);
    latest_to(conn, account_id, &sender.to_lowercase(), Some(&subject)).await
}

const MATCH_COLUMNS: &str = "m.id, m.sequence_id, m.enrollment_id, m.step_id, m.to_email, \
     m.subject, e.domain";

fn match_row(r: &sqlx::any::AnyRow) -> sqlx::Result<Match> {
    Ok(Match {
        sequence_message_id: r.try_get(0)?,
        sequence_id: r.try_get(1)?,
        enrollment_id: r.try_get(2)?,
        step_id: r.try_get(3)?,
        to_email: r.try_get(4)?,
        subject: r.try_get(5)?,
        domain: r.try_get(6)?,
    })
}

async fn by_message_ids(
    conn: &mut AnyConnection,
    backend: Backend,
    account_id: i64,
    ids: &[String],
) -> sqlx::Result<Option<Match>> {
    if ids.is_empty() {
        return Ok(None);
    }
    let sql = format!(
        "SELECT {MATCH_COLUMNS} FROM sequence_messages m JOIN enrollments e ON e.id = m.enrollment_id
         WHERE m.account_id = {} AND m.message_id IN ({}) ORDER BY m.id DESC LIMIT 1",
        placeholder(backend, 1),
        placeholder_list(backend, 2, ids.len())
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(account_id);
    for id in ids {
        q = q.bind(id);
    }
    q.fetch_optional(conn)
        .await?
        .as_ref()
        .map(match_row)
        .transpose()
}

/// The latest sent message to `email`; with `subject`, the latest of the
/// recent ones whose normalised subject is it.
async fn latest_to(
    conn: &mut AnyConnection,
    account_id: i64,
    email: &str,
    subject: Option<&str>,
) -> sqlx::Result<Option<Match>> {
    let sql = format!(
        "SELECT {MATCH_COLUMNS} FROM sequence_messages m JOIN enrollments e ON e.id = m.enrollment_id
         WHERE m.account_id = $1 AND m.to_email = $2 AND m.status = 'sent'
         ORDER BY m.id DESC LIMIT 20"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .bind(email)
        .fetch_all(conn)
        .await?;
    for r in &rows {
        let m = match_row(r)?;
        let fits = match subject {
            None => true,
            Some(s) => analysis::normalise_subject(m.subject.as_deref().unwrap_or("")) == s,
        };
        if fits {
            return Ok(Some(m));
        }
    }
    Ok(None)
}

/// The sequence message of a thread we already hold (a follow-up that
/// neither refers to our Message-ID nor keeps our subject's words).
async fn thread_match(
    conn: &mut AnyConnection,
    account_id: i64,
    thread_id: &str,
) -> sqlx::Result<Option<Match>> {
    let sql = format!(
        "SELECT {MATCH_COLUMNS} FROM inbox_threads t
         JOIN inbox_replies r ON r.thread_row_id = t.id
         JOIN sequence_messages m ON m.id = r.sequence_message_id
         JOIN enrollments e ON e.id = m.enrollment_id
         WHERE t.account_id = $1 AND t.thread_id = $2 ORDER BY r.id DESC LIMIT 1"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .bind(thread_id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(match_row)
        .transpose()
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn report_quotes_are_found_in_attached_headers() {
        let raw = b"From: MAILER-DAEMON@mx.example\r\nSubject: Undelivered\r\n\r\n--b\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <abc.123@outreach.test>\r\nSubject: hi\r\n--b--\r\n";
        assert_eq!(quoted_message_ids(raw), vec!["abc.123@outreach.test"]);
        let folded = b"X: y\r\nMessage-Id:\r\n <folded@x.test>\r\n";
        assert_eq!(quoted_message_ids(folded), vec!["folded@x.test"]);
    }

    #[test]
    fn a_message_without_an_id_is_keyed_by_its_bytes() {
        let raw = b"Subject: x\r\n\r\nbody";
        let parsed = analysis::parse(raw);
        let key = message_key(&parsed, raw);
        assert!(key.starts_with("sha256:") && key.len() == 71, "{key}");
        let raw = b"Message-ID: <a@b>\r\nSubject: x\r\n\r\nbody";
        assert_eq!(message_key(&analysis::parse(raw), raw), "a@b");
    }
}
