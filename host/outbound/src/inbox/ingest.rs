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

/// Parses, matches, checks and stores `raw`. Parsing never fails (a broken
/// message is stored as far as it parses); only a database error is an
/// error, and then nothing of the message was written.
pub async fn ingest(
    state: &AppState,
    spoof: &SpoofCheck,
    mailbox: &Mailbox,
    raw: &[u8],
) -> sqlx::Result<Ingested> {
    let raw = &raw[..raw.len().min(analysis::MAX_RAW_BYTES)];
    let parsed = analysis::parse(raw);
    let inspection = analysis::inspect(raw, &parsed);
    let key = message_key(&parsed, raw);
    let mut conn = state.db.pool.acquire().await?;
    let tokens = crate::smart_warmup::writing::tokens_in(raw);
    if crate::smart_warmup::messages::any_token_known(&mut conn, state.db.backend, &tokens).await? {
        return Ok(Ingested::WarmupMail);
    }
    if exists(&mut conn, mailbox.account_id, &key).await? {
        return Ok(Ingested::Duplicate);
    }
    let found = find_match(
        &mut conn,
        state.db.backend,
        mailbox.account_id,
        &parsed,
        &inspection,
        raw,
    )
    .await?;
    let sender = parsed.from_email.clone().unwrap_or_default();
    let (found, thread) = match found {
        Some(m) => {
            let thread = thread_of(&m, &parsed, &inspection, &sender);
            (Some(m), thread)
        }
        None => {
            let thread = ThreadKey::of(&sender, &parsed.subject);
            match thread_match(&mut conn, mailbox.account_id, &thread.thread_id).await? {
                Some(m) => (Some(m), thread),
                None => return Ok(Ingested::Unmatched),
            }
        }
    };
    drop(conn);
    // The DNS lookups of the check run outside any transaction.
    let auth = spoof.check(raw).await;
    let reply = NewReply {
        mailbox,
        key: &key,
        parsed: &parsed,
        inspection: &inspection,
        found: found.as_ref(),
        thread: &thread,
        auth: &auth,
        now: state.clock.now_ms(),
    };
    let mut tx = state.db.pool.begin().await?;
    let Some(stored) = super::reply_store::insert_reply(&mut tx, &reply).await? else {
        return Ok(Ingested::Duplicate);
    };
    tx.commit().await?;
    Ok(stored)
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

async fn exists(conn: &mut AnyConnection, account_id: i64, key: &str) -> sqlx::Result<bool> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM inbox_replies WHERE account_id = $1 AND message_key = $2",
    )
    .bind(account_id)
    .bind(key)
    .fetch_optional(conn)
    .await?;
    Ok(found.is_some())
}

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
