//! Handlers of spec/2 "Automation-platform integration" (`/v1/zapier`).

use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::actions::{self, *};
use super::triggers::{self, *};
use outreach_core::accounts::store as accounts;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Query};
use outreach_core::state::AppState;
use outreach_core::usage::limits::automation_query;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(auth_test))
        .routes(routes!(new_domain))
        .routes(routes!(domain_enriched))
        .routes(routes!(score_threshold))
        .routes(routes!(add_to_list))
        .routes(routes!(enrich_domain))
        .routes(routes!(add_to_watchlist))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AuthTest {
    pub success: bool,
    /// The key's user, else the account's first member.
    pub email: Option<String>,
    /// free, starter, pro or enterprise.
    pub plan: String,
}

/// Checks the API key the platform was given (every plan; not counted
/// against the daily query cap).
#[utoipa::path(post, path = "/v1/zapier/auth/test", tag = "integrations", operation_id = "zapier_auth_test",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The key works", body = AuthTest),
        (status = 401, description = "Not authenticated", body = ErrorBody),
    ))]
async fn auth_test(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<AuthTest>> {
    let user = match caller.user_id {
        Some(id) => accounts::user_by_id(&state.db, id).await?,
        None => accounts::members(&state.db, caller.account_id)
            .await?
            .into_iter()
            .next(),
    };
    Ok(Json(AuthTest {
        success: true,
        email: user.map(|u| u.email),
        plan: caller.plan.as_str().to_owned(),
    }))
}

/// The pool's newest records (id: the domain).
#[utoipa::path(get, path = "/v1/zapier/triggers/new-domain", tag = "integrations", operation_id = "zapier_new_domain",
    security(("api_key" = [])), params(NewDomainQuery),
    responses(
        (status = 200, description = "Newest first", body = Vec<NewDomainItem>),
        (status = 400, description = "A filter out of range, an unknown industry", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 429, description = "Rate limit exceeded", body = ErrorBody),
    ))]
async fn new_domain(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<NewDomainQuery>,
) -> ApiResult<Json<Vec<NewDomainItem>>> {
    automation_query(&state, &caller).await?;
    let limit = triggers::page(query.limit)?;
    Ok(Json(triggers::new_domains(&state, &query, limit).await?))
}

/// The enrichments the account asked for (id per enrichment).
#[utoipa::path(get, path = "/v1/zapier/triggers/domain-enriched", tag = "integrations", operation_id = "zapier_domain_enriched",
    security(("api_key" = [])), params(TriggerPage),
    responses(
        (status = 200, description = "Newest first", body = Vec<EnrichedItem>),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 429, description = "Rate limit exceeded", body = ErrorBody),
    ))]
async fn domain_enriched(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<TriggerPage>,
) -> ApiResult<Json<Vec<EnrichedItem>>> {
    automation_query(&state, &caller).await?;
    let limit = triggers::page(query.limit)?;
    Ok(Json(
        triggers::enriched(&state, caller.account_id, limit).await?,
    ))
}

/// Lead-list domains whose score under the `default` rule reaches the
/// threshold (id per crossing).
#[utoipa::path(get, path = "/v1/zapier/triggers/score-threshold", tag = "integrations", operation_id = "zapier_score_threshold",
    security(("api_key" = [])), params(ThresholdQuery),
    responses(
        (status = 200, description = "Newest crossing first", body = Vec<ThresholdItem>),
        (status = 400, description = "threshold out of 0-100", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 429, description = "Rate limit exceeded", body = ErrorBody),
    ))]
async fn score_threshold(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<ThresholdQuery>,
) -> ApiResult<Json<Vec<ThresholdItem>>> {
    automation_query(&state, &caller).await?;
    let limit = triggers::page(query.limit)?;
    let actor = crate::lists::service::actor(&caller);
    Ok(Json(
        triggers::score_threshold(&state, actor, query.threshold, limit).await?,
    ))
}

/// Adds a domain to one of the account's lead lists.
#[utoipa::path(post, path = "/v1/zapier/actions/add-to-list", tag = "integrations", operation_id = "zapier_add_to_list",
    security(("api_key" = [])), request_body = AddToList,
    responses(
        (status = 200, description = "Added, or already there", body = AddedToList),
        (status = 400, description = "Invalid domain, or the list is full", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "Lead list not found", body = ErrorBody),
        (status = 429, description = "Rate limit exceeded", body = ErrorBody),
    ))]
async fn add_to_list(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<AddToList>,
) -> ApiResult<Json<AddedToList>> {
    automation_query(&state, &caller).await?;
    Ok(Json(actions::add_to_list(&state, &caller, body).await?))
}

/// Queues a domain's enrichment, or answers the record the pool has.
#[utoipa::path(post, path = "/v1/zapier/actions/enrich-domain", tag = "integrations", operation_id = "zapier_enrich_domain",
    security(("api_key" = [])), request_body = EnrichDomain,
    responses(
        (status = 200, description = "Status, and the record when there is one", body = EnrichAnswer),
        (status = 400, description = "Invalid domain", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 429, description = "Rate limit exceeded", body = ErrorBody),
    ))]
async fn enrich_domain(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<EnrichDomain>,
) -> ApiResult<Json<EnrichAnswer>> {
    automation_query(&state, &caller).await?;
    Ok(Json(actions::enrich_domain(&state, &caller, body).await?))
}

/// Watches a domain with the alert types asked for.
#[utoipa::path(post, path = "/v1/zapier/actions/add-to-watchlist", tag = "integrations", operation_id = "zapier_add_to_watchlist",
    security(("api_key" = [])), request_body = AddToWatchlist,
    responses(
        (status = 200, description = "Watched (or watched already)", body = WatchAnswer),
        (status = 400, description = "Invalid domain, unknown alert type, or the watchlist is full", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 429, description = "Rate limit exceeded", body = ErrorBody),
    ))]
async fn add_to_watchlist(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<AddToWatchlist>,
) -> ApiResult<Json<WatchAnswer>> {
    automation_query(&state, &caller).await?;
    Ok(Json(
        actions::add_to_watchlist(&state, &caller, body).await?,
    ))
}
