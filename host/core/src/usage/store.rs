//! SQL for usage events.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::recorder::UsageEvent;
use crate::store::{Backend, Db, value_rows};

const COLUMNS: usize = 13;

pub async fn insert_events(
    conn: &mut AnyConnection,
    backend: Backend,
    events: &[UsageEvent],
) -> sqlx::Result<()> {
    let sql = format!(
        "INSERT INTO usage_events (request_id, account_id, api_key_id, reseller_client_id, ts, method, \
         endpoint, category, status, response_time_ms, filters_summary, results_count, billable) VALUES {}",
        value_rows(backend, events.len(), COLUMNS)
    );
    // The text is built from fixed fragments and parameter numbers only.
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for e in events {
        query = query
            .bind(uuid::Uuid::now_v7().to_string())
            .bind(e.account_id)
            .bind(e.api_key_id)
            .bind(e.reseller_client_id)
            .bind(e.ts_ms)
            .bind(e.method.clone())
            .bind(e.endpoint.clone())
            .bind(e.category.clone())
            .bind(e.status as i64)
            .bind(e.response_time_ms)
            .bind(e.filters_summary.clone())
            .bind(e.results_count)
            .bind(e.billable as i64);
    }
    query.execute(conn).await?;
    Ok(())
}

/// Who a quota belongs to: an account, or a reseller client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuotaSubject {
    Account(i64),
    ResellerClient(i64),
}

pub async fn billable_since(db: &Db, subject: QuotaSubject, since: i64) -> sqlx::Result<i64> {
    let (sql, id) = match subject {
        QuotaSubject::Account(id) => (
            "SELECT COUNT(*) FROM usage_events WHERE account_id = $1 AND ts >= $2 AND billable = 1 \
             AND reseller_client_id IS NULL",
            id,
        ),
        QuotaSubject::ResellerClient(id) => (
            "SELECT COUNT(*) FROM usage_events WHERE reseller_client_id = $1 AND ts >= $2 AND billable = 1",
            id,
        ),
    };
    sqlx::query_scalar(sql)
        .bind(id)
        .bind(since)
        .fetch_one(&db.pool)
        .await
}

pub async fn count_since(db: &Db, account_id: i64, since: i64) -> sqlx::Result<i64> {
    sqlx::query_scalar("SELECT COUNT(*) FROM usage_events WHERE account_id = $1 AND ts >= $2")
        .bind(account_id)
        .bind(since)
        .fetch_one(&db.pool)
        .await
}

/// Counts per bucket of `bucket_ms` since `since`: `(bucket index, count)`.
pub async fn per_bucket(
    db: &Db,
    account_id: i64,
    since: i64,
    bucket_ms: i64,
) -> sqlx::Result<Vec<(i64, i64)>> {
    let rows = sqlx::query(
        "SELECT ts / $1 AS bucket, COUNT(*) AS n FROM usage_events \
         WHERE account_id = $2 AND ts >= $3 GROUP BY bucket ORDER BY bucket",
    )
    .bind(bucket_ms)
    .bind(account_id)
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("bucket")?, r.try_get("n")?)))
        .collect()
}

/// Counts grouped by a column (`endpoint` or `category`), largest first.
pub async fn grouped(
    db: &Db,
    account_id: i64,
    since: i64,
    column: GroupColumn,
    limit: i64,
) -> sqlx::Result<Vec<(String, i64)>> {
    let column = match column {
        GroupColumn::Endpoint => "endpoint",
        GroupColumn::Category => "category",
    };
    // `column` is one of two fixed names above, never caller input.
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {column} AS name, COUNT(*) AS n FROM usage_events \
         WHERE account_id = $1 AND ts >= $2 GROUP BY {column} ORDER BY n DESC, name LIMIT $3"
    )))
    .bind(account_id)
    .bind(since)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("name")?, r.try_get("n")?)))
        .collect()
}

#[derive(Debug, Clone, Copy)]
pub enum GroupColumn {
    Endpoint,
    Category,
}

pub async fn recent(db: &Db, account_id: i64, limit: i64) -> sqlx::Result<Vec<AnyRow>> {
    sqlx::query(
        "SELECT request_id, ts, method, endpoint, status, response_time_ms, filters_summary, \
         results_count FROM usage_events WHERE account_id = $1 ORDER BY ts DESC, id DESC LIMIT $2",
    )
    .bind(account_id)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
}
