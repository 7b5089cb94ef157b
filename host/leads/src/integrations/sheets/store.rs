//! SQL of the spreadsheet connection: connections, pending authorisations
//! and finished exports. Tokens and verifiers arrive here sealed.

use sqlx::{AnyConnection, Row};

use outreach_core::store::Db;

/// A stored connection; the tokens are sealed (see `oauth::token_aad`).
#[derive(Debug, Clone)]
pub struct Connection {
    pub account_id: i64,
    pub access_token: String,
    pub refresh_token: Option<String>,
    pub expires_at: Option<i64>,
    /// connected or broken.
    pub status: String,
    pub connected_at: i64,
}

pub async fn connection(db: &Db, account_id: i64) -> sqlx::Result<Option<Connection>> {
    let row = sqlx::query(
        "SELECT account_id, access_token, refresh_token, expires_at, status, connected_at \
         FROM sheets_connections WHERE account_id = $1",
    )
    .bind(account_id)
    .fetch_optional(&db.pool)
    .await?;
    row.map(|r| {
        Ok(Connection {
            account_id: r.try_get("account_id")?,
            access_token: r.try_get("access_token")?,
            refresh_token: r.try_get("refresh_token")?,
            expires_at: r.try_get("expires_at")?,
            status: r.try_get("status")?,
            connected_at: r.try_get("connected_at")?,
        })
    })
    .transpose()
}

/// Stores a new connection, replacing an earlier one.
pub async fn connect(conn: &mut AnyConnection, c: &Connection, now: i64) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM sheets_connections WHERE account_id = $1")
        .bind(c.account_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO sheets_connections (account_id, access_token, refresh_token, expires_at, \
         status, connected_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(c.account_id)
    .bind(&c.access_token)
    .bind(c.refresh_token.as_deref())
    .bind(c.expires_at)
    .bind(&c.status)
    .bind(c.connected_at)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// Stores refreshed tokens (a provider may rotate the refresh token).
pub async fn refreshed(
    db: &Db,
    account_id: i64,
    access_token: &str,
    refresh_token: Option<&str>,
    expires_at: Option<i64>,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE sheets_connections SET access_token = $1, \
         refresh_token = COALESCE($2, refresh_token), expires_at = $3, status = 'connected', \
         updated_at = $4 WHERE account_id = $5",
    )
    .bind(access_token)
    .bind(refresh_token)
    .bind(expires_at)
    .bind(now)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(())
}

pub async fn mark_broken(db: &Db, account_id: i64, now: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE sheets_connections SET status = 'broken', updated_at = $1 WHERE account_id = $2",
    )
    .bind(now)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(())
}

pub async fn forget(db: &Db, account_id: i64) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM sheets_connections WHERE account_id = $1")
        .bind(account_id)
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Records an authorisation in progress (and drops expired ones).
pub async fn insert_state(
    db: &Db,
    state_hash: &str,
    account_id: i64,
    sealed_verifier: &str,
    expires_at: i64,
    now: i64,
) -> sqlx::Result<()> {
    let mut tx = db.pool.begin().await?;
    sqlx::query("DELETE FROM sheets_oauth_states WHERE expires_at <= $1")
        .bind(now)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO sheets_oauth_states (state_hash, account_id, pkce_verifier, expires_at) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(state_hash)
    .bind(account_id)
    .bind(sealed_verifier)
    .bind(expires_at)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

/// Takes (deletes and returns) an authorisation: `(account_id, sealed
/// verifier, expires_at)`. A state is good for one callback.
pub async fn take_state(
    conn: &mut AnyConnection,
    state_hash: &str,
) -> sqlx::Result<Option<(i64, String, i64)>> {
    let row = sqlx::query(
        "DELETE FROM sheets_oauth_states WHERE state_hash = $1 \
         RETURNING account_id, pkce_verifier, expires_at",
    )
    .bind(state_hash)
    .fetch_optional(conn)
    .await?;
    row.map(|r| {
        Ok((
            r.try_get("account_id")?,
            r.try_get("pkce_verifier")?,
            r.try_get("expires_at")?,
        ))
    })
    .transpose()
}

pub struct NewExport<'a> {
    pub account_id: i64,
    pub spreadsheet_id: &'a str,
    pub spreadsheet_url: &'a str,
    pub template: &'a str,
    pub list_id: Option<i64>,
    pub row_count: i64,
    pub now: i64,
}

pub async fn insert_export(conn: &mut AnyConnection, e: NewExport<'_>) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO sheets_exports (account_id, spreadsheet_id, spreadsheet_url, template, \
         list_id, row_count, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(e.account_id)
    .bind(e.spreadsheet_id)
    .bind(e.spreadsheet_url)
    .bind(e.template)
    .bind(e.list_id)
    .bind(e.row_count)
    .bind(e.now)
    .fetch_one(conn)
    .await
}
