//! Handlers of spec/2 "Watchlist". Every endpoint needs Starter or above.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::model::*;
use super::service;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_watchlist, add_watch))
        .routes(routes!(add_watches))
        .routes(routes!(account_changes))
        .routes(routes!(update_watch, delete_watch))
        .routes(routes!(watch_history))
        .routes(routes!(check_watch))
}

/// The account's watched domains, oldest first, with the plan's cap.
#[utoipa::path(get, path = "/v1/watchlist", tag = "watchlist", operation_id = "list_watchlist",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Watched domains, limit and remaining", body = WatchlistPage),
        (status = 403, description = "The plan has no watchlist (Free)", body = ErrorBody),
    ))]
async fn list_watchlist(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<WatchlistPage>> {
    Ok(Json(service::list(&state, &caller).await?))
}

/// Watches a domain (a URL is reduced to its domain); the pool enriches it
/// first when it does not know it.
#[utoipa::path(post, path = "/v1/watchlist", tag = "watchlist", operation_id = "add_watch",
    security(("api_key" = [])), request_body = NewWatch,
    responses(
        (status = 201, description = "Watched", body = WatchedDomain),
        (status = 400, description = "An invalid domain, or plan limit reached", body = ErrorBody),
        (status = 403, description = "The plan has no watchlist (Free)", body = ErrorBody),
        (status = 409, description = "Domain already on the watchlist", body = ErrorBody),
    ))]
async fn add_watch(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewWatch>,
) -> ApiResult<(StatusCode, Json<WatchedDomain>)> {
    let watched = service::add(&state, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(watched)))
}

/// Watches up to 50 domains with the default preferences, all or none:
/// domains already watched or repeated are skipped.
#[utoipa::path(post, path = "/v1/watchlist/bulk", tag = "watchlist", operation_id = "add_watches",
    security(("api_key" = [])), request_body = BulkWatch,
    responses(
        (status = 200, description = "How many were added and skipped", body = BulkWatchResult),
        (status = 400, description = "0 or more than 50 domains, an invalid one, or plan limit reached", body = ErrorBody),
        (status = 403, description = "The plan has no watchlist (Free)", body = ErrorBody),
    ))]
async fn add_watches(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<BulkWatch>,
) -> ApiResult<Json<BulkWatchResult>> {
    Ok(Json(service::add_bulk(&state, &caller, body).await?))
}

/// The account's latest changes across its watches, newest first.
#[utoipa::path(get, path = "/v1/watchlist/changes", tag = "watchlist", operation_id = "watchlist_changes",
    security(("api_key" = [])), params(ChangesQuery),
    responses(
        (status = 200, description = "Change records with their domains", body = AccountChanges),
        (status = 400, description = "limit outside 1-200", body = ErrorBody),
        (status = 403, description = "The plan has no watchlist (Free)", body = ErrorBody),
    ))]
async fn account_changes(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<ChangesQuery>,
) -> ApiResult<Json<AccountChanges>> {
    Ok(Json(service::changes(&state, &caller, query).await?))
}

/// Changes the alert preferences given.
#[utoipa::path(put, path = "/v1/watchlist/{watch_id}", tag = "watchlist", operation_id = "update_watch",
    security(("api_key" = [])), params(("watch_id" = i64, Path)), request_body = WatchUpdate,
    responses(
        (status = 200, description = "Updated", body = WatchedDomain),
        (status = 403, description = "The plan has no watchlist (Free)", body = ErrorBody),
        (status = 404, description = "Watched domain not found", body = ErrorBody),
    ))]
async fn update_watch(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<WatchUpdate>,
) -> ApiResult<Json<WatchedDomain>> {
    Ok(Json(service::update(&state, &caller, id, body).await?))
}

/// Stops watching a domain; its change records go too.
#[utoipa::path(delete, path = "/v1/watchlist/{watch_id}", tag = "watchlist", operation_id = "delete_watch",
    security(("api_key" = [])), params(("watch_id" = i64, Path)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 403, description = "The plan has no watchlist (Free)", body = ErrorBody),
        (status = 404, description = "Watched domain not found", body = ErrorBody),
    ))]
async fn delete_watch(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A watch's change records, newest first.
#[utoipa::path(get, path = "/v1/watchlist/{watch_id}/history", tag = "watchlist", operation_id = "watch_history",
    security(("api_key" = [])), params(("watch_id" = i64, Path), HistoryQuery),
    responses(
        (status = 200, description = "A page of change records", body = History),
        (status = 400, description = "limit outside 1-200, a negative offset, or an unknown field", body = ErrorBody),
        (status = 403, description = "The plan has no watchlist (Free)", body = ErrorBody),
        (status = 404, description = "Watched domain not found", body = ErrorBody),
    ))]
async fn watch_history(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Query(query): Query<HistoryQuery>,
) -> ApiResult<Json<History>> {
    Ok(Json(service::history(&state, &caller, id, query).await?))
}

/// Compares the pool's record with the last snapshot now, recording and
/// announcing what changed.
#[utoipa::path(get, path = "/v1/watchlist/{watch_id}/check", tag = "watchlist", operation_id = "check_watch",
    security(("api_key" = [])), params(("watch_id" = i64, Path)),
    responses(
        (status = 200, description = "What changed since the snapshot, and the record now", body = CheckResult),
        (status = 403, description = "The plan has no watchlist (Free)", body = ErrorBody),
        (status = 404, description = "Watched domain not found", body = ErrorBody),
    ))]
async fn check_watch(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<CheckResult>> {
    Ok(Json(service::check(&state, &caller, id).await?))
}
