//! Batched usage writes. The request path only pushes an event into a bounded
//! channel; a background task writes each batch at most
//! `usage_flush_interval_ms` apart (or every 500 events) in one transaction:
//! the rollups per hour and day, the monthly billable totals, the per-key
//! counters, and the raw rows recent activity needs (the newest
//! `usage_recent_requests` per account of the batch). Older raw rows are
//! pruned every minute for the accounts written since, and hourly for all.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::store::{self, Grain, RollupKey};
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
    pub method: String,
    /// The route template, e.g. `/v1/sequences/{sequence_id}`.
    pub endpoint: String,
    /// The endpoint group, e.g. `sequences`.
    pub category: String,
    pub status: u16,
    pub response_time_ms: i64,
    /// The query parameters as a JSON object, when there were any.
    pub filters_summary: Option<String>,
    pub results_count: i64,
    /// False for requests refused before reaching the handler (403, 429):
    /// they are shown in activity but do not use up the monthly quota.
    pub billable: bool,
}

enum Msg {
    Event(Box<UsageEvent>),
    Flush(oneshot::Sender<()>),
}

#[derive(Clone, Debug)]
pub struct UsageRecorder {
    tx: mpsc::Sender<Msg>,
    /// Events dropped since the writer last logged them.
    dropped: Arc<AtomicU64>,
}

const CHANNEL: usize = 65_536;
const BATCH: usize = 500;
/// Raw rows of the accounts written are pruned this often.
const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// Rows per DELETE when pruning.
pub const PRUNE_BATCH: i64 = 5_000;
/// Rows per INSERT statement, well under both engines' bind-parameter limits.
const ROWS_PER_STATEMENT: usize = 200;

impl UsageRecorder {
    /// Starts the writer task on the current runtime; it keeps the newest
    /// `keep_recent` raw rows per account.
    pub fn spawn(db: Db, interval: Duration, keep_recent: u64) -> UsageRecorder {
        let (tx, rx) = mpsc::channel(CHANNEL);
        let dropped = Arc::new(AtomicU64::new(0));
        let writer = Writer {
            db,
            keep: keep_recent.max(1) as usize,
            touched: HashSet::new(),
            dropped: dropped.clone(),
        };
        tokio::spawn(writer.run(rx, interval));
        UsageRecorder { tx, dropped }
    }

    /// Queues an event. When the writer is behind by a full channel the event
    /// is dropped and counted (in /metrics, and in the log by the writer),
    /// rather than slowing requests down.
    pub fn record(&self, event: UsageEvent) {
        if self.tx.try_send(Msg::Event(Box::new(event))).is_err() {
            metrics::counter!("outreach_usage_events_dropped_total").increment(1);
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Writes everything queued so far; returns when it is in the database.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

struct Writer {
    db: Db,
    keep: usize,
    /// Accounts whose raw rows were written since the last prune.
    touched: HashSet<i64>,
    dropped: Arc<AtomicU64>,
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<Msg>, interval: Duration) {
        let mut buffer: Vec<UsageEvent> = Vec::with_capacity(BATCH);
        let mut tick = tokio::time::interval(interval.max(Duration::from_millis(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut prune = tokio::time::interval(PRUNE_EVERY);
        prune.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(Msg::Event(e)) => {
                        buffer.push(*e);
                        if buffer.len() >= BATCH {
                            self.write(&mut buffer).await;
                        }
                    }
                    Some(Msg::Flush(done)) => {
                        self.write(&mut buffer).await;
                        let _ = done.send(());
                    }
                    None => {
                        self.write(&mut buffer).await;
                        return;
                    }
                },
                _ = tick.tick() => {
                    self.write(&mut buffer).await;
                    let dropped = self.dropped.swap(0, Ordering::Relaxed);
                    if dropped > 0 {
                        tracing::warn!(dropped, "usage events dropped: the usage writer fell behind");
                    }
                }
                _ = prune.tick() => self.prune().await,
            }
        }
    }

    async fn write(&mut self, buffer: &mut Vec<UsageEvent>) {
        if buffer.is_empty() {
            return;
        }
        let events = std::mem::take(buffer);
        match write_batch(&self.db, &events, self.keep).await {
            Ok(accounts) => self.touched.extend(accounts),
            Err(e) => {
                metrics::counter!("outreach_usage_events_dropped_total")
                    .increment(events.len() as u64);
                tracing::error!(error = %e, count = events.len(), "writing usage batch failed");
            }
        }
    }

    /// Deletes raw rows beyond the newest `keep` of the accounts written
    /// since the last pass.
    async fn prune(&mut self) {
        for account in std::mem::take(&mut self.touched) {
            if let Err(e) = store::prune_raw(&self.db, account, self.keep as i64, PRUNE_BATCH).await
            {
                tracing::warn!(error = %e, account, "pruning raw usage rows failed");
            }
        }
    }
}

/// Writes one batch in one transaction; returns the accounts whose raw rows
/// it wrote.
async fn write_batch(db: &Db, events: &[UsageEvent], keep: usize) -> anyhow::Result<Vec<i64>> {
    let mut rollups: BTreeMap<RollupKey, i64> = BTreeMap::new();
    let mut monthly: BTreeMap<(i64, i64, String), i64> = BTreeMap::new();
    let mut per_key: HashMap<i64, (i64, i64)> = HashMap::new();
    let mut per_account: HashMap<i64, usize> = HashMap::new();
    for e in events {
        for grain in [Grain::Hour, Grain::Day] {
            let key = RollupKey {
                account_id: e.account_id,
                grain,
                bucket: grain.bucket(e.ts_ms),
                client_id: e.reseller_client_id.unwrap_or(0),
                endpoint: e.endpoint.clone(),
                category: e.category.clone(),
                billable: e.billable,
            };
            *rollups.entry(key).or_default() += 1;
        }
        if e.billable {
            let month = ms_to_datetime(e.ts_ms).format("%Y-%m").to_string();
            *monthly
                .entry((e.account_id, e.reseller_client_id.unwrap_or(0), month))
                .or_default() += 1;
        }
        if let Some(key) = e.api_key_id {
            let entry = per_key.entry(key).or_insert((0, 0));
            entry.0 += 1;
            entry.1 = entry.1.max(e.ts_ms);
        }
        *per_account.entry(e.account_id).or_default() += 1;
    }
    // Only the newest `keep` raw rows of each account can be shown; the
    // batch is in arrival order, so keep each account's last `keep`.
    let mut seen: HashMap<i64, usize> = HashMap::new();
    let raw: Vec<UsageEvent> = events
        .iter()
        .filter(|e| {
            let n = seen.entry(e.account_id).or_default();
            *n += 1;
            per_account[&e.account_id] - *n < keep
        })
        .cloned()
        .collect();

    let mut tx = db.pool.begin().await?;
    for chunk in raw.chunks(ROWS_PER_STATEMENT) {
        store::insert_events(&mut tx, db.backend, chunk).await?;
    }
    let rollups: Vec<(RollupKey, i64)> = rollups.into_iter().collect();
    for chunk in rollups.chunks(ROWS_PER_STATEMENT) {
        store::add_rollups(&mut tx, db.backend, chunk).await?;
    }
    let monthly: Vec<_> = monthly.into_iter().collect();
    for chunk in monthly.chunks(ROWS_PER_STATEMENT) {
        store::add_monthly(&mut tx, db.backend, chunk).await?;
    }
    let mut per_key: Vec<(i64, i64, i64)> = per_key
        .into_iter()
        .map(|(k, (n, last))| (k, n, last))
        .collect();
    // Sorted so concurrent writers lock key rows in the same order.
    per_key.sort_unstable();
    for chunk in per_key.chunks(ROWS_PER_STATEMENT) {
        crate::api_keys::store::add_usage(&mut tx, db.backend, chunk).await?;
    }
    tx.commit().await?;
    Ok(per_account.into_keys().collect())
}

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
