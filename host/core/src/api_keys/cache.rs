//! The verification cache of the API-key layer: what the database said
//! about a presented key, for [`CACHE_TTL`], negative answers included (a
//! flood of bad keys must not reach the database either).
//!
//! Every authenticated request reads it, so a hit is one SHA-256 of the
//! presented key (computed anyway; the key itself is never kept), a shared
//! lock on one of [`SHARDS`] maps and an `Arc` clone. It replaced a `moka`
//! cache whose per-read bookkeeping (access-order queues, housekeeping run
//! on the caller's thread) cost about as much as the rest of the API-key
//! layer together, and which this cache does not need: entries expire by
//! age alone, and a full shard drops its expired entries, then, if still
//! full, everything (a reload is one indexed read per key).
//!
//! [`VerificationCache::invalidate_all`] bumps a generation: a verification
//! that read the database before the bump does not store its (possibly
//! stale) answer after it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use super::service::VerifiedKey;

/// The SHA-256 of a presented key.
pub type KeyDigest = [u8; 32];

/// Shards of the map, chosen by the digest's first byte.
const SHARDS: usize = 16;

/// What one cached verification answers: the key, or `None` for "not a
/// live key of ours".
pub type Verification = Option<Arc<VerifiedKey>>;

struct Entry {
    verification: Verification,
    stored_at: Instant,
}

pub struct VerificationCache {
    shards: Vec<RwLock<HashMap<KeyDigest, Entry>>>,
    ttl: Duration,
    per_shard: usize,
    generation: AtomicU64,
}

impl VerificationCache {
    /// A cache of about `capacity` entries that each live `ttl`.
    pub fn new(capacity: usize, ttl: Duration) -> VerificationCache {
        VerificationCache {
            shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
            ttl,
            per_shard: capacity.div_ceil(SHARDS).max(1),
            generation: AtomicU64::new(0),
        }
    }

    fn shard(&self, digest: &KeyDigest) -> &RwLock<HashMap<KeyDigest, Entry>> {
        &self.shards[usize::from(digest[0]) % SHARDS]
    }

    /// The cached verification of `digest`, unless missing or expired.
    pub fn get(&self, digest: &KeyDigest) -> Option<Verification> {
        let shard = self.shard(digest).read().unwrap_or_else(|e| e.into_inner());
        let entry = shard.get(digest)?;
        (entry.stored_at.elapsed() < self.ttl).then(|| entry.verification.clone())
    }

    /// The generation to pass to [`VerificationCache::insert`], read before
    /// the database is.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Stores what the database said, unless the cache was invalidated
    /// since `generation` was read.
    pub fn insert(&self, digest: KeyDigest, verification: Verification, generation: u64) {
        let mut shard = self
            .shard(&digest)
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if self.generation() != generation {
            return;
        }
        if shard.len() >= self.per_shard && !shard.contains_key(&digest) {
            let ttl = self.ttl;
            shard.retain(|_, e| e.stored_at.elapsed() < ttl);
            if shard.len() >= self.per_shard {
                shard.clear();
            }
        }
        shard.insert(
            digest,
            Entry {
                verification,
                stored_at: Instant::now(),
            },
        );
    }

    /// Forgets every verification (after a revocation, a plan change, a
    /// suspension or a reseller-client change).
    pub fn invalidate_all(&self) {
        // The bump comes first and each shard's lock is taken after it, so
        // an insert holding a shard either sees the new generation or ran
        // before the clear.
        self.generation.fetch_add(1, Ordering::AcqRel);
        for shard in &self.shards {
            shard.write().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(n: u8) -> KeyDigest {
        let mut d = [0u8; 32];
        d[0] = n;
        d[1] = n.wrapping_mul(7);
        d
    }

    #[test]
    fn entries_expire_and_invalidation_wins_over_a_slow_read() {
        let cache = VerificationCache::new(100, Duration::from_millis(50));
        let g = cache.generation();
        cache.insert(digest(1), None, g);
        assert!(matches!(cache.get(&digest(1)), Some(None)));
        std::thread::sleep(Duration::from_millis(60));
        assert!(cache.get(&digest(1)).is_none(), "expired");

        // A verification that read the database before an invalidation
        // must not store its answer after it.
        let before = cache.generation();
        cache.invalidate_all();
        cache.insert(digest(2), None, before);
        assert!(cache.get(&digest(2)).is_none());
        cache.insert(digest(2), None, cache.generation());
        assert!(cache.get(&digest(2)).is_some());
        cache.invalidate_all();
        assert!(cache.get(&digest(2)).is_none());
    }

    #[test]
    fn a_full_shard_stays_bounded() {
        let cache = VerificationCache::new(SHARDS * 4, Duration::from_secs(60));
        for n in 0..=255u8 {
            // All in shard 0.
            let mut d = digest(0);
            d[5] = n;
            cache.insert(d, None, cache.generation());
        }
        let held: usize = cache.shards.iter().map(|s| s.read().unwrap().len()).sum();
        assert!(held <= 4, "{held}");
    }
}
