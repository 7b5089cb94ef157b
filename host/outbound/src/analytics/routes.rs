//! Handlers of spec/1 "Analytics" and "A/B and multivariate tests".

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, AbResults, AbWinner, MultivariateResults, SequenceAnalytics};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(analytics))
        .routes(routes!(ab_results))
        .routes(routes!(ab_winner))
        .routes(routes!(multivariate_results))
}

/// Enrollment counts, the event rollup and per-step counts and rates.
#[utoipa::path(get, path = "/v1/sequences/{sequence_id}/analytics", tag = "sequences", operation_id = "sequence_analytics",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "The sequence's analytics", body = SequenceAnalytics),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn analytics(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<SequenceAnalytics>> {
    Ok(Json(
        service::analytics(&state, &caller, sequence_id).await?,
    ))
}

/// Sends, opens and clicks of variants a and b.
#[utoipa::path(get, path = "/v1/sequences/{sequence_id}/steps/{step_id}/ab-results", tag = "sequences", operation_id = "ab_results",
    security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"), ("step_id" = i64, Path, description = "Step id")),
    responses(
        (status = 200, description = "A/B results", body = AbResults),
        (status = 404, description = "No such sequence or step", body = ErrorBody),
    ))]
async fn ab_results(
    State(state): State<AppState>,
    caller: Caller,
    Path((sequence_id, step_id)): Path<(i64, i64)>,
) -> ApiResult<Json<AbResults>> {
    Ok(Json(
        service::ab_results(&state, &caller, sequence_id, step_id).await?,
    ))
}

/// Locks the winning variant: the sender then sends only it.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/steps/{step_id}/ab-winner", tag = "sequences", operation_id = "set_ab_winner",
    security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"), ("step_id" = i64, Path, description = "Step id")),
    request_body = AbWinner,
    responses(
        (status = 200, description = "The A/B results with the winner set", body = AbResults),
        (status = 400, description = "winner is not a or b, or the step has no A/B test", body = ErrorBody),
        (status = 404, description = "No such sequence or step", body = ErrorBody),
    ))]
async fn ab_winner(
    State(state): State<AppState>,
    caller: Caller,
    Path((sequence_id, step_id)): Path<(i64, i64)>,
    Json(body): Json<AbWinner>,
) -> ApiResult<Json<AbResults>> {
    Ok(Json(
        service::set_ab_winner(&state, &caller, sequence_id, step_id, body).await?,
    ))
}

/// Per-variant counts, rates and composite scores of a multivariate step.
#[utoipa::path(get, path = "/v1/sequences/{sequence_id}/steps/{step_id}/multivariate-results", tag = "sequences", operation_id = "multivariate_results",
    security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"), ("step_id" = i64, Path, description = "Step id")),
    responses(
        (status = 200, description = "Multivariate results", body = MultivariateResults),
        (status = 400, description = "The step has no variants", body = ErrorBody),
        (status = 404, description = "No such sequence or step", body = ErrorBody),
    ))]
async fn multivariate_results(
    State(state): State<AppState>,
    caller: Caller,
    Path((sequence_id, step_id)): Path<(i64, i64)>,
) -> ApiResult<Json<MultivariateResults>> {
    Ok(Json(
        service::multivariate_results(&state, &caller, sequence_id, step_id).await?,
    ))
}
