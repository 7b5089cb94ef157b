//! Handlers of spec/2 "Market intelligence" (the funnel so far).

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::funnel::{self, FunnelRollup, FunnelTrends};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::Json;
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(funnel_rollup))
        .routes(routes!(funnel_trends))
}

/// The funnel over all the account's lists (Pro and Enterprise).
#[utoipa::path(get, path = "/v1/intelligence/funnel", tag = "intelligence", operation_id = "intelligence_funnel",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Counts per stage and conversion rates", body = FunnelRollup),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
    ))]
async fn funnel_rollup(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<FunnelRollup>> {
    Ok(Json(funnel::rollup(&state, &caller).await?))
}

/// The funnel week by week over the last 12 weeks (Pro and Enterprise).
#[utoipa::path(get, path = "/v1/intelligence/funnel/trends", tag = "intelligence", operation_id = "intelligence_funnel_trends",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "12 weekly snapshots, oldest first", body = FunnelTrends),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
    ))]
async fn funnel_trends(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<FunnelTrends>> {
    Ok(Json(funnel::trends(&state, &caller).await?))
}
