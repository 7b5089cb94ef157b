//! The figures behind the usage endpoints.

use chrono::Duration;
use serde::Serialize;
use sqlx::Row;
use utoipa::ToSchema;

use super::store::{self, DAY_MS, Grain, GroupColumn, HOUR_MS, QuotaSubject};
use crate::accounts::plans::Plan;
use crate::accounts::service::billing_period;
use crate::accounts::store as accounts_store;
use crate::error::{ApiError, ApiResult};
use crate::http::auth::Caller;
use crate::http::extract::within;
use crate::platform::clock::{iso, ms_to_datetime};
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct UsageStats {
    pub total_queries: i64,
    pub period_start: String,
    pub period_end: String,
    pub daily_breakdown: Vec<DailyCount>,
    /// Requests per route template.
    #[schema(value_type = Object)]
    pub endpoint_breakdown: serde_json::Map<String, serde_json::Value>,
    pub top_categories: Vec<CategoryCount>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DailyCount {
    pub date: String,
    pub queries: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CategoryCount {
    pub category: String,
    pub count: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RateLimits {
    pub plan: Plan,
    pub rate_limit: RateLimitConfig,
    pub current_usage: CurrentUsage,
    /// The last 24 hours, oldest first, one entry per hour.
    pub hourly_history: Vec<HourlyCount>,
    pub top_endpoints: Vec<EndpointCount>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RateLimitConfig {
    /// `null` when the operator made it unlimited.
    pub requests_per_minute: Option<u64>,
    /// The operator's daily cap, else the most the minute window lets
    /// through in a day; `null` when unlimited.
    pub requests_per_day: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CurrentUsage {
    pub minute_requests: u64,
    pub daily_requests: i64,
    pub monthly_queries_used: u64,
    /// `null` when the operator made the quota unlimited.
    pub monthly_queries_limit: Option<u64>,
    /// The date the monthly quota resets (the next billing date).
    pub reset_date: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HourlyCount {
    pub hour: String,
    pub requests: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointCount {
    pub endpoint: String,
    pub requests: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RecentActivity {
    pub recent_requests: Vec<RecentRequest>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RecentRequest {
    pub id: String,
    pub timestamp: String,
    pub method: String,
    pub endpoint: String,
    pub status: i64,
    pub response_time_ms: i64,
    #[schema(value_type = Option<Object>)]
    pub filters_summary: Option<serde_json::Value>,
    pub results_count: i64,
}

pub async fn stats(state: &AppState, caller: &Caller, days: i64) -> ApiResult<UsageStats> {
    within("days", days, 1..=90)?;
    let now = state.clock.now_ms();
    let since = Grain::Day.bucket(now) - (days - 1) * DAY_MS;
    let per_day = store::per_bucket(&state.db, caller.account_id, Grain::Day, since).await?;
    let daily_breakdown = (0..days)
        .map(|i| {
            let day = since + i * DAY_MS;
            DailyCount {
                date: ms_to_datetime(day).date_naive().to_string(),
                queries: per_day
                    .iter()
                    .find(|(b, _)| *b == day)
                    .map_or(0, |(_, n)| *n),
            }
        })
        .collect();
    let endpoints = store::grouped(
        &state.db,
        caller.account_id,
        since,
        GroupColumn::Endpoint,
        1000,
    )
    .await?;
    let categories = store::grouped(
        &state.db,
        caller.account_id,
        since,
        GroupColumn::Category,
        10,
    )
    .await?;
    Ok(UsageStats {
        total_queries: per_day.iter().map(|(_, n)| n).sum(),
        period_start: iso(since),
        period_end: iso(now),
        daily_breakdown,
        endpoint_breakdown: endpoints.into_iter().map(|(e, n)| (e, n.into())).collect(),
        top_categories: categories
            .into_iter()
            .map(|(category, count)| CategoryCount { category, count })
            .collect(),
    })
}

pub async fn rate_limits(state: &AppState, caller: &Caller) -> ApiResult<RateLimits> {
    let now = state.clock.now_ms();
    let account = accounts_store::get_account(&state.db, caller.account_id)
        .await?
        .ok_or_else(|| ApiError::not_found("account"))?;
    // A reseller client's key reports its client's quota.
    let (subject, limit, billing_day) = match caller.reseller_client_id {
        Some(id) => {
            let client =
                super::super::accounts::reseller::get_client(state, caller.account_id, id).await?;
            (
                QuotaSubject::ResellerClient(id),
                Some(client.monthly_quota as u64),
                crate::accounts::service::billing_day_of(client.created_ms),
            )
        }
        None => (
            QuotaSubject::Account(caller.account_id),
            state.plan_limits(caller.plan).monthly_quota,
            account.billing_day as u32,
        ),
    };
    let (period_start, reset_at) = billing_period(billing_day, now);
    let monthly_used = state.quota.used(state, subject, period_start).await?;
    let hour_now = Grain::Hour.bucket(now);
    let since_hours = hour_now - 23 * HOUR_MS;
    let per_hour =
        store::per_bucket(&state.db, caller.account_id, Grain::Hour, since_hours).await?;
    let hourly_history = (0..24)
        .map(|i| {
            let bucket = since_hours + i * HOUR_MS;
            HourlyCount {
                hour: iso(bucket),
                requests: per_hour
                    .iter()
                    .find(|(b, _)| *b == bucket)
                    .map_or(0, |(_, n)| *n),
            }
        })
        .collect();
    let top = store::grouped(
        &state.db,
        caller.account_id,
        Grain::Day.bucket(now) - 29 * DAY_MS,
        GroupColumn::Endpoint,
        10,
    )
    .await?;
    let limits = state.plan_limits(caller.plan);
    let today = store::per_bucket(
        &state.db,
        caller.account_id,
        Grain::Day,
        Grain::Day.bucket(now),
    )
    .await?;
    Ok(RateLimits {
        plan: caller.plan,
        rate_limit: RateLimitConfig {
            requests_per_minute: limits.requests_per_minute,
            requests_per_day: limits.requests_per_day(),
        },
        current_usage: CurrentUsage {
            minute_requests: super::limits::minute_used(state, caller.api_key_id).await?,
            daily_requests: today.iter().map(|(_, n)| n).sum(),
            monthly_queries_used: monthly_used,
            monthly_queries_limit: limit,
            reset_date: (ms_to_datetime(reset_at) - Duration::zero())
                .date_naive()
                .to_string(),
        },
        hourly_history,
        top_endpoints: top
            .into_iter()
            .map(|(endpoint, requests)| EndpointCount { endpoint, requests })
            .collect(),
    })
}

pub async fn recent_activity(state: &AppState, caller: &Caller) -> ApiResult<RecentActivity> {
    let rows = store::recent(&state.db, caller.account_id, 10).await?;
    let recent_requests = rows
        .iter()
        .map(|r| -> sqlx::Result<RecentRequest> {
            let filters: Option<String> = r.try_get("filters_summary")?;
            Ok(RecentRequest {
                id: r.try_get("request_id")?,
                timestamp: iso(r.try_get("ts")?),
                method: r.try_get("method")?,
                endpoint: r.try_get("endpoint")?,
                status: r.try_get("status")?,
                response_time_ms: r.try_get("response_time_ms")?,
                filters_summary: filters.and_then(|f| serde_json::from_str(&f).ok()),
                results_count: r.try_get("results_count")?,
            })
        })
        .collect::<sqlx::Result<_>>()?;
    Ok(RecentActivity { recent_requests })
}
