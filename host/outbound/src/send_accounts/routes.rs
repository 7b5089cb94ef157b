//! Handlers of spec/3 "Send accounts" (connect and list; detail and
//! disconnect are ours).

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{
    self, ConnectSendAccount, ConnectedSendAccount, ListQuery, SendAccount, SendAccountList,
};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, connect))
        .routes(routes!(detail, delete))
}

/// The account's mailboxes, filtered and paged.
#[utoipa::path(get, path = "/v1/send-accounts", tag = "send-accounts", operation_id = "list_send_accounts",
    security(("api_key" = [])), params(ListQuery),
    responses(
        (status = 200, description = "A page and the total", body = SendAccountList),
        (status = 400, description = "Invalid filter or paging", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<ListQuery>,
) -> ApiResult<Json<SendAccountList>> {
    Ok(Json(service::list(&state, &caller, q).await?))
}

/// Connects a mailbox after testing its SMTP and IMAP servers.
#[utoipa::path(post, path = "/v1/send-accounts", tag = "send-accounts", operation_id = "connect_send_account",
    security(("api_key" = [])), request_body = ConnectSendAccount,
    responses(
        (status = 201, description = "Connected", body = ConnectedSendAccount),
        (status = 400, description = "Invalid configuration, or a host the outbound policy refuses", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 409, description = "Address already connected", body = ErrorBody),
        (status = 422, description = "SMTP or IMAP connection test failed", body = ErrorBody),
    ))]
async fn connect(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<ConnectSendAccount>,
) -> ApiResult<(StatusCode, Json<ConnectedSendAccount>)> {
    Ok((
        StatusCode::CREATED,
        Json(service::connect(&state, &caller, body).await?),
    ))
}

/// One mailbox.
#[utoipa::path(get, path = "/v1/send-accounts/{id}", tag = "send-accounts", operation_id = "get_send_account",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Send account id")),
    responses(
        (status = 200, description = "The account", body = SendAccount),
        (status = 404, description = "No such send account", body = ErrorBody),
    ))]
async fn detail(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<SendAccount>> {
    Ok(Json(service::detail(&state, &caller, id).await?))
}

/// Disconnects a mailbox and forgets its credentials.
#[utoipa::path(delete, path = "/v1/send-accounts/{id}", tag = "send-accounts", operation_id = "delete_send_account",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Send account id")),
    responses(
        (status = 204, description = "Disconnected"),
        (status = 404, description = "No such send account", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
