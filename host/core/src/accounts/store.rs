//! SQL for accounts, users and reseller clients.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use crate::store::Db;

#[derive(Debug, Clone)]
pub struct AccountRow {
    pub id: i64,
    pub name: String,
    pub plan: String,
    pub status: String,
    pub billing_day: i64,
    pub created_at: i64,
}

#[derive(Debug, Clone)]
pub struct UserRow {
    pub id: i64,
    pub account_id: i64,
    pub email: String,
    pub password_hash: Option<String>,
    pub role: String,
    pub totp_secret: Option<String>,
    pub totp_enabled: bool,
    pub totp_last_step: Option<i64>,
    pub created_at: i64,
}

fn account(row: &AnyRow) -> sqlx::Result<AccountRow> {
    Ok(AccountRow {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        plan: row.try_get("plan")?,
        status: row.try_get("status")?,
        billing_day: row.try_get("billing_day")?,
        created_at: row.try_get("created_at")?,
    })
}

fn user(row: &AnyRow) -> sqlx::Result<UserRow> {
    Ok(UserRow {
        id: row.try_get("id")?,
        account_id: row.try_get("account_id")?,
        email: row.try_get("email")?,
        password_hash: row.try_get("password_hash")?,
        role: row.try_get("role")?,
        totp_secret: row.try_get("totp_secret")?,
        totp_enabled: row.try_get::<i64, _>("totp_enabled")? != 0,
        totp_last_step: row.try_get("totp_last_step")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn insert_account(
    conn: &mut AnyConnection,
    name: &str,
    plan: &str,
    billing_day: u32,
    now: i64,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO accounts (name, plan, status, billing_day, created_at, updated_at) \
         VALUES ($1, $2, 'active', $3, $4, $4) RETURNING id",
    )
    .bind(name)
    .bind(plan)
    .bind(billing_day as i64)
    .bind(now)
    .fetch_one(conn)
    .await
}

pub async fn insert_user(
    conn: &mut AnyConnection,
    account_id: i64,
    email: &str,
    password_hash: Option<&str>,
    role: &str,
    now: i64,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO users (account_id, email, password_hash, role, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(account_id)
    .bind(email)
    .bind(password_hash)
    .bind(role)
    .bind(now)
    .fetch_one(conn)
    .await
}

pub async fn get_account(db: &Db, id: i64) -> sqlx::Result<Option<AccountRow>> {
    sqlx::query("SELECT * FROM accounts WHERE id = $1")
        .bind(id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(account)
        .transpose()
}

pub async fn set_plan(db: &Db, id: i64, plan: &str, now: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("UPDATE accounts SET plan = $1, updated_at = $2 WHERE id = $3")
        .bind(plan)
        .bind(now)
        .bind(id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn set_status(db: &Db, id: i64, status: &str, now: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("UPDATE accounts SET status = $1, updated_at = $2 WHERE id = $3")
        .bind(status)
        .bind(now)
        .bind(id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn user_by_email(db: &Db, email: &str) -> sqlx::Result<Option<UserRow>> {
    sqlx::query("SELECT * FROM users WHERE email = $1")
        .bind(email)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(user)
        .transpose()
}

pub async fn user_by_id(db: &Db, id: i64) -> sqlx::Result<Option<UserRow>> {
    sqlx::query("SELECT * FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(user)
        .transpose()
}

pub async fn members(db: &Db, account_id: i64) -> sqlx::Result<Vec<UserRow>> {
    sqlx::query("SELECT * FROM users WHERE account_id = $1 ORDER BY id")
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(user)
        .collect()
}

pub async fn set_password(db: &Db, user_id: i64, hash: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
        .bind(hash)
        .bind(user_id)
        .execute(&db.pool)
        .await?;
    Ok(())
}

pub async fn set_totp(
    db: &Db,
    user_id: i64,
    secret: Option<&str>,
    enabled: bool,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE users SET totp_secret = $1, totp_enabled = $2, totp_last_step = NULL WHERE id = $3",
    )
    .bind(secret)
    .bind(enabled as i64)
    .bind(user_id)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Records the time step of an accepted TOTP code; false when that step (or
/// a later one) was already used, which makes each code single-use even when
/// two logins race.
pub async fn consume_totp_step(db: &Db, user_id: i64, step: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE users SET totp_last_step = $1 WHERE id = $2 \
         AND (totp_last_step IS NULL OR totp_last_step < $1)",
    )
    .bind(step)
    .bind(user_id)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn setting(db: &Db, key: &str) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
        .bind(key)
        .fetch_optional(&db.pool)
        .await
}

/// Claims one turn of a periodic job shared by every server on the
/// database: true for exactly one caller per period. The setting `key`
/// holds the next due time (milliseconds); a caller that finds it due moves
/// it `every_ms` past `now_ms` with a compare-and-set on the value it read,
/// so of two servers that read the same due time only one wins. A missing
/// setting is due (its insert is the compare-and-set).
pub async fn claim_due(db: &Db, key: &str, now_ms: i64, every_ms: i64) -> sqlx::Result<bool> {
    let next = (now_ms + every_ms).to_string();
    let Some(current) = setting(db, key).await? else {
        return claim_setting(db, key, &next).await;
    };
    // An unreadable value (written by hand) counts as due, and is replaced.
    if current.parse::<i64>().is_ok_and(|due| due > now_ms) {
        return Ok(false);
    }
    let done = sqlx::query("UPDATE settings SET value = $1 WHERE key = $2 AND value = $3")
        .bind(&next)
        .bind(key)
        .bind(&current)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Sets a setting only if absent; true when this call set it. Used to make
/// first-start bootstrap happen once even with several processes starting.
pub async fn claim_setting(db: &Db, key: &str, value: &str) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
    )
    .bind(key)
    .bind(value)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}
