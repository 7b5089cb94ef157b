//! The public approval page and its decision (spec/3 "Workflows" table):
//! no API key, the token in the path is the authority.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{page, service};
use crate::workflows::model::{WorkflowApprovalDecision, WorkflowApprovalDecisionRequest};
use outreach_core::error::{ApiError, ApiResult, ErrorBody};
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn public_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(approval_page, decide))
}

/// The page a person opens from the announcement: the workflow, the
/// message and the waiting domains, with Approve and Reject buttons (a
/// plain form: no script needed). Loading it decides nothing.
#[utoipa::path(get, path = "/v1/workflows/approvals/{token}", tag = "workflows",
    operation_id = "workflow_approval_page",
    params(("token" = String, Path, description = "The approval's token (from the announced link)")),
    responses(
        (status = 200, description = "The approval page", content_type = "text/html", body = String),
        (status = 404, description = "Unknown token, or the workflow was deleted", body = ErrorBody),
    ))]
async fn approval_page(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> ApiResult<Response> {
    let row = service::find(&state, &token).await?;
    Ok(page::approval(&row, state.clock.now_ms()))
}

/// Decides: JSON `{decision}` or the form field `decision` (the page's
/// buttons). The first decision starts a new run with trigger_event
/// approval_received; any later one answers already_decided (409), one
/// after expiry expired (410). A form post answers a page (200) saying
/// which, JSON a body.
#[utoipa::path(post, path = "/v1/workflows/approvals/{token}", tag = "workflows",
    operation_id = "workflow_approval_decide",
    params(("token" = String, Path, description = "The approval's token")),
    request_body(content(
        (WorkflowApprovalDecisionRequest = "application/json"),
        (WorkflowApprovalDecisionRequest = "application/x-www-form-urlencoded"),
    )),
    responses(
        (status = 200, description = "approved or rejected; the new run is queued", body = WorkflowApprovalDecision),
        (status = 400, description = "No decision, or not approved/rejected", body = ErrorBody),
        (status = 404, description = "Unknown token", body = ErrorBody),
        (status = 409, description = "already_decided", body = WorkflowApprovalDecision),
        (status = 410, description = "expired", body = WorkflowApprovalDecision),
    ))]
async fn decide(
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
    let raw = if form {
        url::form_urlencoded::parse(&body)
            .find(|(k, _)| k == "decision")
            .map(|(_, v)| v.into_owned())
    } else {
        let value: Value = serde_json::from_slice(&body).map_err(|_| {
            ApiError::bad_request(
                "send JSON {\"decision\": \"approved\" or \"rejected\"} or the form field decision"
                    .to_owned(),
            )
        })?;
        match value.get("decision") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        }
    };
    let decision = service::parse_decision(raw.as_deref())?;
    let outcome = service::decide(&state, &token, decision).await?;
    let status = match outcome.status.as_str() {
        "already_decided" => StatusCode::CONFLICT,
        "expired" => StatusCode::GONE,
        _ => StatusCode::OK,
    };
    if form {
        // A browser shows the outcome as a page (200 whatever it says: the
        // error layer would turn a 4xx page into a JSON error body).
        let row = service::find(&state, &token).await?;
        return Ok(page::decided(&row, &outcome));
    }
    Ok((status, Json(outcome)).into_response())
}
