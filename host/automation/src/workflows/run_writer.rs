//! The run writer: the busy writes of runs (a run the incoming webhook
//! queues, a checkpoint after an action, a run's end) go to one task per
//! process that commits whatever has arrived in one transaction (a group
//! commit) and then answers each caller. A caller still waits for its own
//! write to be durable before it goes on (the 202, the next action), but a
//! busy server commits hundreds of runs' writes at once instead of one
//! transaction each, which is what SQLite's single writer needs (P4).
//!
//! A batch that fails as a whole is written again one write per
//! transaction, so one bad write fails alone. Each statement costs a trip
//! to SQLite's connection thread, so a batch writes each kind of write as
//! multi-row statements (`run_batch.rs`) and each workflow's counters in
//! one UPDATE.

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::run_batch::{self, Counters, ROWS};
use super::runs::NewRun;
use outreach_core::state::AppState;
use outreach_core::store::Db;

/// Writes one transaction carries at most.
const BATCH: usize = 512;

/// A write and where its answer goes.
type Pending = (Write, oneshot::Sender<sqlx::Result<i64>>);

/// The writes that go through the writer. Each answers a number: the
/// run's id for `Enqueue`, 1 or 0 (whether the lease held) for the others.
enum Write {
    Enqueue(NewRun, i64),
    Checkpoint(CheckpointWrite),
    Finish(FinishWrite),
}

/// A checkpoint after a top-level action: the run's state and the action's
/// stream event, written only while `owner` holds the lease.
pub struct CheckpointWrite {
    pub run_id: i64,
    pub owner: Arc<str>,
    pub checkpoint: String,
    pub records: String,
    pub domain_count: i64,
    pub lease_until: i64,
    /// The stream events of the actions recorded since the last write:
    /// (sequence number, data).
    pub events: Vec<(i64, Value)>,
}

/// A run's end: its status, the `run.finished` event (after the failed
/// action's event, when one failed), the workflow's counters and a
/// `retry_failed` rerun.
pub struct FinishWrite {
    pub run_id: i64,
    pub owner: Arc<str>,
    pub workflow_id: i64,
    pub status: &'static str,
    pub error: Option<String>,
    pub checkpoint: String,
    pub records: String,
    pub domain_count: i64,
    pub now: i64,
    /// Stream events to add, in order: (sequence number, name, data).
    pub events: Vec<(i64, &'static str, Value)>,
    pub rerun: Option<NewRun>,
}

/// The writer's handle, a typed extension; its task starts on first use
/// (on the runtime of whoever writes first) and ends with the state.
#[derive(Default, Clone)]
pub struct RunWriter {
    tx: Arc<OnceLock<mpsc::Sender<Pending>>>,
}

impl RunWriter {
    fn sender(&self, db: &Db) -> &mpsc::Sender<Pending> {
        self.tx.get_or_init(|| {
            let (tx, rx) = mpsc::channel(8192);
            tokio::spawn(writer(db.clone(), rx));
            tx
        })
    }
}

/// Queues `run` (counting its workflow's trigger); answers its id once
/// committed.
pub async fn enqueue(state: &AppState, run: NewRun, now: i64) -> anyhow::Result<i64> {
    submit(state, Write::Enqueue(run, now)).await
}

/// Writes a checkpoint; answers whether the lease held.
pub async fn checkpoint(state: &AppState, write: CheckpointWrite) -> anyhow::Result<bool> {
    Ok(submit(state, Write::Checkpoint(write)).await? == 1)
}

/// Ends a run; answers whether the lease held.
pub async fn finish(state: &AppState, write: FinishWrite) -> anyhow::Result<bool> {
    Ok(submit(state, Write::Finish(write)).await? == 1)
}

async fn submit(state: &AppState, write: Write) -> anyhow::Result<i64> {
    let (done, answer) = oneshot::channel();
    state
        .ext::<RunWriter>()
        .sender(&state.db)
        .send((write, done))
        .await
        .map_err(|_| anyhow::anyhow!("the run writer stopped"))?;
    Ok(answer.await??)
}

async fn writer(db: Db, mut rx: mpsc::Receiver<Pending>) {
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        // New runs commit first, on their own: the webhook caller waiting
        // for its 202 does not wait for other runs' ends, which carry
        // their records and take longer to write.
        let (queued, rest): (Vec<Pending>, Vec<Pending>) = batch
            .into_iter()
            .partition(|(w, _)| matches!(w, Write::Enqueue(..)));
        for part in [queued, rest] {
            if !part.is_empty() {
                commit(&db, part).await;
            }
        }
    }
}

/// Writes `batch` in one transaction and answers each caller; when that
/// fails, each write alone.
async fn commit(db: &Db, batch: Vec<Pending>) {
    let started = std::time::Instant::now();
    let writes: Vec<&Write> = batch.iter().map(|(w, _)| w).collect();
    let together = write_all(db, &writes).await;
    drop(writes);
    match together {
        Ok(answers) => {
            for ((_, done), answer) in batch.into_iter().zip(answers) {
                let _ = done.send(Ok(answer));
            }
        }
        Err(e) => {
            tracing::warn!(batch = batch.len(), "run writes failed together: {e}");
            for (write, done) in batch {
                let alone = write_all(db, &[&write]).await.map(|a| a[0]);
                let _ = done.send(alone);
            }
        }
    }
    metrics::histogram!("workflow_run_writes_batch_seconds")
        .record(started.elapsed().as_secs_f64());
}

/// Writes a batch in one transaction: each kind of write as multi-row
/// statements (`run_batch.rs`), then the held runs' stream events, the
/// reruns they asked for and the workflows' counters. The first statement
/// writes, so SQLite takes its write lock at once instead of failing to
/// upgrade a read lock. Answers each write's number in order.
async fn write_all(db: &Db, batch: &[&Write]) -> sqlx::Result<Vec<i64>> {
    let mut tx = db.pool.begin().await?;
    let mut answers = vec![0; batch.len()];
    let mut counters = Counters::default();
    let mut events: Vec<run_batch::Event<'_>> = Vec::new();
    let mut reruns: Vec<(&NewRun, i64)> = Vec::new();

    let queued: Vec<(usize, &NewRun, i64)> = batch
        .iter()
        .enumerate()
        .filter_map(|(i, w)| match w {
            Write::Enqueue(run, now) => Some((i, run, *now)),
            _ => None,
        })
        .collect();
    for chunk in queued.chunks(ROWS) {
        let rows: Vec<(&NewRun, i64)> = chunk.iter().map(|(_, r, now)| (*r, *now)).collect();
        let ids = run_batch::enqueue(&mut tx, &rows).await?;
        for ((i, run, _), id) in chunk.iter().zip(ids) {
            answers[*i] = id;
            counters.trigger(run.workflow_id);
        }
    }

    let saved: Vec<(usize, &CheckpointWrite)> = batch
        .iter()
        .enumerate()
        .filter_map(|(i, w)| match w {
            Write::Checkpoint(c) => Some((i, c)),
            _ => None,
        })
        .collect();
    for chunk in saved.chunks(ROWS) {
        let rows: Vec<&CheckpointWrite> = chunk.iter().map(|(_, c)| *c).collect();
        let held = run_batch::checkpoints(&mut tx, &rows).await?;
        for (i, c) in chunk.iter().filter(|(_, c)| held.contains(&c.run_id)) {
            answers[*i] = 1;
            events.extend(
                c.events
                    .iter()
                    .map(|(seq, data)| (c.run_id, *seq, "action", data)),
            );
        }
    }

    let ended: Vec<(usize, &FinishWrite)> = batch
        .iter()
        .enumerate()
        .filter_map(|(i, w)| match w {
            Write::Finish(f) => Some((i, f)),
            _ => None,
        })
        .collect();
    for chunk in ended.chunks(ROWS) {
        let rows: Vec<&FinishWrite> = chunk.iter().map(|(_, f)| *f).collect();
        let held = run_batch::finishes(&mut tx, &rows).await?;
        for (i, f) in chunk.iter().filter(|(_, f)| held.contains(&f.run_id)) {
            answers[*i] = 1;
            events.extend(
                f.events
                    .iter()
                    .map(|(seq, name, data)| (f.run_id, *seq, *name, data)),
            );
            counters.finished(f.workflow_id, f.now);
            if let Some(again) = &f.rerun {
                reruns.push((again, f.now));
            }
        }
    }

    for chunk in reruns.chunks(ROWS) {
        run_batch::enqueue(&mut tx, chunk).await?;
    }
    for chunk in events.chunks(ROWS) {
        run_batch::events(&mut tx, chunk).await?;
    }
    counters.write(&mut tx).await?;
    tx.commit().await?;
    Ok(answers)
}
