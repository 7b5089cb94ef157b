//! Handlers of spec/3's template endpoints under `/v1/workflows/`.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::model::*;
use super::service;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(install))
        .routes(routes!(rate))
        .routes(routes!(my_ratings))
        .routes(routes!(suggest))
}

/// The public statistics.
pub fn public_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(stats))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct TemplatesQuery {
    /// summary (default) or full (adds description, trigger, conditions,
    /// actions and placeholders).
    pub detail: Option<String>,
}

/// The templates of every loaded template pack, with the caller's `owned`.
#[utoipa::path(get, path = "/v1/workflows/templates", tag = "templates",
    operation_id = "list_templates", security(("api_key" = [])), params(TemplatesQuery),
    responses(
        (status = 200, description = "Templates", body = TemplateList),
        (status = 400, description = "detail neither summary nor full", body = ErrorBody),
    ))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<TemplatesQuery>,
) -> ApiResult<Json<TemplateList>> {
    Ok(Json(
        service::list(&state, &caller, q.detail.as_deref()).await?,
    ))
}

/// Creates a paused workflow from a template.
#[utoipa::path(post, path = "/v1/workflows/install-template", tag = "templates",
    operation_id = "install_template", security(("api_key" = [])),
    request_body = InstallTemplateInput,
    responses(
        (status = 201, description = "The new workflow, paused, with the placeholders to fill", body = InstalledWorkflow),
        (status = 400, description = "The plan's workflow cap reached", body = ErrorBody),
        (status = 402, description = "A paid template the account does not own", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "Unknown template id", body = ErrorBody),
    ))]
async fn install(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<InstallTemplateInput>,
) -> ApiResult<(StatusCode, Json<InstalledWorkflow>)> {
    let installed = service::install(&state, &caller, &body.template_id).await?;
    Ok((StatusCode::CREATED, Json(installed)))
}

/// Installs and ratings per template; public.
#[utoipa::path(get, path = "/v1/workflows/template-stats", tag = "templates",
    operation_id = "template_stats",
    responses((status = 200, description = "Statistics", body = TemplateStats)))]
async fn stats(State(state): State<AppState>) -> ApiResult<Json<TemplateStats>> {
    Ok(Json(service::stats(&state).await?))
}

/// Rates a template installed or owned; a second rating overwrites.
#[utoipa::path(post, path = "/v1/workflows/rate-template", tag = "templates",
    operation_id = "rate_template", security(("api_key" = [])),
    request_body = RateTemplateInput,
    responses(
        (status = 200, description = "The caller's rating", body = TemplateRating),
        (status = 400, description = "rating not an integer 1-5, review too long, unknown template_type", body = ErrorBody),
        (status = 403, description = "Not installed or owned, or below Starter", body = ErrorBody),
        (status = 404, description = "Unknown template id", body = ErrorBody),
    ))]
async fn rate(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<RateTemplateInput>,
) -> ApiResult<Json<TemplateRating>> {
    Ok(Json(service::rate(&state, &caller, body).await?))
}

/// The caller's template and marketplace ratings.
#[utoipa::path(get, path = "/v1/workflows/my-ratings", tag = "templates",
    operation_id = "my_template_ratings", security(("api_key" = [])),
    responses(
        (status = 200, description = "Ratings", body = MyRatings),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn my_ratings(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<MyRatings>> {
    Ok(Json(service::my_ratings(&state, &caller).await?))
}

/// Templates ranked for the account, with the reasons.
#[utoipa::path(get, path = "/v1/workflows/suggest-templates", tag = "templates",
    operation_id = "suggest_templates", security(("api_key" = [])),
    responses(
        (status = 200, description = "Suggestions, best first", body = SuggestedTemplates),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn suggest(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<SuggestedTemplates>> {
    Ok(Json(service::suggest(&state, &caller).await?))
}
