//! Retention: what the hourly housekeeping of `outreach serve` removes.
//! Dispatched outbox rows are not needed once their deliveries exist (each
//! delivery keeps its own body), and the delivery log keeps finished
//! deliveries for 30 days. Batched and idempotent, so several servers may
//! run it at once.

use outreach_core::state::AppState;

/// Dispatched outbox events older than this are removed.
pub const OUTBOX_RETENTION_MS: i64 = 7 * 86_400_000;

/// Delivered or failed deliveries (with their attempts) older than this
/// are removed; waiting ones are kept whatever their age.
pub const DELIVERY_RETENTION_MS: i64 = 30 * 86_400_000;

/// Rows removed by one pass.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    pub outbox_events: u64,
    pub deliveries: u64,
}

pub async fn prune(state: &AppState) -> sqlx::Result<Pruned> {
    let now = state.clock.now_ms();
    let outbox_events = sqlx::query(
        "DELETE FROM event_outbox WHERE dispatched_at IS NOT NULL AND dispatched_at < $1",
    )
    .bind(now - OUTBOX_RETENTION_MS)
    .execute(&state.db.pool)
    .await?
    .rows_affected();
    // Attempts go with their delivery (ON DELETE CASCADE).
    let deliveries = sqlx::query(
        "DELETE FROM webhook_deliveries WHERE next_attempt_at IS NULL \
         AND status IN ('delivered', 'failed') AND updated_at < $1",
    )
    .bind(now - DELIVERY_RETENTION_MS)
    .execute(&state.db.pool)
    .await?
    .rows_affected();
    Ok(Pruned {
        outbox_events,
        deliveries,
    })
}
