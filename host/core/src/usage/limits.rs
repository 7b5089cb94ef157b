//! The per-key request limits of the API-key layer: the per-minute limit
//! with the spec's burst, and the daily cap when an operator sets one. In
//! this process on SQLite; shared through the database on PostgreSQL.

use super::store::DAY_MS;
use crate::api_keys::VerifiedKey;
use crate::error::ApiResult;
use crate::platform::limiter::{API_BURST, Burst, Decision, Limiter};
use crate::platform::shared_limiter::Window;
use crate::state::AppState;

const MINUTE_MS: i64 = 60_000;

/// The start of the window of `len_ms` holding `now` (windows are aligned
/// to the epoch, as the in-process limiter's are).
fn window_start(now: i64, len_ms: i64) -> i64 {
    now - now.rem_euclid(len_ms)
}

/// The minute-window decision for `key`, or `None` when its plan's minute
/// limit is unlimited.
pub async fn minute(state: &AppState, key: &VerifiedKey) -> ApiResult<Option<Decision>> {
    let Some(limit) = state.plan_limits(key.plan).requests_per_minute else {
        return Ok(None);
    };
    let d = window(
        state,
        key,
        "minute",
        MINUTE_MS,
        limit,
        Some(API_BURST),
        &state.limits.api,
    )
    .await?;
    Ok(Some(d))
}

/// The daily decision for `key`, or `None` when no daily cap is set.
pub async fn day(state: &AppState, key: &VerifiedKey) -> ApiResult<Option<Decision>> {
    let Some(limit) = state.plan_limits(key.plan).daily_cap else {
        return Ok(None);
    };
    let d = window(
        state,
        key,
        "day",
        DAY_MS,
        limit,
        None,
        &state.limits.api_day,
    )
    .await?;
    Ok(Some(d))
}

async fn window(
    state: &AppState,
    key: &VerifiedKey,
    name: &str,
    len_ms: i64,
    limit: u64,
    burst: Option<Burst>,
    local: &Limiter,
) -> ApiResult<Decision> {
    let Some(shared) = &state.limits.shared else {
        let limit = u32::try_from(limit).unwrap_or(u32::MAX);
        return Ok(local.check(&key.key_id.to_string(), limit));
    };
    let now = state.clock.now_ms();
    let start = window_start(now, len_ms);
    let reset_at_ms = start + len_ms;
    let scope = format!("{name}:key:{}", key.key_id);
    let grant = shared
        .take(Window {
            scope: &scope,
            start,
            ends_at: reset_at_ms,
            limit,
            burst,
        })
        .await?;
    let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(Decision {
        allowed: grant.allowed,
        limit: clamp(limit),
        remaining: clamp(limit.saturating_sub(grant.used)),
        used: clamp(grant.used),
        reset_at_ms,
        retry_after_secs: ((reset_at_ms - now + 999) / 1000).max(1) as u64,
    })
}

/// Requests counted for `key` in the current minute, for reports.
pub async fn minute_used(state: &AppState, key_id: i64) -> ApiResult<u64> {
    match &state.limits.shared {
        Some(shared) => {
            let now = state.clock.now_ms();
            let start = window_start(now, MINUTE_MS);
            Ok(shared.used(&format!("minute:key:{key_id}"), start).await?)
        }
        None => Ok(state.limits.api.used(&key_id.to_string()) as u64),
    }
}
