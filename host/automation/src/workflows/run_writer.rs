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
//! to SQLite's connection thread, so a batch adds each run's stream events
//! in one INSERT and each workflow's counters in one UPDATE.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use sqlx::AnyConnection;
use tokio::sync::{mpsc, oneshot};

use super::runs::{self, NewRun};
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
    let mut counters = Counters::default();
    let mut answers = Vec::with_capacity(batch.len());
    for (write, _) in batch {
        answers.push(apply(&mut tx, write, &mut counters).await?);
    }
    counters.write(&mut tx).await?;
    tx.commit().await?;
    Ok(answers)
}

async fn write_alone(db: &Db, write: &Write) -> sqlx::Result<i64> {
    let mut tx = db.pool.begin().await?;
    let mut counters = Counters::default();
    let answer = apply(&mut tx, write, &mut counters).await?;
    counters.write(&mut tx).await?;
    tx.commit().await?;
    Ok(answer)
}

/// What a batch adds to each workflow's counters: triggers, finished runs
/// and the latest finish.
#[derive(Default)]
struct Counters(HashMap<i64, (i64, i64, Option<i64>)>);

impl Counters {
    fn trigger(&mut self, workflow_id: i64) {
        self.0.entry(workflow_id).or_default().0 += 1;
    }

    fn finished(&mut self, workflow_id: i64, at: i64) {
        let c = self.0.entry(workflow_id).or_default();
        c.1 += 1;
        c.2 = c.2.max(Some(at));
    }

    async fn write(&self, conn: &mut AnyConnection) -> sqlx::Result<()> {
        for (id, (triggers, runs, last)) in &self.0 {
            sqlx::query(
                "UPDATE workflows SET trigger_count = trigger_count + $1,                  run_count = run_count + $2, last_run_at = COALESCE($3, last_run_at) WHERE id = $4",
            )
            .bind(triggers)
            .bind(runs)
            .bind(last)
            .bind(id)
            .execute(&mut *conn)
            .await?;
        }
        Ok(())
    }
}

// Every write starts with its UPDATE or INSERT: a transaction that starts
// with a write waits for another process's on SQLite instead of failing to
// upgrade a read lock.
async fn apply(conn: &mut AnyConnection, write: &Write, counters: &mut Counters) -> sqlx::Result<i64> {
    match write {
        Write::Enqueue(run, now) => {
            let id = runs::enqueue(conn, run, *now).await?;
            counters.trigger(run.workflow_id);
            Ok(id)
        }
        Write::Checkpoint(c) => write_checkpoint(conn, c).await,
        Write::Finish(f) => {
            let held = write_finish(conn, f).await?;
            if held == 1 {
                counters.finished(f.workflow_id, f.now);
            }
            Ok(held)
        }
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
    let events: Vec<(i64, &str, &Value)> =
        c.events.iter().map(|(seq, data)| (*seq, "action", data)).collect();
    add_events(conn, c.run_id, &events).await?;
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
    let events: Vec<(i64, &str, &Value)> =
        f.events.iter().map(|(seq, name, data)| (*seq, *name, data)).collect();
    add_events(conn, f.run_id, &events).await?;
    if let Some(again) = &f.rerun {
        runs::enqueue(conn, again, f.now).await?;
    }
    Ok(1)
}

/// Adds a run's stream events in one statement; an event already there
/// (a resumed run writing it again) is kept.
async fn add_events(
    conn: &mut AnyConnection,
    run_id: i64,
    events: &[(i64, &str, &Value)],
) -> sqlx::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let rows: Vec<String> = (0..events.len())
        .map(|i| format!("($1, ${}, ${}, ${})", 3 * i + 2, 3 * i + 3, 3 * i + 4))
        .collect();
    let sql = format!(
        "INSERT INTO workflow_run_events (run_id, seq, name, data) VALUES {} \
         ON CONFLICT (run_id, seq) DO NOTHING",
        rows.join(", ")
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(run_id);
    for (seq, name, data) in events {
        query = query.bind(*seq).bind(*name).bind(data.to_string());
    }
    query.execute(conn).await?;
    Ok(())
}
