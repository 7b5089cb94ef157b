//! Handlers of spec/2 "Market intelligence": the funnel, geography and
//! the industry reports (competitors and tracked keywords have their own
//! folders).

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::funnel::{self, FunnelRollup, FunnelTrends};
use super::geo::{self, CitiesAnswer, CitiesQuery, GeoAnswer, GeoQuery};
use super::reports::{self, IndustryReport, IndustrySnapshot, Overview, Report, ReportQuery};
use crate::csv_out::CsvFile;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

// The PDF's body in the document: bytes, not JSON (`format: binary`, as the
// open pixel's; a bare `Vec<u8>` would be documented as integers).
#[derive(utoipa::ToSchema)]
#[schema(value_type = String, format = Binary, content_media_type = "application/pdf",
    description = "PDF document bytes")]
#[allow(dead_code)]
struct Pdf(Vec<u8>);

const INDUSTRY: &str = "An industry of the taxonomy, any case, URL-encoded (Financial%20Services)";

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(funnel_rollup))
        .routes(routes!(funnel_trends))
        .routes(routes!(geo_countries))
        .routes(routes!(geo_cities))
        .routes(routes!(geo_export))
        .routes(routes!(industry_report))
        .routes(routes!(industry_snapshot))
        .routes(routes!(overview))
        .merge(super::competitors::routes::router())
        .merge(super::keywords::routes::router())
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

/// Countries of the records that entered the pool in the last `days` days
/// (Starter+).
#[utoipa::path(get, path = "/v1/intelligence/geo", tag = "intelligence", operation_id = "intelligence_geo",
    security(("api_key" = [])), params(GeoQuery),
    responses(
        (status = 200, description = "Counts per country", body = GeoAnswer),
        (status = 400, description = "days outside 7-365", body = ErrorBody),
        (status = 403, description = "The plan is Free", body = ErrorBody),
        (status = 404, description = "Industry not found", body = ErrorBody),
    ))]
async fn geo_countries(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<GeoQuery>,
) -> ApiResult<Json<GeoAnswer>> {
    Ok(Json(geo::countries(&state, &caller, query).await?))
}

/// The top 30 cities of the records that entered the pool in the last
/// `days` days (Starter+).
#[utoipa::path(get, path = "/v1/intelligence/geo/cities", tag = "intelligence", operation_id = "intelligence_geo_cities",
    security(("api_key" = [])), params(CitiesQuery),
    responses(
        (status = 200, description = "Counts per city", body = CitiesAnswer),
        (status = 400, description = "days outside 7-365, or not a country code", body = ErrorBody),
        (status = 403, description = "The plan is Free", body = ErrorBody),
        (status = 404, description = "Industry not found", body = ErrorBody),
    ))]
async fn geo_cities(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<CitiesQuery>,
) -> ApiResult<Json<CitiesAnswer>> {
    Ok(Json(geo::cities(&state, &caller, query).await?))
}

/// The countries of `geo` as CSV (Starter+).
#[utoipa::path(get, path = "/v1/intelligence/geo/export", tag = "intelligence", operation_id = "intelligence_geo_export",
    security(("api_key" = [])), params(GeoQuery),
    responses(
        (status = 200, description = "country,cnt,pct", content_type = "text/csv", body = String),
        (status = 400, description = "days outside 7-365", body = ErrorBody),
        (status = 403, description = "The plan is Free", body = ErrorBody),
        (status = 404, description = "Industry not found", body = ErrorBody),
    ))]
async fn geo_export(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<GeoQuery>,
) -> ApiResult<CsvFile> {
    geo::export(&state, &caller, query).await
}

/// An industry's report over all its records, as JSON or an A4 PDF (Pro
/// and Enterprise).
#[utoipa::path(get, path = "/v1/intelligence/report/{industry}", tag = "intelligence", operation_id = "intelligence_industry_report",
    security(("api_key" = [])), params(("industry" = String, Path, description = INDUSTRY), ReportQuery),
    responses(
        (status = 200, description = "The report: JSON, or an A4 PDF with format=pdf", content(
            (IndustryReport = "application/json"),
            (inline(Pdf) = "application/pdf"),
        )),
        (status = 400, description = "format is neither json nor pdf", body = ErrorBody),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
        (status = 404, description = "Industry not found", body = ErrorBody),
    ))]
async fn industry_report(
    State(state): State<AppState>,
    caller: Caller,
    Path(industry): Path<String>,
    Query(query): Query<ReportQuery>,
) -> ApiResult<Response> {
    Ok(
        match reports::report(&state, &caller, &industry, query).await? {
            Report::Json(report) => Json(*report).into_response(),
            Report::Pdf { name, bytes } => (
                [
                    (header::CONTENT_TYPE, "application/pdf".to_string()),
                    (
                        header::CONTENT_DISPOSITION,
                        format!("inline; filename=\"{name}\""),
                    ),
                ],
                bytes,
            )
                .into_response(),
        },
    )
}

/// An industry's figures without the trend and top domains (Pro and
/// Enterprise).
#[utoipa::path(get, path = "/v1/intelligence/industry/{industry}", tag = "intelligence", operation_id = "intelligence_industry",
    security(("api_key" = [])), params(("industry" = String, Path, description = INDUSTRY)),
    responses(
        (status = 200, description = "The lighter report", body = IndustrySnapshot),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
        (status = 404, description = "Industry not found", body = ErrorBody),
    ))]
async fn industry_snapshot(
    State(state): State<AppState>,
    caller: Caller,
    Path(industry): Path<String>,
) -> ApiResult<Json<IndustrySnapshot>> {
    Ok(Json(reports::snapshot(&state, &caller, &industry).await?))
}

/// The pool across industries: a dashboard rollup (Pro and Enterprise).
#[utoipa::path(get, path = "/v1/intelligence/overview", tag = "intelligence", operation_id = "intelligence_overview",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Totals and every industry's figures", body = Overview),
        (status = 403, description = "The plan is below Pro", body = ErrorBody),
    ))]
async fn overview(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Overview>> {
    Ok(Json(reports::overview(&state, &caller).await?))
}
