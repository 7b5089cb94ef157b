//! Handlers of spec/2 "Scoring" and of the scoring rules the dashboard
//! makes.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::score::{self, ScoreBatchRequest, ScoreRequest, ScoringResult};
use super::service::{self, NewScoringRule, ScoringRule, ScoringRuleList, UpdateScoringRule};
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;
use outreach_core::usage::recorder::ResultsCount;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(score_one))
        .routes(routes!(score_batch))
        .routes(routes!(list_rules, create_rule))
        .routes(routes!(get_rule, update_rule, delete_rule))
}

/// Scores one domain of the pool by a rule (the first default rule when
/// none is named).
#[utoipa::path(post, path = "/v1/scoring", tag = "scoring", operation_id = "score_domain",
    security(("api_key" = [])), request_body = ScoreRequest,
    responses(
        (status = 200, description = "The score, tier and each condition's part", body = ScoringResult),
        (status = 400, description = "Invalid domain format, or an invalid field", body = ErrorBody),
        (status = 404, description = "Domain not found, or scoring rule not found", body = ErrorBody),
    ))]
async fn score_one(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<ScoreRequest>,
) -> ApiResult<Json<ScoringResult>> {
    Ok(Json(score::score(&state, &caller, body).await?))
}

/// Scores up to 100 domains of the pool by one rule, in the order asked;
/// one query against the monthly quota.
#[utoipa::path(post, path = "/v1/scoring/batch", tag = "scoring", operation_id = "score_batch",
    security(("api_key" = [])), request_body = ScoreBatchRequest,
    responses(
        (status = 200, description = "One result per distinct domain, in request order", body = Vec<ScoringResult>),
        (status = 400, description = "0 or more than 100 domains, or one with an invalid format", body = ErrorBody),
        (status = 404, description = "Domains not found (all named), or scoring rule not found", body = ErrorBody),
    ))]
async fn score_batch(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<ScoreBatchRequest>,
) -> ApiResult<Response> {
    let results = score::score_batch(&state, &caller, body).await?;
    let count = results.len() as i64;
    let mut response = Json(results).into_response();
    // Recent activity shows how many domains the one query scored.
    response.extensions_mut().insert(ResultsCount(count));
    Ok(response)
}

/// The default rules, then the account's own.
#[utoipa::path(get, path = "/v1/scoring/rules", tag = "scoring", operation_id = "list_scoring_rules",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Default rules first, then the account's", body = ScoringRuleList),
    ))]
async fn list_rules(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<ScoringRuleList>> {
    Ok(Json(service::list(&state, &caller).await?))
}

/// Creates a rule of the account's own.
#[utoipa::path(post, path = "/v1/scoring/rules", tag = "scoring", operation_id = "create_scoring_rule",
    security(("api_key" = [])), request_body = NewScoringRule,
    responses(
        (status = 201, description = "Created", body = ScoringRule),
        (status = 400, description = "An invalid name, description or condition, or plan limit reached", body = ErrorBody),
    ))]
async fn create_rule(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewScoringRule>,
) -> ApiResult<(StatusCode, Json<ScoringRule>)> {
    let rule = service::create(&state, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(rule)))
}

/// One rule: a default one or the account's own.
#[utoipa::path(get, path = "/v1/scoring/rules/{rule_id}", tag = "scoring", operation_id = "get_scoring_rule",
    security(("api_key" = [])),
    params(("rule_id" = String, Path, description = "`default`, `default_intent`, `default_ecommerce` or `rule_<n>`")),
    responses(
        (status = 200, description = "The rule", body = ScoringRule),
        (status = 404, description = "Scoring rule not found", body = ErrorBody),
    ))]
async fn get_rule(
    State(state): State<AppState>,
    caller: Caller,
    Path(rule_id): Path<String>,
) -> ApiResult<Json<ScoringRule>> {
    Ok(Json(service::get(&state, &caller, &rule_id).await?))
}

/// Changes the given fields of one of the account's rules.
#[utoipa::path(put, path = "/v1/scoring/rules/{rule_id}", tag = "scoring", operation_id = "update_scoring_rule",
    security(("api_key" = [])),
    params(("rule_id" = String, Path, description = "`rule_<n>`")),
    request_body = UpdateScoringRule,
    responses(
        (status = 200, description = "Updated", body = ScoringRule),
        (status = 400, description = "An invalid field, or a default rule (read-only)", body = ErrorBody),
        (status = 404, description = "Scoring rule not found", body = ErrorBody),
    ))]
async fn update_rule(
    State(state): State<AppState>,
    caller: Caller,
    Path(rule_id): Path<String>,
    Json(body): Json<UpdateScoringRule>,
) -> ApiResult<Json<ScoringRule>> {
    Ok(Json(
        service::update(&state, &caller, &rule_id, body).await?,
    ))
}

/// Deletes one of the account's rules.
#[utoipa::path(delete, path = "/v1/scoring/rules/{rule_id}", tag = "scoring", operation_id = "delete_scoring_rule",
    security(("api_key" = [])),
    params(("rule_id" = String, Path, description = "`rule_<n>`")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "A default rule (read-only)", body = ErrorBody),
        (status = 404, description = "Scoring rule not found", body = ErrorBody),
    ))]
async fn delete_rule(
    State(state): State<AppState>,
    caller: Caller,
    Path(rule_id): Path<String>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, &rule_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
