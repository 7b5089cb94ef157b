//! The watch worker: re-enriches watched domains on a per-plan interval,
//! so that a watched record changes at least as often as its plan promises
//! (docs/decisions/watchlist.md, "Re-enrichment").
//!
//! A due watch asks the pool for a refresh by moving the record's
//! `refresh_at` to now (unless it is due already): the pipeline's refresh
//! scan queues it within a minute, within the operator's hourly refresh
//! cap, and when the enrichment saves, the pool evaluation compares it
//! with the snapshot (`evaluate::apply`). Watches are claimed by a single
//! `UPDATE ... RETURNING` that moves `next_check_at` on, so several
//! servers never claim the same watch twice in one interval.

use std::time::Duration;

use tracing::Instrument;

use super::store::{self, Intervals};
use outreach_core::accounts::plans::Plan;
use outreach_core::state::AppState;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// How often a plan's watched domains are re-enriched: Starter weekly,
/// Pro every three days, Enterprise daily. Free has no watchlist; an
/// account that fell back to it keeps the Starter pace without refreshes.
pub const INTERVALS: Intervals = Intervals {
    starter: 7 * DAY_MS,
    pro: 3 * DAY_MS,
    enterprise: DAY_MS,
};

/// Watches claimed per transaction.
const BATCH: i64 = 500;

/// The interval of `plan`, in milliseconds.
pub fn interval(plan: Plan) -> i64 {
    match plan {
        Plan::Enterprise => INTERVALS.enterprise,
        Plan::Pro => INTERVALS.pro,
        Plan::Starter | Plan::Free => INTERVALS.starter,
    }
}

/// Claims the watches due at the clock's now and asks the pool to refresh
/// their records; returns how many watches it claimed (every due one, a
/// batch per transaction).
pub async fn run_once(state: &AppState) -> anyhow::Result<usize> {
    let now = state.clock.now_ms();
    let mut total = 0;
    loop {
        let mut tx = state.db.pool.begin().await?;
        // The claim writes first: on SQLite the transaction then waits its
        // turn for the write lock instead of failing.
        let ids = store::claim_due(&mut tx, state.db.backend, now, &INTERVALS, BATCH).await?;
        if ids.is_empty() {
            return Ok(total);
        }
        store::refresh_records(&mut tx, &ids, now).await?;
        tx.commit().await?;
        total += ids.len();
    }
}

/// The loop `serve` starts: a pass a minute (the refresh scan it feeds
/// runs once a minute too).
pub async fn run(state: AppState) {
    loop {
        let pass = run_once(&state).instrument(tracing::info_span!("watchlist_refresh"));
        if let Err(e) = pass.await {
            tracing::warn!(error = %e, "watchlist refresh failed; retrying");
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
}
