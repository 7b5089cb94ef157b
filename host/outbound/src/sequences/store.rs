//! SQL of sequences; every query is scoped to the account.

use sqlx::AnyConnection;
use sqlx::Row;
use sqlx::any::AnyRow;

use outreach_core::store::Db;

/// A sequences row with the read-only counts of spec/1.
#[derive(Debug, Clone)]
pub struct SequenceRow {
    pub id: i64,
    pub account_id: i64,
    pub name: String,
    pub description: Option<String>,
    pub from_name: Option<String>,
    pub from_email: Option<String>,
    pub status: String,
    pub daily_send_limit: i64,
    pub warmup_enabled: bool,
    pub warmup_start_volume: i64,
    pub warmup_increment: i64,
    pub warmup_started_at: Option<i64>,
    pub goal_type: String,
    pub goal_url: Option<String>,
    pub auto_pause_bounce_rate: f64,
    pub enable_unsubscribe: bool,
    /// The caller's JSON object, as given.
    pub settings: String,
    pub send_account_id: Option<i64>,
    /// Why the engine paused the sequence (auto-pause); None when a user did.
    pub paused_reason: Option<String>,
    pub warmup_paused_at: Option<i64>,
    pub warmup_preset: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub step_count: i64,
    pub enrollment_count: i64,
}

const COLUMNS: &str = "s.id, s.account_id, s.name, s.description, s.from_name, s.from_email, \
    s.status, s.daily_send_limit, s.warmup_enabled, s.warmup_start_volume, s.warmup_increment, \
    s.warmup_started_at, s.goal_type, s.goal_url, s.auto_pause_bounce_rate, s.enable_unsubscribe, \
    s.settings, s.send_account_id, s.paused_reason, s.warmup_paused_at, s.warmup_preset, s.created_at, s.updated_at, \
    (SELECT COUNT(*) FROM sequence_steps t WHERE t.sequence_id = s.id) AS step_count, \
    (SELECT COUNT(*) FROM enrollments e WHERE e.sequence_id = s.id) AS enrollment_count";

fn row(r: &AnyRow) -> sqlx::Result<SequenceRow> {
    Ok(SequenceRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        name: r.try_get("name")?,
        description: r.try_get("description")?,
        from_name: r.try_get("from_name")?,
        from_email: r.try_get("from_email")?,
        status: r.try_get("status")?,
        daily_send_limit: r.try_get("daily_send_limit")?,
        warmup_enabled: r.try_get::<i64, _>("warmup_enabled")? != 0,
        warmup_start_volume: r.try_get("warmup_start_volume")?,
        warmup_increment: r.try_get("warmup_increment")?,
        warmup_started_at: r.try_get("warmup_started_at")?,
        goal_type: r.try_get("goal_type")?,
        goal_url: r.try_get("goal_url")?,
        auto_pause_bounce_rate: r.try_get("auto_pause_bounce_rate")?,
        enable_unsubscribe: r.try_get::<i64, _>("enable_unsubscribe")? != 0,
        settings: r.try_get("settings")?,
        send_account_id: r.try_get("send_account_id")?,
        paused_reason: r.try_get("paused_reason")?,
        warmup_paused_at: r.try_get("warmup_paused_at")?,
        warmup_preset: r.try_get("warmup_preset")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        step_count: r.try_get("step_count")?,
        enrollment_count: r.try_get("enrollment_count")?,
    })
}

pub async fn list(db: &Db, account_id: i64) -> sqlx::Result<Vec<SequenceRow>> {
    let sql = format!("SELECT {COLUMNS} FROM sequences s WHERE s.account_id = $1 ORDER BY s.id");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(row)
        .collect()
}

pub async fn get(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
) -> sqlx::Result<Option<SequenceRow>> {
    let sql = format!("SELECT {COLUMNS} FROM sequences s WHERE s.id = $1 AND s.account_id = $2");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(account_id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

/// Inserts `s` (its id, status, counts and timestamps are ignored) as a draft.
pub async fn insert(conn: &mut AnyConnection, s: &SequenceRow, now: i64) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO sequences (account_id, name, description, from_name, from_email, status, \
         daily_send_limit, warmup_enabled, warmup_start_volume, warmup_increment, goal_type, \
         goal_url, auto_pause_bounce_rate, enable_unsubscribe, settings, send_account_id, \
         created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, 'draft', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16) \
         RETURNING id",
    )
    .bind(s.account_id)
    .bind(&s.name)
    .bind(&s.description)
    .bind(&s.from_name)
    .bind(&s.from_email)
    .bind(s.daily_send_limit)
    .bind(s.warmup_enabled as i64)
    .bind(s.warmup_start_volume)
    .bind(s.warmup_increment)
    .bind(&s.goal_type)
    .bind(&s.goal_url)
    .bind(s.auto_pause_bounce_rate)
    .bind(s.enable_unsubscribe as i64)
    .bind(&s.settings)
    .bind(s.send_account_id)
    .bind(now)
    .fetch_one(conn)
    .await
}

/// Writes every writable field and the status of `s`.
pub async fn update(conn: &mut AnyConnection, s: &SequenceRow, now: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE sequences SET name = $1, description = $2, from_name = $3, from_email = $4, \
         status = $5, daily_send_limit = $6, warmup_enabled = $7, warmup_start_volume = $8, \
         warmup_increment = $9, warmup_started_at = $10, goal_type = $11, goal_url = $12, \
         auto_pause_bounce_rate = $13, enable_unsubscribe = $14, settings = $15, \
         send_account_id = $16, paused_reason = $17, warmup_paused_at = $18, \
         warmup_preset = $19, updated_at = $20 WHERE id = $21 AND account_id = $22",
    )
    .bind(&s.name)
    .bind(&s.description)
    .bind(&s.from_name)
    .bind(&s.from_email)
    .bind(&s.status)
    .bind(s.daily_send_limit)
    .bind(s.warmup_enabled as i64)
    .bind(s.warmup_start_volume)
    .bind(s.warmup_increment)
    .bind(s.warmup_started_at)
    .bind(&s.goal_type)
    .bind(&s.goal_url)
    .bind(s.auto_pause_bounce_rate)
    .bind(s.enable_unsubscribe as i64)
    .bind(&s.settings)
    .bind(s.send_account_id)
    .bind(&s.paused_reason)
    .bind(s.warmup_paused_at)
    .bind(&s.warmup_preset)
    .bind(now)
    .bind(s.id)
    .bind(s.account_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Deletes a sequence; its steps, enrollments and mailbox pool go with it
/// (foreign keys with ON DELETE CASCADE).
pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM sequences WHERE id = $1 AND account_id = $2")
        .bind(id)
        .bind(account_id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Copies the mailbox pool of `from` to `to` (clone).
pub async fn copy_pool(conn: &mut AnyConnection, from: i64, to: i64) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO sequence_mailboxes (account_id, sequence_id, send_account_id, position, is_active) \
         SELECT account_id, $2, send_account_id, position, is_active FROM sequence_mailboxes \
         WHERE sequence_id = $1",
    )
    .bind(from)
    .bind(to)
    .execute(conn)
    .await?;
    Ok(())
}

/// Touches the sequence inside a transaction that is about to change its
/// steps, enrollments or pool: the write takes the lock first (see
/// `steps::service`). False when the sequence is not the account's.
pub async fn touch(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
    now: i64,
) -> sqlx::Result<bool> {
    let done =
        sqlx::query("UPDATE sequences SET updated_at = $1 WHERE id = $2 AND account_id = $3")
            .bind(now)
            .bind(id)
            .bind(account_id)
            .execute(conn)
            .await?;
    Ok(done.rows_affected() == 1)
}
