//! `/v1/ai/providers/usage` and `/known-models` (key management is in routes.rs).

use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::catalogue::{self, Family, Provider};
use super::routes::DaysQuery;
use super::usage::{self, UsageReport};
use crate::error::{ApiResult, ErrorBody};
use crate::http::auth::Caller;
use crate::http::extract::{Json, Query};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(ai_usage))
        .routes(routes!(known_models))
}

/// AI spend over the last `days` days (1-365, default 30).
#[utoipa::path(get, path = "/v1/ai/providers/usage", tag = "ai", security(("api_key" = [])),
    params(DaysQuery),
    responses(
        (status = 200, description = "Usage", body = UsageReport),
        (status = 400, description = "Invalid days", body = ErrorBody),
    ))]
async fn ai_usage(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<DaysQuery>,
) -> ApiResult<Json<UsageReport>> {
    Ok(Json(
        usage::report(&state, caller.account_id, Family::Ai, q.days.unwrap_or(30)).await?,
    ))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KnownModels {
    pub providers: Vec<Provider>,
}

/// Providers in fallback order with their models, prices and validation defaults.
#[utoipa::path(get, path = "/v1/ai/providers/known-models", tag = "ai", security(("api_key" = [])),
    responses((status = 200, description = "Providers and models", body = KnownModels)))]
async fn known_models(State(state): State<AppState>, _caller: Caller) -> Json<KnownModels> {
    Json(KnownModels {
        providers: catalogue::providers(&state.plugins, Family::Ai),
    })
}
