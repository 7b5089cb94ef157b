//! SQL of the smart warmup pool: members, their leases, the messages they
//! exchange.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use outreach_core::store::{Backend, Db};

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
