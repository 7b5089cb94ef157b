//! Pool evaluation (ARCHITECTURE.md "Pool evaluation"): the worker that
//! consumes the pool's events (`domains::facets`) and lets every account's
//! active audiences, alert rules and watches react to them, in one
//! transaction per batch, so a batch's matches, counters, history, events
//! and delivery jobs commit together with the events' removal. Safe on
//! several servers: each event is claimed by one of them.

use std::time::Duration;

use outreach_core::state::AppState;
use tracing::Instrument;

use crate::domains::facets;

/// Events taken per transaction.
pub const BATCH: i64 = 200;

/// Evaluates one batch of pool events; returns how many it took.
pub async fn run_once(state: &AppState) -> anyhow::Result<usize> {
    let now = state.clock.now_ms();
    let backend = state.db.backend;
    let mut tx = state.db.pool.begin().await?;
    // The claim deletes: on SQLite a transaction that starts by writing
    // waits for the write lock instead of failing.
    let events = facets::claim(&mut tx, backend, BATCH).await?;
    if events.is_empty() {
        return Ok(0);
    }
    crate::audiences::evaluate::apply(&mut tx, &events, now).await?;
    crate::alerts::evaluate::apply(&mut tx, backend, &events, now).await?;
    crate::watchlist::evaluate::apply(&mut tx, backend, &events, now).await?;
    tx.commit().await?;
    Ok(events.len())
}

/// Evaluates every pending batch (tests, and the worker between naps).
pub async fn drain(state: &AppState) -> anyhow::Result<usize> {
    let mut total = 0;
    loop {
        let n = run_once(state).await?;
        if n == 0 {
            return Ok(total);
        }
        total += n;
    }
}

/// The worker `serve` starts: evaluates batches as they come, napping a
/// second when there are none.
pub async fn run(state: AppState) {
    loop {
        let span = tracing::info_span!("pool_evaluation");
        if let Err(e) = drain(&state).instrument(span).await {
            tracing::warn!(error = %e, "pool evaluation failed; retrying");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
