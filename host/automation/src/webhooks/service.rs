//! The rules of spec/2 "Webhooks": plan gate and caps, URL and event
//! checks, the secret, updates, and the test and retry attempts made inside
//! a request.

use outreach_core::accounts::plans::{Plan, Quota, ensure_quota_after_insert, quota_view};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::platform::outbound;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

use super::deliver::{self, Deliverer, LEASE_MS};
use super::dispatch::{TEST_EVENT, envelope, test_event_data};
use super::log::{self, Scope};
use super::model::*;
use super::outcomes::{self, Outcome};
use super::signing::new_secret;
use super::store::{self, ClaimedDelivery, NewDelivery, NewWebhook, WebhookRow, secret_aad};

/// Webhooks are Starter+ (spec/2); Free gets the spec's 403.
fn gate(caller: &Caller) -> ApiResult<()> {
    caller.require(Plan::Starter)
}

pub fn view(w: &WebhookRow) -> Webhook {
    Webhook {
        id: w.id,
        name: w.name.clone(),
        url: w.url.clone(),
        events: w.events.clone(),
        is_active: w.is_active,
        failing_since: w.failing_since.map(iso),
        disabled_reason: w.disabled_reason.clone(),
        created_at: iso(w.created_at),
        updated_at: iso(w.updated_at),
    }
}

/// Checks a receiver URL (see [`outbound::check_receiver_url`]).
async fn check_receiver_url(state: &AppState, raw: &str) -> ApiResult<String> {
    outbound::check_receiver_url(&state.outbound, raw, "Webhook url").await
}

pub async fn list(state: &AppState, caller: &Caller) -> ApiResult<WebhookList> {
    gate(caller)?;
    let rows = store::list_webhooks(&state.db, caller.account_id).await?;
    let count = rows.len() as u64;
    let (limit, remaining) = quota_view(state.plan_limits(caller.plan), Quota::Webhooks, count);
    Ok(WebhookList {
        webhooks: rows.iter().map(view).collect(),
        count,
        limit,
        remaining,
    })
}

pub async fn create(
    state: &AppState,
    caller: &Caller,
    body: CreateWebhook,
) -> ApiResult<CreatedWebhook> {
    gate(caller)?;
    let name = check_name(body.name.as_deref())?;
    let events = canonical_events(&body.events)?;
    let url = check_receiver_url(state, &body.url).await?;
    let limits = state.plan_limits(caller.plan);
    let secret = new_secret();
    let new = NewWebhook {
        account_id: caller.account_id,
        name: name.as_deref(),
        url: &url,
        events: &events,
        now: state.clock.now_ms(),
    };
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let id = store::insert_webhook(&mut tx, new).await?;
    let quota = (Quota::Webhooks, store::OWN_WEBHOOKS);
    ensure_quota_after_insert(&mut tx, caller.plan, limits, quota, caller.account_id).await?;
    let sealed = state.secrets.encrypt(&secret_aad(id), &secret);
    store::seal_secret(&mut tx, id, &sealed).await?;
    tx.commit().await?;
    let row = get(state, caller.account_id, id).await?;
    Ok(CreatedWebhook {
        webhook: view(&row),
        secret,
    })
}

async fn get(state: &AppState, account_id: i64, id: i64) -> ApiResult<WebhookRow> {
    store::get_webhook(&state.db, account_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("Webhook"))
}

pub async fn update(
    state: &AppState,
    caller: &Caller,
    id: i64,
    body: UpdateWebhook,
) -> ApiResult<Webhook> {
    gate(caller)?;
    let mut row = get(state, caller.account_id, id).await?;
    // Check everything before changing anything.
    let name = match body.name.as_deref() {
        Some(n) => Some(check_name(Some(n))?),
        None => None,
    };
    let events = body.events.as_deref().map(canonical_events).transpose()?;
    let url = match &body.url {
        Some(u) => Some(check_receiver_url(state, u).await?),
        None => None,
    };
    if let Some(name) = name {
        row.name = name;
    }
    if let Some(events) = events {
        row.events = events;
    }
    if let Some(url) = url {
        row.url = url;
    }
    if let Some(active) = body.is_active {
        // Turning a subscription on again starts its failure clock afresh.
        if active && !row.is_active {
            row.failing_since = None;
            row.disabled_reason = None;
        }
        row.is_active = active;
    }
    let now = state.clock.now_ms();
    store::update_webhook(&state.db, &row, now).await?;
    if row.is_active {
        deliver::wake(state);
    }
    Ok(view(&get(state, caller.account_id, id).await?))
}

pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    gate(caller)?;
    if store::delete_webhook(&state.db, caller.account_id, id).await? {
        Ok(())
    } else {
        Err(ApiError::not_found("Webhook"))
    }
}

/// Sends a sample event now and records it as a delivery (no retries).
pub async fn test(state: &AppState, caller: &Caller, id: i64) -> ApiResult<WebhookTestResult> {
    gate(caller)?;
    let row = get(state, caller.account_id, id).await?;
    let now = state.clock.now_ms();
    let owner = state.ext::<Deliverer>().owner().to_owned();
    let new = NewDelivery {
        account_id: caller.account_id,
        webhook_id: row.id,
        url: row.url.clone(),
        event_id: None,
        event_type: TEST_EVENT.to_owned(),
        payload: envelope(TEST_EVENT, now, row.id, &test_event_data(row.id, now)),
    };
    let delivery_id =
        store::insert_leased_delivery(&state.db, &new, &owner, now, now + LEASE_MS).await?;
    let claimed = ClaimedDelivery {
        id: delivery_id,
        account_id: caller.account_id,
        webhook_id: row.id,
        event_type: new.event_type,
        payload: new.payload,
        attempt: 0,
        status: "pending".to_owned(),
        url: row.url,
        secret: row.secret,
    };
    // A probe is never retried automatically.
    let outcome = deliver::attempt(state, &claimed, true).await;
    record_one(state, &outcome).await?;
    Ok(WebhookTestResult {
        success: outcome.success,
        status_code: outcome.status_code,
        response_ms: outcome.response_ms,
        error: outcome.error,
        delivery_id,
    })
}

/// Makes a new attempt of a delivery now and answers with the result.
pub async fn retry(
    state: &AppState,
    caller: &Caller,
    webhook_id: i64,
    delivery_id: i64,
) -> ApiResult<DeliveryDetail> {
    gate(caller)?;
    let now = state.clock.now_ms();
    let owner = state.ext::<Deliverer>().owner().to_owned();
    let claimed = store::claim_one(
        &state.db,
        caller.account_id,
        webhook_id,
        delivery_id,
        &owner,
        now,
        now + LEASE_MS,
    )
    .await?;
    let Some(claimed) = claimed else {
        // Either not the caller's, or an attempt is under way.
        detail(state, caller, webhook_id, delivery_id).await?;
        return Err(ApiError::Conflict(
            "An attempt of this delivery is in progress".to_owned(),
        ));
    };
    // A replay of a finished delivery gets no automatic retries; an early
    // attempt of a waiting one keeps its schedule.
    let finished = matches!(claimed.status.as_str(), "delivered" | "failed");
    let outcome = deliver::attempt(state, &claimed, finished).await;
    record_one(state, &outcome).await?;
    detail(state, caller, webhook_id, delivery_id).await
}

async fn record_one(state: &AppState, outcome: &Outcome) -> ApiResult<()> {
    outcomes::record(
        &state.db,
        std::slice::from_ref(outcome),
        state.clock.now_ms(),
    )
    .await?;
    Ok(())
}

pub async fn detail(
    state: &AppState,
    caller: &Caller,
    webhook_id: i64,
    delivery_id: i64,
) -> ApiResult<DeliveryDetail> {
    gate(caller)?;
    let (delivery, payload, attempts) =
        log::detail(&state.db, caller.account_id, webhook_id, delivery_id)
            .await?
            .ok_or_else(|| ApiError::not_found("Delivery"))?;
    Ok(DeliveryDetail {
        delivery,
        payload: serde_json::from_str(&payload).unwrap_or(serde_json::Value::Null),
        attempts,
    })
}

/// A delivery listing with its summary.
pub async fn deliveries(
    state: &AppState,
    caller: &Caller,
    scope: Scope,
    limit: Option<i64>,
) -> ApiResult<DeliveryList> {
    gate(caller)?;
    let limit = page_size(limit)?;
    if let Some(id) = scope.webhook_id {
        get(state, caller.account_id, id).await?;
    }
    let deliveries = log::list(&state.db, &scope, limit).await?;
    let summary = log::summary(&state.db, &scope).await?;
    Ok(DeliveryList {
        deliveries,
        summary,
    })
}
