//! Injected time. Schedules, rate windows, caches and token expiry read the
//! clock through this trait so tests move time instead of sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, TimeZone, Utc};

pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;

    fn now(&self) -> DateTime<Utc> {
        ms_to_datetime(self.now_ms())
    }
}

pub type SharedClock = Arc<dyn Clock>;

/// The wall clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        Utc::now().timestamp_millis()
    }
}

/// A clock that only moves when told to.
#[derive(Debug)]
pub struct ManualClock {
    now_ms: AtomicI64,
}

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Arc<ManualClock> {
        Arc::new(ManualClock {
            now_ms: AtomicI64::new(start.timestamp_millis()),
        })
    }

    pub fn advance(&self, by: std::time::Duration) {
        self.now_ms
            .fetch_add(by.as_millis() as i64, Ordering::SeqCst);
    }

    pub fn set(&self, to: DateTime<Utc>) {
        self.now_ms.store(to.timestamp_millis(), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

pub fn ms_to_datetime(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

/// Formats stored milliseconds as the spec's ISO 8601 UTC `<timestamp>`.
pub fn iso(ms: i64) -> String {
    ms_to_datetime(ms).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let start = Utc.with_ymd_and_hms(2026, 1, 31, 23, 59, 0).unwrap();
        let clock = ManualClock::new(start);
        assert_eq!(clock.now(), start);
        clock.advance(std::time::Duration::from_secs(120));
        assert_eq!(iso(clock.now_ms()), "2026-02-01T00:01:00Z");
    }
}
