//! Batched usage writes. The request path only pushes an event into a bounded
//! channel; a background task writes events in multi-row inserts at most
//! `usage_flush_interval_ms` apart (or every 500 events), so recording never
//! costs a synchronous insert per request.

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

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
}

const CHANNEL: usize = 65_536;
const BATCH: usize = 500;
/// Rows per INSERT statement, well under both engines' bind-parameter limits.
const ROWS_PER_STATEMENT: usize = 200;

impl UsageRecorder {
    /// Starts the writer task on the current runtime.
    pub fn spawn(db: Db, interval: Duration) -> UsageRecorder {
        let (tx, rx) = mpsc::channel(CHANNEL);
        tokio::spawn(writer(db, rx, interval));
        UsageRecorder { tx }
    }

    /// Queues an event. When the writer is behind by a full channel the event
    /// is dropped and counted, rather than slowing requests down.
    pub fn record(&self, event: UsageEvent) {
        if self.tx.try_send(Msg::Event(Box::new(event))).is_err() {
            metrics::counter!("outreach_usage_events_dropped_total").increment(1);
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

async fn writer(db: Db, mut rx: mpsc::Receiver<Msg>, interval: Duration) {
    let mut buffer: Vec<UsageEvent> = Vec::with_capacity(BATCH);
    let mut tick = tokio::time::interval(interval.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            msg = rx.recv() => match msg {
                Some(Msg::Event(e)) => {
                    buffer.push(*e);
                    if buffer.len() >= BATCH {
                        write(&db, &mut buffer).await;
                    }
                }
                Some(Msg::Flush(done)) => {
                    write(&db, &mut buffer).await;
                    let _ = done.send(());
                }
                None => {
                    write(&db, &mut buffer).await;
                    return;
                }
            },
            _ = tick.tick() => write(&db, &mut buffer).await,
        }
    }
}

async fn write(db: &Db, buffer: &mut Vec<UsageEvent>) {
    if buffer.is_empty() {
        return;
    }
    let events = std::mem::take(buffer);
    if let Err(e) = write_batch(db, &events).await {
        metrics::counter!("outreach_usage_events_dropped_total").increment(events.len() as u64);
        tracing::error!(error = %e, count = events.len(), "writing usage batch failed");
    }
}

async fn write_batch(db: &Db, events: &[UsageEvent]) -> anyhow::Result<()> {
    let mut tx = db.pool.begin().await?;
    for chunk in events.chunks(ROWS_PER_STATEMENT) {
        super::store::insert_events(&mut tx, db.backend, chunk).await?;
    }
    let mut per_key: HashMap<i64, (i64, i64)> = HashMap::new();
    for e in events {
        if let Some(key) = e.api_key_id {
            let entry = per_key.entry(key).or_insert((0, 0));
            entry.0 += 1;
            entry.1 = entry.1.max(e.ts_ms);
        }
    }
    let per_key: Vec<(i64, i64, i64)> = per_key
        .into_iter()
        .map(|(k, (n, last))| (k, n, last))
        .collect();
    for chunk in per_key.chunks(ROWS_PER_STATEMENT) {
        crate::api_keys::store::add_usage(&mut tx, db.backend, chunk).await?;
    }
    tx.commit().await?;
    Ok(())
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
