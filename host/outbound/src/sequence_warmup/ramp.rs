//! The warmup ramp of spec/3: `current_effective_limit = min(daily_send_limit,
//! start_volume + days x increment)`, where days are whole days since
//! `warmup_started_at` (day 0 sends `start_volume`). The sender reads the cap
//! from here; the dashboard shows it.

/// The fields of a sequence the ramp reads.
#[derive(Debug, Clone, Copy)]
pub struct Ramp {
    pub warmup_enabled: bool,
    pub daily_send_limit: i64,
    pub start_volume: i64,
    pub increment: i64,
    pub started_at: Option<i64>,
    pub paused_at: Option<i64>,
}

const DAY_MS: i64 = 86_400_000;

impl Ramp {
    /// Whole days the ramp has climbed at `now`. A paused ramp stops
    /// climbing at the moment it was paused (resume shifts `started_at`).
    pub fn days_since_start(&self, now: i64) -> i64 {
        match self.started_at {
            Some(start) => {
                let until = self.paused_at.map_or(now, |p| p.min(now));
                (until - start).max(0) / DAY_MS
            }
            None => 0,
        }
    }

    /// The cap on sends in a day at `now`.
    pub fn current_effective_limit(&self, now: i64) -> i64 {
        let ramping = self.started_at.is_some() && (self.warmup_enabled || self.paused_at.is_some());
        if !ramping {
            return self.daily_send_limit;
        }
        let climbed = self
            .start_volume
            .saturating_add(self.days_since_start(now).saturating_mul(self.increment));
        self.daily_send_limit.min(climbed).max(1)
    }
}
