//! SQL of the pool's messages: written before SMTP, their outcome, what
//! the recipient side saw of them, the answers due.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use outreach_core::store::{Backend, Db, placeholder_list};

use super::store::{Member, Peer};

/// New threads `sender` started with each recipient since `since`.
pub async fn pair_counts(
    db: &Db,
    sender: i64,
    since: i64,
) -> sqlx::Result<std::collections::HashMap<i64, i64>> {
    let rows = sqlx::query(
        "SELECT recipient_id, COUNT(*) FROM smart_warmup_messages
         WHERE sender_id = $1 AND sent_at >= $2 AND depth = 1 GROUP BY recipient_id",
    )
    .bind(sender)
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get::<i64, _>(0)?, r.try_get::<i64, _>(1)?)))
        .collect()
}

/// One pool message (`smart_warmup_messages`).
#[derive(Debug, Clone)]
pub struct PoolMessage {
    pub id: i64,
    pub token: String,
    pub thread_token: String,
    pub depth: i64,
    pub sender_id: i64,
    pub recipient_id: i64,
    pub sender_account_id: i64,
    pub recipient_account_id: i64,
    pub message_id: String,
    pub references_ids: Option<String>,
    pub subject: String,
    pub body: String,
    pub status: String,
    pub sent_at: i64,
    pub placement: Option<String>,
    pub is_read: bool,
    pub reply_due_at: Option<i64>,
    pub replied_at: Option<i64>,
}

impl PoolMessage {
    /// The thread's Message-IDs up to and including this one.
    pub fn thread_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .references_ids
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        ids.push(self.message_id.clone());
        ids
    }
}

const MESSAGE_COLUMNS: &str = "id, token, thread_token, depth, sender_id, recipient_id, \
    sender_account_id, recipient_account_id, message_id, references_ids, subject, body, status, \
    sent_at, placement, is_read, reply_due_at, replied_at";

fn message(r: &AnyRow) -> sqlx::Result<PoolMessage> {
    Ok(PoolMessage {
        id: r.try_get("id")?,
        token: r.try_get("token")?,
        thread_token: r.try_get("thread_token")?,
        depth: r.try_get("depth")?,
        sender_id: r.try_get("sender_id")?,
        recipient_id: r.try_get("recipient_id")?,
        sender_account_id: r.try_get("sender_account_id")?,
        recipient_account_id: r.try_get("recipient_account_id")?,
        message_id: r.try_get("message_id")?,
        references_ids: r.try_get("references_ids")?,
        subject: r.try_get("subject")?,
        body: r.try_get("body")?,
        status: r.try_get("status")?,
        sent_at: r.try_get("sent_at")?,
        placement: r.try_get("placement")?,
        is_read: r.try_get::<i64, _>("is_read")? != 0,
        reply_due_at: r.try_get("reply_due_at")?,
        replied_at: r.try_get("replied_at")?,
    })
}

/// The pool messages carrying any of `tokens`.
pub async fn by_tokens(db: &Db, tokens: &[String]) -> sqlx::Result<Vec<PoolMessage>> {
    if tokens.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS} FROM smart_warmup_messages WHERE token IN ({})",
        placeholder_list(db.backend, 1, tokens.len())
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for t in tokens {
        q = q.bind(t);
    }
    q.fetch_all(&db.pool).await?.iter().map(message).collect()
}

/// Whether any of `tokens` is a pool message's (the inbox leaves those out).
pub async fn any_token_known(
    conn: &mut AnyConnection,
    backend: Backend,
    tokens: &[String],
) -> sqlx::Result<bool> {
    if tokens.is_empty() {
        return Ok(false);
    }
    let sql = format!(
        "SELECT COUNT(*) FROM smart_warmup_messages WHERE token IN ({})",
        placeholder_list(backend, 1, tokens.len())
    );
    let mut q = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql)).persistent(false);
    for t in tokens {
        q = q.bind(t);
    }
    Ok(q.fetch_one(conn).await? > 0)
}

/// Messages to `recipient` whose answer is due, oldest first.
pub async fn due_replies(
    db: &Db,
    recipient: i64,
    now: i64,
    limit: i64,
) -> sqlx::Result<Vec<PoolMessage>> {
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS} FROM smart_warmup_messages
         WHERE recipient_id = $1 AND reply_due_at <= $2 AND replied_at IS NULL
         ORDER BY reply_due_at LIMIT $3"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(recipient)
        .bind(now)
        .bind(limit)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(message)
        .collect()
}

/// A message about to be sent.
pub struct NewMessage<'a> {
    pub token: &'a str,
    pub thread_token: &'a str,
    pub depth: i64,
    pub sender: &'a Member,
    pub recipient: &'a Peer,
    pub message_id: &'a str,
    pub parent_message_id: Option<&'a str>,
    pub references_ids: Option<&'a str>,
    pub subject: &'a str,
    pub body: &'a str,
    pub text_hash: &'a str,
    pub source: &'a str,
    pub ai_tokens: i64,
    pub ai_cost_usd: f64,
    pub day: i64,
    pub now: i64,
}

/// Writes a message as `sending`; `None` when the pool day already has the
/// same text (the caller writes another).
pub async fn insert_message(
    conn: &mut AnyConnection,
    m: &NewMessage<'_>,
) -> sqlx::Result<Option<i64>> {
    sqlx::query_scalar(
        "INSERT INTO smart_warmup_messages (token, thread_token, depth, sender_id, recipient_id,
             sender_account_id, recipient_account_id, recipient_provider, message_id,
             parent_message_id, references_ids, subject, body, text_hash, source, ai_tokens,
             ai_cost_usd, status, day, sent_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
             'sending', $18, $19)
         ON CONFLICT DO NOTHING RETURNING id",
    )
    .bind(m.token)
    .bind(m.thread_token)
    .bind(m.depth)
    .bind(m.sender.send_account_id)
    .bind(m.recipient.send_account_id)
    .bind(m.sender.account_id)
    .bind(m.recipient.account_id)
    .bind(&m.recipient.provider)
    .bind(m.message_id)
    .bind(m.parent_message_id)
    .bind(m.references_ids)
    .bind(m.subject)
    .bind(m.body)
    .bind(m.text_hash)
    .bind(m.source)
    .bind(m.ai_tokens)
    .bind(m.ai_cost_usd)
    .bind(m.day)
    .bind(m.now)
    .fetch_optional(conn)
    .await
}

/// Takes one of the send account's sends of UTC day `utc_day`, unless the
/// daily limit is reached (shared with the sequences' sends). `n = -1`
/// gives one back.
pub async fn take_send(conn: &mut AnyConnection, id: i64, utc_day: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE send_accounts SET
             emails_sent_today = CASE WHEN sent_day = $1 THEN emails_sent_today + 1 ELSE 1 END,
             sent_day = $1
         WHERE id = $2 AND (sent_day <> $1 OR emails_sent_today < daily_send_limit)
           AND daily_send_limit > 0",
    )
    .bind(utc_day)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Counts a sent pool message against the member's warmup day.
pub async fn count_send(conn: &mut AnyConnection, id: i64, day: i64, n: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE smart_warmup_members SET
             sent_on_day = CASE WHEN warmup_day = $1 THEN sent_on_day + $2 ELSE $2 END,
             warmup_day = $1
         WHERE send_account_id = $3",
    )
    .bind(day)
    .bind(n)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// A message's SMTP outcome: `sent`, `bounced` or `failed`.
pub async fn finish_message(
    conn: &mut AnyConnection,
    id: i64,
    status: &str,
    error: Option<&str>,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE smart_warmup_messages SET status = $1, error = $2 WHERE id = $3")
        .bind(status)
        .bind(error)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The parent's answer went out (or will not): no longer due.
pub async fn mark_replied(conn: &mut AnyConnection, id: i64, at: Option<i64>) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE smart_warmup_messages SET replied_at = $1,
             reply_due_at = CASE WHEN $1 IS NULL THEN NULL ELSE reply_due_at END
         WHERE id = $2",
    )
    .bind(at)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// What the recipient side saw of one message: where it was first found,
/// whether it was read and flagged, and when it is answered.
pub async fn record_found(
    conn: &mut AnyConnection,
    id: i64,
    placement: &str,
    now: i64,
    read: bool,
    flagged: bool,
    reply_due_at: Option<i64>,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE smart_warmup_messages SET placement = COALESCE(placement, $1),
             found_at = COALESCE(found_at, $2),
             is_read = CASE WHEN $3 = 1 THEN 1 ELSE is_read END,
             flagged = CASE WHEN $4 = 1 THEN 1 ELSE flagged END,
             reply_due_at = COALESCE(reply_due_at, $5)
         WHERE id = $6",
    )
    .bind(placement)
    .bind(now)
    .bind(read as i64)
    .bind(flagged as i64)
    .bind(reply_due_at)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}
