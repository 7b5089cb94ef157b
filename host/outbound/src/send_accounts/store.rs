//! SQL of send accounts; every query is scoped to the account.

use sqlx::Row;
use sqlx::any::AnyRow;

use outreach_core::store::{Db, id_list, placeholder};

#[derive(Debug, Clone)]
pub struct SendAccountRow {
    pub id: i64,
    pub account_id: i64,
    pub email: String,
    pub display_name: Option<String>,
    pub provider: String,
    pub status: String,
    pub warmup_enabled: bool,
    pub warmup_progress_pct: f64,
    pub daily_send_limit: i64,
    pub emails_sent_today: i64,
    pub sent_day: i64,
    pub smtp_host: String,
    pub smtp_port: i64,
    pub smtp_encryption: String,
    pub imap_host: String,
    pub imap_port: i64,
    /// Sealed JSON of the four credentials; opened only by `service::credentials`.
    pub credentials: String,
    pub smtp_verified: bool,
    pub imap_verified: bool,
    pub connected_at: i64,
    pub last_activity_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, account_id, email, display_name, provider, status, warmup_enabled, \
    warmup_progress_pct, daily_send_limit, emails_sent_today, sent_day, smtp_host, smtp_port, \
    smtp_encryption, imap_host, imap_port, credentials, smtp_verified, imap_verified, \
    connected_at, last_activity_at, created_at, updated_at";

fn row(r: &AnyRow) -> sqlx::Result<SendAccountRow> {
    Ok(SendAccountRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        email: r.try_get("email")?,
        display_name: r.try_get("display_name")?,
        provider: r.try_get("provider")?,
        status: r.try_get("status")?,
        warmup_enabled: r.try_get::<i64, _>("warmup_enabled")? != 0,
        warmup_progress_pct: r.try_get("warmup_progress_pct")?,
        daily_send_limit: r.try_get("daily_send_limit")?,
        emails_sent_today: r.try_get("emails_sent_today")?,
        sent_day: r.try_get("sent_day")?,
        smtp_host: r.try_get("smtp_host")?,
        smtp_port: r.try_get("smtp_port")?,
        smtp_encryption: r.try_get("smtp_encryption")?,
        imap_host: r.try_get("imap_host")?,
        imap_port: r.try_get("imap_port")?,
        credentials: r.try_get("credentials")?,
        smtp_verified: r.try_get::<i64, _>("smtp_verified")? != 0,
        imap_verified: r.try_get::<i64, _>("imap_verified")? != 0,
        connected_at: r.try_get("connected_at")?,
        last_activity_at: r.try_get("last_activity_at")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

pub async fn get(db: &Db, account_id: i64, id: i64) -> sqlx::Result<Option<SendAccountRow>> {
    let sql = format!("SELECT {COLUMNS} FROM send_accounts WHERE id = $1 AND account_id = $2");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(account_id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

/// The account's send account for `email`, compared case-insensitively.
pub async fn find_by_email(
    db: &Db,
    account_id: i64,
    email: &str,
) -> sqlx::Result<Option<SendAccountRow>> {
    let sql = format!("SELECT {COLUMNS} FROM send_accounts WHERE account_id = $1 AND email = $2");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .bind(email.trim().to_lowercase())
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

/// Inserts a verified account; `seal` turns the row id into the sealed
/// credentials (the id is their associated data). `Ok(None)` when the
/// address is connected already.
pub async fn insert(
    db: &Db,
    a: &SendAccountRow,
    seal: impl FnOnce(i64) -> String,
) -> sqlx::Result<Option<i64>> {
    insert_joining(db, a, seal, None).await
}

/// [`insert`], and with `join` the account's membership of the smart
/// warmup pool in the same transaction (its id filled in here).
pub async fn insert_joining(
    db: &Db,
    a: &SendAccountRow,
    seal: impl FnOnce(i64) -> String,
    join: Option<crate::smart_warmup::store::NewMember>,
) -> sqlx::Result<Option<i64>> {
    let mut tx = db.pool.begin().await?;
    let inserted: Option<i64> = sqlx::query_scalar(
        "INSERT INTO send_accounts (account_id, email, display_name, provider, status, \
         warmup_enabled, daily_send_limit, smtp_host, smtp_port, smtp_encryption, imap_host, \
         imap_port, credentials, smtp_verified, imap_verified, connected_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, '', $13, $14, $15, $15, $15) \
         ON CONFLICT DO NOTHING RETURNING id",
    )
    .bind(a.account_id)
    .bind(&a.email)
    .bind(&a.display_name)
    .bind(&a.provider)
    .bind(&a.status)
    .bind(a.warmup_enabled as i64)
    .bind(a.daily_send_limit)
    .bind(&a.smtp_host)
    .bind(a.smtp_port)
    .bind(&a.smtp_encryption)
    .bind(&a.imap_host)
    .bind(a.imap_port)
    .bind(a.smtp_verified as i64)
    .bind(a.imap_verified as i64)
    .bind(a.connected_at)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(id) = inserted else {
        return Ok(None);
    };
    sqlx::query("UPDATE send_accounts SET credentials = $1 WHERE id = $2")
        .bind(seal(id))
        .bind(id)
        .execute(&mut *tx)
        .await?;
    if let Some(mut member) = join {
        member.send_account_id = id;
        crate::smart_warmup::store::insert_member(&mut tx, &member).await?;
    }
    tx.commit().await?;
    Ok(Some(id))
}

/// One page, oldest first, with the total, optionally filtered.
pub async fn list(
    db: &Db,
    account_id: i64,
    status: Option<&str>,
    provider: Option<&str>,
    limit: i64,
    offset: i64,
) -> sqlx::Result<(Vec<SendAccountRow>, i64)> {
    // Every parameter through `placeholder`: SQLite's anonymous ones bind in
    // order and cannot be mixed with numbered ones.
    let mut filter = format!("account_id = {}", placeholder(db.backend, 1));
    let mut binds: Vec<&str> = Vec::new();
    for (column, value) in [("status", status), ("provider", provider)] {
        if let Some(v) = value {
            binds.push(v);
            filter.push_str(&format!(
                " AND {column} = {}",
                placeholder(db.backend, binds.len() + 1)
            ));
        }
    }
    let n = binds.len();
    let sql = format!(
        "SELECT {COLUMNS} FROM send_accounts WHERE {filter} ORDER BY id LIMIT {} OFFSET {}",
        placeholder(db.backend, n + 2),
        placeholder(db.backend, n + 3)
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(account_id);
    let count_sql = format!("SELECT COUNT(*) FROM send_accounts WHERE {filter}");
    let mut c = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(count_sql)).bind(account_id);
    for b in &binds {
        q = q.bind(*b);
        c = c.bind(*b);
    }
    let rows = q
        .bind(limit)
        .bind(offset)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(row)
        .collect::<sqlx::Result<_>>()?;
    Ok((rows, c.fetch_one(&db.pool).await?))
}

pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM send_accounts WHERE id = $1 AND account_id = $2")
        .bind(id)
        .bind(account_id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// The account's send accounts among `ids`, in any order.
pub async fn owned_ids(db: &Db, account_id: i64, ids: &[i64]) -> sqlx::Result<Vec<i64>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT id FROM send_accounts WHERE account_id = $1 AND id IN ({})",
        id_list(ids)
    );
    sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(account_id)
        .fetch_all(&db.pool)
        .await
}
