//! Handlers of spec/1 "Mailbox pool".

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, MailboxPool, MailboxPoolSize, SetMailboxPool};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get, set))
}

/// The sequence's mailboxes in rotation order.
#[utoipa::path(get, path = "/v1/sequences/{sequence_id}/mailbox-pool", tag = "sequences", operation_id = "get_mailbox_pool",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "The pool", body = MailboxPool),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<MailboxPool>> {
    Ok(Json(service::get(&state, &caller, sequence_id).await?))
}

/// Replaces the pool atomically.
#[utoipa::path(put, path = "/v1/sequences/{sequence_id}/mailbox-pool", tag = "sequences", operation_id = "set_mailbox_pool",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    request_body = SetMailboxPool,
    responses(
        (status = 200, description = "The new size", body = MailboxPoolSize),
        (status = 400, description = "More than 100 accounts", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn set(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
    Json(body): Json<SetMailboxPool>,
) -> ApiResult<Json<MailboxPoolSize>> {
    Ok(Json(
        service::set(&state, &caller, sequence_id, body).await?,
    ))
}
