//! Monthly quota counting (spec/1 "Limits" rule 1), independent of the
//! per-minute window.
//!
//! Each process keeps a counter per quota subject for the current billing
//! period, seeded from the usage table the first time the subject is seen in
//! that period and then counted in memory, so the hot path stays free of
//! database reads.

use std::collections::HashMap;
use std::sync::Mutex;

use super::store::{self, QuotaSubject};
use crate::accounts::service::billing_period;
use crate::api_keys::VerifiedKey;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// From this share of the quota on, responses carry `X-Quota-Pct`.
pub const QUOTA_WARNING_PCT: u64 = 80;

#[derive(Debug, Clone, Copy)]
struct Counter {
    period_start: i64,
    used: u64,
}

#[derive(Debug, Default)]
pub struct QuotaCounters {
    counters: Mutex<HashMap<QuotaSubject, Counter>>,
}

/// The subject, quota and billing day a key's requests count against.
pub fn subject_of(key: &VerifiedKey) -> (QuotaSubject, u64, u32) {
    match &key.reseller {
        Some(c) => (
            QuotaSubject::ResellerClient(c.id),
            c.monthly_quota,
            c.billing_day,
        ),
        None => (
            QuotaSubject::Account(key.account_id),
            key.plan.monthly_quota(),
            key.billing_day,
        ),
    }
}

impl QuotaCounters {
    /// Counts one request; 429 when the quota is used up. Returns the share
    /// used (percent) when it is at or above the warning level.
    pub async fn consume(&self, state: &AppState, key: &VerifiedKey) -> ApiResult<Option<u64>> {
        let (subject, quota, billing_day) = subject_of(key);
        let now = state.clock.now_ms();
        let (period_start, reset_at) = billing_period(billing_day, now);
        if !self.is_current(subject, period_start) {
            let used = store::billable_since(&state.db, subject, period_start).await? as u64;
            self.counters
                .lock()
                .unwrap()
                .entry(subject)
                .and_modify(|c| {
                    if c.period_start != period_start {
                        *c = Counter { period_start, used };
                    }
                })
                .or_insert(Counter { period_start, used });
        }
        let mut counters = self.counters.lock().unwrap();
        let counter = counters.get_mut(&subject).expect("seeded above");
        if counter.used >= quota {
            return Err(ApiError::RateLimited {
                retry_after: ((reset_at - now) / 1000).max(1) as u64,
            });
        }
        counter.used += 1;
        let pct = counter.used * 100 / quota.max(1);
        Ok((pct >= QUOTA_WARNING_PCT).then_some(pct))
    }

    fn is_current(&self, subject: QuotaSubject, period_start: i64) -> bool {
        self.counters
            .lock()
            .unwrap()
            .get(&subject)
            .is_some_and(|c| c.period_start == period_start)
    }

    /// Requests counted this period, when the subject has been seen.
    pub fn used(&self, subject: QuotaSubject, period_start: i64) -> Option<u64> {
        self.counters
            .lock()
            .unwrap()
            .get(&subject)
            .filter(|c| c.period_start == period_start)
            .map(|c| c.used)
    }
}
