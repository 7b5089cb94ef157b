//! SQL of saved connections. Every query takes the account id, so another
//! account's id reads as absent.

use std::collections::BTreeMap;

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use outreach_core::store::Db;

/// A stored connection; `headers` holds the sealed values.
#[derive(Debug, Clone)]
pub struct ConnectionRow {
    pub id: i64,
    pub name: String,
    pub base_url: String,
    pub auth_type: String,
    pub description: String,
    pub headers: BTreeMap<String, String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, name, base_url, auth_type, description, headers, created_at, updated_at";

fn row(r: &AnyRow) -> sqlx::Result<ConnectionRow> {
    let headers: String = r.try_get("headers")?;
    Ok(ConnectionRow {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        base_url: r.try_get("base_url")?,
        auth_type: r.try_get("auth_type")?,
        description: r.try_get("description")?,
        // Written by us from a map.
        headers: serde_json::from_str(&headers).unwrap_or_default(),
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// The fields a write sets; `headers` are sealed values.
pub struct Fields<'a> {
    pub name: &'a str,
    pub base_url: &'a str,
    pub auth_type: &'a str,
    pub description: &'a str,
}

/// Inserts a connection without headers: their sealing names the row's
/// id, which [`set_headers`] then writes in the same transaction.
pub async fn insert(
    conn: &mut AnyConnection,
    account_id: i64,
    f: &Fields<'_>,
    now: i64,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO saved_connections (account_id, name, base_url, auth_type, description, \
         headers, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, '{}', $6, $6) RETURNING id",
    )
    .bind(account_id)
    .bind(f.name)
    .bind(f.base_url)
    .bind(f.auth_type)
    .bind(f.description)
    .bind(now)
    .fetch_one(conn)
    .await
}

pub async fn update(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
    f: &Fields<'_>,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE saved_connections SET name = $1, base_url = $2, auth_type = $3, \
         description = $4, updated_at = $5 WHERE account_id = $6 AND id = $7",
    )
    .bind(f.name)
    .bind(f.base_url)
    .bind(f.auth_type)
    .bind(f.description)
    .bind(now)
    .bind(account_id)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn set_headers(
    conn: &mut AnyConnection,
    id: i64,
    sealed: &BTreeMap<String, String>,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE saved_connections SET headers = $1 WHERE id = $2")
        .bind(serde_json::to_string(sealed).unwrap_or_else(|_| "{}".into()))
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Stamps `updated_at`: the first statement of an update's transaction, so
/// that on SQLite it holds the write lock before it reads (a transaction
/// that reads first cannot upgrade when another process wrote meanwhile).
/// False when the account has no such connection.
pub async fn touch(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
    now: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE saved_connections SET updated_at = $1 WHERE account_id = $2 AND id = $3",
    )
    .bind(now)
    .bind(account_id)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

pub async fn get(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
) -> sqlx::Result<Option<ConnectionRow>> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM saved_connections WHERE account_id = $1 AND id = $2"
    )))
    .bind(account_id)
    .bind(id)
    .fetch_optional(conn)
    .await?
    .map(|r| row(&r))
    .transpose()
}

pub async fn list(db: &Db, account_id: i64) -> sqlx::Result<Vec<ConnectionRow>> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM saved_connections WHERE account_id = $1 ORDER BY id"
    )))
    .bind(account_id)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(row)
    .collect()
}

pub async fn exists(conn: &mut AnyConnection, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let found: Option<i64> =
        sqlx::query_scalar("SELECT id FROM saved_connections WHERE account_id = $1 AND id = $2")
            .bind(account_id)
            .bind(id)
            .fetch_optional(conn)
            .await?;
    Ok(found.is_some())
}

pub async fn delete(conn: &mut AnyConnection, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM saved_connections WHERE account_id = $1 AND id = $2")
        .bind(account_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}
