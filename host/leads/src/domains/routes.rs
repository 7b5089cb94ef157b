//! Handlers of the enrichment and domain-search endpoints.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::email_finder::{self, FinderAnswer, FinderQuery};
use super::record::DomainRecord;
use super::service::{
    self, DomainBulkAnswer, DomainBulkRequest, DomainQuery, Lookup, Pending, SearchAnswer,
    SearchQuery, TechStack,
};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(domain))
        .routes(routes!(bulk))
        .routes(routes!(tech_stack))
        .routes(routes!(search))
        .routes(routes!(email_finder))
}

fn accepted(p: Pending) -> Response {
    (StatusCode::ACCEPTED, Json(p)).into_response()
}

/// A domain's record; an unknown domain is added to the pool and queued.
#[utoipa::path(get, path = "/v1/enrichment/domain", tag = "enrichment", operation_id = "enrich_domain",
    security(("api_key" = [])), params(DomainQuery),
    responses(
        (status = 200, description = "The record: imported, enriched, or failed with its reasons", body = DomainRecord),
        (status = 202, description = "Queued or being enriched", body = Pending),
        (status = 400, description = "Not a usable domain", body = ErrorBody),
    ))]
async fn domain(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<DomainQuery>,
) -> ApiResult<Response> {
    Ok(match service::domain(&state, &caller, query).await? {
        Lookup::Ready(record) => Json(*record).into_response(),
        Lookup::Pending(p) => accepted(p),
    })
}

/// The records of up to 200 domains; the unknown ones are queued.
#[utoipa::path(post, path = "/v1/enrichment/bulk", tag = "enrichment", operation_id = "enrich_bulk",
    security(("api_key" = [])), request_body = DomainBulkRequest,
    responses(
        (status = 200, description = "Each domain's state and record", body = DomainBulkAnswer),
        (status = 400, description = "0 or more than 200 domains, or one not usable", body = ErrorBody),
    ))]
async fn bulk(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<DomainBulkRequest>,
) -> ApiResult<Json<DomainBulkAnswer>> {
    Ok(Json(service::bulk(&state, &caller, body).await?))
}

/// The technologies seen on a domain, with categories, versions and confidence.
#[utoipa::path(get, path = "/v1/enrichment/tech-stack", tag = "enrichment", operation_id = "enrichment_tech_stack",
    security(("api_key" = [])), params(DomainQuery),
    responses(
        (status = 200, description = "The technologies", body = TechStack),
        (status = 202, description = "Queued or being enriched", body = Pending),
        (status = 400, description = "Not a usable domain", body = ErrorBody),
    ))]
async fn tech_stack(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<DomainQuery>,
) -> ApiResult<Response> {
    Ok(match service::tech_stack(&state, &caller, query).await? {
        Ok(stack) => Json(stack).into_response(),
        Err(p) => accepted(p),
    })
}

/// Enriched domains of the pool by filters, a page at a time.
#[utoipa::path(get, path = "/v1/search/domains", tag = "enrichment", operation_id = "search_domains",
    security(("api_key" = [])), params(SearchQuery),
    responses(
        (status = 200, description = "A page and the total", body = SearchAnswer),
        (status = 400, description = "A filter out of range", body = ErrorBody),
    ))]
async fn search(
    State(state): State<AppState>,
    _caller: Caller,
    Query(query): Query<SearchQuery>,
) -> ApiResult<Json<SearchAnswer>> {
    Ok(Json(service::search(&state, query).await?))
}

/// A person's likely addresses at a company, ranked; verified through the
/// account's verifier chain when it has one.
#[utoipa::path(get, path = "/v1/enrichment/email-finder", tag = "enrichment", operation_id = "email_finder",
    security(("api_key" = [])), params(FinderQuery),
    responses(
        (status = 200, description = "Candidates, best first", body = FinderAnswer),
        (status = 400, description = "Not a usable domain or name", body = ErrorBody),
    ))]
async fn email_finder(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<FinderQuery>,
) -> ApiResult<Json<FinderAnswer>> {
    Ok(Json(email_finder::find(&state, &caller, query).await?))
}
