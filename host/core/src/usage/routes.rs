//! `/v1/usage/*` handlers.

use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, RateLimits, RecentActivity, UsageStats};
use crate::error::{ApiResult, ErrorBody};
use crate::http::auth::Caller;
use crate::http::extract::{Json, Query};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(stats))
        .routes(routes!(rate_limits))
        .routes(routes!(recent_activity))
}

/// Unknown query parameters are ignored (clients add cache-busters); unknown
/// body fields are refused.
#[derive(Debug, Deserialize, IntoParams)]
pub struct StatsQuery {
    /// Days to cover, 1-90 (default 30).
    pub days: Option<i64>,
}

/// Request counts over the last `days` days.
#[utoipa::path(get, path = "/v1/usage/stats", tag = "usage", params(StatsQuery),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Usage statistics", body = UsageStats),
        (status = 400, description = "Invalid days", body = ErrorBody),
        (status = 401, description = "Invalid API key", body = ErrorBody),
    ))]
async fn stats(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<StatsQuery>,
) -> ApiResult<Json<UsageStats>> {
    Ok(Json(
        service::stats(&state, &caller, q.days.unwrap_or(30)).await?,
    ))
}

/// The plan's limits and the caller's current consumption.
#[utoipa::path(get, path = "/v1/usage/rate-limits", tag = "usage",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Rate limits and current usage", body = RateLimits),
        (status = 401, description = "Invalid API key", body = ErrorBody),
    ))]
async fn rate_limits(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<RateLimits>> {
    Ok(Json(service::rate_limits(&state, &caller).await?))
}

/// The account's last 10 requests.
#[utoipa::path(get, path = "/v1/usage/recent-activity", tag = "usage",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Recent requests, newest first", body = RecentActivity),
        (status = 401, description = "Invalid API key", body = ErrorBody),
    ))]
async fn recent_activity(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<RecentActivity>> {
    Ok(Json(service::recent_activity(&state, &caller).await?))
}
