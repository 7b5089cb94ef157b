//! The warmup ramp of spec/3: `current_effective_limit = min(daily_send_limit,
//! start_volume + days x increment)`, where days are whole days since
//! `warmup_started_at` (day 0 sends `start_volume`). The sender reads the cap
//! from here; the dashboard shows it.
//!
//! A paused ramp (`paused_at` set) is frozen at the value it had when it was
//! paused: its days stop counting at `paused_at`, and resume shifts
//! `started_at` forward by the pause so that counting goes on from there. A
//! ramp with warmup on that has not started yet caps at day 0
//! (`start_volume`): an active sequence always has a start time once warmup
//! is on, so this only matters for what the dashboard shows before
//! activation, and it errs on the safe side if a start time is ever missing.

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

    /// Whether the ramp caps sending: warmup on, or paused (a pause turns
    /// warmup off but keeps the frozen cap until resume or reset).
    fn applies(&self) -> bool {
        self.warmup_enabled || (self.started_at.is_some() && self.paused_at.is_some())
    }

    /// The cap on sends in a day at `now`.
    pub fn current_effective_limit(&self, now: i64) -> i64 {
        if !self.applies() {
            return self.daily_send_limit;
        }
        let climbed = self
            .start_volume
            .saturating_add(self.days_since_start(now).saturating_mul(self.increment));
        self.daily_send_limit.min(climbed).max(1)
    }

    /// Days from day 0 until the ramp reaches `daily_send_limit`.
    pub fn ramp_days(&self) -> i64 {
        let gap = (self.daily_send_limit - self.start_volume).max(0);
        let step = self.increment.max(1);
        (gap + step - 1) / step
    }

    /// Days left at `now` until the cap is the daily limit: 0 when it is
    /// already; a paused ramp counts the days it still needs after resume.
    pub fn days_until_full_volume(&self, now: i64) -> i64 {
        if self.current_effective_limit(now) >= self.daily_send_limit {
            0
        } else {
            (self.ramp_days() - self.days_since_start(now)).max(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(started_at: Option<i64>, paused_at: Option<i64>, enabled: bool) -> Ramp {
        Ramp {
            warmup_enabled: enabled,
            daily_send_limit: 50,
            start_volume: 10,
            increment: 5,
            started_at,
            paused_at,
        }
    }

    #[test]
    fn the_cap_climbs_by_the_increment_each_whole_day_up_to_the_limit() {
        let r = ramp(Some(0), None, true);
        assert_eq!(r.current_effective_limit(DAY_MS - 1), 10);
        assert_eq!(r.current_effective_limit(3 * DAY_MS), 25);
        assert_eq!(r.days_until_full_volume(3 * DAY_MS), 5);
        assert_eq!(r.current_effective_limit(8 * DAY_MS), 50);
        assert_eq!(r.current_effective_limit(100 * DAY_MS), 50);
        assert_eq!(r.days_until_full_volume(8 * DAY_MS), 0);
        assert_eq!(r.ramp_days(), 8);
    }

    #[test]
    fn a_paused_ramp_is_frozen_and_an_unstarted_one_caps_at_day_zero() {
        let paused = ramp(Some(0), Some(2 * DAY_MS + 5), false);
        assert_eq!(paused.current_effective_limit(30 * DAY_MS), 20);
        assert_eq!(paused.days_since_start(30 * DAY_MS), 2);
        assert_eq!(paused.days_until_full_volume(30 * DAY_MS), 6);
        assert_eq!(ramp(None, None, true).current_effective_limit(DAY_MS), 10);
        assert_eq!(ramp(None, None, false).current_effective_limit(DAY_MS), 50);
        // Warmup turned off without a pause: no cap.
        assert_eq!(ramp(Some(0), None, false).current_effective_limit(0), 50);
    }
}
