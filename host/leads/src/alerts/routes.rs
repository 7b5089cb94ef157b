//! Handlers of spec/2 "Alerts".

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::model::*;
use super::service;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_alerts, create_alert))
        .routes(routes!(update_alert, delete_alert))
        .routes(routes!(alert_history))
        .routes(routes!(test_alert))
}

/// The account's alert rules, with the plan's cap.
#[utoipa::path(get, path = "/v1/alerts", tag = "alerts",
    security(("api_key" = [])),
    responses((status = 200, description = "The account's rules, oldest first", body = AlertRuleList)))]
async fn list_alerts(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<AlertRuleList>> {
    Ok(Json(service::list(&state, &caller).await?))
}

/// Saves an alert rule.
#[utoipa::path(post, path = "/v1/alerts", tag = "alerts",
    security(("api_key" = [])), request_body = NewAlertRule,
    responses(
        (status = 201, description = "Created", body = AlertRule),
        (status = 400, description = "An invalid name, an unknown filter value (named), a refused Slack URL, or plan limit reached", body = ErrorBody),
    ))]
async fn create_alert(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewAlertRule>,
) -> ApiResult<(StatusCode, Json<AlertRule>)> {
    let rule = service::create(&state, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(rule)))
}

/// Changes only the fields sent; `is_active` switches the rule.
#[utoipa::path(put, path = "/v1/alerts/{alert_id}", tag = "alerts",
    security(("api_key" = [])),
    params(("alert_id" = i64, Path, description = "The rule's id")),
    request_body = UpdateAlertRule,
    responses(
        (status = 200, description = "Updated", body = AlertRule),
        (status = 400, description = "An invalid field, an unknown filter value (named) or a refused Slack URL", body = ErrorBody),
        (status = 404, description = "Alert not found", body = ErrorBody),
    ))]
async fn update_alert(
    State(state): State<AppState>,
    caller: Caller,
    Path(alert_id): Path<i64>,
    Json(body): Json<UpdateAlertRule>,
) -> ApiResult<Json<AlertRule>> {
    Ok(Json(
        service::update(&state, &caller, alert_id, body).await?,
    ))
}

/// Deletes a rule; its history stays.
#[utoipa::path(delete, path = "/v1/alerts/{alert_id}", tag = "alerts",
    security(("api_key" = [])),
    params(("alert_id" = i64, Path, description = "The rule's id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "Alert not found", body = ErrorBody),
    ))]
async fn delete_alert(
    State(state): State<AppState>,
    caller: Caller,
    Path(alert_id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, alert_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The account's alert history, newest first.
#[utoipa::path(get, path = "/v1/alerts/history", tag = "alerts",
    security(("api_key" = [])), params(HistoryQuery),
    responses(
        (status = 200, description = "One page of history entries", body = AlertHistoryPage),
        (status = 400, description = "page below 1 or limit outside 1-100", body = ErrorBody),
    ))]
async fn alert_history(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<HistoryQuery>,
) -> ApiResult<Json<AlertHistoryPage>> {
    Ok(Json(service::history(&state, &caller, q).await?))
}

/// Runs the rule over the pool now; writes nothing.
#[utoipa::path(post, path = "/v1/alerts/{alert_id}/test", tag = "alerts",
    security(("api_key" = [])),
    params(("alert_id" = i64, Path, description = "The rule's id")),
    responses(
        (status = 200, description = "How many records match now, and up to 10 with their gaps", body = AlertTestResult),
        (status = 404, description = "Alert not found", body = ErrorBody),
    ))]
async fn test_alert(
    State(state): State<AppState>,
    caller: Caller,
    Path(alert_id): Path<i64>,
) -> ApiResult<Json<AlertTestResult>> {
    Ok(Json(service::test(&state, &caller, alert_id).await?))
}
