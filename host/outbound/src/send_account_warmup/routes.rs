//! Handlers of spec/3's send-account warmup reports.

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, AccountDeliverability, HistoryQuery, ReputationHistory};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(deliverability))
        .routes(routes!(reputation_history))
}

/// DNS authentication, blacklists and measured reputation; cached 1 hour.
#[utoipa::path(get, path = "/v1/send-accounts/{id}/warmup/deliverability", tag = "send-accounts", operation_id = "send_account_warmup_deliverability",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Send account id")),
    responses(
        (status = 200, description = "The report (at most an hour old)", body = AccountDeliverability),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such send account", body = ErrorBody),
    ))]
async fn deliverability(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<AccountDeliverability>> {
    Ok(Json(service::deliverability(&state, &caller, id).await?))
}

/// The daily roll-up: one point per UTC day with activity, oldest first.
#[utoipa::path(get, path = "/v1/send-accounts/{id}/warmup/reputation-history", tag = "send-accounts", operation_id = "send_account_reputation_history",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Send account id"), HistoryQuery),
    responses(
        (status = 200, description = "The points", body = ReputationHistory),
        (status = 400, description = "days outside 7-180", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such send account", body = ErrorBody),
    ))]
async fn reputation_history(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Query(q): Query<HistoryQuery>,
) -> ApiResult<Json<ReputationHistory>> {
    Ok(Json(service::history(&state, &caller, id, q).await?))
}
