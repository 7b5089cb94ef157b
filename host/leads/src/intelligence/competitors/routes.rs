//! Handlers of the competitor endpoints.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::model::*;
use super::{activity, service};
use crate::csv_out::CsvFile;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

const COMPETITOR_ID: &str = "The competitor's id";

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_competitors, add_competitor))
        .routes(routes!(delete_competitor))
        .routes(routes!(competitor_detail))
        .routes(routes!(competitor_analysis))
        .routes(routes!(refresh_competitor))
        .routes(routes!(market_share))
        .routes(routes!(competitor_digest))
        .routes(routes!(export_competitors))
}

/// The account's competitors (Pro and Enterprise).
#[utoipa::path(get, path = "/v1/intelligence/competitors", tag = "intelligence", operation_id = "list_competitors",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The competitors with their enrichment", body = CompetitorPage),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
    ))]
async fn list_competitors(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<CompetitorPage>> {
    Ok(Json(service::list(&state, &caller).await?))
}

/// Tracks a competitor's domain; a domain new to the pool is queued for
/// enrichment.
#[utoipa::path(post, path = "/v1/intelligence/competitors", tag = "intelligence", operation_id = "add_competitor",
    security(("api_key" = [])), request_body = NewCompetitor,
    responses(
        (status = 201, description = "Tracked", body = Competitor),
        (status = 400, description = "Not a lower-case domain without protocol or path, an unknown industry, or the plan's limit reached", body = ErrorBody),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
        (status = 409, description = "Competitor already tracked", body = ErrorBody),
    ))]
async fn add_competitor(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewCompetitor>,
) -> ApiResult<(StatusCode, Json<Competitor>)> {
    Ok((
        StatusCode::CREATED,
        Json(service::add(&state, &caller, body).await?),
    ))
}

/// Stops tracking a competitor.
#[utoipa::path(delete, path = "/v1/intelligence/competitors/{competitor_id}", tag = "intelligence", operation_id = "delete_competitor",
    security(("api_key" = [])), params(("competitor_id" = i64, Path, description = COMPETITOR_ID)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
        (status = 404, description = "Competitor not found", body = ErrorBody),
    ))]
async fn delete_competitor(
    State(state): State<AppState>,
    caller: Caller,
    Path(competitor_id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, competitor_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The competitor's recent enrichment and its last 90 days: enrichments
/// and changes.
#[utoipa::path(get, path = "/v1/intelligence/competitors/{competitor_id}/detail", tag = "intelligence", operation_id = "competitor_detail",
    security(("api_key" = [])), params(("competitor_id" = i64, Path, description = COMPETITOR_ID)),
    responses(
        (status = 200, description = "The detail", body = CompetitorDetail),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
        (status = 404, description = "Competitor not found", body = ErrorBody),
    ))]
async fn competitor_detail(
    State(state): State<AppState>,
    caller: Caller,
    Path(competitor_id): Path<i64>,
) -> ApiResult<Json<CompetitorDetail>> {
    Ok(Json(
        activity::detail(&state, &caller, competitor_id).await?,
    ))
}

/// What changed between the competitor's last two enrichments: signals,
/// technologies, summary.
#[utoipa::path(get, path = "/v1/intelligence/competitors/{competitor_id}/analysis", tag = "intelligence", operation_id = "competitor_analysis",
    security(("api_key" = [])), params(("competitor_id" = i64, Path, description = COMPETITOR_ID)),
    responses(
        (status = 200, description = "The diff, or why there is none yet", body = CompetitorAnalysis),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
        (status = 404, description = "Competitor not found", body = ErrorBody),
    ))]
async fn competitor_analysis(
    State(state): State<AppState>,
    caller: Caller,
    Path(competitor_id): Path<i64>,
) -> ApiResult<Json<CompetitorAnalysis>> {
    Ok(Json(
        activity::analysis(&state, &caller, competitor_id).await?,
    ))
}

/// Queues an enrichment of the competitor's domain now.
#[utoipa::path(post, path = "/v1/intelligence/competitors/{competitor_id}/refresh", tag = "intelligence", operation_id = "refresh_competitor",
    security(("api_key" = [])), params(("competitor_id" = i64, Path, description = COMPETITOR_ID)),
    responses(
        (status = 202, description = "Queued", body = RefreshAnswer),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
        (status = 404, description = "Competitor not found", body = ErrorBody),
    ))]
async fn refresh_competitor(
    State(state): State<AppState>,
    caller: Caller,
    Path(competitor_id): Path<i64>,
) -> ApiResult<(StatusCode, Json<RefreshAnswer>)> {
    Ok((
        StatusCode::ACCEPTED,
        Json(service::refresh(&state, &caller, competitor_id).await?),
    ))
}

/// The size of each competitor's industry in the pool.
#[utoipa::path(get, path = "/v1/intelligence/competitors/market-share", tag = "intelligence", operation_id = "competitor_market_share",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Industries and competitors", body = MarketShare),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
    ))]
async fn market_share(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<MarketShare>> {
    Ok(Json(activity::market_share(&state, &caller).await?))
}

/// New domains of each competitor's industry over the last 7 days.
#[utoipa::path(get, path = "/v1/intelligence/competitors/digest", tag = "intelligence", operation_id = "competitor_digest",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The digest", body = Digest),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
    ))]
async fn competitor_digest(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<Digest>> {
    Ok(Json(activity::digest(&state, &caller).await?))
}

/// The competitors with their enrichment as CSV.
#[utoipa::path(get, path = "/v1/intelligence/competitors/export", tag = "intelligence", operation_id = "export_competitors",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The CSV file", content_type = "text/csv", body = String),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
    ))]
async fn export_competitors(State(state): State<AppState>, caller: Caller) -> ApiResult<CsvFile> {
    service::export(&state, &caller).await
}
