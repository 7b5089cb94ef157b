//! Handlers of spec/1 "Suppression list".

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{
    self, AddEntry, ImportEntries, ImportResult, Page, SuppressionEntry, SuppressionList,
};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, add))
        .routes(routes!(import))
        .routes(routes!(delete))
}

/// The account's suppressed addresses and domains, newest first.
#[utoipa::path(get, path = "/v1/sequences/suppression", tag = "suppression", operation_id = "list_suppression",
    security(("api_key" = [])), params(Page),
    responses(
        (status = 200, description = "A page and the total", body = SuppressionList),
        (status = 400, description = "Invalid limit or offset", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(page): Query<Page>,
) -> ApiResult<Json<SuppressionList>> {
    Ok(Json(service::list(&state, &caller, page).await?))
}

/// Suppresses an address (or `@domain`); re-adding returns the existing entry.
#[utoipa::path(post, path = "/v1/sequences/suppression", tag = "suppression", operation_id = "add_suppression",
    security(("api_key" = [])), request_body = AddEntry,
    responses(
        (status = 201, description = "Added", body = SuppressionEntry),
        (status = 200, description = "Already listed: the existing entry", body = SuppressionEntry),
        (status = 400, description = "Invalid address or reason", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn add(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<AddEntry>,
) -> ApiResult<(StatusCode, Json<SuppressionEntry>)> {
    let (entry, created) = service::add(&state, &caller, body).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(entry)))
}

/// Suppresses many addresses; duplicates and malformed ones are skipped.
#[utoipa::path(post, path = "/v1/sequences/suppression/import", tag = "suppression", operation_id = "import_suppression",
    security(("api_key" = [])), request_body = ImportEntries,
    responses(
        (status = 200, description = "Counts", body = ImportResult),
        (status = 400, description = "More than 10,000 addresses", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn import(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<ImportEntries>,
) -> ApiResult<Json<ImportResult>> {
    Ok(Json(service::import(&state, &caller, body).await?))
}

/// Removes an entry.
#[utoipa::path(delete, path = "/v1/sequences/suppression/{entry_id}", tag = "suppression", operation_id = "delete_suppression",
    security(("api_key" = [])), params(("entry_id" = i64, Path, description = "Entry id")),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "No such entry", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(entry_id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, entry_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
