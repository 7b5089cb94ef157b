//! A claimed run's writes (`runs.rs` executes it): the lease renewal
//! while an action works, the checkpoint after an action with its stream
//! events, the park until a retry is due, and the run's end, all through
//! the run writer's group commit except the park.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::engine::Failure;
use super::model::WorkflowActionRecord;
use super::run_writer::{self, CheckpointWrite, FinishWrite};
use super::runs::{Claimed, LEASE_MS, NewRun};
use super::store::WorkflowRow;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// Renews the run's lease every third of it until aborted.
pub(super) fn renew_lease(
    state: &AppState,
    run_id: i64,
    owner: &str,
) -> tokio::task::JoinHandle<()> {
    let state = state.clone();
    let owner = owner.to_owned();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis((LEASE_MS / 3) as u64)).await;
            let until = state.clock.now_ms() + LEASE_MS;
            let renewed = sqlx::query(
                "UPDATE workflow_runs SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 \
                 AND status = 'running'",
            )
            .bind(until)
            .bind(run_id)
            .bind(&owner)
            .execute(&state.db.pool)
            .await;
            if let Err(e) = renewed {
                tracing::warn!(run_id, "renewing a run lease: {e}");
            }
        }
    })
}

fn action_event(record: &WorkflowActionRecord) -> Value {
    json!({
        "index": record.index,
        "type": record.action_type,
        "status": record.status,
        "result": record.result,
        "error": record.error,
        "input_count": record.input_count,
        "output_count": record.output_count,
        "attempts": record.attempts,
        "duration_ms": record.duration_ms,
    })
}

/// The stream events of the records not yet written: record `i` is event
/// `i + 1`.
fn unwritten_events(run: &Claimed) -> impl Iterator<Item = (i64, Value)> + '_ {
    run.records
        .iter()
        .enumerate()
        .skip(run.written)
        .map(|(i, r)| (i as i64 + 1, action_event(r)))
}

/// Writes the checkpoint and the events of the actions recorded since the
/// last write if this server still holds the lease; answers whether it
/// did.
pub(super) async fn checkpoint(
    state: &AppState,
    owner: &Arc<str>,
    run: &mut Claimed,
) -> anyhow::Result<bool> {
    let events = unwritten_events(run).collect();
    let held = run_writer::checkpoint(
        state,
        CheckpointWrite {
            run_id: run.id,
            owner: owner.clone(),
            checkpoint: serde_json::to_string(&run.checkpoint)?,
            records: serde_json::to_string(&run.records)?,
            domain_count: run.checkpoint.working.items.len() as i64,
            lease_until: state.clock.now_ms() + LEASE_MS,
            events,
        },
    )
    .await?;
    run.written = run.records.len();
    Ok(held)
}

/// Parks the run until its retry is due.
pub(super) async fn wait_for_retry(
    state: &AppState,
    owner: &str,
    run: &Claimed,
    due: i64,
    failure: &Failure,
) -> anyhow::Result<()> {
    tracing::info!(
        attempt = run.checkpoint.attempt,
        "action failed, retrying: {}",
        failure.message
    );
    sqlx::query(
        "UPDATE workflow_runs SET status = 'waiting', due_at = $1, checkpoint = $2, \
         lease_owner = NULL, lease_until = NULL WHERE id = $3 AND lease_owner = $4",
    )
    .bind(due)
    .bind(serde_json::to_string(&run.checkpoint)?)
    .bind(run.id)
    .bind(owner)
    .execute(&state.db.pool)
    .await?;
    Ok(())
}

/// Ends the run: its status, the `run.finished` event, the workflow's
/// counters, and a `retry_failed` rerun of a failed first run.
pub(super) async fn finish(
    state: &AppState,
    owner: &Arc<str>,
    workflow: &WorkflowRow,
    run: &mut Claimed,
    error: Option<String>,
) -> anyhow::Result<()> {
    let status = match (&error, run.checkpoint.partial) {
        (Some(_), _) => "error",
        (None, true) => "partial",
        (None, false) => "success",
    };
    let now = state.clock.now_ms();
    let records = run.records.len() as i64;
    let mut events: Vec<(i64, &'static str, Value)> = unwritten_events(run)
        .map(|(seq, data)| (seq, "action", data))
        .collect();
    let finished = json!({
        "status": status,
        "error": error,
        "domain_count": run.checkpoint.working.items.len(),
        "finished_at": iso(now),
    });
    events.push((records + 1, "run.finished", finished));
    let rerun = (status == "error" && workflow.definition.retry_failed && run.rerun_of.is_none())
        .then(|| NewRun {
            workflow_id: workflow.id,
            account_id: run.account_id,
            trigger_event: run.trigger_event.clone(),
            trigger_data: run.trigger_data.clone(),
            items: run.checkpoint.input.clone(),
            due_at: now,
            rerun_of: Some(run.id),
            resume_at: run.checkpoint.resume_at,
        });
    let held = run_writer::finish(
        state,
        FinishWrite {
            run_id: run.id,
            owner: owner.clone(),
            workflow_id: workflow.id,
            status,
            error,
            checkpoint: serde_json::to_string(&run.checkpoint)?,
            records: serde_json::to_string(&run.records)?,
            domain_count: run.checkpoint.working.items.len() as i64,
            now,
            events,
            rerun,
        },
    )
    .await?;
    if held {
        tracing::info!(status, "workflow run finished");
        metrics::counter!("workflow_runs_finished_total", "status" => status).increment(1);
    }
    Ok(())
}
