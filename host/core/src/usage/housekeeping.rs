//! What ages out of usage storage, pruned by the server's housekeeping:
//! raw rows beyond the newest `usage_recent_requests` per account, hourly
//! rollups past 48 hours, daily rollups past 400 days, and limit windows
//! that ended. Monthly billable totals are kept for good.

use super::recorder::PRUNE_BATCH;
use super::store::{self, DAY_MS, HOUR_MS};
use crate::platform::shared_limiter::SharedLimiter;
use crate::state::AppState;

/// Hourly rollups are kept this long (the hourly history shows 24 hours).
pub const HOURLY_KEPT_MS: i64 = 48 * HOUR_MS;
/// Daily rollups are kept this long (stats show up to 90 days, the monthly
/// quota reads one billing period).
pub const DAILY_KEPT_MS: i64 = 400 * DAY_MS;

/// Rows removed by one pass.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    pub raw_usage: u64,
    pub rollups: u64,
    pub limit_windows: u64,
}

pub async fn prune(state: &AppState) -> anyhow::Result<Pruned> {
    let now = state.clock.now_ms();
    let keep = state.config.usage_recent_requests as i64;
    let mut raw_usage = 0;
    for account in store::accounts_with_raw_rows(&state.db).await? {
        raw_usage += store::prune_raw(&state.db, account, keep, PRUNE_BATCH).await?;
    }
    let rollups = store::prune_rollups(
        &state.db,
        store::Grain::Hour.bucket(now - HOURLY_KEPT_MS),
        store::Grain::Day.bucket(now - DAILY_KEPT_MS),
        100,
    )
    .await?;
    // Minute windows that ended, day windows that ended a day ago.
    let limit_windows = SharedLimiter::prune(&state.db, now - 2 * 60_000, now - 2 * DAY_MS).await?;
    Ok(Pruned {
        raw_usage,
        rollups,
        limit_windows,
    })
}
