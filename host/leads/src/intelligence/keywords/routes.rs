//! Handlers of the tracked-keyword endpoints.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, KeywordPage, KeywordStats, KeywordSummary, NewKeyword, TrackedKeyword};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

const KEYWORD_ID: &str = "The tracked keyword's id";

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_keywords, add_keyword))
        .routes(routes!(delete_keyword))
        .routes(routes!(keyword_summary))
        .routes(routes!(keyword_stats))
}

/// The account's tracked keywords with their recent match counts (Pro and
/// Enterprise).
#[utoipa::path(get, path = "/v1/intelligence/tracked-keywords", tag = "intelligence", operation_id = "list_tracked_keywords",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The keywords", body = KeywordPage),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
    ))]
async fn list_keywords(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<KeywordPage>> {
    Ok(Json(service::list(&state, &caller).await?))
}

/// Tracks a keyword or phrase in the summaries of newly enriched domains.
#[utoipa::path(post, path = "/v1/intelligence/tracked-keywords", tag = "intelligence", operation_id = "add_tracked_keyword",
    security(("api_key" = [])), request_body = NewKeyword,
    responses(
        (status = 201, description = "Tracked", body = TrackedKeyword),
        (status = 400, description = "Empty or over 200 characters, or the plan's limit reached", body = ErrorBody),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
        (status = 409, description = "Keyword already tracked", body = ErrorBody),
    ))]
async fn add_keyword(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewKeyword>,
) -> ApiResult<(StatusCode, Json<TrackedKeyword>)> {
    Ok((
        StatusCode::CREATED,
        Json(service::add(&state, &caller, body).await?),
    ))
}

/// Stops tracking a keyword; its matches go with it.
#[utoipa::path(delete, path = "/v1/intelligence/tracked-keywords/{keyword_id}", tag = "intelligence", operation_id = "delete_tracked_keyword",
    security(("api_key" = [])), params(("keyword_id" = i64, Path, description = KEYWORD_ID)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
        (status = 404, description = "Tracked keyword not found", body = ErrorBody),
    ))]
async fn delete_keyword(
    State(state): State<AppState>,
    caller: Caller,
    Path(keyword_id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, keyword_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Matches per keyword over the last 7 and 30 days.
#[utoipa::path(get, path = "/v1/intelligence/tracked-keywords/summary", tag = "intelligence", operation_id = "tracked_keywords_summary",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Match counts", body = KeywordSummary),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
    ))]
async fn keyword_summary(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<KeywordSummary>> {
    Ok(Json(service::summary(&state, &caller).await?))
}

/// One keyword's matches by day and its recent matching domains.
#[utoipa::path(get, path = "/v1/intelligence/tracked-keywords/{keyword_id}/stats", tag = "intelligence", operation_id = "tracked_keyword_stats",
    security(("api_key" = [])), params(("keyword_id" = i64, Path, description = KEYWORD_ID)),
    responses(
        (status = 200, description = "The keyword's matches", body = KeywordStats),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
        (status = 404, description = "Tracked keyword not found", body = ErrorBody),
    ))]
async fn keyword_stats(
    State(state): State<AppState>,
    caller: Caller,
    Path(keyword_id): Path<i64>,
) -> ApiResult<Json<KeywordStats>> {
    Ok(Json(service::stats(&state, &caller, keyword_id).await?))
}
