//! Handlers of spec/2 "Spreadsheet export" and the OAuth 2.0 connection
//! (`/v1/sheets`); the callback is public (the browser comes back without
//! an API key; the state names the account).

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::export::{self, ExportAnswer, ExportRequest, ListExportAnswer};
use super::oauth::{self, ConnectAnswer, SheetsStatus};
use super::templates::{self, SheetsTemplateList};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(connect, disconnect))
        .routes(routes!(status))
        .routes(routes!(templates_list))
        .routes(routes!(export_domains))
        .routes(routes!(export_list))
}

pub fn public_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(callback))
}

/// Starts connecting the spreadsheet service: send the user's browser to
/// `authorization_url` (authorization code with PKCE; 10 minutes).
#[utoipa::path(get, path = "/v1/sheets/connect", tag = "integrations", operation_id = "sheets_connect",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Where to send the browser", body = ConnectAnswer),
        (status = 400, description = "The operator has not configured the export", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
    ))]
async fn connect(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<ConnectAnswer>> {
    Ok(Json(oauth::connect(&state, caller.account_id).await?))
}

/// Revokes the grant at the provider, then forgets it.
#[utoipa::path(delete, path = "/v1/sheets/connect", tag = "integrations", operation_id = "sheets_disconnect",
    security(("api_key" = [])),
    responses(
        (status = 204, description = "Disconnected"),
        (status = 400, description = "Google Sheets not connected", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 500, description = "Google API error: the provider could not be reached", body = ErrorBody),
    ))]
async fn disconnect(State(state): State<AppState>, caller: Caller) -> ApiResult<StatusCode> {
    oauth::disconnect(&state, caller.account_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Whether the account is connected.
#[utoipa::path(get, path = "/v1/sheets/status", tag = "integrations", operation_id = "sheets_status",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "connected, broken or not_connected", body = SheetsStatus),
        (status = 401, description = "Not authenticated", body = ErrorBody),
    ))]
async fn status(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<SheetsStatus>> {
    Ok(Json(oauth::status(&state, caller.account_id).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    /// Set by the provider when the user declined.
    error: Option<String>,
}

/// The provider sends the browser back here with a code and the state.
/// Answers a small page; errors are JSON `{detail}` with 400 and store
/// nothing.
#[utoipa::path(get, path = "/v1/sheets/oauth/callback", tag = "integrations", operation_id = "sheets_oauth_callback",
    params(CallbackQuery),
    responses(
        (status = 200, description = "Connected", content_type = "text/html", body = String),
        (status = 400, description = "Wrong or expired state, declined, or a code the provider refused", body = ErrorBody),
        (status = 500, description = "Google API error: the provider could not be reached", body = ErrorBody),
    ))]
async fn callback(
    State(state): State<AppState>,
    Query(q): Query<CallbackQuery>,
) -> ApiResult<Response> {
    oauth::callback(
        &state,
        q.code.as_deref(),
        q.state.as_deref(),
        q.error.as_deref(),
    )
    .await?;
    let page = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
        <title>Google Sheets connected</title></head><body>\
        <h1>Google Sheets connected</h1>\
        <p>Your account can now export domains and lead lists to Google Sheets. \
        You may close this window.</p></body></html>";
    Ok((
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        page,
    )
        .into_response())
}

/// The three templates and their columns.
#[utoipa::path(get, path = "/v1/sheets/templates", tag = "integrations", operation_id = "sheets_templates",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "full (22 columns), compact (8), contacts (6)", body = SheetsTemplateList),
        (status = 401, description = "Not authenticated", body = ErrorBody),
    ))]
async fn templates_list(_caller: Caller) -> Json<SheetsTemplateList> {
    Json(templates::list())
}

/// Exports domains to a new spreadsheet.
#[utoipa::path(post, path = "/v1/sheets/export", tag = "integrations", operation_id = "sheets_export",
    security(("api_key" = [])), request_body = ExportRequest,
    responses(
        (status = 200, description = "The new spreadsheet", body = ExportAnswer),
        (status = 400, description = "Google Sheets not connected, Maximum 500 domains per export, no domains, an invalid domain or an unknown template", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 429, description = "Rate limit exceeded (the provider's)", body = ErrorBody),
        (status = 500, description = "Google API error: <text>", body = ErrorBody),
    ))]
async fn export_domains(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<ExportRequest>,
) -> ApiResult<Json<ExportAnswer>> {
    Ok(Json(export::export(&state, &caller, body).await?))
}

/// Exports a lead list (full template) to a new spreadsheet.
#[utoipa::path(post, path = "/v1/sheets/export-list/{list_id}", tag = "integrations", operation_id = "sheets_export_list",
    security(("api_key" = [])), params(("list_id" = i64, Path, description = "Lead list id")),
    responses(
        (status = 200, description = "The new spreadsheet", body = ListExportAnswer),
        (status = 400, description = "Google Sheets not connected", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 404, description = "Lead list not found", body = ErrorBody),
        (status = 429, description = "Rate limit exceeded (the provider's)", body = ErrorBody),
        (status = 500, description = "Google API error: <text>", body = ErrorBody),
    ))]
async fn export_list(
    State(state): State<AppState>,
    caller: Caller,
    Path(list_id): Path<i64>,
) -> ApiResult<Json<ListExportAnswer>> {
    Ok(Json(export::export_list(&state, &caller, list_id).await?))
}
