//! What the usage recorder holds between flushes, and the transaction that
//! writes it.
//!
//! Requests are counted, not queued: one counter per account, reseller
//! client, hour, billability, endpoint and category, which is everything the
//! hourly and daily rollups and the monthly totals are derived from (a day
//! and a month are whole hours in UTC), plus one counter per API key. Memory
//! therefore grows with the number of distinct combinations seen since the
//! last successful flush, never with the number of requests. Raw rows are
//! only needed for recent activity, which shows the newest few per account,
//! so each account keeps a ring of its newest `keep` requests; older ones are
//! replaced and counted as skipped (the rollups still count them).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use sqlx::Connection;

use super::recorder::UsageEvent;
use super::store::{self, Grain, RollupKey};
use crate::platform::clock::ms_to_datetime;
use crate::store::{Backend, Db};

/// Rows per INSERT statement, well under both engines' bind-parameter limits.
const ROWS_PER_STATEMENT: usize = 200;
/// How much longer than the lock wait the statements of one flush may take
/// before it is abandoned. The engines' own lock timeouts end a wait first;
/// this only guards against a database that stops answering altogether.
const STATEMENT_GRACE: Duration = Duration::from_secs(5);

/// One request counter: everything a rollup row, a monthly total or both
/// grains are derived from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct CountKey {
    pub account_id: i64,
    /// The reseller client, 0 for the account's own keys.
    pub client_id: i64,
    /// The start of the UTC hour.
    pub hour: i64,
    pub billable: bool,
    pub endpoint: &'static str,
    pub category: &'static str,
}

impl CountKey {
    pub fn of(e: &UsageEvent) -> CountKey {
        CountKey {
            account_id: e.account_id,
            client_id: e.reseller_client_id.unwrap_or(0),
            hour: Grain::Hour.bucket(e.ts_ms),
            billable: e.billable,
            endpoint: e.endpoint,
            category: e.category,
        }
    }
}

/// Requests made with one API key, and the newest one's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct KeyUse {
    pub requests: i64,
    pub last_ts: i64,
}

impl KeyUse {
    fn add(&mut self, other: KeyUse) {
        self.requests += other.requests;
        self.last_ts = self.last_ts.max(other.last_ts);
    }
}

/// Counters and raw rows not yet in the database.
#[derive(Debug, Default)]
pub(super) struct Pending {
    pub counts: HashMap<CountKey, i64>,
    pub keys: HashMap<i64, KeyUse>,
    /// The newest requests of each account, oldest first.
    pub recent: HashMap<i64, VecDeque<UsageEvent>>,
    /// Raw rows replaced by newer ones of the same account before a flush
    /// wrote them (recent activity never shows them; they are counted).
    pub skipped: u64,
}

impl Pending {
    /// Counts one request under `key` (built by the caller outside any
    /// lock) and keeps it as a raw row. Returns the raw row it replaced, for
    /// the caller to drop outside the lock.
    pub fn add(&mut self, key: CountKey, event: UsageEvent, keep: usize) -> Option<UsageEvent> {
        *self.counts.entry(key).or_default() += 1;
        if let Some(id) = event.api_key_id {
            self.keys
                .entry(id)
                .or_insert(KeyUse {
                    requests: 0,
                    last_ts: event.ts_ms,
                })
                .add(KeyUse {
                    requests: 1,
                    last_ts: event.ts_ms,
                });
        }
        let ring = self.recent.entry(event.account_id).or_default();
        let replaced = if ring.len() >= keep {
            self.skipped += 1;
            ring.pop_front()
        } else {
            None
        };
        ring.push_back(event);
        replaced
    }

    /// Adds `newer` (taken after everything in `self`) to `self`: counters
    /// are summed, and each account keeps its newest `keep` raw rows.
    pub fn merge(&mut self, newer: Pending, keep: usize) {
        if self.is_empty() {
            let skipped = self.skipped;
            *self = newer;
            self.skipped += skipped;
            return;
        }
        for (key, n) in newer.counts {
            *self.counts.entry(key).or_default() += n;
        }
        for (id, used) in newer.keys {
            self.keys
                .entry(id)
                .and_modify(|u| u.add(used))
                .or_insert(used);
        }
        for (account, rows) in newer.recent {
            let ring = self.recent.entry(account).or_default();
            ring.extend(rows);
            while ring.len() > keep {
                ring.pop_front();
                self.skipped += 1;
            }
        }
        self.skipped += newer.skipped;
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty() && self.keys.is_empty() && self.recent.is_empty()
    }

    /// Requests counted and not yet written.
    pub fn requests(&self) -> i64 {
        self.counts.values().sum()
    }

    pub fn raw_rows(&self) -> usize {
        self.recent.values().map(VecDeque::len).sum()
    }

    /// The accounts whose raw rows a successful write adds.
    pub fn accounts(&self) -> impl Iterator<Item = i64> + '_ {
        self.recent.keys().copied()
    }
}

/// The statements' rows, built from a [`Pending`] that stays untouched so a
/// failed write can be retried with it.
struct Rows<'a> {
    raw: Vec<&'a UsageEvent>,
    rollups: Vec<(RollupKey, i64)>,
    monthly: Vec<((i64, i64, String), i64)>,
    per_key: Vec<(i64, i64, i64)>,
}

impl<'a> Rows<'a> {
    fn of(pending: &'a Pending) -> Rows<'a> {
        // Sorted (BTreeMap, sort) so that concurrent writers on PostgreSQL
        // lock rows in the same order and cannot deadlock.
        let mut rollups: BTreeMap<RollupKey, i64> = BTreeMap::new();
        let mut monthly: BTreeMap<(i64, i64, String), i64> = BTreeMap::new();
        let mut months: HashMap<i64, String> = HashMap::new();
        for (k, n) in &pending.counts {
            for grain in [Grain::Hour, Grain::Day] {
                let key = RollupKey {
                    account_id: k.account_id,
                    grain,
                    bucket: grain.bucket(k.hour),
                    client_id: k.client_id,
                    endpoint: k.endpoint.to_string(),
                    category: k.category.to_string(),
                    billable: k.billable,
                };
                *rollups.entry(key).or_default() += n;
            }
            if k.billable {
                let month = months
                    .entry(k.hour)
                    .or_insert_with(|| ms_to_datetime(k.hour).format("%Y-%m").to_string())
                    .clone();
                *monthly
                    .entry((k.account_id, k.client_id, month))
                    .or_default() += n;
            }
        }
        let mut per_key: Vec<(i64, i64, i64)> = pending
            .keys
            .iter()
            .map(|(id, u)| (*id, u.requests, u.last_ts))
            .collect();
        per_key.sort_unstable();
        Rows {
            raw: pending.recent.values().flatten().collect(),
            rollups: rollups.into_iter().collect(),
            monthly: monthly.into_iter().collect(),
            per_key,
        }
    }
}

/// Writes `pending` in one transaction: the raw rows, both rollup grains,
/// the monthly totals and the per-key counters, all or nothing, so a failed
/// write can be retried without counting anything twice.
///
/// A write waits at most `lock_wait` for another connection's locks (the
/// busy timeout on SQLite, `lock_timeout` on PostgreSQL) and then fails
/// cleanly inside the engine. Only the statements are under a timer of our
/// own, never the COMMIT: abandoning a COMMIT would leave unknown whether it
/// happened, and a retry could then count the same requests twice.
pub(super) async fn write(db: &Db, pending: &Pending, lock_wait: Duration) -> anyhow::Result<()> {
    let rows = Rows::of(pending);
    let mut conn = db.pool.acquire().await?;
    let wait_ms = lock_wait.as_millis().max(1);
    if db.backend == Backend::Sqlite {
        set_busy_timeout(&mut conn, wait_ms).await?;
    }
    let result = async {
        let mut tx = (*conn).begin().await?;
        let statements = async {
            if db.backend == Backend::Postgres {
                // Ends with the transaction. An integer is milliseconds.
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                    "SET LOCAL lock_timeout = {wait_ms}"
                )))
                .execute(&mut *tx)
                .await?;
            }
            write_rows(&mut tx, db.backend, &rows).await
        };
        match tokio::time::timeout(lock_wait + STATEMENT_GRACE, statements).await {
            Ok(done) => done?,
            Err(_) => anyhow::bail!("usage write timed out after {lock_wait:?}"),
        }
        tx.commit().await?;
        anyhow::Ok(())
    }
    .await;
    if db.backend == Backend::Sqlite {
        let default = crate::store::SQLITE_BUSY_TIMEOUT_MS as u128;
        if set_busy_timeout(&mut conn, default).await.is_err() {
            // Never hand a connection with a short busy timeout back to
            // the pool: other writers rely on the long one.
            conn.close_on_drop();
        }
    }
    result
}

async fn set_busy_timeout(conn: &mut sqlx::AnyConnection, ms: u128) -> sqlx::Result<()> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("PRAGMA busy_timeout = {ms}")))
        .execute(conn)
        .await?;
    Ok(())
}

async fn write_rows(
    conn: &mut sqlx::AnyConnection,
    backend: Backend,
    rows: &Rows<'_>,
) -> sqlx::Result<()> {
    for chunk in rows.raw.chunks(ROWS_PER_STATEMENT) {
        store::insert_events(conn, backend, chunk).await?;
    }
    for chunk in rows.rollups.chunks(ROWS_PER_STATEMENT) {
        store::add_rollups(conn, backend, chunk).await?;
    }
    for chunk in rows.monthly.chunks(ROWS_PER_STATEMENT) {
        store::add_monthly(conn, backend, chunk).await?;
    }
    for chunk in rows.per_key.chunks(ROWS_PER_STATEMENT) {
        crate::api_keys::store::add_usage(conn, backend, chunk).await?;
    }
    Ok(())
}
