//! Handlers of spec/1 "Inbox".

use axum::body::Bytes;
use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{
    self, BulkRequest, BulkResult, CountsQuery, ReclassifyRequest, ReclassifyResult, Thread,
    ThreadCounts, ThreadDetail, ThreadList, ThreadQuery, UpdateThread,
};
use super::suggest::{self, SuggestRequest, SuggestedReply};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(counts))
        .routes(routes!(detail, update))
        .routes(routes!(bulk))
        .routes(routes!(reclassify))
        .routes(routes!(suggest_reply))
}

/// The account's threads, latest reply first.
#[utoipa::path(get, path = "/v1/inbox/threads", tag = "inbox", operation_id = "list_inbox_threads",
    security(("api_key" = [])), params(ThreadQuery),
    responses(
        (status = 200, description = "A page and the total", body = ThreadList),
        (status = 400, description = "Unknown status or classification, or paging out of range", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<ThreadQuery>,
) -> ApiResult<Json<ThreadList>> {
    Ok(Json(service::list(&state, &caller, q).await?))
}

/// Thread counts by status and by classification.
#[utoipa::path(get, path = "/v1/inbox/threads/counts", tag = "inbox", operation_id = "count_inbox_threads",
    security(("api_key" = [])), params(CountsQuery),
    responses(
        (status = 200, description = "Counts per status and classification, and the total", body = ThreadCounts),
        (status = 400, description = "Unknown status or classification", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn counts(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<CountsQuery>,
) -> ApiResult<Json<ThreadCounts>> {
    Ok(Json(service::counts(&state, &caller, q).await?))
}

/// A thread with its replies, oldest first.
#[utoipa::path(get, path = "/v1/inbox/threads/{id}", tag = "inbox", operation_id = "get_inbox_thread",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Thread id")),
    responses(
        (status = 200, description = "The thread and its replies", body = ThreadDetail),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such thread", body = ErrorBody),
    ))]
async fn detail(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<ThreadDetail>> {
    Ok(Json(service::detail(&state, &caller, id).await?))
}

/// Changes a thread's status, classification, assignee or notes.
#[utoipa::path(put, path = "/v1/inbox/threads/{id}", tag = "inbox", operation_id = "update_inbox_thread",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Thread id")),
    request_body = UpdateThread,
    responses(
        (status = 200, description = "The updated thread", body = Thread),
        (status = 400, description = "Invalid field, snooze without snooze_hours, or an assignee outside the organisation", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such thread", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<UpdateThread>,
) -> ApiResult<Json<Thread>> {
    Ok(Json(service::update(&state, &caller, id, body).await?))
}

/// One action on up to 500 threads, in one transaction.
#[utoipa::path(post, path = "/v1/inbox/threads/bulk", tag = "inbox", operation_id = "bulk_inbox_threads",
    security(("api_key" = [])), request_body = BulkRequest,
    responses(
        (status = 200, description = "The threads updated", body = BulkResult),
        (status = 400, description = "No ids or more than 500, unknown action, or a missing field the action needs", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn bulk(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<BulkRequest>,
) -> ApiResult<Json<BulkResult>> {
    Ok(Json(service::bulk(&state, &caller, body).await?))
}

/// Clears the classification of the threads' replies (manual overrides
/// kept) so the classifier labels them again on its next pass.
#[utoipa::path(post, path = "/v1/inbox/reclassify-bulk", tag = "inbox", operation_id = "reclassify_inbox_threads",
    security(("api_key" = [])), request_body = ReclassifyRequest,
    responses(
        (status = 200, description = "Replies queued and overrides kept", body = ReclassifyResult),
        (status = 400, description = "No ids or more than 500", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn reclassify(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<ReclassifyRequest>,
) -> ApiResult<Json<ReclassifyResult>> {
    Ok(Json(service::reclassify(&state, &caller, body).await?))
}

/// Drafts a plain-text reply to the thread on the account's AI keys.
#[utoipa::path(post, path = "/v1/inbox/threads/{id}/suggest-reply", tag = "inbox", operation_id = "suggest_inbox_reply",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Thread id")),
    request_body = Option<SuggestRequest>,
    responses(
        (status = 200, description = "The draft", body = SuggestedReply),
        (status = 400, description = "Invalid tone or extra_context, a thread classified unsubscribe or bounce, or no AI key connected (`No BYOK provider connected`)", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such thread", body = ErrorBody),
        (status = 429, description = "More than 10 suggestions per user per minute", body = ErrorBody),
        (status = 502, description = "Every AI key failed, or the answer held no draft", body = ErrorBody),
    ))]
async fn suggest_reply(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    body: Bytes,
) -> ApiResult<Json<SuggestedReply>> {
    let body = suggest::parse_body(&body)?;
    Ok(Json(suggest::suggest(&state, &caller, id, body).await?))
}
