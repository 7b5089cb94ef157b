//! `POST /v1/sequences/email-health`.

use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::score::{EmailHealth, assess};
use outreach_core::accounts::plans::Plan;
use outreach_core::error::{ApiError, ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::Json;
use outreach_core::state::AppState;

/// Longest subject accepted (an RFC 5322 line).
const MAX_SUBJECT: usize = 998;
/// Largest body accepted.
const MAX_BODY: usize = 512 * 1024;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(email_health))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthRequest {
    /// Up to 998 characters.
    pub subject: String,
    /// Up to 512 KB of HTML.
    pub body_html: String,
}

/// Scores a subject and HTML body (0-100) with its parts and findings; writes nothing.
#[utoipa::path(post, path = "/v1/sequences/email-health", tag = "sequences", operation_id = "email_health",
    security(("api_key" = [])), request_body = HealthRequest,
    responses(
        (status = 200, description = "Score, parts and findings", body = EmailHealth),
        (status = 400, description = "Missing or oversized field", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn email_health(
    caller: Caller,
    Json(body): Json<HealthRequest>,
) -> ApiResult<Json<EmailHealth>> {
    caller.require(Plan::Starter)?;
    if body.subject.chars().count() > MAX_SUBJECT {
        return Err(ApiError::bad_request(format!(
            "subject must be at most {MAX_SUBJECT} characters"
        )));
    }
    if body.body_html.len() > MAX_BODY {
        return Err(ApiError::bad_request("body_html must be at most 512 KB"));
    }
    // Parsing half a megabyte of HTML takes milliseconds: off the async workers.
    let health = tokio::task::spawn_blocking(move || assess(&body.subject, &body.body_html))
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    Ok(Json(health))
}
