//! Task handlers.

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, CompleteTask, Task, TaskList, TaskQuery};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tasks))
        .routes(routes!(list_enrollment_tasks))
        .routes(routes!(complete_task))
}

/// A sequence's tasks (non-email steps), newest first.
#[utoipa::path(get, path = "/v1/sequences/{sequence_id}/tasks", tag = "sequences",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id"), TaskQuery),
    responses(
        (status = 200, description = "Tasks and their total", body = TaskList),
        (status = 400, description = "Bad filter", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn list_tasks(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
    Query(q): Query<TaskQuery>,
) -> ApiResult<Json<TaskList>> {
    Ok(Json(
        service::list(&state, &caller, sequence_id, None, q).await?,
    ))
}

/// One enrollment's tasks.
#[utoipa::path(get, path = "/v1/sequences/{sequence_id}/enrollments/{enrollment_id}/tasks", tag = "sequences",
    security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"),
        ("enrollment_id" = i64, Path, description = "Enrollment id"), TaskQuery),
    responses(
        (status = 200, description = "Tasks and their total", body = TaskList),
        (status = 400, description = "Bad filter", body = ErrorBody),
        (status = 404, description = "No such sequence or enrollment", body = ErrorBody),
    ))]
async fn list_enrollment_tasks(
    State(state): State<AppState>,
    caller: Caller,
    Path((sequence_id, enrollment_id)): Path<(i64, i64)>,
    Query(q): Query<TaskQuery>,
) -> ApiResult<Json<TaskList>> {
    Ok(Json(
        service::list(&state, &caller, sequence_id, Some(enrollment_id), q).await?,
    ))
}

/// Marks a task done.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/tasks/{task_id}/complete", tag = "sequences",
    security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"),
        ("task_id" = i64, Path, description = "Task id")),
    request_body = CompleteTask,
    responses(
        (status = 200, description = "The completed task", body = Task),
        (status = 400, description = "Notes too long", body = ErrorBody),
        (status = 404, description = "No such sequence or task", body = ErrorBody),
    ))]
async fn complete_task(
    State(state): State<AppState>,
    caller: Caller,
    Path((sequence_id, task_id)): Path<(i64, i64)>,
    Json(body): Json<CompleteTask>,
) -> ApiResult<Json<Task>> {
    Ok(Json(
        service::complete(&state, &caller, sequence_id, task_id, body).await?,
    ))
}
