//! SQL for API keys.

use sqlx::Row;
use sqlx::any::AnyRow;

use crate::store::{Backend, Db, value_rows};

pub struct InsertKey<'a> {
    pub account_id: i64,
    pub user_id: Option<i64>,
    pub reseller_client_id: Option<i64>,
    pub name: &'a str,
    pub lookup: &'a str,
    pub key_hash: &'a str,
    pub preview: &'a str,
    pub allowed_ips: String,
    pub allowed_groups: String,
    pub now: i64,
}

pub async fn insert(db: &Db, k: InsertKey<'_>) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO api_keys (account_id, user_id, reseller_client_id, name, lookup, key_hash, \
         preview, allowed_ips, allowed_groups, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
    )
    .bind(k.account_id)
    .bind(k.user_id)
    .bind(k.reseller_client_id)
    .bind(k.name)
    .bind(k.lookup)
    .bind(k.key_hash)
    .bind(k.preview)
    .bind(k.allowed_ips)
    .bind(k.allowed_groups)
    .bind(k.now)
    .fetch_one(&db.pool)
    .await
}

const LIST_COLUMNS: &str = "id, name, preview, reseller_client_id, allowed_ips, allowed_groups, \
     request_count, last_used_at, revoked_at, created_at";

pub async fn list(db: &Db, account_id: i64) -> sqlx::Result<Vec<AnyRow>> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {LIST_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY id"
    )))
    .bind(account_id)
    .fetch_all(&db.pool)
    .await
}

pub async fn get(db: &Db, account_id: i64, key_id: i64) -> sqlx::Result<Option<AnyRow>> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {LIST_COLUMNS} FROM api_keys WHERE account_id = $1 AND id = $2"
    )))
    .bind(account_id)
    .bind(key_id)
    .fetch_optional(&db.pool)
    .await
}

pub async fn count_active(db: &Db, account_id: i64) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL \
         AND reseller_client_id IS NULL",
    )
    .bind(account_id)
    .fetch_one(&db.pool)
    .await
}

/// Revokes a key of the account; false when it is not the account's or
/// already revoked.
pub async fn revoke(db: &Db, account_id: i64, key_id: i64, now: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND id = $3 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(account_id)
    .bind(key_id)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Everything authentication needs about a key, its account and its
/// reseller client, in one round trip.
pub async fn find_for_auth(db: &Db, lookup: &str) -> sqlx::Result<Option<AnyRow>> {
    sqlx::query(
        "SELECT k.id, k.account_id, k.user_id, k.reseller_client_id, k.key_hash, k.allowed_ips, \
         k.allowed_groups, k.revoked_at, a.name AS account_name, a.plan, a.status, a.billing_day, \
         a.created_at AS account_created_at, \
         c.disabled AS client_disabled, c.monthly_quota AS client_quota, \
         c.created_at AS client_created_at \
         FROM api_keys k JOIN accounts a ON a.id = k.account_id \
         LEFT JOIN reseller_clients c ON c.id = k.reseller_client_id \
         WHERE k.lookup = $1",
    )
    .bind(lookup)
    .fetch_optional(&db.pool)
    .await
}

/// Adds batched request counts to keys (called by the usage writer): one
/// statement for the whole batch, `(key id, requests, last used at)` each.
/// A CTE with named columns reads the same on SQLite and PostgreSQL.
pub async fn add_usage(
    conn: &mut sqlx::AnyConnection,
    backend: Backend,
    per_key: &[(i64, i64, i64)],
) -> sqlx::Result<()> {
    if per_key.is_empty() {
        return Ok(());
    }
    // Built from parameter numbers only.
    let sql = format!(
        "WITH v(id, n, last) AS (VALUES {}) \
         UPDATE api_keys SET request_count = request_count + v.n, \
         last_used_at = CASE WHEN api_keys.last_used_at IS NULL OR api_keys.last_used_at < v.last \
         THEN v.last ELSE api_keys.last_used_at END \
         FROM v WHERE api_keys.id = v.id",
        value_rows(backend, per_key.len(), 3)
    );
    // Not cached: the text differs with the row count, and a prepared
    // statement per count on every pooled connection would grow memory.
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for (id, n, last) in per_key {
        query = query.bind(*id).bind(*n).bind(*last);
    }
    query.execute(conn).await?;
    Ok(())
}

pub fn json_list(row: &AnyRow, column: &str) -> Vec<String> {
    row.try_get::<String, _>(column)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}
