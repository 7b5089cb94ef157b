//! Handlers of spec/2 "Webhooks" (and the delivery detail beyond it).

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::log::Scope;
use super::model::*;
use super::service;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::events::EventType;
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(all_deliveries))
        .routes(routes!(update_put, update_patch, delete))
        .routes(routes!(test))
        .routes(routes!(webhook_deliveries))
        .routes(routes!(delivery_detail))
        .routes(routes!(retry))
}

/// The account's subscriptions with the plan's cap.
#[utoipa::path(get, path = "/v1/webhooks", tag = "webhooks", operation_id = "list_webhooks",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Subscriptions", body = WebhookList),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<WebhookList>> {
    Ok(Json(service::list(&state, &caller).await?))
}

/// Subscribes an HTTPS URL to events; the signing secret is in this answer only.
#[utoipa::path(post, path = "/v1/webhooks", tag = "webhooks", operation_id = "create_webhook",
    security(("api_key" = [])), request_body = CreateWebhook,
    responses(
        (status = 201, description = "Created, with the secret", body = CreatedWebhook),
        (status = 400, description = "Invalid url or events, blocked address, or plan limit reached", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<CreateWebhook>,
) -> ApiResult<(StatusCode, Json<CreatedWebhook>)> {
    let created = service::create(&state, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// Changes name, url, events or is_active (same as PATCH).
#[utoipa::path(put, path = "/v1/webhooks/{id}", tag = "webhooks", operation_id = "update_webhook",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Webhook id")),
    request_body = UpdateWebhook,
    responses(
        (status = 200, description = "Updated", body = Webhook),
        (status = 400, description = "Invalid field", body = ErrorBody),
        (status = 404, description = "No such webhook", body = ErrorBody),
    ))]
async fn update_put(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<UpdateWebhook>,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(service::update(&state, &caller, id, body).await?))
}

/// Changes name, url, events or is_active (same as PUT).
#[utoipa::path(patch, path = "/v1/webhooks/{id}", tag = "webhooks", operation_id = "patch_webhook",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Webhook id")),
    request_body = UpdateWebhook,
    responses(
        (status = 200, description = "Updated", body = Webhook),
        (status = 400, description = "Invalid field", body = ErrorBody),
        (status = 404, description = "No such webhook", body = ErrorBody),
    ))]
async fn update_patch(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Json(body): Json<UpdateWebhook>,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(service::update(&state, &caller, id, body).await?))
}

/// Deletes a subscription with its delivery log.
#[utoipa::path(delete, path = "/v1/webhooks/{id}", tag = "webhooks", operation_id = "delete_webhook",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Webhook id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such webhook", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Sends a signed sample event (`webhook.test`) now and reports the answer.
#[utoipa::path(post, path = "/v1/webhooks/{id}/test", tag = "webhooks", operation_id = "test_webhook",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Webhook id")),
    responses(
        (status = 200, description = "The attempt's result", body = WebhookTestResult),
        (status = 404, description = "No such webhook", body = ErrorBody),
    ))]
async fn test(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<WebhookTestResult>> {
    Ok(Json(service::test(&state, &caller, id).await?))
}

/// Maps an event-type filter's alias to its canonical name.
fn canonical_filter(event_type: Option<String>) -> Option<String> {
    event_type.map(|t| match EventType::parse(&t) {
        Some(known) => known.as_str().to_owned(),
        None => t,
    })
}

/// Deliveries of every subscription, newest first, with the summary.
#[utoipa::path(get, path = "/v1/webhooks/deliveries", tag = "webhooks", operation_id = "list_webhook_deliveries",
    security(("api_key" = [])), params(DeliveryFilter),
    responses(
        (status = 200, description = "Deliveries and summary", body = DeliveryList),
        (status = 400, description = "Invalid limit", body = ErrorBody),
        (status = 404, description = "No such webhook", body = ErrorBody),
    ))]
async fn all_deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<DeliveryFilter>,
) -> ApiResult<Json<DeliveryList>> {
    let scope = Scope {
        account_id: caller.account_id,
        webhook_id: q.webhook_id,
        event_type: canonical_filter(q.event_type),
    };
    Ok(Json(
        service::deliveries(&state, &caller, scope, q.limit).await?,
    ))
}

/// One subscription's deliveries, newest first, with the summary.
#[utoipa::path(get, path = "/v1/webhooks/{id}/deliveries", tag = "webhooks", operation_id = "list_deliveries_of_webhook",
    security(("api_key" = [])), params(("id" = i64, Path, description = "Webhook id"), LimitQuery),
    responses(
        (status = 200, description = "Deliveries and summary", body = DeliveryList),
        (status = 400, description = "Invalid limit", body = ErrorBody),
        (status = 404, description = "No such webhook", body = ErrorBody),
    ))]
async fn webhook_deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Query(q): Query<LimitQuery>,
) -> ApiResult<Json<DeliveryList>> {
    let scope = Scope {
        account_id: caller.account_id,
        webhook_id: Some(id),
        event_type: None,
    };
    Ok(Json(
        service::deliveries(&state, &caller, scope, q.limit).await?,
    ))
}

/// One delivery with the body sent and every attempt.
#[utoipa::path(get, path = "/v1/webhooks/{id}/deliveries/{delivery_id}", tag = "webhooks",
    operation_id = "get_webhook_delivery", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Webhook id"), ("delivery_id" = i64, Path, description = "Delivery id")),
    responses(
        (status = 200, description = "The delivery", body = DeliveryDetail),
        (status = 404, description = "No such delivery", body = ErrorBody),
    ))]
async fn delivery_detail(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, delivery_id)): Path<(i64, i64)>,
) -> ApiResult<Json<DeliveryDetail>> {
    Ok(Json(
        service::detail(&state, &caller, id, delivery_id).await?,
    ))
}

/// Makes a new attempt of a delivery now (a replay when it had finished).
#[utoipa::path(post, path = "/v1/webhooks/{id}/deliveries/{delivery_id}/retry", tag = "webhooks",
    operation_id = "retry_webhook_delivery", security(("api_key" = [])),
    params(("id" = i64, Path, description = "Webhook id"), ("delivery_id" = i64, Path, description = "Delivery id")),
    responses(
        (status = 200, description = "The delivery after the attempt", body = DeliveryDetail),
        (status = 404, description = "No such delivery", body = ErrorBody),
        (status = 409, description = "An attempt is in progress", body = ErrorBody),
    ))]
async fn retry(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, delivery_id)): Path<(i64, i64)>,
) -> ApiResult<Json<DeliveryDetail>> {
    Ok(Json(
        service::retry(&state, &caller, id, delivery_id).await?,
    ))
}
