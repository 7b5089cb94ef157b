//! Handlers of the step rows of spec/1 "Sequences".

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::model::{Step, StepInput};
use super::service;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(update, delete))
}

/// The steps in sending order.
#[utoipa::path(get, path = "/v1/sequences/{sequence_id}/steps", tag = "sequences", operation_id = "list_steps",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "Steps", body = Vec<Step>),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<Vec<Step>>> {
    Ok(Json(service::list(&state, &caller, sequence_id).await?))
}

/// Adds a step, last unless `position` says otherwise.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/steps", tag = "sequences", operation_id = "create_step",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    request_body = StepInput,
    responses(
        (status = 201, description = "The step", body = Step),
        (status = 400, description = "Invalid field", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
    Json(body): Json<StepInput>,
) -> ApiResult<(StatusCode, Json<Step>)> {
    Ok((
        StatusCode::CREATED,
        Json(service::create(&state, &caller, sequence_id, body).await?),
    ))
}

/// Changes the given fields; `position` moves the step.
#[utoipa::path(put, path = "/v1/sequences/{sequence_id}/steps/{step_id}", tag = "sequences", operation_id = "update_step",
    security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"), ("step_id" = i64, Path, description = "Step id")),
    request_body = StepInput,
    responses(
        (status = 200, description = "The step", body = Step),
        (status = 400, description = "Invalid field", body = ErrorBody),
        (status = 404, description = "No such sequence or step", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path((sequence_id, step_id)): Path<(i64, i64)>,
    Json(body): Json<StepInput>,
) -> ApiResult<Json<Step>> {
    Ok(Json(
        service::update(&state, &caller, sequence_id, step_id, body).await?,
    ))
}

/// Removes a step; later steps move up.
#[utoipa::path(delete, path = "/v1/sequences/{sequence_id}/steps/{step_id}", tag = "sequences", operation_id = "delete_step",
    security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"), ("step_id" = i64, Path, description = "Step id")),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "No such sequence or step", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path((sequence_id, step_id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, sequence_id, step_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
