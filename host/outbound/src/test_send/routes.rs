//! The test-send handler.

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, TestSendRequest, TestSendResult};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(test_send))
}

/// Sends a real email of one step to a chosen address; records no events.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/test-send", tag = "sequences", operation_id = "test_send",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    request_body = TestSendRequest,
    responses(
        (status = 200, description = "Sent; the server accepted the message", body = TestSendResult),
        (status = 400, description = "Malformed address, no step named, not an email step, or no send account", body = ErrorBody),
        (status = 404, description = "No such sequence or step", body = ErrorBody),
        (status = 422, description = "The mail server refused the test", body = ErrorBody),
        (status = 429, description = "More than 5 test sends in a minute", body = ErrorBody),
    ))]
async fn test_send(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
    Json(body): Json<TestSendRequest>,
) -> ApiResult<Json<TestSendResult>> {
    Ok(Json(
        service::test_send(&state, &caller, sequence_id, body).await?,
    ))
}
