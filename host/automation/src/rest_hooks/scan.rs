//! The REST hooks' deliverer: a loop over the hooks whose scan is due (the
//! due time is also the lease, so several processes share the work), each
//! scan asking the hook's trigger for its newest items and writing a
//! delivery for each item the hook has not had, in one transaction with
//! the record that it has had it. The webhooks deliverer sends them.

use std::time::Duration;

use super::store::{self, DueHook};
use super::{event_name, item_id, items};
use crate::webhooks::dispatch::envelope;
use crate::webhooks::store::{NewDelivery, insert_deliveries};
use outreach_core::accounts::Plan;
use outreach_core::ports::Actor;
use outreach_core::state::AppState;

/// How often a hook looks for new items.
pub const SCAN_EVERY_MS: i64 = 15_000;
/// Items a scan reads: the trigger's largest page. More new items than
/// this between two scans would be missed, which is 400 a minute per hook.
pub const WINDOW: usize = 100;
/// Seen items older than this that left the trigger's window are
/// forgotten.
const FORGET_AFTER_MS: i64 = 30 * 86_400_000;
/// Hooks one pass takes.
const BATCH: i64 = 50;

/// Scans the hooks that are due; returns how many deliveries it wrote.
pub async fn scan_once(state: &AppState) -> anyhow::Result<usize> {
    let now = state.clock.now_ms();
    let mut written = 0;
    for hook in store::due(&state.db, now, BATCH).await? {
        if !store::claim(&state.db, hook.id, now, now + SCAN_EVERY_MS).await? {
            continue;
        }
        // A plan below Starter may not use the integration: its hooks wait.
        if hook.plan < Plan::Starter {
            continue;
        }
        match scan(state, &hook, now).await {
            Ok(n) => written += n,
            Err(e) => tracing::warn!(hook = hook.id, error = %e, "REST hook scan failed"),
        }
    }
    if written > 0 {
        crate::webhooks::deliver::wake(state);
    }
    Ok(written)
}

#[tracing::instrument(skip_all, fields(hook = hook.id, trigger = %hook.trigger))]
async fn scan(state: &AppState, hook: &DueHook, now: i64) -> anyhow::Result<usize> {
    let actor = Actor {
        account_id: hook.account_id,
        plan: hook.plan,
    };
    let found = items(state, actor, &hook.trigger, &hook.params)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let window: Vec<String> = found.iter().filter_map(item_id).collect();
    let backend = state.db.backend;
    let mut tx = state.db.pool.begin().await?;
    // Writing first keeps SQLite's transaction a writer from the start.
    store::prune_seen(&mut tx, backend, hook.id, now - FORGET_AFTER_MS, &window).await?;
    let seen = store::seen(&mut tx, backend, hook.id, &window).await?;
    let event = event_name(&hook.trigger);
    // Oldest first, so the platform receives them in the order they came.
    let fresh: Vec<(String, &serde_json::Value)> = found
        .iter()
        .rev()
        .filter_map(|item| item_id(item).map(|id| (id, item)))
        .filter(|(id, _)| !seen.contains(id))
        .collect();
    let deliveries: Vec<NewDelivery> = fresh
        .iter()
        .map(|(_, item)| NewDelivery {
            account_id: hook.account_id,
            webhook_id: hook.id,
            url: hook.url.clone(),
            event_id: None,
            event_type: event.clone(),
            payload: envelope(&event, now, hook.id, item),
        })
        .collect();
    let ids: Vec<String> = fresh.into_iter().map(|(id, _)| id).collect();
    store::mark_seen(&mut tx, backend, hook.id, &ids, now).await?;
    insert_deliveries(&mut tx, backend, &deliveries, now).await?;
    tx.commit().await?;
    Ok(deliveries.len())
}

/// The loop `serve` starts.
pub async fn run(state: AppState) {
    loop {
        if let Err(e) = scan_once(&state).await {
            tracing::warn!(error = %e, "REST hook scan pass failed");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
