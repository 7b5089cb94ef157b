//! Handlers of spec/2 "Audiences".

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::model::*;
use super::service;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_audiences, create_audience))
        .routes(routes!(get_audience, update_audience, delete_audience))
        .routes(routes!(preview_audience))
        .routes(routes!(audience_signals))
}

/// The account's audiences (reading the list does not reset
/// `new_since_viewed`).
#[utoipa::path(get, path = "/v1/audiences", tag = "audiences",
    security(("api_key" = [])),
    responses((status = 200, description = "The account's audiences, oldest first", body = AudienceList)))]
async fn list_audiences(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<AudienceList>> {
    Ok(Json(service::list(&state, &caller).await?))
}

/// Saves an audience; its `match_count` is counted at once.
#[utoipa::path(post, path = "/v1/audiences", tag = "audiences",
    security(("api_key" = [])), request_body = NewAudience,
    responses(
        (status = 201, description = "Created", body = Audience),
        (status = 400, description = "An invalid name or description, an unknown filter value (named), or plan limit reached", body = ErrorBody),
    ))]
async fn create_audience(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewAudience>,
) -> ApiResult<(StatusCode, Json<Audience>)> {
    let audience = service::create(&state, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(audience)))
}

/// One audience; shows `new_since_viewed` and then resets it.
#[utoipa::path(get, path = "/v1/audiences/{id}", tag = "audiences",
    security(("api_key" = [])),
    params(("id" = i64, Path, description = "The audience's id")),
    responses(
        (status = 200, description = "The audience", body = Audience),
        (status = 404, description = "Audience not found", body = ErrorBody),
    ))]
async fn get_audience(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Audience>> {
    Ok(Json(service::get(&state, &caller, id).await?))
}

/// Changes the fields sent (as create's), and recounts.
#[utoipa::path(put, path = "/v1/audiences/{id}", tag = "audiences",
    security(("api_key" = [])),
    params(("id" = i64, Path, description = "The audience's id")),
    request_body = UpdateAudience,
    responses(
        (status = 200, description = "Updated", body = Audience),
        (status = 400, description = "An invalid field or an unknown filter value (named)", body = ErrorBody),
        (status = 404, description = "Audience not found", body = ErrorBody),
    ))]
async fn update_audience(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<UpdateAudience>,
) -> ApiResult<Json<Audience>> {
    Ok(Json(service::update(&state, &caller, id, body).await?))
}

/// Deletes an audience.
#[utoipa::path(delete, path = "/v1/audiences/{id}", tag = "audiences",
    security(("api_key" = [])),
    params(("id" = i64, Path, description = "The audience's id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "Audience not found", body = ErrorBody),
    ))]
async fn delete_audience(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// What filters would match now, without saving anything.
#[utoipa::path(post, path = "/v1/audiences/preview", tag = "audiences",
    security(("api_key" = [])), request_body = AudiencePreviewRequest,
    responses(
        (status = 200, description = "The exact count and up to 10 domains, newest enrichment first", body = AudiencePreview),
        (status = 400, description = "An unknown filter value (named)", body = ErrorBody),
    ))]
async fn preview_audience(
    State(state): State<AppState>,
    _caller: Caller,
    Json(body): Json<AudiencePreviewRequest>,
) -> ApiResult<Json<AudiencePreview>> {
    Ok(Json(service::preview(&state, body).await?))
}

/// The 21 audience signal values.
#[utoipa::path(get, path = "/v1/audiences/signals", tag = "audiences",
    security(("api_key" = [])),
    responses((status = 200, description = "spec/2's audience signals", body = AudienceSignalList)))]
async fn audience_signals(_caller: Caller) -> Json<AudienceSignalList> {
    Json(service::signals())
}
