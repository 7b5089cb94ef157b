//! Blocks reserved ahead, many windows to a statement.
//!
//! Under load every busy window asks for its next block every hundred or so
//! requests; with thousands of keys that was a statement and a commit each,
//! a thousand or two a second, and on two cores PostgreSQL's share of that
//! work came out of the requests' throughput. A window due a block ahead
//! still has a quarter of its current one left, so it can wait a few
//! milliseconds: the windows that fall due meanwhile are reserved together
//! in one statement with the same arithmetic as a single reservation, each
//! under its own one-per-window gate, so the grant stays exact.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use sqlx::Row;

use super::{BATCH, Blocks, LOCKED_IN_KEY_ORDER, WindowKey, batch_query, block_cap, block_sql};
use crate::store::{Backend, typed_value_rows};

/// How long the first window due a block ahead waits for others to join
/// its statement.
const GATHER: Duration = Duration::from_millis(5);

/// The windows waiting for their block ahead.
#[derive(Debug, Default)]
pub(super) struct Queue {
    /// Each window with its limit.
    pending: Vec<(WindowKey, u64)>,
    /// A task is gathering them.
    gathering: bool,
}

impl Blocks {
    /// Queues `key`'s next block; the first window queued starts the task
    /// that reserves the gathered ones.
    pub(super) fn queue_ahead(self: &Arc<Self>, key: WindowKey, limit: u64) {
        let mut queue = self.ahead.lock().unwrap();
        queue.pending.push((key, limit));
        if !queue.gathering {
            queue.gathering = true;
            let blocks = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(GATHER).await;
                blocks.reserve_gathered().await;
            });
        }
    }

    async fn reserve_gathered(&self) {
        let pending = {
            let mut queue = self.ahead.lock().unwrap();
            queue.gathering = false;
            std::mem::take(&mut queue.pending)
        };
        // A window whose gate is taken is being reserved for a request that
        // found its block empty; that reservation refills it.
        let mut gates = Vec::with_capacity(pending.len());
        let mut windows = Vec::with_capacity(pending.len());
        for (key, limit) in pending {
            match self.gate(&key).try_lock_owned() {
                Ok(gate) => {
                    gates.push(gate);
                    windows.push((key, limit));
                }
                Err(_) => self.refilled_ahead(&key, None),
            }
        }
        for chunk in windows.chunks(BATCH) {
            self.ahead_statements.fetch_add(1, Ordering::Relaxed);
            match self.reserve_blocks(chunk).await {
                Ok(mut reserved) => {
                    for (key, _) in chunk {
                        self.refilled_ahead(key, reserved.remove(key));
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, windows = chunk.len(), "reserving limit blocks ahead failed");
                    for (key, _) in chunk {
                        self.refilled_ahead(key, None);
                    }
                }
            }
        }
        drop(gates);
    }

    /// Adds a block reserved ahead (`(granted, used after)`) to the window,
    /// or none (the row is at its limit, or the statement failed: the next
    /// request that finds the block empty reserves one itself).
    fn refilled_ahead(&self, key: &WindowKey, reserved: Option<(u64, u64)>) {
        let mut local = self.local.lock().unwrap();
        let Some(entry) = local.get_mut(key) else {
            return;
        };
        entry.ahead = false;
        if let Some((granted, used)) = reserved {
            self.reserved_ahead.fetch_add(1, Ordering::Relaxed);
            entry.available += granted;
            entry.used_seen = entry.used_seen.max(used);
            entry.last_grant = granted;
        }
    }

    /// One statement for the next block of each window below its limit:
    /// what [`Blocks::reserve_block_alone`] adds to one existing row. Rows are
    /// locked in key order first, so two servers' batches never deadlock.
    pub(super) async fn reserve_blocks(
        &self,
        windows: &[(WindowKey, u64)],
    ) -> sqlx::Result<HashMap<WindowKey, (u64, u64)>> {
        let values = typed_value_rows(
            Backend::Postgres,
            windows.len(),
            &["TEXT", "BIGINT", "BIGINT", "BIGINT"],
        );
        let block = block_sql("v.lim", "v.cap");
        // Built from fixed fragments only.
        let sql = format!(
            "WITH v(scope, window_start, lim, cap) AS (VALUES {values}), {LOCKED_IN_KEY_ORDER} \
             UPDATE limit_windows AS w SET used = w.used + {block}, last_grant = {block} \
             FROM v WHERE w.scope = v.scope AND w.window_start = v.window_start \
                 AND w.used < v.lim \
                 AND (w.scope, w.window_start) IN (SELECT scope, window_start FROM locked) \
             RETURNING w.scope, w.window_start, w.used, w.last_grant"
        );
        let limits_and_caps = |limit| [limit as i64, block_cap(limit) as i64];
        batch_query(sql, windows.iter().map(|(k, l)| (k, *l)), limits_and_caps)
            .fetch_all(&self.db.pool)
            .await?
            .into_iter()
            .map(reserved_row)
            .collect()
    }
}

/// A row a reservation returned (`scope`, `window_start`, `used`,
/// `last_grant`) as its window and `(granted, used after)`.
pub(super) fn reserved_row(row: sqlx::any::AnyRow) -> sqlx::Result<(WindowKey, (u64, u64))> {
    let scope: String = row.try_get("scope")?;
    let start: i64 = row.try_get("window_start")?;
    let used: i64 = row.try_get("used")?;
    let granted: i64 = row.try_get("last_grant")?;
    Ok(((scope, start), (granted.max(0) as u64, used.max(0) as u64)))
}
