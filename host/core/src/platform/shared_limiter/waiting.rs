//! Blocks that requests wait for, many windows to a statement.
//!
//! When a minute begins, every busy key finds its new window without a
//! block at once: with thousands of keys that was thousands of one-row
//! statements and commits in the first seconds of each minute, and on
//! PostgreSQL they set the slowest requests' latency. These reservations
//! cannot wait, so nothing is gathered on a timer: a lone reservation runs
//! at once as a single statement, and the windows that fall due while a
//! statement is in flight go together in the next one (a group commit).
//! Each window is still under its one-per-server gate, and the statements
//! do a single reservation's arithmetic, so grants stay exact.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::oneshot;

use super::{BATCH, Blocks, WindowKey, batch_query, block};
use crate::store::{Backend, typed_value_rows};

/// What a waiting request gets back.
#[derive(Debug)]
enum Answer {
    /// The block reserved (`(granted, used after)`), or none: the row is
    /// missing or at its limit.
    Reserved(Option<(u64, u64)>),
    /// Its own statement failed.
    Failed(sqlx::Error),
    /// Its batch failed (and left no trace: each statement is its own
    /// transaction); it reserves alone.
    Alone,
}

/// One window waiting for its block.
#[derive(Debug)]
struct Wanted {
    key: WindowKey,
    limit: u64,
    /// The window starts from zero, so a missing row is created.
    from_zero: bool,
    reply: oneshot::Sender<Answer>,
}

/// The windows waiting for a statement.
#[derive(Debug, Default)]
pub(super) struct Queue {
    pending: Vec<Wanted>,
    /// A task is running statements for them.
    running: bool,
}

impl Blocks {
    /// Reserves the next block of `key` below `limit`, creating the row
    /// when `from_zero`, together with the other windows waiting now. `None`
    /// when the row is missing (seeded windows) or at its limit.
    pub(super) async fn reserve_block(
        self: &Arc<Self>,
        key: &WindowKey,
        limit: u64,
        from_zero: bool,
    ) -> sqlx::Result<Option<(u64, u64)>> {
        let (reply, answer) = oneshot::channel();
        {
            let mut queue = self.waiting.lock().unwrap();
            queue.pending.push(Wanted {
                key: key.clone(),
                limit,
                from_zero,
                reply,
            });
            if !queue.running {
                queue.running = true;
                // A task of its own, so a request that goes away (its
                // client hung up) never strands the others' statement.
                tokio::spawn(self.clone().reserve_waiting());
            }
        }
        match answer.await {
            Ok(Answer::Reserved(reserved)) => Ok(reserved),
            Ok(Answer::Failed(e)) => Err(e),
            // The runtime is shutting down, or the batch failed.
            Err(_) | Ok(Answer::Alone) => self.reserve_block_alone(key, limit, from_zero).await,
        }
    }

    /// Runs statements until no window waits.
    async fn reserve_waiting(self: Arc<Self>) {
        let mut turn = Turn {
            blocks: &self,
            ended: false,
        };
        loop {
            let mut batch: Vec<Wanted> = {
                let mut queue = self.waiting.lock().unwrap();
                if queue.pending.is_empty() {
                    queue.running = false;
                    turn.ended = true;
                    return;
                }
                let n = queue.pending.len().min(BATCH);
                queue.pending.drain(..n).collect()
            };
            self.waiting_statements.fetch_add(1, Ordering::Relaxed);
            if batch.len() > 1 {
                self.reserve_many(batch).await;
                continue;
            }
            // Alone, the single-window statement: one round trip.
            let one = batch.pop().expect("a batch is never empty");
            let answer = match self
                .reserve_block_alone(&one.key, one.limit, one.from_zero)
                .await
            {
                Ok(reserved) => Answer::Reserved(reserved),
                Err(e) => Answer::Failed(e),
            };
            let _ = one.reply.send(answer);
        }
    }

    /// Reserves a block for each of `batch`: new rows in one insert, then
    /// existing ones below their limit in one update (the statement that
    /// reserves blocks ahead).
    async fn reserve_many(&self, batch: Vec<Wanted>) {
        let mut reserved: HashMap<WindowKey, (u64, u64)> = HashMap::new();
        let mut failed = false;
        let mut new: Vec<(&WindowKey, u64)> = batch
            .iter()
            .filter(|w| w.from_zero)
            .map(|w| (&w.key, w.limit))
            .collect();
        if !new.is_empty() {
            // Inserted in key order, as every batch locks its rows, so two
            // servers' batches wait for each other in one order.
            new.sort();
            match self.insert_rows(&new).await {
                Ok(inserted) => reserved = inserted,
                Err(e) => {
                    tracing::warn!(error = %e, windows = new.len(), "creating limit windows failed");
                    failed = true;
                }
            }
        }
        let existing: Vec<(WindowKey, u64)> = batch
            .iter()
            .filter(|w| !reserved.contains_key(&w.key))
            .map(|w| (w.key.clone(), w.limit))
            .collect();
        if !failed && !existing.is_empty() {
            match self.reserve_blocks(&existing).await {
                Ok(updated) => reserved.extend(updated),
                Err(e) => {
                    tracing::warn!(error = %e, windows = existing.len(), "reserving limit blocks failed");
                    failed = true;
                }
            }
        }
        for wanted in batch {
            let answer = match reserved.remove(&wanted.key) {
                Some(block) => Answer::Reserved(Some(block)),
                // Only what the statements answered for is known; the rest
                // reserve alone.
                None if failed => Answer::Alone,
                None => Answer::Reserved(None),
            };
            let _ = wanted.reply.send(answer);
        }
    }

    /// Creates the rows of windows not seen yet, each with its first block;
    /// answers for the rows it created (another server may have created
    /// the others).
    async fn insert_rows(
        &self,
        windows: &[(&WindowKey, u64)],
    ) -> sqlx::Result<HashMap<WindowKey, (u64, u64)>> {
        let values = typed_value_rows(
            Backend::Postgres,
            windows.len(),
            &["TEXT", "BIGINT", "BIGINT"],
        );
        // Built from fixed fragments only.
        let sql = format!(
            "INSERT INTO limit_windows AS w (scope, window_start, used, last_grant) \
             SELECT v.scope, v.window_start, v.first, v.first \
             FROM (VALUES {values}) AS v(scope, window_start, first) \
             ORDER BY v.scope, v.window_start \
             ON CONFLICT (scope, window_start) DO NOTHING \
             RETURNING w.scope, w.window_start, w.used, w.last_grant"
        );
        batch_query(sql, windows.iter().copied(), |limit| {
            [block(0, limit) as i64]
        })
        .fetch_all(&self.db.pool)
        .await?
        .into_iter()
        .map(super::ahead::reserved_row)
        .collect()
    }
}

/// The task's turn at the queue. Should the task end any other way than
/// by emptying the queue (a panic, or its runtime shutting down), the
/// windows left in the queue are answered by dropping their senders, so
/// their requests reserve alone, and the next window starts a new task
/// instead of waiting for this one forever.
struct Turn<'a> {
    blocks: &'a Blocks,
    ended: bool,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let mut queue = self
            .blocks
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        queue.running = false;
        queue.pending.clear();
    }
}
