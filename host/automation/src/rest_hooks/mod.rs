//! REST hooks of the automation platform (issue 33, beyond spec/2): the
//! platform subscribes a target URL to one of the polling triggers
//! (`new-domain`, `domain-enriched`, `score-threshold`) and is sent each
//! item that trigger's poll would return, so polling becomes optional.
//!
//! A hook is a row of `webhooks` with `rest_hook` set, so its deliveries
//! are the webhooks area's: the `{event, timestamp, webhook_id, data}`
//! envelope (`data` is the trigger item, `event` is `zapier.<trigger>`),
//! signed with the hook's secret, retried on the webhooks schedule and
//! shown in the delivery log. Hooks are not listed, counted or sent outbox
//! events by `/v1/webhooks` (`webhooks::store::OWN`).
//!
//! The items come from the trigger itself, through
//! `PoolPort::trigger_items` (the leads crate owns the pool, lists and
//! scoring): [`scan`] asks for each hook's newest items every
//! [`scan::SCAN_EVERY_MS`] and delivers those the hook has not had
//! (`rest_hook_items`, written in the transaction that writes the
//! deliveries). A new hook is seeded with the items that exist when it is
//! made, so it receives what happens after it, as the platforms expect.
//! Decisions: docs/decisions/integrations.md.

pub mod routes;
pub mod scan;
pub mod store;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::webhooks::signing::new_secret;
use crate::webhooks::store::{seal_secret, secret_aad};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::outbound;
use outreach_core::ports::{Actor, PortError, SharedPoolPort};
use outreach_core::state::AppState;
use outreach_core::store::lock_account;
use outreach_core::usage::limits::automation_query;

/// The polling triggers a hook may follow.
pub const TRIGGERS: [&str; 3] = ["new-domain", "domain-enriched", "score-threshold"];

/// REST hooks an account may hold (ours: one per automation, and no
/// platform user runs more than a few dozen).
pub const MAX_HOOKS: i64 = 100;

/// `POST /v1/zapier/hooks`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewRestHook {
    /// new-domain, domain-enriched or score-threshold.
    pub event: String,
    /// HTTPS URL the platform receives items at.
    pub target_url: String,
    /// new-domain only: as the trigger's query.
    pub industry: Option<String>,
    /// new-domain only: as the trigger's query.
    pub country: Option<String>,
    /// new-domain only: 0-100, as the trigger's query.
    pub min_confidence: Option<i64>,
    /// score-threshold only: default 80, as the trigger's query.
    pub threshold: Option<i64>,
}

/// A subscribed hook; the secret that signs its deliveries is shown here
/// only.
#[derive(Debug, Serialize, ToSchema)]
pub struct RestHook {
    pub id: i64,
    pub event: String,
    pub target_url: String,
    pub secret: String,
}

/// The event name of a trigger's deliveries.
pub fn event_name(trigger: &str) -> String {
    format!("zapier.{trigger}")
}

/// The trigger query a hook keeps: only the parameters its trigger takes.
fn params_of(body: &NewRestHook) -> ApiResult<Value> {
    let mut params = Map::new();
    let mut put = |name: &str, value: Option<Value>, allowed: bool| -> ApiResult<()> {
        match value {
            Some(_) if !allowed => Err(ApiError::bad_request(format!(
                "{name} is not a parameter of the {} trigger",
                body.event
            ))),
            Some(v) => {
                params.insert(name.into(), v);
                Ok(())
            }
            None => Ok(()),
        }
    };
    let new_domain = body.event == "new-domain";
    put(
        "industry",
        body.industry.clone().map(Value::from),
        new_domain,
    )?;
    put("country", body.country.clone().map(Value::from), new_domain)?;
    put(
        "min_confidence",
        body.min_confidence.map(Value::from),
        new_domain,
    )?;
    let threshold = body.event == "score-threshold";
    put("threshold", body.threshold.map(Value::from), threshold)?;
    Ok(Value::Object(params))
}

/// The trigger's items for a hook, newest first; a refusal (a bad
/// parameter) is the 400 the trigger would answer.
pub async fn items(
    state: &AppState,
    actor: Actor,
    trigger: &str,
    params: &Value,
) -> ApiResult<Vec<Value>> {
    let port = state.ext::<SharedPoolPort>();
    port.trigger_items(state, actor, trigger, params, scan::WINDOW)
        .await
        .map_err(|e| match e {
            PortError::Refused(detail) => ApiError::BadRequest(detail),
            PortError::Internal(cause) => ApiError::Internal(cause),
        })
}

/// `POST /v1/zapier/hooks`.
pub async fn subscribe(
    state: &AppState,
    caller: &Caller,
    body: NewRestHook,
) -> ApiResult<RestHook> {
    automation_query(state, caller).await?;
    if !TRIGGERS.contains(&body.event.as_str()) {
        return Err(ApiError::bad_request(format!(
            "event must be one of {}",
            TRIGGERS.join(", ")
        )));
    }
    let params = params_of(&body)?;
    let url = outbound::check_receiver_url(&state.outbound, &body.target_url, "target_url").await?;
    let actor = Actor {
        account_id: caller.account_id,
        plan: caller.plan,
    };
    // Checks the parameters as the poll would, and gives the seed.
    let existing = items(state, actor, &body.event, &params).await?;
    let now = state.clock.now_ms();
    let secret = new_secret();
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let hook = store::NewHook {
        account_id: caller.account_id,
        trigger: &body.event,
        params: &params,
        url: &url,
        now,
        first_scan_at: now + scan::SCAN_EVERY_MS,
    };
    let id = store::insert(&mut tx, hook).await?;
    if store::count(&mut tx, caller.account_id).await? > MAX_HOOKS {
        return Err(ApiError::bad_request(format!(
            "Plan limit reached: an account may hold {MAX_HOOKS} REST hooks"
        )));
    }
    seal_secret(
        &mut tx,
        id,
        &state.secrets.encrypt(&secret_aad(id), &secret),
    )
    .await?;
    let ids: Vec<String> = existing.iter().filter_map(item_id).collect();
    store::mark_seen(&mut tx, state.db.backend, id, &ids, now).await?;
    tx.commit().await?;
    Ok(RestHook {
        id,
        event: body.event,
        target_url: url,
        secret,
    })
}

/// `DELETE /v1/zapier/hooks/{id}`: 404 for another account's hook, one
/// already deleted, or an ordinary webhook's id.
pub async fn unsubscribe(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    automation_query(state, caller).await?;
    if store::delete(&state.db, caller.account_id, id).await? {
        Ok(())
    } else {
        Err(ApiError::not_found("REST hook"))
    }
}

/// An item's `id` as text (the triggers give strings; a number is kept as
/// its digits).
pub fn item_id(item: &Value) -> Option<String> {
    match &item["id"] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
