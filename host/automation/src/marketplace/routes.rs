//! Handlers of spec/3's marketplace endpoints under `/v1/workflows/`.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::model::*;
use super::service;
use crate::templates::model::InstalledWorkflow;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(publish))
        .routes(routes!(search))
        .routes(routes!(get, delete))
        .routes(routes!(install))
        .routes(routes!(rate))
}

/// Publishes a scrubbed copy of a workflow: secrets and the author's ids
/// become placeholders.
#[utoipa::path(post, path = "/v1/workflows/{id}/publish", tag = "marketplace",
    operation_id = "publish_workflow", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id")),
    request_body = PublishInput,
    responses(
        (status = 201, description = "The entry", body = MarketplaceEntry),
        (status = 400, description = "Duplicate name for this author, unknown category or difficulty, bad tags", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn publish(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<PublishInput>,
) -> ApiResult<(StatusCode, Json<MarketplaceEntry>)> {
    let entry = service::publish(&state, &caller, id, body).await?;
    Ok((StatusCode::CREATED, Json(entry)))
}

/// Searches public entries (and the caller's private ones).
#[utoipa::path(get, path = "/v1/workflows/marketplace", tag = "marketplace",
    operation_id = "search_marketplace", security(("api_key" = [])), params(MarketplaceQuery),
    responses(
        (status = 200, description = "One page", body = MarketplacePage),
        (status = 400, description = "Bad sort, category, difficulty, page or limit", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn search(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<MarketplaceQuery>,
) -> ApiResult<Json<MarketplacePage>> {
    Ok(Json(service::search(&state, &caller, q).await?))
}

#[utoipa::path(get, path = "/v1/workflows/marketplace/{id}", tag = "marketplace",
    operation_id = "get_marketplace_entry", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Marketplace entry id")),
    responses(
        (status = 200, description = "The entry", body = MarketplaceEntry),
        (status = 404, description = "No such entry, or another author's private one", body = ErrorBody),
    ))]
async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<MarketplaceEntry>> {
    Ok(Json(service::get(&state, &caller, id).await?))
}

/// Removes the caller's own entry.
#[utoipa::path(delete, path = "/v1/workflows/marketplace/{id}", tag = "marketplace",
    operation_id = "delete_marketplace_entry", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Marketplace entry id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such entry of the caller's", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Creates a paused workflow from the entry.
#[utoipa::path(post, path = "/v1/workflows/marketplace/{id}/install", tag = "marketplace",
    operation_id = "install_marketplace_entry", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Marketplace entry id")),
    responses(
        (status = 201, description = "The new workflow, paused, with the placeholders to fill", body = InstalledWorkflow),
        (status = 400, description = "The plan's workflow cap reached, or an action type this server lacks", body = ErrorBody),
        (status = 404, description = "No such entry", body = ErrorBody),
    ))]
async fn install(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<(StatusCode, Json<InstalledWorkflow>)> {
    let installed = service::install(&state, &caller, id).await?;
    Ok((StatusCode::CREATED, Json(installed)))
}

/// Rates an installed entry; a second rating overwrites.
#[utoipa::path(post, path = "/v1/workflows/marketplace/{id}/rate", tag = "marketplace",
    operation_id = "rate_marketplace_entry", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Marketplace entry id")),
    request_body = RateEntryInput,
    responses(
        (status = 200, description = "The entry with its new sums", body = MarketplaceEntry),
        (status = 400, description = "rating not an integer 1-5, review too long, or the caller's own entry", body = ErrorBody),
        (status = 403, description = "Not installed by the caller", body = ErrorBody),
        (status = 404, description = "No such entry", body = ErrorBody),
    ))]
async fn rate(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<RateEntryInput>,
) -> ApiResult<Json<MarketplaceEntry>> {
    Ok(Json(service::rate(&state, &caller, id, body).await?))
}
