//! SQL of `audiences`. Every query takes the account id, except the
//! evaluation worker's, which reads every account's active audiences.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::model::AudienceFilters;
use crate::domains::facets;
use outreach_core::store::{Backend, Db};

#[derive(Debug, Clone)]
pub struct AudienceRow {
    pub id: i64,
    pub account_id: i64,
    pub name: String,
    pub description: String,
    pub filters: AudienceFilters,
    pub match_count: i64,
    pub new_since_viewed: i64,
    pub is_active: bool,
    pub counted_through: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, account_id, name, description, filters, match_count, \
     new_since_viewed, is_active, counted_through, created_at, updated_at";

fn audience_row(r: &AnyRow) -> sqlx::Result<AudienceRow> {
    let filters: String = r.try_get("filters")?;
    Ok(AudienceRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        name: r.try_get("name")?,
        description: r.try_get("description")?,
        // Written by us from checked filters.
        filters: serde_json::from_str(&filters).unwrap_or_default(),
        match_count: r.try_get::<i64, _>("match_count")?.max(0),
        new_since_viewed: r.try_get("new_since_viewed")?,
        is_active: r.try_get::<i64, _>("is_active")? != 0,
        counted_through: r.try_get("counted_through")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// The changeable fields, already checked.
pub struct Fields<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub filters: &'a AudienceFilters,
    pub is_active: bool,
}

fn filters_text(f: &AudienceFilters) -> String {
    serde_json::to_string(f).unwrap_or_else(|_| "{}".into())
}

pub async fn insert(
    conn: &mut AnyConnection,
    account_id: i64,
    f: &Fields<'_>,
    now: i64,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO audiences (account_id, name, description, filters, is_active, created_at, \
         updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id",
    )
    .bind(account_id)
    .bind(f.name)
    .bind(f.description)
    .bind(filters_text(f.filters))
    .bind(i64::from(f.is_active))
    .bind(now)
    .fetch_one(conn)
    .await
}

/// Makes the pool's events wait until this transaction ends, so that a
/// count taken next reflects exactly the events up to the id returned
/// (see ARCHITECTURE.md "Pool evaluation"). On PostgreSQL a SHARE lock
/// waits for every transaction that wrote pool events (saves, and the
/// worker's claims) and holds new ones back; SQLite already lets one
/// writer at a time, and the caller has written first.
pub async fn lock_pool_events(conn: &mut AnyConnection, backend: Backend) -> sqlx::Result<i64> {
    if backend == Backend::Postgres {
        sqlx::query("LOCK TABLE pool_events IN SHARE MODE")
            .execute(&mut *conn)
            .await?;
    }
    facets::last_event_id(conn).await
}

/// Sets an audience's exact count, taken through `counted_through`.
pub async fn set_count(
    conn: &mut AnyConnection,
    id: i64,
    match_count: i64,
    counted_through: i64,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE audiences SET match_count = $1, counted_through = $2 WHERE id = $3")
        .bind(match_count)
        .bind(counted_through)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn get(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
) -> sqlx::Result<Option<AudienceRow>> {
    let sql = format!("SELECT {COLUMNS} FROM audiences WHERE id = $1 AND account_id = $2");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(account_id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(audience_row)
        .transpose()
}

/// The account's audiences, oldest first.
pub async fn list(db: &Db, account_id: i64) -> sqlx::Result<Vec<AudienceRow>> {
    let sql = format!("SELECT {COLUMNS} FROM audiences WHERE account_id = $1 ORDER BY id");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(audience_row)
        .collect()
}

/// Every account's active audiences (the evaluation worker).
pub async fn active(conn: &mut AnyConnection) -> sqlx::Result<Vec<AudienceRow>> {
    let sql = format!("SELECT {COLUMNS} FROM audiences WHERE is_active = 1 ORDER BY id");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(conn)
        .await?
        .iter()
        .map(audience_row)
        .collect()
}

/// Writes every changeable field; `reset_new` zeroes `new_since_viewed`.
/// Whether the account had the audience.
pub async fn update(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
    f: &Fields<'_>,
    reset_new: bool,
    now: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE audiences SET name = $1, description = $2, filters = $3, is_active = $4, \
         updated_at = $5, new_since_viewed = CASE WHEN $6 = 1 THEN 0 ELSE new_since_viewed END \
         WHERE id = $7 AND account_id = $8",
    )
    .bind(f.name)
    .bind(f.description)
    .bind(filters_text(f.filters))
    .bind(i64::from(f.is_active))
    .bind(now)
    .bind(i64::from(reset_new))
    .bind(id)
    .bind(account_id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Takes the `shown` new matches a view showed off `new_since_viewed`;
/// those that arrived since the view stay counted for the next one.
pub async fn viewed(db: &Db, account_id: i64, id: i64, shown: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE audiences SET new_since_viewed = CASE WHEN new_since_viewed > $1 \
         THEN new_since_viewed - $1 ELSE 0 END WHERE id = $2 AND account_id = $3",
    )
    .bind(shown)
    .bind(id)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Moves an audience's counters by what a batch of pool events did;
/// answers the new `match_count`.
pub async fn add_matches(
    conn: &mut AnyConnection,
    id: i64,
    delta: i64,
    new: i64,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "UPDATE audiences SET match_count = match_count + $1, \
         new_since_viewed = new_since_viewed + $2 WHERE id = $3 RETURNING match_count",
    )
    .bind(delta)
    .bind(new)
    .bind(id)
    .fetch_one(conn)
    .await
}

/// Whether the account had the audience.
pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM audiences WHERE id = $1 AND account_id = $2")
        .bind(id)
        .bind(account_id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}
