//! Monthly quota counting (spec/1 "Limits" rule 1), independent of the
//! per-minute window.
//!
//! On SQLite (one server) each subject's counter for the current billing
//! period lives in memory, seeded from the daily rollups the first time the
//! subject is seen in that period, so the hot path reads no database. On
//! PostgreSQL the counter is a `limit_windows` row every server reserves
//! from (`platform::shared_limiter`), seeded from the same rollups.

use std::collections::HashMap;
use std::sync::Mutex;

use super::store::{self, QuotaSubject};
use crate::accounts::service::billing_period;
use crate::api_keys::VerifiedKey;
use crate::error::{ApiError, ApiResult};
use crate::platform::shared_limiter::Window;
use crate::state::AppState;

/// From this share of the quota on, responses carry `X-Quota-Pct`.
pub const QUOTA_WARNING_PCT: u64 = 80;

#[derive(Debug, Clone, Copy)]
struct Counter {
    period_start: i64,
    used: u64,
}

impl Counter {
    /// Counts one request: the count after it, or `None` when the quota is
    /// used up.
    fn take(&mut self, quota: u64) -> Option<u64> {
        if self.used >= quota {
            return None;
        }
        self.used += 1;
        Some(self.used)
    }
}

#[derive(Debug, Default)]
pub struct QuotaCounters {
    counters: Mutex<HashMap<QuotaSubject, Counter>>,
}

/// The subject, quota (`None`: unlimited) and billing day a key's requests
/// count against.
pub fn subject_of(state: &AppState, key: &VerifiedKey) -> (QuotaSubject, Option<u64>, u32) {
    match &key.reseller {
        Some(c) => (
            QuotaSubject::ResellerClient(c.id),
            Some(c.monthly_quota),
            c.billing_day,
        ),
        None => (
            QuotaSubject::Account(key.account_id),
            state.plan_limits(key.plan).monthly_quota,
            key.billing_day,
        ),
    }
}

impl QuotaCounters {
    /// Counts one request; 429 when the quota is used up. Returns the share
    /// used (percent) when it is at or above the warning level.
    pub async fn consume(&self, state: &AppState, key: &VerifiedKey) -> ApiResult<Option<u64>> {
        let (subject, quota, billing_day) = subject_of(state, key);
        let Some(quota) = quota else {
            return Ok(None);
        };
        let now = state.clock.now_ms();
        let (period_start, reset_at) = billing_period(billing_day, now);
        let used = match &state.limits.shared {
            Some(shared) => {
                let scope = subject.scope();
                let window = Window {
                    scope: &scope,
                    start: period_start,
                    ends_at: reset_at,
                    limit: quota,
                    burst: None,
                };
                let seed = || async move {
                    Ok(store::billable_since(&state.db, subject, period_start).await? as u64)
                };
                let grant = shared.take_seeded(window, seed).await?;
                grant.allowed.then_some(grant.used)
            }
            None => match self.take_current(subject, quota, period_start) {
                Some(taken) => taken,
                None => Box::pin(self.consume_local(state, subject, quota, period_start)).await?,
            },
        };
        let Some(used) = used else {
            return Err(ApiError::RateLimited {
                retry_after: ((reset_at - now) / 1000).max(1) as u64,
            });
        };
        let pct = used * 100 / quota.max(1);
        Ok((pct >= QUOTA_WARNING_PCT).then_some(pct))
    }

    /// The common case, one lock: this period's counter exists. `None` when
    /// it must be seeded first ([`QuotaCounters::consume_local`]); else the
    /// count after this request, or `None` inside when the quota is used up.
    fn take_current(
        &self,
        subject: QuotaSubject,
        quota: u64,
        period_start: i64,
    ) -> Option<Option<u64>> {
        let mut counters = self.counters.lock().unwrap();
        counters
            .get_mut(&subject)
            .filter(|c| c.period_start == period_start)
            .map(|c| c.take(quota))
    }

    /// The in-process counter seeded from the rollups: the count after this
    /// request, or `None` when the quota is used up.
    async fn consume_local(
        &self,
        state: &AppState,
        subject: QuotaSubject,
        quota: u64,
        period_start: i64,
    ) -> ApiResult<Option<u64>> {
        let used = store::billable_since(&state.db, subject, period_start).await? as u64;
        let mut counters = self.counters.lock().unwrap();
        let counter = counters
            .entry(subject)
            .and_modify(|c| {
                if c.period_start != period_start {
                    *c = Counter { period_start, used };
                }
            })
            .or_insert(Counter { period_start, used });
        Ok(counter.take(quota))
    }

    /// Requests counted this period: the shared row on PostgreSQL, this
    /// process's counter on SQLite, else the rollups.
    pub async fn used(
        &self,
        state: &AppState,
        subject: QuotaSubject,
        period_start: i64,
    ) -> ApiResult<u64> {
        if let Some(shared) = &state.limits.shared {
            let counted = shared.used(&subject.scope(), period_start).await?;
            if counted > 0 {
                return Ok(counted);
            }
        } else if let Some(c) = self
            .counters
            .lock()
            .unwrap()
            .get(&subject)
            .filter(|c| c.period_start == period_start)
        {
            return Ok(c.used);
        }
        Ok(store::billable_since(&state.db, subject, period_start).await? as u64)
    }
}
