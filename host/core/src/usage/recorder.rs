//! Usage recording that never loses a count.
//!
//! Usage is billing and quota data, so the request path counts instead of
//! queueing: [`UsageRecorder::record`] adds one to an in-memory counter per
//! account, reseller client, hour, billability, endpoint and category (and
//! per API key), under one of a few mutexes chosen by account, and keeps the
//! request in that account's small ring of newest raw rows. That is two
//! short string copies and three hash lookups under a lock held for a
//! fraction of a microsecond (about 0.2-0.3 µs per request in all, measured
//! by the ignored test `record_cost` in a release build), and nothing in it
//! can fill up: memory grows with the distinct combinations since the last
//! successful flush (and the rings), not with requests.
//!
//! A background task flushes every `usage_flush_interval_ms`: it takes the
//! counters from every shard and writes them as deltas in one transaction
//! (the hourly and daily rollups, the monthly billable totals, the per-key
//! counters and the raw rows recent activity shows; see [`super::pending`]).
//! When the database is locked or busy (a backup, a VACUUM, a migration in
//! another process) the write waits up to `lock_wait` and then fails
//! cleanly; the deltas stay with the writer and are merged with everything
//! counted since, so the next flush retries them. A slow database delays the
//! counts but never drops them, and because a retried write is the whole
//! transaction again, nothing is counted twice. The raw rows are a sample
//! by design (recent activity shows the newest `usage_recent_requests` per
//! account): rows replaced in the ring before a flush are counted in
//! `outreach_usage_raw_rows_skipped_total`, not lost usage.
//!
//! Graceful shutdown flushes with a deadline ([`UsageRecorder::flush_within`]),
//! retrying while the database refuses, and logs what it could not write. A
//! SIGKILL loses what was counted since the last successful flush. Raw rows
//! beyond the newest `usage_recent_requests` of the accounts written are
//! pruned every minute, and for all accounts by the hourly housekeeping.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::pending::{self, CountKey, Pending};
use super::store;
use crate::platform::clock::ms_to_datetime;
use crate::store::Db;

/// Set by a handler as a response extension to report how many results it
/// returned; shown as `results_count` in recent activity.
#[derive(Debug, Clone, Copy)]
pub struct ResultsCount(pub i64);

#[derive(Debug, Clone)]
pub struct UsageEvent {
    pub account_id: i64,
    pub api_key_id: Option<i64>,
    pub reseller_client_id: Option<i64>,
    pub ts_ms: i64,
    /// Interned names (see [`interned`]): a request's counters and raw row
    /// name its method, route and group without allocating.
    pub method: &'static str,
    /// The route template, e.g. `/v1/sequences/{sequence_id}`.
    pub endpoint: &'static str,
    /// The endpoint group, e.g. `sequences`.
    pub category: &'static str,
    pub status: u16,
    pub response_time_ms: i64,
    /// The query parameters as a JSON object, when there were any.
    pub filters_summary: Option<String>,
    pub results_count: i64,
    /// False for requests refused before reaching the handler (403, 429):
    /// they are shown in activity but do not use up the monthly quota.
    pub billable: bool,
}

/// `name` as a string that lives as long as the process, the same one for
/// every request naming it, so a request's counters and raw row name their
/// method, route and group without allocating or touching a reference
/// count. Route templates, methods and endpoint groups are few, so each is
/// leaked once; past [`MAX_INTERNED`] names (only a bug or a client
/// inventing HTTP methods could get there) a name is recorded as
/// [`OTHER_NAME`] rather than growing memory.
///
/// Each thread keeps its own copy of the set, so the common lookup takes
/// no lock and writes no cache line that the other workers read.
pub fn interned(name: &str) -> &'static str {
    thread_local! {
        static LOCAL: std::cell::RefCell<hashbrown::HashSet<&'static str>> =
            std::cell::RefCell::default();
    }
    static NAMES: std::sync::LazyLock<Mutex<hashbrown::HashSet<&'static str>>> =
        std::sync::LazyLock::new(Default::default);
    if let Some(known) = LOCAL.with_borrow(|local| local.get(name).copied()) {
        return known;
    }
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    let known = match names.get(name) {
        Some(known) => known,
        None if names.len() >= MAX_INTERNED => return OTHER_NAME,
        None => {
            let leaked: &'static str = Box::leak(name.into());
            names.insert(leaked);
            leaked
        }
    };
    drop(names);
    LOCAL.with_borrow_mut(|local| local.insert(known));
    known
}

/// What [`interned`] answers for names past [`MAX_INTERNED`].
pub const OTHER_NAME: &str = "(other)";

/// Names [`interned`] keeps at most.
const MAX_INTERNED: usize = 10_000;

/// Counters are spread over this many mutexes by account, so requests of
/// different accounts rarely wait for each other.
const SHARDS: usize = 16;
/// Raw rows of the accounts written are pruned this often.
const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// Rows per DELETE when pruning.
pub const PRUNE_BATCH: i64 = 5_000;
/// How long one flush waits for another connection's locks by default: as
/// long as SQLite's busy timeout for every other statement.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_millis(crate::store::SQLITE_BUSY_TIMEOUT_MS);
/// How long [`UsageRecorder::flush`] keeps retrying.
const FLUSH_DEADLINE: Duration = Duration::from_secs(60);
/// The first pause between retries of [`UsageRecorder::flush_within`];
/// it doubles up to a second.
const FIRST_RETRY: Duration = Duration::from_millis(50);

/// How the recorder writes.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How often the background task flushes.
    pub interval: Duration,
    /// Raw rows kept per account (`usage_recent_requests`).
    pub keep_recent: u64,
    /// How long one flush waits for the database's locks before it gives up
    /// and leaves its deltas for the next.
    pub lock_wait: Duration,
}

#[derive(Clone, Debug)]
pub struct UsageRecorder {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    db: Db,
    shards: Vec<Mutex<Pending>>,
    keep: usize,
    lock_wait: Duration,
    /// Serialises flushes (an explicit flush waits for the timer's, so it
    /// returns only when everything recorded before it is written), and
    /// holds what failed writes left for the next.
    writer: tokio::sync::Mutex<Writer>,
}

#[derive(Debug, Default)]
struct Writer {
    /// Deltas a failed write could not store, retried by the next flush.
    carried: Pending,
    /// Accounts whose raw rows were written since the last prune.
    touched: HashSet<i64>,
    /// Flushes failed in a row.
    failures: u32,
}

/// What a flush could not write before its deadline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unwritten {
    pub requests: i64,
    /// Billable requests per account, reseller client (0: none) and month.
    pub billable: BTreeMap<(i64, i64, String), i64>,
    pub counters: usize,
    pub raw_rows: usize,
}

impl fmt::Display for Unwritten {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} requests in {} counters ({} billable), {} raw rows",
            self.requests,
            self.counters,
            self.billable.values().sum::<i64>(),
            self.raw_rows
        )
    }
}

impl Unwritten {
    fn add(&mut self, pending: &Pending) {
        self.requests += pending.requests();
        self.counters += pending.counts.len();
        self.raw_rows += pending.raw_rows();
        for (k, n) in pending.counts.iter().filter(|(k, _)| k.billable) {
            let month = ms_to_datetime(k.hour).format("%Y-%m").to_string();
            *self
                .billable
                .entry((k.account_id, k.client_id, month))
                .or_default() += n;
        }
    }
}

impl UsageRecorder {
    /// Starts the writer task on the current runtime; it keeps the newest
    /// `keep_recent` raw rows per account.
    pub fn spawn(db: Db, interval: Duration, keep_recent: u64) -> UsageRecorder {
        UsageRecorder::spawn_with(
            db,
            Options {
                interval,
                keep_recent,
                lock_wait: DEFAULT_LOCK_WAIT,
            },
        )
    }

    pub fn spawn_with(db: Db, options: Options) -> UsageRecorder {
        let inner = Arc::new(Inner {
            db,
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            keep: options.keep_recent.max(1) as usize,
            lock_wait: options.lock_wait,
            writer: tokio::sync::Mutex::default(),
        });
        tokio::spawn(run(inner.clone(), options.interval));
        UsageRecorder { inner }
    }

    /// Counts a request. Never waits for the database and never drops the
    /// count; only its raw row may be replaced by a newer one before a flush.
    pub fn record(&self, event: UsageEvent) {
        let key = CountKey::of(&event);
        let shard = &self.inner.shards[event.account_id.rem_euclid(SHARDS as i64) as usize];
        let replaced =
            shard
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add(key, event, self.inner.keep);
        // Freed after the lock is released.
        drop(replaced);
    }

    /// Writes everything recorded so far; returns when it is in the
    /// database, retrying for up to a minute while the database refuses.
    pub async fn flush(&self) {
        if let Err(unwritten) = self.flush_within(FLUSH_DEADLINE).await {
            tracing::error!(%unwritten, "usage not written within {FLUSH_DEADLINE:?}");
        }
    }

    /// Writes everything recorded so far, retrying failed writes until they
    /// succeed or `deadline` has passed; then returns what is still
    /// unwritten (and logs it, one line per billable subject and month).
    /// Graceful shutdown calls this.
    pub async fn flush_within(&self, deadline: Duration) -> Result<(), Unwritten> {
        let until = Instant::now() + deadline;
        let mut pause = FIRST_RETRY;
        loop {
            match flush_once(&self.inner, Some(until)).await {
                Ok(()) => return Ok(()),
                Err(e) => tracing::warn!(error = format!("{e:#}"), "usage flush failed; retrying"),
            }
            if Instant::now() + pause >= until {
                break;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(1));
        }
        let unwritten = self.inner.unwritten();
        for ((account, client, month), n) in &unwritten.billable {
            tracing::error!(
                account,
                reseller_client = client,
                month,
                billable_requests = n,
                "usage not written"
            );
        }
        Err(unwritten)
    }
}

impl Inner {
    /// Takes every shard's counters; requests recorded meanwhile go into
    /// the shards already taken and wait for the next flush.
    fn take(&self) -> Pending {
        let mut all = Pending::default();
        for shard in &self.shards {
            let taken = std::mem::take(&mut *shard.lock().unwrap_or_else(PoisonError::into_inner));
            all.merge(taken, self.keep);
        }
        all
    }

    /// What is counted and not yet written. A flush holding the writer
    /// at this moment is counted as unwritten too.
    fn unwritten(&self) -> Unwritten {
        let mut unwritten = Unwritten::default();
        if let Ok(writer) = self.writer.try_lock() {
            unwritten.add(&writer.carried);
        }
        for shard in &self.shards {
            unwritten.add(&shard.lock().unwrap_or_else(PoisonError::into_inner));
        }
        unwritten
    }
}

/// One flush: everything counted since the last, plus what failed before.
/// With `until`, waits for locks (the writer's and the database's) no
/// longer than until then.
async fn flush_once(inner: &Inner, until: Option<Instant>) -> anyhow::Result<()> {
    let mut lock_wait = inner.lock_wait;
    let mut writer = match until {
        Some(until) => {
            let left = until.saturating_duration_since(Instant::now());
            lock_wait = lock_wait.min(left).max(Duration::from_millis(1));
            tokio::time::timeout(left, inner.writer.lock())
                .await
                .map_err(|_| anyhow::anyhow!("another usage flush is still running"))?
        }
        None => inner.writer.lock().await,
    };
    let fresh = inner.take();
    writer.carried.merge(fresh, inner.keep);
    let skipped = std::mem::take(&mut writer.carried.skipped);
    if skipped > 0 {
        metrics::counter!("outreach_usage_raw_rows_skipped_total").increment(skipped);
    }
    if writer.carried.is_empty() {
        return Ok(());
    }
    match pending::write(&inner.db, &writer.carried, lock_wait).await {
        Ok(()) => {
            let written = std::mem::take(&mut writer.carried);
            writer.touched.extend(written.accounts());
            if writer.failures > 0 {
                tracing::info!(
                    failures = writer.failures,
                    requests = written.requests(),
                    "usage written after failed flushes"
                );
                writer.failures = 0;
            }
            metrics::gauge!("outreach_usage_unwritten_requests").set(0.0);
            Ok(())
        }
        Err(e) => {
            writer.failures += 1;
            metrics::counter!("outreach_usage_flush_failures_total").increment(1);
            let requests = writer.carried.requests();
            metrics::gauge!("outreach_usage_unwritten_requests").set(requests as f64);
            Err(e.context(format!(
                "{requests} requests in {} counters kept for the next flush",
                writer.carried.counts.len()
            )))
        }
    }
}

/// The writer task: flushes on the timer and prunes raw rows. When the
/// recorder's last handle is gone it flushes once more and ends.
async fn run(inner: Arc<Inner>, interval: Duration) {
    let mut tick = tokio::time::interval(interval.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut prune = tokio::time::interval(PRUNE_EVERY);
    prune.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if Arc::strong_count(&inner) == 1 {
                    let recorder = UsageRecorder { inner };
                    let _ = recorder.flush_within(FLUSH_DEADLINE).await;
                    return;
                }
                if let Err(e) = flush_once(&inner, None).await {
                    tracing::warn!(error = format!("{e:#}"), "usage flush failed; retrying at the next");
                }
            }
            _ = prune.tick() => prune_written(&inner).await,
        }
    }
}

/// Deletes raw rows beyond the newest `keep` of the accounts written since
/// the last pass.
async fn prune_written(inner: &Inner) {
    let accounts = std::mem::take(&mut inner.writer.lock().await.touched);
    for account in accounts {
        if let Err(e) = store::prune_raw(&inner.db, account, inner.keep as i64, PRUNE_BATCH).await {
            tracing::warn!(error = %e, account, "pruning raw usage rows failed");
        }
    }
}

#[cfg(test)]
#[path = "recorder_tests.rs"]
mod tests;

/// The query string as a JSON object of its parameters.
pub fn query_summary(query: &str) -> String {
    let map: serde_json::Map<String, serde_json::Value> =
        url::form_urlencoded::parse(query.as_bytes())
            .take(50)
            .map(|(k, v)| {
                (
                    k.chars().take(100).collect(),
                    v.chars().take(200).collect::<String>().into(),
                )
            })
            .collect();
    serde_json::Value::Object(map).to_string()
}
