//! Fan-out: outbox events become deliveries. One transaction takes a batch
//! of undispatched events (marking them dispatched) and writes one delivery
//! per (event, interested active subscription); a crash before the commit
//! leaves the events undispatched, and the unique (event, subscription)
//! index keeps a repeated fan-out from doubling a delivery. The same
//! transaction queues the workflow runs the events trigger.

use serde_json::{Value, json};

use super::model::wants;
use super::store::{self, NewDelivery};
use outreach_core::events;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// The JSON envelope of spec/2: `{event, timestamp, webhook_id, data}`.
pub fn envelope(event: &str, created_at_ms: i64, webhook_id: i64, data: &Value) -> String {
    json!({
        "event": event,
        "timestamp": iso(created_at_ms),
        "webhook_id": webhook_id,
        "data": data,
    })
    .to_string()
}

/// Fans out up to `limit` outbox events; returns how many events it took.
pub async fn dispatch_once(state: &AppState, limit: i64) -> anyhow::Result<usize> {
    let db = &state.db;
    let now = state.clock.now_ms();
    let mut tx = db.pool.begin().await?;
    let batch = events::claim_pending(&mut tx, db.backend, limit, now).await?;
    if batch.is_empty() {
        return Ok(0);
    }
    let mut accounts: Vec<i64> = batch.iter().map(|e| e.account_id).collect();
    accounts.sort_unstable();
    accounts.dedup();
    let subscriptions = store::active_subscriptions(&mut tx, &accounts).await?;
    let mut deliveries = Vec::new();
    for event in &batch {
        let interested = subscriptions
            .iter()
            .filter(|s| s.account_id == event.account_id && wants(&s.events, event.event_type));
        for sub in interested {
            let name = event.event_type.as_str();
            deliveries.push(NewDelivery {
                account_id: event.account_id,
                webhook_id: sub.id,
                url: sub.url.clone(),
                event_id: Some(event.id),
                event_type: name.to_owned(),
                payload: envelope(name, event.created_at, sub.id, &event.data),
            });
        }
    }
    store::insert_deliveries(&mut tx, db.backend, &deliveries, now).await?;
    // Workflow triggers join this fan-out: one claim per event, so an
    // event starts its runs exactly once (ARCHITECTURE.md, "Events").
    let runs = crate::workflows::triggers::from_events(&mut tx, &batch, now).await?;
    tx.commit().await?;
    if runs > 0 {
        crate::workflows::runs::wake(state);
    }
    let taken = batch.len();
    tracing::debug!(
        events = taken,
        deliveries = deliveries.len(),
        "outbox fanned out"
    );
    metrics::counter!("webhook_events_dispatched_total").increment(taken as u64);
    Ok(taken)
}

/// The `data` of the sample event `POST /v1/webhooks/{id}/test` sends.
pub fn test_event_data(webhook_id: i64, now_ms: i64) -> Value {
    json!({
        "message": "Test event from Outreach: your endpoint is reachable and verified the signature.",
        "webhook_id": webhook_id,
        "sent_at": iso(now_ms),
    })
}

/// The event type of test deliveries; not subscribable, never in the outbox.
pub const TEST_EVENT: &str = "webhook.test";
