//! The run writer: the busy writes of runs (a run the incoming webhook
//! queues, a checkpoint after an action, a run's end) go to one task per
//! process that commits whatever has arrived in one transaction (a group
//! commit) and then answers each caller. A caller still waits for its own
//! write to be durable before it goes on (the 202, the next action), but a
//! busy server commits hundreds of runs' writes at once instead of one
//! transaction each, which is what SQLite's single writer needs (P4).
//!
//! A batch that fails as a whole is written again one write per
//! transaction, so one bad write fails alone.

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use sqlx::AnyConnection;
use tokio::sync::{mpsc, oneshot};

use super::runs::{self, NewRun};
use super::store;
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
    /// The stream event of the action just recorded: its sequence number
    /// and data.
    pub event: Option<(i64, Value)>,
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
        let started = std::time::Instant::now();
        match write_all(&db, &batch).await {
            Ok(answers) => {
                for ((_, done), answer) in batch.into_iter().zip(answers) {
                    let _ = done.send(Ok(answer));
                }
            }
            Err(e) => {
                tracing::warn!(batch = batch.len(), "run writes failed together: {e}");
                for (write, done) in batch {
                    let _ = done.send(write_alone(&db, &write).await);
                }
            }
        }
        metrics::histogram!("workflow_run_writes_batch_seconds")
            .record(started.elapsed().as_secs_f64());
    }
}

async fn write_all(db: &Db, batch: &[Pending]) -> sqlx::Result<Vec<i64>> {
    let mut tx = db.pool.begin().await?;
    let mut answers = Vec::with_capacity(batch.len());
    for (write, _) in batch {
        answers.push(apply(&mut tx, write).await?);
    }
    tx.commit().await?;
    Ok(answers)
}

async fn write_alone(db: &Db, write: &Write) -> sqlx::Result<i64> {
    let mut tx = db.pool.begin().await?;
    let answer = apply(&mut tx, write).await?;
    tx.commit().await?;
    Ok(answer)
}

// Every write starts with its UPDATE or INSERT: a transaction that starts
// with a write waits for another process's on SQLite instead of failing to
// upgrade a read lock.
async fn apply(conn: &mut AnyConnection, write: &Write) -> sqlx::Result<i64> {
    match write {
        Write::Enqueue(run, now) => {
            let id = runs::enqueue(conn, run, *now).await?;
            store::count_trigger(conn, run.workflow_id).await?;
            Ok(id)
        }
        Write::Checkpoint(c) => write_checkpoint(conn, c).await,
        Write::Finish(f) => write_finish(conn, f).await,
    }
}

async fn write_checkpoint(conn: &mut AnyConnection, c: &CheckpointWrite) -> sqlx::Result<i64> {
    let done = sqlx::query(
        "UPDATE workflow_runs SET checkpoint = $1, actions_executed = $2, domain_count = $3, \
         lease_until = $4 WHERE id = $5 AND lease_owner = $6 AND status = 'running'",
    )
    .bind(&c.checkpoint)
    .bind(&c.records)
    .bind(c.domain_count)
    .bind(c.lease_until)
    .bind(c.run_id)
    .bind(&*c.owner)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(0);
    }
    if let Some((seq, data)) = &c.event {
        add_event(conn, c.run_id, *seq, "action", data).await?;
    }
    Ok(1)
}

async fn write_finish(conn: &mut AnyConnection, f: &FinishWrite) -> sqlx::Result<i64> {
    let done = sqlx::query(
        "UPDATE workflow_runs SET status = $1, error = $2, checkpoint = $3, actions_executed = $4, \
         domain_count = $5, finished_at = $6, lease_owner = NULL, lease_until = NULL \
         WHERE id = $7 AND lease_owner = $8 AND status = 'running'",
    )
    .bind(f.status)
    .bind(&f.error)
    .bind(&f.checkpoint)
    .bind(&f.records)
    .bind(f.domain_count)
    .bind(f.now)
    .bind(f.run_id)
    .bind(&*f.owner)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(0); // another server took it over
    }
    for (seq, name, data) in &f.events {
        add_event(conn, f.run_id, *seq, name, data).await?;
    }
    sqlx::query("UPDATE workflows SET run_count = run_count + 1, last_run_at = $1 WHERE id = $2")
        .bind(f.now)
        .bind(f.workflow_id)
        .execute(&mut *conn)
        .await?;
    if let Some(again) = &f.rerun {
        runs::enqueue(conn, again, f.now).await?;
    }
    Ok(1)
}

async fn add_event(
    conn: &mut AnyConnection,
    run_id: i64,
    seq: i64,
    name: &str,
    data: &Value,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO workflow_run_events (run_id, seq, name, data) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (run_id, seq) DO NOTHING",
    )
    .bind(run_id)
    .bind(seq)
    .bind(name)
    .bind(data.to_string())
    .execute(conn)
    .await?;
    Ok(())
}
