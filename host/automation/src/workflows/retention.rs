//! Retention of run records (spec/3 "Spend accounting": runs older than
//! 90 days, configurable, are pruned hourly): finished runs created more
//! than `workflow_run_retention_days` ago are deleted, their stream events
//! with them (`workflow_run_events` cascades). `outreach serve`'s hourly
//! housekeeping calls [`prune_if_due`] on every server; one of them wins
//! each turn through a settings row, so a fleet deletes once an hour, not
//! once per server.

use outreach_core::accounts::store::claim_due;
use outreach_core::state::AppState;

/// The settings row holding the next turn's due time.
pub const CLAIM_KEY: &str = "workflow_run_retention_next_at";

/// A turn lasts a little under an hour, so the next hourly tick (of any
/// server, whose timers drift apart) always finds it due.
pub const TURN_MS: i64 = 55 * 60_000;

/// Runs deleted per statement: a backlog never holds a long lock.
pub const BATCH: i64 = 500;

const DAY_MS: i64 = 86_400_000;

/// Prunes when this server wins the turn: the runs deleted, or `None`
/// when another server has the turn (or had it within the hour).
pub async fn prune_if_due(state: &AppState) -> sqlx::Result<Option<u64>> {
    let now = state.clock.now_ms();
    if !claim_due(&state.db, CLAIM_KEY, now, TURN_MS).await? {
        return Ok(None);
    }
    let cutoff = now - i64::from(state.config.workflow_run_retention_days) * DAY_MS;
    prune_before(state, cutoff).await.map(Some)
}

/// Deletes finished runs created before `cutoff` in batches. Queued,
/// running and waiting runs are kept whatever their age: a worker may hold
/// them.
pub async fn prune_before(state: &AppState, cutoff: i64) -> sqlx::Result<u64> {
    let mut total = 0;
    loop {
        // No ORDER BY: any BATCH of the old rows will do, and sorting the
        // whole backlog for each batch would not.
        let done = sqlx::query(
            "DELETE FROM workflow_runs WHERE id IN (SELECT id FROM workflow_runs \
             WHERE created_at < $1 AND status IN ('success', 'error', 'partial') LIMIT $2)",
        )
        .bind(cutoff)
        .bind(BATCH)
        .execute(&state.db.pool)
        .await?
        .rows_affected();
        total += done;
        if done < BATCH as u64 {
            return Ok(total);
        }
    }
}
