//! SQL for usage: raw events (kept only for recent activity), rollups per
//! hour and day, monthly billable totals, and the pruning of what ages out.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::recorder::UsageEvent;
use crate::store::{Backend, Db, value_rows};

pub const HOUR_MS: i64 = 3_600_000;
pub const DAY_MS: i64 = 86_400_000;

const COLUMNS: usize = 13;

pub async fn insert_events(
    conn: &mut AnyConnection,
    backend: Backend,
    events: &[&UsageEvent],
) -> sqlx::Result<()> {
    let sql = format!(
        "INSERT INTO usage_events (request_id, account_id, api_key_id, reseller_client_id, ts, method, \
         endpoint, category, status, response_time_ms, filters_summary, results_count, billable) VALUES {}",
        value_rows(backend, events.len(), COLUMNS)
    );
    // The text is built from fixed fragments and parameter numbers only.
    // Not cached: the text differs with the row count, and a prepared
    // statement per count on every pooled connection would grow memory.
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for e in events {
        query = query
            .bind(uuid::Uuid::now_v7().to_string())
            .bind(e.account_id)
            .bind(e.api_key_id)
            .bind(e.reseller_client_id)
            .bind(e.ts_ms)
            .bind(e.method)
            .bind(e.endpoint)
            .bind(e.category)
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

impl QuotaSubject {
    /// The name of its shared counters (`limit_windows.scope`).
    pub fn scope(self) -> String {
        match self {
            QuotaSubject::Account(id) => format!("quota:account:{id}"),
            QuotaSubject::ResellerClient(id) => format!("quota:client:{id}"),
        }
    }
}

/// Hour or UTC day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Grain {
    Hour,
    Day,
}

impl Grain {
    fn as_str(self) -> &'static str {
        match self {
            Grain::Hour => "hour",
            Grain::Day => "day",
        }
    }

    pub fn ms(self) -> i64 {
        match self {
            Grain::Hour => HOUR_MS,
            Grain::Day => DAY_MS,
        }
    }

    /// The start of the bucket holding `ts`.
    pub fn bucket(self, ts: i64) -> i64 {
        ts - ts.rem_euclid(self.ms())
    }
}

/// One rollup counter: requests of an account (through one reseller client,
/// or 0 for its own keys) in one bucket, endpoint, category and billability.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RollupKey {
    pub account_id: i64,
    pub grain: Grain,
    pub bucket: i64,
    pub client_id: i64,
    pub endpoint: String,
    pub category: String,
    pub billable: bool,
}

const ROLLUP_UPSERT_TAIL: &str = " ON CONFLICT (account_id, grain, bucket, client_id, endpoint, category, billable) \
     DO UPDATE SET requests = usage_rollups.requests + excluded.requests";

/// Adds `rows` to the rollups. Rows must be unique by key (the writer
/// aggregates first) and sorted, so concurrent writers on PostgreSQL lock
/// rows in the same order and cannot deadlock.
pub async fn add_rollups(
    conn: &mut AnyConnection,
    backend: Backend,
    rows: &[(RollupKey, i64)],
) -> sqlx::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    // Built from fixed fragments and parameter numbers only.
    let sql = format!(
        "INSERT INTO usage_rollups (account_id, grain, bucket, client_id, endpoint, category, billable, requests) \
         VALUES {}{ROLLUP_UPSERT_TAIL}",
        value_rows(backend, rows.len(), 8)
    );
    // Not cached: the text differs with the row count, and a prepared
    // statement per count on every pooled connection would grow memory.
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for (k, n) in rows {
        query = query
            .bind(k.account_id)
            .bind(k.grain.as_str())
            .bind(k.bucket)
            .bind(k.client_id)
            .bind(k.endpoint.clone())
            .bind(k.category.clone())
            .bind(k.billable as i64)
            .bind(*n);
    }
    query.execute(conn).await?;
    Ok(())
}

/// Adds billable counts to the monthly totals: `((account, client, "YYYY-MM"), n)`.
pub async fn add_monthly(
    conn: &mut AnyConnection,
    backend: Backend,
    rows: &[((i64, i64, String), i64)],
) -> sqlx::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO usage_monthly_totals (account_id, client_id, month, billable_requests) VALUES {} \
         ON CONFLICT (account_id, client_id, month) \
         DO UPDATE SET billable_requests = usage_monthly_totals.billable_requests + excluded.billable_requests",
        value_rows(backend, rows.len(), 4)
    );
    // Not cached: the text differs with the row count, and a prepared
    // statement per count on every pooled connection would grow memory.
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for ((account, client, month), n) in rows {
        query = query
            .bind(*account)
            .bind(*client)
            .bind(month.clone())
            .bind(*n);
    }
    query.execute(conn).await?;
    Ok(())
}

/// Billable requests of `subject` since `since` (a UTC midnight: billing
/// periods start at one), from the daily rollups.
pub async fn billable_since(db: &Db, subject: QuotaSubject, since: i64) -> sqlx::Result<i64> {
    let (sql, id) = match subject {
        QuotaSubject::Account(id) => (
            "SELECT CAST(COALESCE(SUM(requests), 0) AS BIGINT) FROM usage_rollups WHERE account_id = $1 \
             AND grain = 'day' AND bucket >= $2 AND client_id = 0 AND billable = 1",
            id,
        ),
        QuotaSubject::ResellerClient(id) => (
            "SELECT CAST(COALESCE(SUM(requests), 0) AS BIGINT) FROM usage_rollups WHERE client_id = $1 \
             AND grain = 'day' AND bucket >= $2 AND billable = 1",
            id,
        ),
    };
    sqlx::query_scalar(sql)
        .bind(id)
        .bind(since)
        .fetch_one(&db.pool)
        .await
}

/// Requests of an account per bucket of `grain` since `since`: `(bucket start, count)`.
pub async fn per_bucket(
    db: &Db,
    account_id: i64,
    grain: Grain,
    since: i64,
) -> sqlx::Result<Vec<(i64, i64)>> {
    let rows = sqlx::query(
        "SELECT bucket, CAST(SUM(requests) AS BIGINT) AS n FROM usage_rollups \
         WHERE account_id = $1 AND grain = $2 AND bucket >= $3 GROUP BY bucket ORDER BY bucket",
    )
    .bind(account_id)
    .bind(grain.as_str())
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("bucket")?, r.try_get("n")?)))
        .collect()
}

/// Requests of an account since `since` (a UTC midnight) grouped by a
/// column (`endpoint` or `category`), largest first, from the daily rollups.
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
        "SELECT {column} AS name, CAST(SUM(requests) AS BIGINT) AS n FROM usage_rollups \
         WHERE account_id = $1 AND grain = 'day' AND bucket >= $2 \
         GROUP BY {column} ORDER BY n DESC, name LIMIT $3"
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

/// The newest raw requests of an account.
pub async fn recent(db: &Db, account_id: i64, limit: i64) -> sqlx::Result<Vec<AnyRow>> {
    sqlx::query(
        "SELECT request_id, ts, method, endpoint, status, response_time_ms, filters_summary, \
         results_count FROM usage_events WHERE account_id = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(account_id)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
}

/// Accounts that have raw rows.
pub async fn accounts_with_raw_rows(db: &Db) -> sqlx::Result<Vec<i64>> {
    sqlx::query_scalar("SELECT DISTINCT account_id FROM usage_events")
        .fetch_all(&db.pool)
        .await
}

/// Deletes an account's raw rows older than its newest `keep`, at most
/// `batch` per statement so a large backlog never holds a long lock.
/// Returns the rows deleted.
pub async fn prune_raw(db: &Db, account_id: i64, keep: i64, batch: i64) -> sqlx::Result<u64> {
    let cutoff: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM usage_events WHERE account_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2",
    )
    .bind(account_id)
    .bind(keep - 1)
    .fetch_optional(&db.pool)
    .await?;
    let Some(cutoff) = cutoff else { return Ok(0) };
    let mut total = 0;
    loop {
        let done = sqlx::query(
            "DELETE FROM usage_events WHERE id IN (SELECT id FROM usage_events \
             WHERE account_id = $1 AND id < $2 ORDER BY id LIMIT $3)",
        )
        .bind(account_id)
        .bind(cutoff)
        .bind(batch)
        .execute(&db.pool)
        .await?
        .rows_affected();
        total += done;
        if done < batch as u64 {
            return Ok(total);
        }
    }
}

/// Deletes hourly rollups older than `hour_cutoff` and daily ones older
/// than `day_cutoff`, in batches. Returns the rows deleted.
pub async fn prune_rollups(
    db: &Db,
    hour_cutoff: i64,
    day_cutoff: i64,
    batch: i64,
) -> sqlx::Result<u64> {
    let mut total = 0;
    for (grain, cutoff) in [(Grain::Hour, hour_cutoff), (Grain::Day, day_cutoff)] {
        loop {
            // The primary key's columns identify a row on both engines.
            let done = sqlx::query(
                "DELETE FROM usage_rollups WHERE grain = $1 AND bucket IN \
                 (SELECT DISTINCT bucket FROM usage_rollups WHERE grain = $1 AND bucket < $2 \
                  ORDER BY bucket LIMIT $3)",
            )
            .bind(grain.as_str())
            .bind(cutoff)
            .bind(batch)
            .execute(&db.pool)
            .await?
            .rows_affected();
            total += done;
            if done == 0 {
                break;
            }
        }
    }
    Ok(total)
}
