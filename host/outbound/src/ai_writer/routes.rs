//! `POST /v1/sequences/ai-writer`.

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::draft::{ACTION_TYPE, AiDraft, WriterRequest, prompt, read_answer};
use outreach_core::accounts::plans::Plan;
use outreach_core::error::{ApiError, ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::Json;
use outreach_core::state::AppState;
use outreach_vendors::{Actor, VendorsExt};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(ai_writer))
}

/// Drafts a subject and HTML body on the account's AI keys; `{{first_name}}`, `{{company}}` and `{{domain}}` stay unresolved.
#[utoipa::path(post, path = "/v1/sequences/ai-writer", tag = "sequences", operation_id = "ai_writer",
    security(("api_key" = [])), request_body = WriterRequest,
    responses(
        (status = 200, description = "The draft", body = AiDraft),
        (status = 400, description = "Invalid field, or no AI key connected (`No BYOK provider connected`)", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 502, description = "Every AI key failed, or the answer held no draft", body = ErrorBody),
    ))]
async fn ai_writer(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<WriterRequest>,
) -> ApiResult<Json<AiDraft>> {
    caller.require(Plan::Starter)?;
    let request = prompt(&body)?;
    let done = state
        .vendors()
        .complete(&Actor::from(&caller), ACTION_TYPE, request)
        .await?;
    let c = done.completion;
    let (subject, body_html) = read_answer(&c.content).ok_or_else(|| {
        ApiError::BadGateway("The AI provider's answer held no subject and body".to_owned())
    })?;
    Ok(Json(AiDraft {
        subject,
        body_html,
        tokens_used: c.prompt_tokens + c.completion_tokens,
        model: c.model,
    }))
}
