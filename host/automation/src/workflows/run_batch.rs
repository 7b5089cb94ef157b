//! The run writer's statements: each kind of write in a batch goes to the
//! database as one multi-row statement per chunk of `ROWS`, because on
//! SQLite every statement is a round trip to the connection's thread, and
//! those trips, not SQLite's work, set the pace of a busy server (P4).
//! Their placeholders come from [`value_rows`]: anonymous on SQLite, where
//! sqlx would otherwise look each `$N` up by name.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use sqlx::AnyConnection;

use super::run_writer::{CheckpointWrite, FinishWrite};
use super::runs::{self, NewRun};
use outreach_core::store::{Backend, value_rows};

/// Rows per statement: far under both databases' placeholder limits.
pub const ROWS: usize = 64;

/// A statement whose text depends on the chunk's size stays out of sqlx's
/// statement cache, which would otherwise keep one per size.
fn query(sql: String) -> sqlx::query::Query<'static, sqlx::Any, sqlx::any::AnyArguments> {
    sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false)
}

/// Queues runs; answers their ids in the order given. Both databases hand
/// out ids in the order of a multi-row INSERT's rows (SQLite's rowids one
/// after another under its write lock, PostgreSQL's identity one
/// `nextval` per row in order), so the sorted ids are the rows' ids.
pub async fn enqueue(conn: &mut AnyConnection, new: &[(&NewRun, i64)]) -> sqlx::Result<Vec<i64>> {
    if new.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "INSERT INTO workflow_runs (workflow_id, account_id, status, trigger_event, trigger_data, \
         domain_count, checkpoint, rerun_of, due_at, created_at) VALUES {} RETURNING id",
        value_rows(Backend::of(conn), new.len(), 10)
    );
    let mut q = query(sql);
    for (run, now) in new {
        let (checkpoint, count) = runs::initial_checkpoint(run);
        q = q
            .bind(run.workflow_id)
            .bind(run.account_id)
            .bind("queued")
            .bind(run.trigger_event.clone())
            .bind(run.trigger_data.to_string())
            .bind(count)
            .bind(checkpoint)
            .bind(run.rerun_of)
            .bind(run.due_at)
            .bind(*now);
    }
    let mut ids: Vec<i64> = q
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| sqlx::Row::try_get(r, "id"))
        .collect::<sqlx::Result<_>>()?;
    ids.sort_unstable();
    Ok(ids)
}

/// Writes checkpoints where their server still holds the lease; answers
/// the runs that were written.
pub async fn checkpoints(
    conn: &mut AnyConnection,
    writes: &[&CheckpointWrite],
) -> sqlx::Result<HashSet<i64>> {
    if writes.is_empty() {
        return Ok(HashSet::new());
    }
    let sql = format!(
        "UPDATE workflow_runs SET checkpoint = v.column2, actions_executed = v.column3, \
         domain_count = v.column4, lease_until = v.column5 FROM (VALUES {}) AS v \
         WHERE id = v.column1 AND lease_owner = v.column6 AND status = 'running' RETURNING id",
        value_rows(Backend::of(conn), writes.len(), 6)
    );
    let mut q = query(sql);
    for c in writes {
        q = q
            .bind(c.run_id)
            .bind(c.checkpoint.clone())
            .bind(c.records.clone())
            .bind(c.domain_count)
            .bind(c.lease_until)
            .bind(c.owner.to_string());
    }
    held(conn, q).await
}

/// Ends runs where their server still holds the lease; answers the runs
/// that were ended.
pub async fn finishes(
    conn: &mut AnyConnection,
    writes: &[&FinishWrite],
) -> sqlx::Result<HashSet<i64>> {
    if writes.is_empty() {
        return Ok(HashSet::new());
    }
    let sql = format!(
        "UPDATE workflow_runs SET status = v.column2, error = v.column3, checkpoint = v.column4, \
         actions_executed = v.column5, domain_count = v.column6, finished_at = v.column7, \
         lease_owner = NULL, lease_until = NULL FROM (VALUES {}) AS v \
         WHERE id = v.column1 AND lease_owner = v.column8 AND status = 'running' RETURNING id",
        value_rows(Backend::of(conn), writes.len(), 8)
    );
    let mut q = query(sql);
    for f in writes {
        q = q
            .bind(f.run_id)
            .bind(f.status)
            .bind(f.error.clone())
            .bind(f.checkpoint.clone())
            .bind(f.records.clone())
            .bind(f.domain_count)
            .bind(f.now)
            .bind(f.owner.to_string());
    }
    held(conn, q).await
}

async fn held(
    conn: &mut AnyConnection,
    q: sqlx::query::Query<'static, sqlx::Any, sqlx::any::AnyArguments>,
) -> sqlx::Result<HashSet<i64>> {
    q.fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| sqlx::Row::try_get(r, "id"))
        .collect()
}

/// One stream event: (run, sequence number, name, data).
pub type Event<'a> = (i64, i64, &'a str, &'a Value);

/// Adds stream events; an event already there (a resumed run writing it
/// again) is kept.
pub async fn events(conn: &mut AnyConnection, events: &[Event<'_>]) -> sqlx::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO workflow_run_events (run_id, seq, name, data) VALUES {} \
         ON CONFLICT (run_id, seq) DO NOTHING",
        value_rows(Backend::of(conn), events.len(), 4)
    );
    let mut q = query(sql);
    for (run_id, seq, name, data) in events {
        q = q
            .bind(*run_id)
            .bind(*seq)
            .bind(name.to_string())
            .bind(data.to_string());
    }
    q.execute(&mut *conn).await?;
    Ok(())
}

/// What a batch adds to each workflow's counters: triggers, finished runs
/// and the latest finish; one UPDATE per workflow.
#[derive(Default)]
pub struct Counters(HashMap<i64, (i64, i64, Option<i64>)>);

impl Counters {
    pub fn trigger(&mut self, workflow_id: i64) {
        self.0.entry(workflow_id).or_default().0 += 1;
    }

    pub fn finished(&mut self, workflow_id: i64, at: i64) {
        let c = self.0.entry(workflow_id).or_default();
        c.1 += 1;
        c.2 = c.2.max(Some(at));
    }

    pub async fn write(&self, conn: &mut AnyConnection) -> sqlx::Result<()> {
        for (id, (triggers, runs, last)) in &self.0 {
            sqlx::query(
                "UPDATE workflows SET trigger_count = trigger_count + $1, \
                 run_count = run_count + $2, last_run_at = COALESCE($3, last_run_at) WHERE id = $4",
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
