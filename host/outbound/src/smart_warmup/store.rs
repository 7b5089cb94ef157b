//! SQL of the smart warmup pool: members, their leases, the messages they
//! exchange.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use outreach_core::store::{Backend, Db, placeholder_list};

use super::writing::Persona;

/// One member of the pool (`smart_warmup_members`).
#[derive(Debug, Clone)]
pub struct Member {
    pub send_account_id: i64,
    pub account_id: i64,
    pub email: String,
    /// active, paused, completed, failed.
    pub status: String,
    pub persona: Persona,
    /// The mailbox provider of the member's address (from MX).
    pub provider: String,
    pub started_at: i64,
    pub ramp_origin: i64,
    pub paused_at: Option<i64>,
    pub smtp_failures: i64,
    pub imap_failures: i64,
    pub last_error: Option<String>,
    pub warmup_day: i64,
    pub sent_on_day: i64,
    pub next_send_at: i64,
    pub inbox_uidvalidity: Option<i64>,
    pub inbox_last_uid: i64,
    pub spam_folder: Option<String>,
    pub spam_uidvalidity: Option<i64>,
    pub spam_last_uid: i64,
}

impl Member {
    /// Pool messages the member sent on warmup day `day`.
    pub fn sent_on(&self, day: i64) -> i64 {
        if self.warmup_day == day {
            self.sent_on_day
        } else {
            0
        }
    }
}

const COLUMNS: &str = "send_account_id, account_id, email, status, persona_name, persona_tone, \
    persona_industry, provider, started_at, ramp_origin, paused_at, smtp_failures, imap_failures, \
    last_error, warmup_day, sent_on_day, next_send_at, inbox_uidvalidity, inbox_last_uid, \
    spam_folder, spam_uidvalidity, spam_last_uid";

fn member(r: &AnyRow) -> sqlx::Result<Member> {
    Ok(Member {
        send_account_id: r.try_get("send_account_id")?,
        account_id: r.try_get("account_id")?,
        email: r.try_get("email")?,
        status: r.try_get("status")?,
        persona: Persona {
            name: r.try_get("persona_name")?,
            tone: r.try_get("persona_tone")?,
            industry_context: r.try_get("persona_industry")?,
        },
        provider: r.try_get("provider")?,
        started_at: r.try_get("started_at")?,
        ramp_origin: r.try_get("ramp_origin")?,
        paused_at: r.try_get("paused_at")?,
        smtp_failures: r.try_get("smtp_failures")?,
        imap_failures: r.try_get("imap_failures")?,
        last_error: r.try_get("last_error")?,
        warmup_day: r.try_get("warmup_day")?,
        sent_on_day: r.try_get("sent_on_day")?,
        next_send_at: r.try_get("next_send_at")?,
        inbox_uidvalidity: r.try_get("inbox_uidvalidity")?,
        inbox_last_uid: r.try_get("inbox_last_uid")?,
        spam_folder: r.try_get("spam_folder")?,
        spam_uidvalidity: r.try_get("spam_uidvalidity")?,
        spam_last_uid: r.try_get("spam_last_uid")?,
    })
}

/// A send account joining the pool.
pub struct NewMember {
    pub send_account_id: i64,
    pub account_id: i64,
    pub email: String,
    pub persona: Persona,
    pub provider: String,
    pub now: i64,
}

/// Adds a member, due at once on both sides; `false` when it is one already.
pub async fn insert_member(conn: &mut AnyConnection, m: &NewMember) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "INSERT INTO smart_warmup_members (send_account_id, account_id, email, status,
             persona_name, persona_tone, persona_industry, provider, started_at, ramp_origin,
             next_send_at, next_scan_at, updated_at)
         VALUES ($1, $2, $3, 'active', $4, $5, $6, $7, $8, $8, $8, $8, $8)
         ON CONFLICT DO NOTHING",
    )
    .bind(m.send_account_id)
    .bind(m.account_id)
    .bind(&m.email)
    .bind(&m.persona.name)
    .bind(&m.persona.tone)
    .bind(&m.persona.industry_context)
    .bind(&m.provider)
    .bind(m.now)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 1 {
        set_send_account(conn, m.send_account_id, "warming", true, None, m.now).await?;
    }
    Ok(done.rows_affected() == 1)
}

/// The send account's side of a membership change: its `status`,
/// `warmup_enabled` and, when given, `warmup_progress_pct`.
pub async fn set_send_account(
    conn: &mut AnyConnection,
    send_account_id: i64,
    status: &str,
    warmup_enabled: bool,
    progress: Option<f64>,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE send_accounts SET status = $1, warmup_enabled = $2,
             warmup_progress_pct = COALESCE($3, warmup_progress_pct), updated_at = $4
         WHERE id = $5",
    )
    .bind(status)
    .bind(warmup_enabled as i64)
    .bind(progress)
    .bind(now)
    .bind(send_account_id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get(db: &Db, send_account_id: i64) -> sqlx::Result<Option<Member>> {
    let sql = format!("SELECT {COLUMNS} FROM smart_warmup_members WHERE send_account_id = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(send_account_id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(member)
        .transpose()
}

/// The members of one tenant.
pub async fn of_account(db: &Db, account_id: i64) -> sqlx::Result<Vec<Member>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM smart_warmup_members WHERE account_id = $1 ORDER BY send_account_id"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(member)
        .collect()
}

/// Which side of the exchange a lease is for.
#[derive(Debug, Clone, Copy)]
pub enum Side {
    /// Writing and sending (`next_send_at`); active members.
    Send,
    /// Reading the mailbox (`next_scan_at`); active and completed members.
    Scan,
}

impl Side {
    fn columns(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Side::Send => (
                "next_send_at",
                "send_lease_until",
                "send_lease_owner",
                "'active'",
            ),
            Side::Scan => (
                "next_scan_at",
                "scan_lease_until",
                "scan_lease_owner",
                "'active', 'completed'",
            ),
        }
    }
}

/// Leases up to `limit` members whose `side` is due to `owner` until
/// `until`. PostgreSQL skips rows another server is claiming; SQLite's
/// single writer makes the statement atomic.
pub async fn claim(
    db: &Db,
    side: Side,
    owner: &str,
    now: i64,
    until: i64,
    limit: i64,
) -> sqlx::Result<Vec<Member>> {
    let (due, lease, holder, statuses) = side.columns();
    let lock = match db.backend {
        Backend::Postgres => "FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "UPDATE smart_warmup_members SET {holder} = $1, {lease} = $2 WHERE send_account_id IN (
             SELECT send_account_id FROM smart_warmup_members
             WHERE status IN ({statuses}) AND {due} <= $3 AND ({lease} IS NULL OR {lease} < $3)
             ORDER BY {due} LIMIT $4 {lock})
         RETURNING {COLUMNS}"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(owner)
        .bind(until)
        .bind(now)
        .bind(limit)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(member)
        .collect()
}

/// Gives a lease back with the member's next due time on that side.
pub async fn release(db: &Db, side: Side, id: i64, owner: &str, next_at: i64) -> sqlx::Result<()> {
    let (due, lease, holder, _) = side.columns();
    let sql = format!(
        "UPDATE smart_warmup_members SET {due} = $1, {lease} = NULL, {holder} = NULL
         WHERE send_account_id = $2 AND {holder} = $3"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(next_at)
        .bind(id)
        .bind(owner)
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Brings the member's send side forward to `at` (a reply fell due).
pub async fn send_by(conn: &mut AnyConnection, id: i64, at: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE smart_warmup_members SET next_send_at = $1
         WHERE send_account_id = $2 AND next_send_at > $1",
    )
    .bind(at)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Records a login's outcome on one protocol: success clears its count of
/// consecutive authentication failures, a failure adds one and keeps the
/// server's words. Returns the count.
pub async fn note_login(
    db: &Db,
    id: i64,
    protocol: Protocol,
    error: Option<&str>,
    now: i64,
) -> sqlx::Result<i64> {
    let column = match protocol {
        Protocol::Smtp => "smtp_failures",
        Protocol::Imap => "imap_failures",
    };
    let sql = match error {
        None => format!(
            "UPDATE smart_warmup_members SET {column} = 0, updated_at = $1
             WHERE send_account_id = $2 RETURNING {column}"
        ),
        Some(_) => format!(
            "UPDATE smart_warmup_members SET {column} = {column} + 1, last_error = $3,
                 updated_at = $1
             WHERE send_account_id = $2 RETURNING {column}"
        ),
    };
    let mut q = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql))
        .bind(now)
        .bind(id);
    if let Some(e) = error {
        q = q.bind(e);
    }
    Ok(q.fetch_optional(&db.pool).await?.unwrap_or(0))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Smtp,
    Imap,
}

/// The pool's active members as recipients: id, tenant, address, persona
/// name, provider.
#[derive(Debug, Clone)]
pub struct Peer {
    pub send_account_id: i64,
    pub account_id: i64,
    pub email: String,
    pub name: String,
    pub provider: String,
}

pub async fn active_peers(db: &Db) -> sqlx::Result<Vec<Peer>> {
    sqlx::query(
        "SELECT send_account_id, account_id, email, persona_name, provider
         FROM smart_warmup_members WHERE status = 'active' ORDER BY send_account_id",
    )
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| {
        Ok(Peer {
            send_account_id: r.try_get(0)?,
            account_id: r.try_get(1)?,
            email: r.try_get(2)?,
            name: r.try_get(3)?,
            provider: r.try_get(4)?,
        })
    })
    .collect()
}

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

/// Saves where the recipient side stands in a folder.
pub async fn save_progress(
    db: &Db,
    id: i64,
    spam: bool,
    folder: Option<&str>,
    uidvalidity: i64,
    last_uid: i64,
) -> sqlx::Result<()> {
    let sql = if spam {
        "UPDATE smart_warmup_members SET spam_folder = $1, spam_uidvalidity = $2,
             spam_last_uid = $3 WHERE send_account_id = $4"
    } else {
        "UPDATE smart_warmup_members SET spam_folder = COALESCE($1, spam_folder),
             inbox_uidvalidity = $2, inbox_last_uid = $3 WHERE send_account_id = $4"
    };
    sqlx::query(sql)
        .bind(folder)
        .bind(uidvalidity)
        .bind(last_uid)
        .bind(id)
        .execute(&db.pool)
        .await?;
    Ok(())
}
