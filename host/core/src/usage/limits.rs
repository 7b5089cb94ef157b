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
        &format!("minute:key:{}", key.key_id),
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
        &format!("day:key:{}", key.key_id),
        DAY_MS,
        limit,
        None,
        &state.limits.api_day,
    )
    .await?;
    Ok(Some(d))
}

/// Counts one query of `account_id` against a per-account daily cap named
/// `name` (the automation-platform routes' `automation_daily_queries`):
/// UTC days, in this process on SQLite and shared on PostgreSQL, like the
/// per-key windows.
pub async fn account_day(
    state: &AppState,
    name: &str,
    account_id: i64,
    limit: u64,
) -> ApiResult<Decision> {
    let subject = format!("{name}:account:{account_id}");
    window(state, &subject, DAY_MS, limit, None, &state.limits.api_day).await
}

async fn window(
    state: &AppState,
    subject: &str,
    len_ms: i64,
    limit: u64,
    burst: Option<Burst>,
    local: &Limiter,
) -> ApiResult<Decision> {
    let Some(shared) = &state.limits.shared else {
        let limit = u32::try_from(limit).unwrap_or(u32::MAX);
        return Ok(local.check(subject, limit));
    };
    let now = state.clock.now_ms();
    let start = window_start(now, len_ms);
    let reset_at_ms = start + len_ms;
    let window = Window {
        scope: subject,
        start,
        ends_at: reset_at_ms,
        limit,
        burst,
    };
    let grant = shared.take(window).await?;
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
        None => Ok(state.limits.api.used(&format!("minute:key:{key_id}")) as u64),
    }
}

/// The gate of every automation-platform route but `auth/test` (spec/2
/// "Automation-platform integration" and "Limits"): Starter and up (403
/// below), and one query against the account's `automation_daily_queries`
/// a UTC day, past which it answers 429 'Rate limit exceeded' with the
/// day's window in `X-RateLimit-*` and `Retry-After`. The query still
/// counts against the per-minute limit and the monthly quota, as every
/// call does.
pub async fn automation_query(
    state: &AppState,
    caller: &crate::http::auth::Caller,
) -> ApiResult<()> {
    use crate::accounts::{Plan, Quota};
    caller.require(Plan::Starter)?;
    let Some(limit) = state
        .plan_limits(caller.plan)
        .quota(Quota::AutomationDailyQueries)
    else {
        return Ok(());
    };
    let d = account_day(state, "automation", caller.account_id, limit).await?;
    if d.allowed {
        return Ok(());
    }
    Err(crate::error::ApiError::RateLimitExceeded {
        retry_after: d.retry_after_secs,
        limit: Some(limit),
        reset_at_ms: Some(d.reset_at_ms),
    })
}
