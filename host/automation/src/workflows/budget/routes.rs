//! Handlers of spec/3's workflow budget: `GET/PUT/DELETE
//! /v1/workflows/{id}/budget`, `POST /v1/workflows/{id}/budget/reset`.

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service;
use super::{WorkflowBudget, WorkflowBudgetInput};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get, put, delete))
        .routes(routes!(reset))
}

/// The cap and this month's spend; `configured` is false without a cap.
#[utoipa::path(get, path = "/v1/workflows/{id}/budget", tag = "workflows",
    operation_id = "get_workflow_budget", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "The budget", body = WorkflowBudget),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<WorkflowBudget>> {
    Ok(Json(service::get(&state, &caller, id).await?))
}

/// Sets the monthly cap (0 means no cap) and `auto_pause_on_exceed`.
#[utoipa::path(put, path = "/v1/workflows/{id}/budget", tag = "workflows",
    operation_id = "set_workflow_budget", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id")),
    request_body = WorkflowBudgetInput,
    responses(
        (status = 200, description = "Saved", body = WorkflowBudget),
        (status = 400, description = "monthly_cap_usd not a number from 0 to 1000000", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn put(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<WorkflowBudgetInput>,
) -> ApiResult<Json<WorkflowBudget>> {
    Ok(Json(service::put(&state, &caller, id, body).await?))
}

/// Removes the cap; this month's spend stays recorded.
#[utoipa::path(delete, path = "/v1/workflows/{id}/budget", tag = "workflows",
    operation_id = "delete_workflow_budget", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "The budget without a cap", body = WorkflowBudget),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<WorkflowBudget>> {
    Ok(Json(service::delete(&state, &caller, id).await?))
}

/// Zeroes this month's spend and lifts a pause the cap made (a manual
/// override); a pause the user made stays.
#[utoipa::path(post, path = "/v1/workflows/{id}/budget/reset", tag = "workflows",
    operation_id = "reset_workflow_budget", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "The budget after the reset", body = WorkflowBudget),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn reset(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<WorkflowBudget>> {
    Ok(Json(service::reset(&state, &caller, id).await?))
}
