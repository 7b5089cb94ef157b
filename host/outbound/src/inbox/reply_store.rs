//! SQL of the collection side: storing a fetched reply into its thread, the
//! poller's mailbox leases and progress, and the classifier's queue. The
//! thread API's queries are in `store.rs`.

use sqlx::{AnyConnection, Row};

use super::ingest::{Ingested, NewReply};
use outreach_core::store::{Backend, Db};
use outreach_mail_analysis::{BounceType, Kind};

/// The spec's name of a collected message's kind.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Bounce => "bounce",
        Kind::Complaint => "complaint",
        Kind::AutoReply => "auto_reply",
        Kind::Reply => "reply",
        Kind::Other => "other",
    }
}

/// Adds the reply to its thread (created on its first reply; a new reply
/// reopens a handled or snoozed thread, since it asks for attention again)
/// and stores the reply. `None` when the message key is already stored (a
/// concurrent poll of another mailbox holding the same message): the caller
/// drops the transaction, which undoes the thread change.
pub async fn insert_reply(
    conn: &mut AnyConnection,
    r: &NewReply<'_>,
) -> sqlx::Result<Option<Ingested>> {
    let account_id = r.mailbox.account_id;
    let domain = match r.found {
        Some(m) => m.domain.clone(),
        None => r
            .thread
            .contact_email
            .rsplit_once('@')
            .map(|(_, d)| d.to_owned())
            .unwrap_or_default(),
    };
    let thread_row_id: i64 = sqlx::query_scalar(
        "INSERT INTO inbox_threads (account_id, thread_id, domain, contact_email, subject,
             last_received_at, message_count, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 1, 'open', $6, $6)
         ON CONFLICT (account_id, thread_id) DO UPDATE SET
             message_count = inbox_threads.message_count + 1,
             last_received_at = CASE WHEN excluded.last_received_at > inbox_threads.last_received_at
                 THEN excluded.last_received_at ELSE inbox_threads.last_received_at END,
             status = 'open', snoozed_until = NULL, updated_at = excluded.updated_at
         RETURNING id",
    )
    .bind(account_id)
    .bind(&r.thread.thread_id)
    .bind(&domain)
    .bind(&r.thread.contact_email)
    .bind(&r.thread.subject)
    .bind(r.now)
    .fetch_one(&mut *conn)
    .await?;

    let p = r.parsed;
    let i = r.inspection;
    let headers = serde_json::to_string(&p.headers).unwrap_or_else(|_| "[]".into());
    let auth = serde_json::to_string(r.auth).unwrap_or_else(|_| "{}".into());
    let bounce_type = i.bounce_type.map(|b| match b {
        BounceType::Hard => "hard",
        BounceType::Soft => "soft",
    });
    let reply_id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO inbox_replies (account_id, thread_row_id, send_account_id, message_key,
             message_id, in_reply_to, from_email, from_name, subject, body_text, full_text,
             headers, received_at, domain, sequence_id, enrollment_id, sequence_step_id,
             sequence_message_id, kind, bounce_type, bounce_status, bounce_reason,
             failed_recipient, return_at, spoofing_suspected, authentication, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
             $18, $19, $20, $21, $22, $23, $24, $25, $26, $13)
         ON CONFLICT (account_id, message_key) DO NOTHING RETURNING id",
    )
    .bind(account_id)
    .bind(thread_row_id)
    .bind(r.mailbox.send_account_id)
    .bind(r.key)
    .bind(p.message_id.as_deref().unwrap_or(""))
    .bind(p.in_reply_to.as_deref().unwrap_or(""))
    .bind(p.from_email.as_deref().unwrap_or("").to_lowercase())
    .bind(p.from_name.as_deref().unwrap_or(""))
    .bind(&p.subject)
    .bind(&p.body_text)
    .bind(&p.full_text)
    .bind(headers)
    .bind(r.now)
    .bind(&domain)
    .bind(r.found.map(|m| m.sequence_id))
    .bind(r.found.map(|m| m.enrollment_id))
    .bind(r.found.map(|m| m.step_id))
    .bind(r.found.map(|m| m.sequence_message_id))
    .bind(kind_name(i.kind))
    .bind(bounce_type)
    .bind(i.status.as_deref())
    .bind(i.reason)
    .bind(i.recipients.first().map(String::as_str))
    .bind(i.return_date_ms)
    .bind(i64::from(r.auth.suspected))
    .bind(auth)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(reply_id.map(|reply_id| Ingested::Stored {
        reply_id,
        thread_row_id,
    }))
}

/// A mailbox the poller leased.
#[derive(Debug, Clone)]
pub struct LeasedMailbox {
    pub send_account_id: i64,
    pub account_id: i64,
    pub uidvalidity: Option<i64>,
    pub last_uid: i64,
    pub connected_at: i64,
    pub failures: i64,
}

fn leased(r: &sqlx::any::AnyRow) -> sqlx::Result<LeasedMailbox> {
    Ok(LeasedMailbox {
        send_account_id: r.try_get(0)?,
        account_id: r.try_get(1)?,
        uidvalidity: r.try_get(2)?,
        last_uid: r.try_get(3)?,
        connected_at: r.try_get(4)?,
        failures: r.try_get(5)?,
    })
}

const LEASED_COLUMNS: &str =
    "id, account_id, inbox_uidvalidity, inbox_last_uid, connected_at, inbox_failures";

/// Leases up to `limit` send accounts whose next poll is due to `owner`
/// until `until`. Paused accounts are not polled. PostgreSQL skips rows
/// another server is claiming; SQLite's single writer makes the statement
/// atomic.
pub async fn claim_mailboxes(
    db: &Db,
    owner: &str,
    now: i64,
    until: i64,
    limit: i64,
) -> sqlx::Result<Vec<LeasedMailbox>> {
    let lock = match db.backend {
        Backend::Postgres => "FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "UPDATE send_accounts SET inbox_lease_owner = $1, inbox_lease_until = $2 WHERE id IN (
             SELECT id FROM send_accounts
             WHERE inbox_next_poll_at <= $3 AND status <> 'paused'
               AND (inbox_lease_until IS NULL OR inbox_lease_until < $3)
             ORDER BY inbox_next_poll_at LIMIT $4 {lock})
         RETURNING {LEASED_COLUMNS}"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(owner)
        .bind(until)
        .bind(now)
        .bind(limit)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(leased)
        .collect()
}

/// The poll state of one send account (tests and single passes).
pub async fn mailbox(db: &Db, send_account_id: i64) -> sqlx::Result<Option<LeasedMailbox>> {
    let sql = format!("SELECT {LEASED_COLUMNS} FROM send_accounts WHERE id = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(send_account_id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(leased)
        .transpose()
}

/// Extends the lease while its holder still has it; false when it lost the
/// lease (the account was deleted, or the lease ran out and another server
/// took the mailbox).
pub async fn renew_mailbox(
    db: &Db,
    send_account_id: i64,
    owner: &str,
    until: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE send_accounts SET inbox_lease_until = $1
         WHERE id = $2 AND inbox_lease_owner = $3",
    )
    .bind(until)
    .bind(send_account_id)
    .bind(owner)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Progress through the mailbox: the UIDVALIDITY seen and the highest UID
/// handled, saved with every batch's replies (`ingest_batch`) so a crash
/// refetches at most the batch it interrupted.
pub async fn save_progress(
    conn: &mut AnyConnection,
    send_account_id: i64,
    uidvalidity: i64,
    last_uid: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE send_accounts SET inbox_uidvalidity = $1, inbox_last_uid = $2 WHERE id = $3",
    )
    .bind(uidvalidity)
    .bind(last_uid)
    .bind(send_account_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Ends a poll: the next one is due at `next_at`; `error` (with the failure
/// count the backoff grew from) or a clean slate; the lease is released.
pub async fn finish_poll(
    db: &Db,
    send_account_id: i64,
    now: i64,
    next_at: i64,
    error: Option<&str>,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE send_accounts SET inbox_next_poll_at = $1, inbox_polled_at = $2,
             inbox_failures = CASE WHEN CAST($3 AS TEXT) IS NULL THEN 0 ELSE inbox_failures + 1 END,
             inbox_error = $3, inbox_lease_owner = NULL, inbox_lease_until = NULL
         WHERE id = $4",
    )
    .bind(next_at)
    .bind(now)
    .bind(error)
    .bind(send_account_id)
    .execute(&db.pool)
    .await?;
    Ok(())
}
