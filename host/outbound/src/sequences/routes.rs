//! Handlers of spec/1 "Sequences" (the sequence itself; steps are in
//! `steps/`, enrollment in `enrollment/`).

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::model::{Sequence, SequenceDetail, SequenceInput, SequenceList};
use super::service;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(detail, update, delete))
        .routes(routes!(activate))
        .routes(routes!(pause))
        .routes(routes!(clone))
}

/// Every sequence of the account, with the plan's sequence quota.
#[utoipa::path(get, path = "/v1/sequences", tag = "sequences", operation_id = "list_sequences",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "All sequences", body = SequenceList),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<SequenceList>> {
    Ok(Json(service::list(&state, &caller).await?))
}

/// Creates a draft; only `name` is required.
#[utoipa::path(post, path = "/v1/sequences", tag = "sequences", operation_id = "create_sequence",
    security(("api_key" = [])), request_body = SequenceInput,
    responses(
        (status = 201, description = "The new draft", body = Sequence),
        (status = 400, description = "Invalid field or plan limit reached", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<SequenceInput>,
) -> ApiResult<(StatusCode, Json<Sequence>)> {
    Ok((
        StatusCode::CREATED,
        Json(service::create(&state, &caller, body).await?),
    ))
}

/// The sequence with its steps and most recent 100 enrollments.
#[utoipa::path(get, path = "/v1/sequences/{sequence_id}", tag = "sequences", operation_id = "get_sequence",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "The sequence", body = SequenceDetail),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn detail(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<SequenceDetail>> {
    Ok(Json(service::detail(&state, &caller, id).await?))
}

/// Changes the given fields; `null` clears a nullable one.
#[utoipa::path(put, path = "/v1/sequences/{sequence_id}", tag = "sequences", operation_id = "update_sequence",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    request_body = SequenceInput,
    responses(
        (status = 200, description = "The sequence", body = Sequence),
        (status = 400, description = "Invalid field", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<SequenceInput>,
) -> ApiResult<Json<Sequence>> {
    Ok(Json(service::update(&state, &caller, id, body).await?))
}

/// Removes the sequence with its steps, enrollments and mailbox pool.
#[utoipa::path(delete, path = "/v1/sequences/{sequence_id}", tag = "sequences", operation_id = "delete_sequence",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Starts (or resumes) sending.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/activate", tag = "sequences", operation_id = "activate_sequence",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "Active", body = Sequence),
        (status = 400, description = "No actionable step", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn activate(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Sequence>> {
    Ok(Json(service::activate(&state, &caller, id).await?))
}

/// Halts new sends; enrollments stay as they are.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/pause", tag = "sequences", operation_id = "pause_sequence",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "Paused", body = Sequence),
        (status = 400, description = "Not active", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Sequence>> {
    Ok(Json(service::pause(&state, &caller, id).await?))
}

/// A draft copy with the steps and mailbox pool.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/clone", tag = "sequences", operation_id = "clone_sequence",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 201, description = "The copy", body = Sequence),
        (status = 400, description = "Plan limit reached", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn clone(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<(StatusCode, Json<Sequence>)> {
    Ok((
        StatusCode::CREATED,
        Json(service::clone(&state, &caller, id).await?),
    ))
}
