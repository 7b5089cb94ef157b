//! The daily reputation roll-up (spec/3: one row per send account and UTC
//! day with activity, written every 24 hours) and the warmup areas' hourly
//! worker.

use std::time::Duration;

use super::store::{self, ReputationRow};
use crate::sequence_events::day_of;
use crate::sequence_warmup::service::{
    DAY_MS, note_effective_limits, pct, reputation_formula, round1,
};
use crate::sequence_warmup::store as cache;
use outreach_core::state::AppState;

/// Days the history keeps at most (spec/3's largest `days`).
pub const HISTORY_DAYS: i64 = 180;

/// A day is rolled up this long after it ends, so events written by a
/// server whose clock trails a little still land in it.
pub const GRACE_MS: i64 = 15 * 60_000;

/// Writes every ended UTC day not written yet (module docs of
/// `send_account_warmup`); returns how many rows it wrote. Safe to run on
/// several servers at once: rows are upserts and the marker only moves
/// forward.
pub async fn roll_up(state: &AppState) -> anyhow::Result<usize> {
    let last = day_of(state.clock.now_ms() - GRACE_MS) - 1;
    let oldest = last - (HISTORY_DAYS - 1);
    let first = store::rolled_through(&state.db)
        .await?
        .map_or(oldest, |done| done + 1)
        .max(oldest);
    if first > last {
        return Ok(0);
    }
    let mut written = 0;
    for (send_account_id, account_id) in store::send_accounts(&state.db).await? {
        let days = store::daily_activity(
            &state.db,
            account_id,
            send_account_id,
            first * DAY_MS,
            (last + 1) * DAY_MS,
        )
        .await?;
        let rows: Vec<ReputationRow> = days
            .into_iter()
            .map(|(day, sent, bounced)| {
                let bounce_rate = (sent > 0).then(|| round1(pct(bounced, sent)));
                ReputationRow {
                    send_account_id,
                    account_id,
                    day,
                    // Complaints are not recorded per send account yet;
                    // the formula counts them as 0 until they are.
                    reputation_score: reputation_formula(bounce_rate.unwrap_or(0.0), 0.0),
                    bounce_rate,
                    complaint_rate: None,
                    total_sent: sent,
                }
            })
            .collect();
        store::upsert(&state.db, &rows).await?;
        written += rows.len();
    }
    store::set_rolled_through(&state.db, last).await?;
    Ok(written)
}

/// One pass of the hourly worker: the roll-up, the log of each ramp's
/// effective limit, and removal of expired DNS check results.
pub async fn hourly_pass(state: &AppState) -> anyhow::Result<()> {
    roll_up(state).await?;
    note_effective_limits(state).await?;
    cache::purge_cache(&state.db, state.clock.now_ms()).await?;
    Ok(())
}

/// Starts the hourly warmup worker (`outreach serve`). Each pass reads the
/// injected clock, so what it writes does not depend on when it wakes.
pub fn start_workers(state: &AppState) {
    let state = state.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(3600));
        loop {
            tick.tick().await;
            if let Err(e) = hourly_pass(&state).await {
                tracing::warn!(error = ?e, "warmup worker pass failed");
            }
        }
    });
}
