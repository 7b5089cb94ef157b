//! Fixed-window rate limiters keyed by any string (an API key, a user, a
//! client IP, a webhook token). Every area with a "N per minute" rule builds
//! one of these instead of writing its own counter.
//!
//! Windows are aligned to multiples of their length since the Unix epoch, so
//! `X-RateLimit-Reset` is the same instant for every caller. State lives in
//! memory, sharded to keep lock hold times short under load; with several
//! server processes each enforces its own window (the API-key limits are
//! shared instead: `shared_limiter.rs`, docs/decisions/platform.md, "Limits
//! across servers").

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;

use super::clock::SharedClock;

const SHARDS: usize = 16;
/// Above this many keys in a shard, stale windows are swept on insert.
const SWEEP_AT: usize = 4096;

/// Optional burst tolerance: once the limit is reached, up to `factor` times
/// the limit is still accepted while the burst has lasted less than `max_ms`.
#[derive(Debug, Clone, Copy)]
pub struct Burst {
    pub factor: u32,
    pub max_ms: i64,
}

/// The spec/1 "Limits" rule 3: bursts up to 2x the limit lasting under 5 s.
pub const API_BURST: Burst = Burst {
    factor: 2,
    max_ms: 5_000,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    /// Requests left in the window before the limit (burst not counted).
    pub remaining: u32,
    /// Requests counted in the current window, including this one if allowed.
    pub used: u32,
    /// When the window resets, in milliseconds since the epoch.
    pub reset_at_ms: i64,
    /// Whole seconds until the window resets (at least 1), for `Retry-After`.
    pub retry_after_secs: u64,
}

#[derive(Debug, Clone, Copy)]
struct Window {
    start_ms: i64,
    count: u32,
    burst_started_ms: Option<i64>,
}

#[derive(Debug)]
pub struct Limiter {
    window_ms: i64,
    burst: Option<Burst>,
    clock: SharedClock,
    hasher: RandomState,
    shards: Vec<Mutex<HashMap<String, Window>>>,
}

impl Limiter {
    pub fn new(window: std::time::Duration, burst: Option<Burst>, clock: SharedClock) -> Limiter {
        Limiter {
            window_ms: window.as_millis().max(1) as i64,
            burst,
            clock,
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    fn shard(&self, key: &str) -> &Mutex<HashMap<String, Window>> {
        &self.shards[self.hasher.hash_one(key) as usize % SHARDS]
    }

    /// Counts one request for `key` against `limit` and says whether it may pass.
    pub fn check(&self, key: &str, limit: u32) -> Decision {
        let now = self.clock.now_ms();
        let start = now - now.rem_euclid(self.window_ms);
        let reset_at_ms = start + self.window_ms;
        let mut shard = self.shard(key).lock().unwrap();
        if shard.len() > SWEEP_AT {
            shard.retain(|_, w| w.start_ms == start);
        }
        let window = match shard.get_mut(key) {
            Some(w) => w,
            None => shard.entry(key.to_string()).or_insert(Window {
                start_ms: start,
                count: 0,
                burst_started_ms: None,
            }),
        };
        if window.start_ms != start {
            *window = Window {
                start_ms: start,
                count: 0,
                burst_started_ms: None,
            };
        }
        let allowed = if window.count < limit {
            true
        } else {
            match self.burst {
                Some(b) if window.count < limit.saturating_mul(b.factor) => {
                    let began = *window.burst_started_ms.get_or_insert(now);
                    now - began < b.max_ms
                }
                _ => false,
            }
        };
        if allowed {
            window.count += 1;
        }
        Decision {
            allowed,
            limit,
            remaining: limit.saturating_sub(window.count),
            used: window.count,
            reset_at_ms,
            retry_after_secs: ((reset_at_ms - now + 999) / 1000).max(1) as u64,
        }
    }

    /// Requests counted for `key` in the current window, without counting one.
    pub fn used(&self, key: &str) -> u32 {
        let now = self.clock.now_ms();
        let start = now - now.rem_euclid(self.window_ms);
        self.shard(key)
            .lock()
            .unwrap()
            .get(key)
            .filter(|w| w.start_ms == start)
            .map_or(0, |w| w.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::clock::ManualClock;
    use chrono::TimeZone;
    use std::sync::Arc;
    use std::time::Duration;

    fn clock() -> Arc<ManualClock> {
        ManualClock::new(chrono::Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap())
    }

    #[test]
    fn limit_then_reset_at_the_next_window() {
        let clock = clock();
        let limiter = Limiter::new(Duration::from_secs(60), None, clock.clone());
        for i in 0..10 {
            let d = limiter.check("k", 10);
            assert!(d.allowed);
            assert_eq!(d.remaining, 9 - i);
        }
        let denied = limiter.check("k", 10);
        assert!(!denied.allowed);
        assert_eq!(denied.retry_after_secs, 60);
        // Other keys are independent.
        assert!(limiter.check("other", 10).allowed);
        clock.advance(Duration::from_secs(30));
        assert_eq!(limiter.check("k", 10).retry_after_secs, 30);
        clock.advance(Duration::from_secs(30));
        assert!(limiter.check("k", 10).allowed);
        assert_eq!(limiter.used("k"), 1);
    }

    #[test]
    fn short_bursts_up_to_twice_the_limit_pass() {
        let clock = clock();
        let limiter = Limiter::new(Duration::from_secs(60), Some(API_BURST), clock.clone());
        for _ in 0..10 {
            assert!(limiter.check("k", 10).allowed);
        }
        // The burst begins at the 11th request and may last under 5 seconds.
        for _ in 0..5 {
            assert!(limiter.check("k", 10).allowed);
        }
        clock.advance(Duration::from_millis(4_900));
        for _ in 0..5 {
            assert!(limiter.check("k", 10).allowed);
        }
        // 2x reached.
        assert!(!limiter.check("k", 10).allowed);
    }

    #[test]
    fn a_burst_longer_than_five_seconds_is_cut_off() {
        let clock = clock();
        let limiter = Limiter::new(Duration::from_secs(60), Some(API_BURST), clock.clone());
        for _ in 0..11 {
            assert!(limiter.check("k", 10).allowed);
        }
        clock.advance(Duration::from_secs(5));
        let d = limiter.check("k", 10);
        assert!(!d.allowed);
        assert_eq!(d.remaining, 0);
    }
}
