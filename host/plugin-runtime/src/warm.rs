//! Warm instances of reply classifiers that use no AI, kept between one
//! account's batches for a short while.
//!
//! A component starts from scratch in every instance. The rules classifier
//! compiles its phrase patterns and fills its matchers' caches in each one,
//! which cost more than classifying the 200 replies of an inbox pass. A
//! batch already shares one instance among one account's replies
//! (`classify_replies`); a warm instance extends that to the same account's
//! next batches, within the same bounds: one account, one loaded version of
//! the plugin, no network, no AI bridge, each reply its own call with its
//! own CPU budget. An instance is dropped after a trap, a spent budget or a
//! timeout, after [`IDLE`] unused, after [`MAX_CALLS`] replies, and when its
//! plugin is reloaded or removed. While warm it holds one of the pool's
//! instance slots, so at most [`MAX_WARM`] are kept.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use crate::bindings::reply_classifier::ReplyClassifier;
use crate::calls::Session;
use crate::runtime::{Inner, LoadedPlugin};

/// How long an unused instance is kept.
pub(crate) const IDLE: Duration = Duration::from_secs(30);
/// Replies an instance classifies before it is replaced, which bounds what
/// a guest's heap can accumulate.
pub(crate) const MAX_CALLS: u64 = 20_000;
/// Instances kept at once (each holds a pool slot and its memory).
const MAX_WARM: usize = 8;

/// A reply classifier's instance with its store.
pub(crate) struct Warm {
    pub plugin: Arc<LoadedPlugin>,
    pub account_id: i64,
    pub session: Session,
    pub instance: ReplyClassifier,
    /// Replies classified in this instance so far.
    pub calls: u64,
    idle_since: Instant,
}

impl Warm {
    pub(crate) fn new(
        plugin: Arc<LoadedPlugin>,
        account_id: i64,
        session: Session,
        instance: ReplyClassifier,
        calls: u64,
    ) -> Warm {
        Warm {
            plugin,
            account_id,
            session,
            instance,
            calls,
            idle_since: Instant::now(),
        }
    }
}

#[derive(Default)]
pub(crate) struct WarmInstances {
    kept: Mutex<Vec<Warm>>,
}

impl WarmInstances {
    /// Takes the warm instance of `plugin` (this loaded version) for
    /// `account_id`, if one is kept; nobody else can use it meanwhile.
    pub(crate) fn take(&self, plugin: &Arc<LoadedPlugin>, account_id: i64) -> Option<Warm> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let expired = sweep(&mut kept);
        let found = kept
            .iter()
            .position(|w| Arc::ptr_eq(&w.plugin, plugin) && w.account_id == account_id)
            .map(|i| kept.swap_remove(i));
        drop(kept);
        // Stores are dropped outside the lock: that returns their memory.
        drop(expired);
        found
    }

    /// Keeps `warm` for the account's next batch, unless it has done its
    /// share of calls; the oldest instance makes room when all are taken.
    pub(crate) fn put(&self, mut warm: Warm) {
        if warm.calls >= MAX_CALLS {
            return;
        }
        warm.idle_since = Instant::now();
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let mut dropped = sweep(&mut kept);
        // Another batch of the account may have kept one meanwhile.
        if let Some(i) = kept
            .iter()
            .position(|w| Arc::ptr_eq(&w.plugin, &warm.plugin) && w.account_id == warm.account_id)
        {
            dropped.push(kept.swap_remove(i));
        }
        if kept.len() >= MAX_WARM
            && let Some(oldest) = (0..kept.len()).min_by_key(|&i| kept[i].idle_since)
        {
            dropped.push(kept.swap_remove(oldest));
        }
        kept.push(warm);
        drop(kept);
        drop(dropped);
    }

    /// Drops every instance unused for [`IDLE`].
    pub(crate) fn sweep(&self) {
        let expired = sweep(&mut self.kept.lock().unwrap_or_else(PoisonError::into_inner));
        drop(expired);
    }

    pub(crate) fn len(&self) -> usize {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Removes the instances unused for [`IDLE`] and hands them back to be
/// dropped.
fn sweep(kept: &mut Vec<Warm>) -> Vec<Warm> {
    let mut expired = Vec::new();
    let mut i = 0;
    while i < kept.len() {
        if kept[i].idle_since.elapsed() >= IDLE {
            expired.push(kept.swap_remove(i));
        } else {
            i += 1;
        }
    }
    expired
}

/// Sweeps the runtime's warm instances every [`IDLE`] until the runtime is
/// dropped, so an inbox that goes quiet does not keep its instances.
pub(crate) fn spawn_sweeper(inner: Weak<Inner>, handle: &tokio::runtime::Handle) {
    handle.spawn(async move {
        let mut every = tokio::time::interval(IDLE);
        loop {
            every.tick().await;
            match inner.upgrade() {
                Some(inner) => inner.warm.sweep(),
                None => return,
            }
        }
    });
}
