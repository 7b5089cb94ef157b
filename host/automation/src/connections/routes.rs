//! Handlers of spec/3's saved connections: `GET/POST /v1/connections`,
//! `GET/PUT/DELETE /v1/connections/{id}` (the GET of one is ours).

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
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
}

/// The account's connections (header values masked) with the plan's cap.
#[utoipa::path(get, path = "/v1/connections", tag = "connections",
    operation_id = "list_saved_connections", security(("api_key" = [])),
    responses(
        (status = 200, description = "Connections; limit and remaining are null when unlimited", body = SavedConnectionList),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<SavedConnectionList>> {
    Ok(Json(service::list(&state, &caller).await?))
}

/// Saves a connection: header values are sealed at rest and answered
/// masked; the base URL must pass the outbound (SSRF) policy.
#[utoipa::path(post, path = "/v1/connections", tag = "connections",
    operation_id = "create_saved_connection", security(("api_key" = [])),
    request_body = SavedConnectionInput,
    responses(
        (status = 201, description = "Created", body = SavedConnection),
        (status = 400, description = "An invalid field, a refused base_url, or the plan's cap reached", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<SavedConnectionInput>,
) -> ApiResult<(StatusCode, Json<SavedConnection>)> {
    let created = service::create(&state, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

#[utoipa::path(get, path = "/v1/connections/{id}", tag = "connections",
    operation_id = "get_saved_connection", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Connection id")),
    responses(
        (status = 200, description = "The connection, header values masked", body = SavedConnection),
        (status = 404, description = "No such connection", body = ErrorBody),
    ))]
async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<SavedConnection>> {
    Ok(Json(service::get(&state, &caller, id).await?))
}

/// Changes any field; `headers` replaces the set, and a value of
/// `********` keeps that header's stored value.
#[utoipa::path(put, path = "/v1/connections/{id}", tag = "connections",
    operation_id = "update_saved_connection", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Connection id")),
    request_body = SavedConnectionInput,
    responses(
        (status = 200, description = "Saved", body = SavedConnection),
        (status = 400, description = "An invalid field or a refused base_url", body = ErrorBody),
        (status = 404, description = "No such connection", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<SavedConnectionInput>,
) -> ApiResult<Json<SavedConnection>> {
    Ok(Json(service::update(&state, &caller, id, body).await?))
}

/// Deletes the connection; workflows naming it keep running on their own
/// absolute URLs.
#[utoipa::path(delete, path = "/v1/connections/{id}", tag = "connections",
    operation_id = "delete_saved_connection", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Connection id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such connection", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
