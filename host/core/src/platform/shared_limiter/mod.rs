//! Limits shared by every server on one PostgreSQL database: the per-minute
//! limit with its burst, the optional daily cap and the monthly quota.
//!
//! Each limit of a subject in one window is a row of `limit_windows`
//! (`used`, `burst_started`). A server reserves budget from the row in
//! blocks and serves requests from its block without asking the database
//! again. Blocks shrink as the row nears its limit (an eighth of what is
//! left, at most [`block_cap`]) and never reach past it, so near the limit
//! every server reserves one request at a time: the servers together grant
//! exactly what one server would, never more. One reservation per window is
//! in flight per server at a time (the others wait for it and then serve
//! from its block), and a window found used up answers 429 from memory
//! until it ends. Reservations of many windows at once go to the database
//! together: those due ahead every few milliseconds (`ahead.rs`), those
//! requests wait for whenever a statement is already in flight
//! (`waiting.rs`). Burst requests past the limit are reserved one at a
//! time too, so the 5-second rule holds across servers. Unused
//! reservations are returned at shutdown, in batches; a crash strands at
//! most two blocks per server and window (one reserved ahead, see
//! [`SharedLimiter::reserve_ahead`]), counted but never served.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use sqlx::Row;

use crate::platform::clock::SharedClock;
use crate::platform::limiter::Burst;
use crate::store::{Backend, Db, typed_value_rows};

mod ahead;
mod waiting;

/// The largest block a server reserves at once: 128, or a thousandth of a
/// large limit (a monthly quota), so a crash strands little either way.
fn block_cap(limit: u64) -> u64 {
    (limit / 1024).max(128)
}

/// The block to reserve from a row at `used` below `limit`: an eighth of
/// what is left, at least one, at most the cap, never past the limit. The
/// statements compute the same with [`block_sql`].
fn block(used: u64, limit: u64) -> u64 {
    let left = limit - used;
    (left / 8).clamp(1, block_cap(limit)).min(left)
}

/// [`block`] in SQL, for the row `w` of `limit_windows`, given the SQL
/// expressions of the limit and of its cap.
fn block_sql(limit: &str, cap: &str) -> String {
    format!("LEAST(GREATEST(({limit} - w.used) / 8, 1), {cap}, {limit} - w.used)")
}

/// Windows per batched statement at most (four parameters each, well
/// under PostgreSQL's 65,535).
const BATCH: usize = 500;

/// The CTE `locked` of a batched statement over the windows `v`: their
/// rows, locked in key order, so that two servers' batches wait for each
/// other in one order and never deadlock.
const LOCKED_IN_KEY_ORDER: &str = "locked AS (SELECT w.scope, w.window_start FROM limit_windows w \
     JOIN v ON w.scope = v.scope AND w.window_start = v.window_start \
     ORDER BY w.scope, w.window_start FOR UPDATE OF w)";

/// A batched statement over many windows (`sql`, whose `VALUES` rows are
/// each a window's scope and start followed by `values(n)` for the
/// window's `n`), its windows bound in order.
fn batch_query<'q, const N: usize>(
    sql: String,
    windows: impl IntoIterator<Item = (&'q WindowKey, u64)>,
    values: impl Fn(u64) -> [i64; N],
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for ((scope, start), n) in windows {
        query = query.bind(scope.as_str()).bind(*start);
        for value in values(n) {
            query = query.bind(value);
        }
    }
    query
}

/// Above this many local windows, expired ones are swept.
const SWEEP_AT: usize = 4096;

/// The outcome of [`SharedLimiter::take`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub allowed: bool,
    /// Requests counted in the window across all servers, as far as this
    /// server knows (its last reservation, less what it still holds).
    pub used: u64,
}

#[derive(Debug, Clone, Copy)]
struct Local {
    /// Reserved and not yet served.
    available: u64,
    /// `used` of the row after this server's last reservation.
    used_seen: u64,
    /// When the window ends; expired windows are swept.
    ends_at: i64,
    /// The row refused: refusals last until the window ends (a burst only
    /// ever ends, and other servers never give units back while running).
    exhausted: bool,
    /// The size of the last block reserved.
    last_grant: u64,
    /// The next block is being reserved ahead.
    ahead: bool,
}

/// One limit's window, as [`SharedLimiter::take`] is asked about it.
#[derive(Debug, Clone, Copy)]
pub struct Window<'a> {
    /// Names the limit and its subject, for example `minute:key:42`.
    pub scope: &'a str,
    pub start: i64,
    pub ends_at: i64,
    pub limit: u64,
    pub burst: Option<Burst>,
}

/// A window of one limit: its scope and start.
type WindowKey = (String, i64);

/// A [`WindowKey`] borrowed from a request's [`Window`], so serving from a
/// block allocates nothing. It hashes as the tuple does (each field in
/// order), which `Equivalent` lookups require.
struct WindowRef<'a>(&'a str, i64);

impl std::hash::Hash for WindowRef<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
        self.1.hash(state);
    }
}

impl hashbrown::Equivalent<WindowKey> for WindowRef<'_> {
    fn equivalent(&self, key: &WindowKey) -> bool {
        self.1 == key.1 && self.0 == key.0
    }
}

#[derive(Debug)]
pub struct SharedLimiter(Arc<Blocks>);

/// This server's blocks, shared with the tasks that reserve ahead.
#[derive(Debug)]
pub struct Blocks {
    db: Db,
    clock: SharedClock,
    local: Mutex<hashbrown::HashMap<WindowKey, Local>>,
    /// One reservation per window in flight at a time on this server.
    refills: Mutex<HashMap<WindowKey, Arc<tokio::sync::Mutex<()>>>>,
    /// Windows whose next block waits to be reserved ahead, in a batch.
    ahead: Mutex<ahead::Queue>,
    /// Blocks reserved ahead so far, for tests and diagnostics.
    reserved_ahead: std::sync::atomic::AtomicU64,
    /// Statements that reserved them.
    ahead_statements: std::sync::atomic::AtomicU64,
    /// Windows whose requests wait for a block, for the next statement.
    waiting: Mutex<waiting::Queue>,
    /// Statements that reserved blocks requests waited for.
    waiting_statements: std::sync::atomic::AtomicU64,
}

impl std::ops::Deref for SharedLimiter {
    type Target = Blocks;

    fn deref(&self) -> &Blocks {
        &self.0
    }
}

/// Blocks of at least this many requests are refilled ahead (see
/// [`SharedLimiter::reserve_ahead`]); smaller ones, near the limit, are
/// reserved when they are needed.
const AHEAD_FROM: u64 = 8;

impl SharedLimiter {
    pub fn new(db: Db, clock: SharedClock) -> SharedLimiter {
        SharedLimiter(Arc::new(Blocks {
            db,
            clock,
            local: Mutex::new(hashbrown::HashMap::new()),
            refills: Mutex::new(HashMap::new()),
            ahead: Default::default(),
            reserved_ahead: Default::default(),
            ahead_statements: Default::default(),
            waiting: Default::default(),
            waiting_statements: Default::default(),
        }))
    }

    /// How many blocks this server has reserved ahead of need.
    pub fn reserved_ahead(&self) -> u64 {
        self.reserved_ahead
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many statements reserved them (fewer: they are batched).
    pub fn ahead_statements(&self) -> u64 {
        self.ahead_statements
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many statements reserved the blocks requests waited for.
    pub fn waiting_statements(&self) -> u64 {
        self.waiting_statements
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts one request in `window`, a window that starts from zero (the
    /// minute and daily limits), and says whether it may pass.
    pub async fn take(&self, window: Window<'_>) -> sqlx::Result<Grant> {
        let no_seed = None::<fn() -> std::future::Ready<sqlx::Result<u64>>>;
        self.take_with(window, no_seed).await
    }

    /// [`SharedLimiter::take`] for a window whose count starts from `seed`
    /// when its row does not exist yet (the monthly quota starts from the
    /// usage rollups); `seed` is called and awaited only then, so a request
    /// served from its block never builds the seed's (large) future.
    pub async fn take_seeded<F: Future<Output = sqlx::Result<u64>>>(
        &self,
        window: Window<'_>,
        seed: impl FnOnce() -> F,
    ) -> sqlx::Result<Grant> {
        self.take_with(window, Some(seed)).await
    }

    /// The common case, without the database: serves one request from
    /// this server's block of `window` (or refuses a used-up window).
    /// `None` when a reservation is needed.
    fn serve(&self, window: Window<'_>) -> Option<Grant> {
        let (grant, ahead) = self.serve_from_block(&WindowRef(window.scope, window.start))?;
        if ahead {
            self.reserve_ahead((window.scope.to_owned(), window.start), window);
        }
        Some(grant)
    }

    async fn take_with<F: Future<Output = sqlx::Result<u64>>>(
        &self,
        window: Window<'_>,
        seed: Option<impl FnOnce() -> F>,
    ) -> sqlx::Result<Grant> {
        if let Some(grant) = self.serve(window) {
            return Ok(grant);
        }
        // The reservation's future is large: boxed, so a request served
        // from its block (nearly every one) carries a small future and
        // allocates nothing.
        Box::pin(self.reserve_and_take(window, seed)).await
    }

    /// [`SharedLimiter::take_with`] when the block is empty: reserves the
    /// next one (one reservation per window at a time) and serves from it.
    async fn reserve_and_take<F: Future<Output = sqlx::Result<u64>>>(
        &self,
        window: Window<'_>,
        seed: Option<impl FnOnce() -> F>,
    ) -> sqlx::Result<Grant> {
        let key = (window.scope.to_string(), window.start);
        // Requests that find the block empty wait for one reservation and
        // then serve from it, instead of all asking the database at once.
        let gate = self.gate(&key);
        let _refilling = gate.lock().await;
        if let Some((grant, _)) = self.serve_from_block(&WindowRef(&key.0, key.1)) {
            return Ok(grant);
        }
        let (granted, used) = match self
            .0
            .reserve_block(&key, window.limit, seed.is_none())
            .await?
        {
            Some(reserved) => reserved,
            None => self.reserve(window, seed).await?,
        };
        let mut local = self.local.lock().unwrap();
        if local.len() > SWEEP_AT {
            let now = self.clock.now_ms();
            local.retain(|_, l| l.ends_at > now);
            self.refills
                .lock()
                .unwrap()
                .retain(|k, gate| local.contains_key(k) || Arc::strong_count(gate) > 1);
        }
        let entry = local.entry(key).or_insert(Local {
            available: 0,
            used_seen: used,
            ends_at: window.ends_at,
            exhausted: false,
            last_grant: 0,
            ahead: false,
        });
        entry.used_seen = entry.used_seen.max(used);
        entry.last_grant = granted;
        if granted == 0 {
            entry.exhausted = true;
            return Ok(Grant {
                allowed: false,
                used: entry.used_seen - entry.available,
            });
        }
        // One of the granted units serves this request.
        entry.available += granted - 1;
        Ok(Grant {
            allowed: true,
            used: entry.used_seen - entry.available,
        })
    }

    /// Reserves the window's next block in the background while the
    /// current one still serves, so the request that empties a block does
    /// not wait for the database (it set the slowest requests' latency).
    /// The reservation is the same arithmetic a waiting request's statement
    /// does, under the same one-per-window gate, so the servers still grant
    /// exactly what the limit allows; a crash may now strand two blocks per
    /// server and window instead of one. At the limit it reserves nothing
    /// and the next request decides under the row lock, as before. The
    /// windows due a block ahead are gathered for a few milliseconds and
    /// reserved in one statement (see `ahead.rs`).
    fn reserve_ahead(&self, key: WindowKey, w: Window<'_>) {
        self.0.queue_ahead(key, w.limit);
    }
}

impl Blocks {
    /// Serves from this server's block, or refuses a used-up window;
    /// `None` when a reservation is needed. The flag asks for the next
    /// block to be reserved ahead: a quarter of the last one is left.
    fn serve_from_block(&self, key: &WindowRef<'_>) -> Option<(Grant, bool)> {
        let mut local = self.local.lock().unwrap();
        let entry = local.get_mut(key)?;
        if entry.exhausted {
            let refused = Grant {
                allowed: false,
                used: entry.used_seen,
            };
            return Some((refused, false));
        }
        if entry.available == 0 {
            return None;
        }
        entry.available -= 1;
        let ahead = !entry.ahead
            && entry.last_grant >= AHEAD_FROM
            && entry.available <= entry.last_grant / 4;
        entry.ahead |= ahead;
        let grant = Grant {
            allowed: true,
            used: entry.used_seen - entry.available,
        };
        Some((grant, ahead))
    }

    /// The gate that lets one reservation of a window run at a time.
    fn gate(&self, key: &WindowKey) -> Arc<tokio::sync::Mutex<()>> {
        self.refills
            .lock()
            .unwrap()
            .entry(key.clone())
            .or_default()
            .clone()
    }

    /// The common case in one statement, for one window (`waiting.rs`
    /// puts several in one): below the limit, adds a block to the row
    /// (creating it when the window starts from zero). `None` when
    /// the row is missing (seeded windows) or at its limit: then
    /// [`SharedLimiter::reserve`] decides under a row lock.
    async fn reserve_block_alone(
        &self,
        (scope, start): &WindowKey,
        limit: u64,
        from_zero: bool,
    ) -> sqlx::Result<Option<(u64, u64)>> {
        let cap = block_cap(limit);
        let block_sql = block_sql("$3", "$4");
        // Built from fixed fragments only.
        let sql = if from_zero {
            format!(
                "INSERT INTO limit_windows AS w (scope, window_start, used, last_grant) \
                 VALUES ($1, $2, $5, $5) ON CONFLICT (scope, window_start) \
                 DO UPDATE SET used = w.used + {block_sql}, last_grant = {block_sql} WHERE w.used < $3 \
                 RETURNING used, last_grant"
            )
        } else {
            format!(
                "UPDATE limit_windows AS w SET used = w.used + {block_sql}, last_grant = {block_sql} \
                 WHERE scope = $1 AND window_start = $2 AND w.used < $3 RETURNING used, last_grant"
            )
        };
        let first_block = block(0, limit);
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(scope.as_str())
            .bind(*start)
            .bind(limit as i64)
            .bind(cap as i64);
        if from_zero {
            query = query.bind(first_block as i64);
        }
        let Some(row) = query.fetch_optional(&self.db.pool).await? else {
            return Ok(None);
        };
        let used: i64 = row.try_get("used")?;
        let granted: i64 = row.try_get("last_grant")?;
        Ok(Some((granted.max(0) as u64, used.max(0) as u64)))
    }
}

impl SharedLimiter {
    /// Reserves under a row lock (creating the row from `seed`, or from zero
    /// without one): a block below the limit, one burst request past it, or
    /// nothing. Returns `(granted, used after)`.
    async fn reserve<F: Future<Output = sqlx::Result<u64>>>(
        &self,
        w: Window<'_>,
        mut seed: Option<impl FnOnce() -> F>,
    ) -> sqlx::Result<(u64, u64)> {
        let now = self.clock.now_ms();
        let (mut tx, row) = loop {
            let mut tx = self.db.pool.begin().await?;
            let row = sqlx::query(
                "SELECT used, burst_started FROM limit_windows \
                 WHERE scope = $1 AND window_start = $2 FOR UPDATE",
            )
            .bind(w.scope)
            .bind(w.start)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(row) = row {
                break (tx, row);
            }
            tx.rollback().await?;
            // The first server to see the window creates its row; a racing
            // one's insert does nothing and both then lock the same row.
            let start_from = match seed.take() {
                Some(seed) => seed().await?,
                None => 0,
            };
            sqlx::query(
                "INSERT INTO limit_windows (scope, window_start, used, burst_started) \
                 VALUES ($1, $2, $3, NULL) ON CONFLICT (scope, window_start) DO NOTHING",
            )
            .bind(w.scope)
            .bind(w.start)
            .bind(start_from as i64)
            .execute(&self.db.pool)
            .await?;
        };
        let used = row.try_get::<i64, _>("used")?.max(0) as u64;
        let burst_started: Option<i64> = row.try_get("burst_started")?;
        let (granted, burst_started) = decide(used, burst_started, now, w.limit, w.burst);
        if granted > 0 {
            sqlx::query(
                "UPDATE limit_windows SET used = used + $1, last_grant = $1, burst_started = $2 \
                 WHERE scope = $3 AND window_start = $4",
            )
            .bind(granted as i64)
            .bind(burst_started)
            .bind(w.scope)
            .bind(w.start)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok((granted, used + granted))
    }

    /// Requests counted in a window across servers, for reports: the row's
    /// count less what this server holds unserved. Other servers' unserved
    /// blocks are still in it (at most one block each, one request near the
    /// limit).
    pub async fn used(&self, scope: &str, start: i64) -> sqlx::Result<u64> {
        let used: Option<i64> = sqlx::query_scalar(
            "SELECT used FROM limit_windows WHERE scope = $1 AND window_start = $2",
        )
        .bind(scope)
        .bind(start)
        .fetch_optional(&self.db.pool)
        .await?;
        let held = self
            .local
            .lock()
            .unwrap()
            .get(&WindowRef(scope, start))
            .map_or(0, |l| l.available);
        Ok((used.unwrap_or(0).max(0) as u64).saturating_sub(held))
    }

    /// Gives back what this server reserved and did not serve, for windows
    /// still open (at shutdown). Many windows go to a statement; a batch
    /// that fails (it leaves nothing behind) is given back window by window.
    pub async fn release(&self) -> sqlx::Result<()> {
        let now = self.clock.now_ms();
        let mut held: Vec<(WindowKey, u64)> = self
            .local
            .lock()
            .unwrap()
            .drain()
            .filter(|(_, l)| l.available > 0 && l.ends_at > now)
            .map(|(k, l)| (k, l.available))
            .collect();
        held.sort();
        for chunk in held.chunks(BATCH) {
            if let Err(e) = self.release_many(chunk).await {
                tracing::warn!(error = %e, windows = chunk.len(), "returning limit reservations in a batch failed");
                for ((scope, start), n) in chunk {
                    sqlx::query(
                        "UPDATE limit_windows SET used = used - $1 WHERE scope = $2 AND window_start = $3",
                    )
                    .bind(*n as i64)
                    .bind(scope.as_str())
                    .bind(*start)
                    .execute(&self.db.pool)
                    .await?;
                }
            }
        }
        Ok(())
    }

    /// One statement giving back `n` of each window; it locks its rows in
    /// key order first, as the batches that reserve do.
    async fn release_many(&self, windows: &[(WindowKey, u64)]) -> sqlx::Result<()> {
        let values = typed_value_rows(
            Backend::Postgres,
            windows.len(),
            &["TEXT", "BIGINT", "BIGINT"],
        );
        // Built from fixed fragments only.
        let sql = format!(
            "WITH v(scope, window_start, n) AS (VALUES {values}), {LOCKED_IN_KEY_ORDER} \
             UPDATE limit_windows AS w SET used = w.used - v.n \
             FROM v WHERE w.scope = v.scope AND w.window_start = v.window_start \
                 AND (w.scope, w.window_start) IN (SELECT scope, window_start FROM locked)"
        );
        batch_query(sql, windows.iter().map(|(k, n)| (k, *n)), |n| [n as i64])
            .execute(&self.db.pool)
            .await
            .map(|_| ())
    }

    /// Deletes rows of minute windows that started before `minutes_before`
    /// and day windows before `days_before`; quota rows are few and kept as
    /// the record of each period.
    pub async fn prune(db: &Db, minutes_before: i64, days_before: i64) -> sqlx::Result<u64> {
        let mut total = 0;
        for (prefix, before) in [("minute:%", minutes_before), ("day:%", days_before)] {
            total +=
                sqlx::query("DELETE FROM limit_windows WHERE scope LIKE $1 AND window_start < $2")
                    .bind(prefix)
                    .bind(before)
                    .execute(&db.pool)
                    .await?
                    .rows_affected();
        }
        Ok(total)
    }
}

/// How much to grant from a row with `used` requests: a block below the
/// limit, one burst request past it while the burst is young, else none.
/// Returns `(granted, burst_started)`.
fn decide(
    used: u64,
    burst_started: Option<i64>,
    now: i64,
    limit: u64,
    burst: Option<Burst>,
) -> (u64, Option<i64>) {
    if used < limit {
        return (block(used, limit), burst_started);
    }
    match burst {
        Some(b) if used < limit.saturating_mul(b.factor as u64) => {
            let began = burst_started.unwrap_or(now);
            if now - began < b.max_ms {
                (1, Some(began))
            } else {
                (0, Some(began))
            }
        }
        _ => (0, burst_started),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::limiter::API_BURST;

    #[test]
    fn blocks_shrink_to_one_near_the_limit_and_never_pass_it() {
        assert_eq!(decide(0, None, 0, 1000, None).0, 125);
        assert_eq!(decide(0, None, 0, 100_000, None).0, 128);
        assert_eq!(decide(0, None, 0, 999_999, None).0, 976);
        assert_eq!(decide(990, None, 0, 1000, None).0, 1);
        assert_eq!(decide(999, None, 0, 1000, None).0, 1);
        assert_eq!(decide(1000, None, 0, 1000, None).0, 0);
        assert_eq!(decide(0, None, 0, 10, None).0, 1);
    }

    #[test]
    fn the_burst_passes_singly_for_under_five_seconds() {
        assert_eq!(
            decide(10, None, 1_000, 10, Some(API_BURST)),
            (1, Some(1_000))
        );
        assert_eq!(
            decide(15, Some(1_000), 5_999, 10, Some(API_BURST)),
            (1, Some(1_000))
        );
        assert_eq!(
            decide(15, Some(1_000), 6_000, 10, Some(API_BURST)),
            (0, Some(1_000))
        );
        assert_eq!(decide(20, Some(1_000), 1_500, 10, Some(API_BURST)).0, 0);
    }
}
