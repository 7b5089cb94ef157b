//! The preview handler.

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, PreviewRequest};
use crate::rendering::RenderedEmail;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(preview))
}

/// Renders a step for a sample contact or an enrollment as the sender would.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/preview", tag = "sequences", operation_id = "preview_step",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    request_body = PreviewRequest,
    responses(
        (status = 200, description = "Subject, HTML and text bodies, tokens used and missing", body = RenderedEmail),
        (status = 400, description = "No step or no recipient named", body = ErrorBody),
        (status = 404, description = "No such sequence, step or enrollment", body = ErrorBody),
    ))]
async fn preview(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
    Json(body): Json<PreviewRequest>,
) -> ApiResult<Json<RenderedEmail>> {
    Ok(Json(
        service::preview(&state, &caller, sequence_id, body).await?,
    ))
}
