//! Handlers of spec/3 "Workflows" (all but approvals, budgets, which are
//! `budget/routes.rs`, and saved connections, which are `crate::connections`), plus the run detail and
//! the action-type catalogue beyond the spec.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::model::*;
use super::{analytics as figures, dry_run, run_records, service, triggers};
use outreach_core::error::{ApiError, ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(action_types))
        // A static segment outranks `{id}` in axum's router whatever the
        // order, so `analytics` is never read as a workflow id.
        .routes(routes!(analytics))
        .routes(routes!(get, update, delete))
        .routes(routes!(test))
        .routes(routes!(execute))
        .routes(routes!(list_runs))
        .routes(routes!(get_run))
        .routes(routes!(stream_run))
        .routes(routes!(webhook_token))
        .routes(routes!(regenerate_token))
        .routes(routes!(versions))
        .routes(routes!(version))
        .routes(routes!(rollback))
        .merge(super::budget::routes::router())
}

/// The public incoming webhook (the token is the secret).
pub fn public_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(incoming))
        .merge(super::approvals::routes::public_router())
}

/// The account's workflows with the plan's cap.
#[utoipa::path(get, path = "/v1/workflows", tag = "workflows", operation_id = "list_workflows",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Workflows; limit and remaining are null when unlimited", body = WorkflowList),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<WorkflowList>> {
    Ok(Json(service::list(&state, &caller).await?))
}

/// Creates a workflow; a webhook trigger gets its URL and token.
#[utoipa::path(post, path = "/v1/workflows", tag = "workflows", operation_id = "create_workflow",
    security(("api_key" = [])), request_body = WorkflowInput,
    responses(
        (status = 201, description = "Created", body = Workflow),
        (status = 400, description = "Invalid definition, or the plan's cap reached", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "A trigger target or referenced workflow of another account", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<WorkflowInput>,
) -> ApiResult<(StatusCode, Json<Workflow>)> {
    let created = service::create(&state, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// Built-in and plugin action types with their config schemas.
#[utoipa::path(get, path = "/v1/workflows/action-types", tag = "workflows",
    operation_id = "list_workflow_action_types", security(("api_key" = [])),
    responses(
        (status = 200, description = "Action types", body = WorkflowActionTypeList),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn action_types(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<WorkflowActionTypeList>> {
    caller.require(outreach_core::accounts::Plan::Starter)?;
    let catalog = state.ext::<super::action_types::ActionCatalog>();
    Ok(Json(catalog.list(&state.plugins)))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct AnalyticsQuery {
    /// 1-90, default 30: UTC calendar days, today included.
    pub days: Option<i64>,
}

/// Figures over the account's finished runs of the last `days` days.
#[utoipa::path(get, path = "/v1/workflows/analytics", tag = "workflows",
    operation_id = "workflow_analytics", security(("api_key" = [])), params(AnalyticsQuery),
    responses(
        (status = 200, description = "Analytics", body = WorkflowAnalytics),
        (status = 400, description = "days not an integer from 1 to 90", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn analytics(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<AnalyticsQuery>,
) -> ApiResult<Json<WorkflowAnalytics>> {
    Ok(Json(figures::analytics(&state, &caller, q.days).await?))
}

#[utoipa::path(get, path = "/v1/workflows/{id}", tag = "workflows", operation_id = "get_workflow",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "The workflow", body = Workflow),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Workflow>> {
    Ok(Json(service::get(&state, &caller, id).await?))
}

/// Changes any field; the previous definition becomes a version.
#[utoipa::path(put, path = "/v1/workflows/{id}", tag = "workflows", operation_id = "update_workflow",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Workflow id")),
    request_body = WorkflowInput,
    responses(
        (status = 200, description = "Saved", body = Workflow),
        (status = 400, description = "Invalid definition", body = ErrorBody),
        (status = 404, description = "No such workflow or target", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<WorkflowInput>,
) -> ApiResult<Json<Workflow>> {
    Ok(Json(service::update(&state, &caller, id, body).await?))
}

/// Deletes the workflow with its runs and versions.
#[utoipa::path(delete, path = "/v1/workflows/{id}", tag = "workflows", operation_id = "delete_workflow",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Workflow id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Dry run: what a run would take and do, with no side effects.
#[utoipa::path(post, path = "/v1/workflows/{id}/test", tag = "workflows", operation_id = "test_workflow",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "Dry-run findings", body = WorkflowTestResult),
        (status = 404, description = "No such workflow", body = ErrorBody),
        (status = 429, description = "More than 10 dry runs of this workflow in a minute", body = ErrorBody),
    ))]
async fn test(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<WorkflowTestResult>> {
    Ok(Json(dry_run::test(&state, &caller, id).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct ExecuteQuery {
    /// Also make the workflow active.
    #[serde(default)]
    pub activate: bool,
}

/// Queues a run now; 202 with its id.
#[utoipa::path(post, path = "/v1/workflows/{id}/execute", tag = "workflows",
    operation_id = "execute_workflow", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id"), ExecuteQuery),
    responses(
        (status = 202, description = "Queued", body = WorkflowRunQueued),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn execute(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Query(q): Query<ExecuteQuery>,
) -> ApiResult<(StatusCode, Json<WorkflowRunQueued>)> {
    let queued = triggers::execute(&state, &caller, id, q.activate).await?;
    Ok((StatusCode::ACCEPTED, Json(queued)))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct RunsQuery {
    /// 1-100, default 20.
    pub limit: Option<i64>,
    /// Default 0.
    pub offset: Option<i64>,
}

/// Recent runs, newest first.
#[utoipa::path(get, path = "/v1/workflows/{id}/runs", tag = "workflows",
    operation_id = "list_workflow_runs", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id"), RunsQuery),
    responses(
        (status = 200, description = "Runs", body = WorkflowRunList),
        (status = 400, description = "limit or offset out of range", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn list_runs(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Query(q): Query<RunsQuery>,
) -> ApiResult<Json<WorkflowRunList>> {
    let limit = q.limit.unwrap_or(20);
    let offset = q.offset.unwrap_or(0);
    if !(1..=100).contains(&limit) || offset < 0 {
        return Err(ApiError::bad_request(
            "limit must be 1-100 and offset at least 0".to_owned(),
        ));
    }
    service::get(&state, &caller, id).await?;
    let (runs, total) = run_records::list(&state, caller.account_id, id, limit, offset).await?;
    Ok(Json(WorkflowRunList {
        runs,
        total,
        limit,
        offset,
    }))
}

fn run_not_found() -> ApiError {
    ApiError::NotFound("Workflow run not found".to_owned())
}

/// One run record.
#[utoipa::path(get, path = "/v1/workflows/{id}/runs/{run_id}", tag = "workflows",
    operation_id = "get_workflow_run", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id"), ("run_id" = i64, Path, description = "Run id")),
    responses(
        (status = 200, description = "The run", body = WorkflowRun),
        (status = 404, description = "No such run", body = ErrorBody),
    ))]
async fn get_run(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, run_id)): Path<(i64, i64)>,
) -> ApiResult<Json<WorkflowRun>> {
    caller.require(outreach_core::accounts::Plan::Starter)?;
    let run = run_records::get(&state, caller.account_id, id, run_id)
        .await?
        .ok_or_else(run_not_found)?;
    Ok(Json(run))
}

/// Server-Sent Events: an `action` event per finished action (index,
/// type, status, result), then `run.finished`; a finished run replays its
/// events, and `Last-Event-ID` resumes after that event.
#[utoipa::path(get, path = "/v1/workflows/{id}/runs/{run_id}/stream", tag = "workflows",
    operation_id = "stream_workflow_run", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id"), ("run_id" = i64, Path, description = "Run id"),
        ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this event id")),
    responses(
        (status = 200, description = "text/event-stream of the run's events", content_type = "text/event-stream", body = String),
        (status = 404, description = "No such run", body = ErrorBody),
    ))]
async fn stream_run(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, run_id)): Path<(i64, i64)>,
    headers: HeaderMap,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    caller.require(outreach_core::accounts::Plan::Starter)?;
    run_records::get(&state, caller.account_id, id, run_id)
        .await?
        .ok_or_else(run_not_found)?;
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or(0);
    let cursor = Cursor {
        state,
        account_id: caller.account_id,
        workflow_id: id,
        run_id,
        after,
        done: false,
        idle: 0,
        buf: VecDeque::new(),
    };
    let stream = futures::stream::unfold(cursor, |mut c| async move {
        loop {
            if let Some(e) = c.buf.pop_front() {
                c.after = e.seq;
                c.done |= e.name == "run.finished";
                let event = Event::default()
                    .id(e.seq.to_string())
                    .event(e.name)
                    .data(e.data);
                return Some((Ok(event), c));
            }
            if c.done {
                return None;
            }
            match run_records::events_after(&c.state, c.run_id, c.after).await {
                Ok(events) if !events.is_empty() => {
                    c.idle = 0;
                    c.buf.extend(events);
                }
                Ok(_) => {
                    c.idle += 1;
                    // Every few seconds of silence, make sure the run still
                    // exists (a deleted workflow takes its runs along).
                    if c.idle % 50 == 0 && !c.exists().await {
                        return None;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => {
                    tracing::warn!(run_id = c.run_id, "run stream: {e}");
                    return None;
                }
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

struct Cursor {
    state: AppState,
    account_id: i64,
    workflow_id: i64,
    run_id: i64,
    after: i64,
    done: bool,
    idle: u64,
    buf: VecDeque<run_records::RunEvent>,
}

impl Cursor {
    async fn exists(&self) -> bool {
        matches!(
            run_records::get(&self.state, self.account_id, self.workflow_id, self.run_id).await,
            Ok(Some(_))
        )
    }
}

/// The webhook trigger's token, URL and how many calls it took.
#[utoipa::path(get, path = "/v1/workflows/{id}/webhook-token", tag = "workflows",
    operation_id = "get_workflow_webhook_token", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "Token", body = WorkflowWebhookToken),
        (status = 400, description = "Not a webhook-triggered workflow", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn webhook_token(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<WorkflowWebhookToken>> {
    Ok(Json(service::webhook_token(&state, &caller, id).await?))
}

/// A new token; the old one stops working at once.
#[utoipa::path(post, path = "/v1/workflows/{id}/webhook-token/regenerate", tag = "workflows",
    operation_id = "regenerate_workflow_webhook_token", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "New token", body = WorkflowWebhookToken),
        (status = 400, description = "Not a webhook-triggered workflow", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn regenerate_token(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<WorkflowWebhookToken>> {
    Ok(Json(service::regenerate_token(&state, &caller, id).await?))
}

/// The last 50 versions, newest first.
#[utoipa::path(get, path = "/v1/workflows/{id}/versions", tag = "workflows",
    operation_id = "list_workflow_versions", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "Versions", body = WorkflowVersionList),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
async fn versions(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<WorkflowVersionList>> {
    Ok(Json(service::versions(&state, &caller, id).await?))
}

/// One version's snapshot.
#[utoipa::path(get, path = "/v1/workflows/{id}/versions/{version_id}", tag = "workflows",
    operation_id = "get_workflow_version", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id"), ("version_id" = i64, Path, description = "Version id")),
    responses(
        (status = 200, description = "Snapshot", body = WorkflowVersion),
        (status = 404, description = "No such version", body = ErrorBody),
    ))]
async fn version(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, version_id)): Path<(i64, i64)>,
) -> ApiResult<Json<WorkflowVersion>> {
    Ok(Json(
        service::version(&state, &caller, id, version_id).await?,
    ))
}

/// Restores a version; records "Rolled back to v<N>".
#[utoipa::path(post, path = "/v1/workflows/{id}/versions/{version_id}/rollback", tag = "workflows",
    operation_id = "rollback_workflow_version", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Workflow id"), ("version_id" = i64, Path, description = "Version id")),
    responses(
        (status = 200, description = "Restored", body = Workflow),
        (status = 400, description = "The snapshot no longer passes the checks", body = ErrorBody),
        (status = 404, description = "No such version", body = ErrorBody),
    ))]
async fn rollback(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, version_id)): Path<(i64, i64)>,
) -> ApiResult<Json<Workflow>> {
    Ok(Json(
        service::rollback(&state, &caller, id, version_id).await?,
    ))
}

/// Starts a run of a webhook-triggered workflow: any JSON body (its
/// `domains`, strings or objects, become the run's items; without them a
/// pool sample seeds the run). Public: the token is the secret.
#[utoipa::path(post, path = "/v1/workflows/incoming/{token}", tag = "workflows",
    operation_id = "workflow_incoming_webhook",
    params(("token" = String, Path, description = "The workflow's webhook token")),
    request_body(content = Object, description = "Any JSON object; domains optional"),
    responses(
        (status = 200, description = "Accepted", body = WorkflowWebhookAccepted),
        (status = 400, description = "Not a JSON object, or domains not an array", body = ErrorBody),
        (status = 404, description = "Unknown or replaced token", body = ErrorBody),
        (status = 409, description = "The workflow is paused", body = ErrorBody),
        (status = 429, description = "More calls this minute than the token allows", body = ErrorBody),
    ))]
async fn incoming(
    State(state): State<AppState>,
    Path(token): Path<String>,
    Json(body): Json<Value>,
) -> ApiResult<Json<WorkflowWebhookAccepted>> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body must be a JSON object".to_owned(),
        ));
    }
    Ok(Json(triggers::incoming(&state, &token, body).await?))
}
