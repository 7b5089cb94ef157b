//! Handlers of the REST hooks (`/v1/zapier/hooks`), beside spec/2's
//! automation-platform endpoints in the leads crate.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{NewRestHook, RestHook};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(subscribe))
        .routes(routes!(unsubscribe))
}

/// Subscribes a target URL to a polling trigger's new items (REST hook);
/// the signing secret is in this answer only.
#[utoipa::path(post, path = "/v1/zapier/hooks", tag = "integrations", operation_id = "subscribe_rest_hook",
    security(("api_key" = [])), request_body = NewRestHook,
    responses(
        (status = 201, description = "Subscribed, with the secret", body = RestHook),
        (status = 400, description = "Unknown event, bad parameter, blocked or non-HTTPS URL, or too many hooks", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 429, description = "Daily query cap reached", body = ErrorBody),
    ))]
async fn subscribe(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewRestHook>,
) -> ApiResult<(StatusCode, Json<RestHook>)> {
    let hook = super::subscribe(&state, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(hook)))
}

/// Ends a REST hook subscription.
#[utoipa::path(delete, path = "/v1/zapier/hooks/{id}", tag = "integrations", operation_id = "unsubscribe_rest_hook",
    security(("api_key" = [])), params(("id" = i64, Path, description = "REST hook id")),
    responses(
        (status = 204, description = "Ended"),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such hook", body = ErrorBody),
        (status = 429, description = "Daily query cap reached", body = ErrorBody),
    ))]
async fn unsubscribe(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    super::unsubscribe(&state, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
