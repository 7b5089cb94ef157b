//! Handlers of spec/3 "Smart warmup" (status, analytics, pool statistics)
//! and of the membership transitions (start, pause, resume, stop).

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, SmartWarmupChange};
use super::stats::{
    self, AnalyticsQuery, SmartWarmupAnalytics, SmartWarmupStatus, WarmupPoolStats,
};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(analytics))
        .routes(routes!(pool_stats))
        .routes(routes!(start))
        .routes(routes!(pause))
        .routes(routes!(resume))
        .routes(routes!(stop))
}

/// A send account's place in the pool, its ramp and its deliverability.
#[utoipa::path(get, path = "/v1/send-accounts/{id}/smart-warmup/status", tag = "smart-warmup",
    operation_id = "smart_warmup_status", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Send account id")),
    responses(
        (status = 200, description = "The status", body = SmartWarmupStatus),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such send account", body = ErrorBody),
    ))]
async fn status(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<SmartWarmupStatus>> {
    Ok(Json(stats::status(&state, &caller, id).await?))
}

/// The account's warmup figures over `days`, from the roll-up (refreshed
/// every 15 minutes by default).
#[utoipa::path(get, path = "/v1/send-accounts/smart-warmup/analytics", tag = "smart-warmup",
    operation_id = "smart_warmup_analytics", security(("api_key" = [])), params(AnalyticsQuery),
    responses(
        (status = 200, description = "The analytics", body = SmartWarmupAnalytics),
        (status = 400, description = "days outside 1-90", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn analytics(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<AnalyticsQuery>,
) -> ApiResult<Json<SmartWarmupAnalytics>> {
    Ok(Json(stats::analytics(&state, &caller, q).await?))
}

/// The whole pool, aggregated: no other tenant's accounts or addresses.
#[utoipa::path(get, path = "/v1/send-accounts/warmup-pool/stats", tag = "smart-warmup",
    operation_id = "warmup_pool_stats", security(("api_key" = [])),
    responses(
        (status = 200, description = "The pool's statistics", body = WarmupPoolStats),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn pool_stats(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<WarmupPoolStats>> {
    Ok(Json(stats::pool_stats(&state, &caller).await?))
}

/// Joins the pool (an account connected without warmup).
#[utoipa::path(post, path = "/v1/send-accounts/{id}/smart-warmup/start", tag = "smart-warmup",
    operation_id = "smart_warmup_start", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Send account id")),
    responses(
        (status = 200, description = "Joined", body = SmartWarmupChange),
        (status = 400, description = "Already in the pool", body = ErrorBody),
        (status = 404, description = "No such send account", body = ErrorBody),
    ))]
async fn start(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<SmartWarmupChange>> {
    Ok(Json(service::start(&state, &caller, id).await?))
}

/// Pauses an active member.
#[utoipa::path(post, path = "/v1/send-accounts/{id}/smart-warmup/pause", tag = "smart-warmup",
    operation_id = "smart_warmup_pause", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Send account id")),
    responses(
        (status = 200, description = "Paused", body = SmartWarmupChange),
        (status = 400, description = "Smart warmup is not active", body = ErrorBody),
        (status = 404, description = "No such send account", body = ErrorBody),
    ))]
async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<SmartWarmupChange>> {
    Ok(Json(service::pause(&state, &caller, id).await?))
}

/// Resumes a paused or failed member.
#[utoipa::path(post, path = "/v1/send-accounts/{id}/smart-warmup/resume", tag = "smart-warmup",
    operation_id = "smart_warmup_resume", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Send account id")),
    responses(
        (status = 200, description = "Active", body = SmartWarmupChange),
        (status = 400, description = "Never started, or completed", body = ErrorBody),
        (status = 404, description = "No such send account", body = ErrorBody),
    ))]
async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<SmartWarmupChange>> {
    Ok(Json(service::resume(&state, &caller, id).await?))
}

/// Leaves the pool.
#[utoipa::path(post, path = "/v1/send-accounts/{id}/smart-warmup/stop", tag = "smart-warmup",
    operation_id = "smart_warmup_stop", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Send account id")),
    responses(
        (status = 200, description = "Left the pool", body = SmartWarmupChange),
        (status = 400, description = "Not in the pool", body = ErrorBody),
        (status = 404, description = "No such send account", body = ErrorBody),
    ))]
async fn stop(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<SmartWarmupChange>> {
    Ok(Json(service::stop(&state, &caller, id).await?))
}
