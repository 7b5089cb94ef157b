//! The ramp and the day's schedule, as pure functions of the operator's
//! `[smart_warmup]` settings and the time.
//!
//! The warmup day is the calendar date in the settings' time zone. Ramp day
//! 0 is the date of `ramp_origin` (the join, shifted forward by the time
//! spent paused or failed); the volume of ramp day `d` is
//! `min(target_volume, start_volume + d x daily_increase)`, and the member is
//! completed once the target has been the volume for `hold_days` days.
//!
//! A day's volume is spread over the working hours in equal slots, each
//! member shifted within its slot by an offset of its own so members do not
//! all send at the same instant; without `spread_over_day` every slot is
//! due at the start of the day.

use chrono::{Datelike, NaiveDate, TimeZone};
use chrono_tz::Tz;

use outreach_core::config::SmartWarmupConfig;

const DAY_MS: i64 = 86_400_000;

/// The settings the ramp and the schedule read, parsed once.
#[derive(Debug, Clone)]
pub struct Plan {
    pub start: i64,
    pub increase: i64,
    pub target: i64,
    pub hold_days: i64,
    pub zone: Tz,
    /// Working hours, first hour and end hour (exclusive).
    pub hours: (u32, u32),
    pub spread: bool,
}

impl Plan {
    pub fn from_config(c: &SmartWarmupConfig) -> Plan {
        // The configuration was validated at start-up.
        Plan {
            start: i64::from(c.start_volume),
            increase: i64::from(c.daily_increase),
            target: i64::from(c.target_volume),
            hold_days: i64::from(c.hold_days),
            zone: c.zone().unwrap_or(chrono_tz::UTC),
            hours: c.hours().unwrap_or((8, 18)),
            spread: c.spread_over_day,
        }
    }

    /// The warmup day of `ms`: days since the common era of its local date.
    pub fn day(&self, ms: i64) -> i64 {
        i64::from(self.date(ms).num_days_from_ce())
    }

    fn date(&self, ms: i64) -> NaiveDate {
        chrono::DateTime::from_timestamp_millis(ms)
            .unwrap_or_default()
            .with_timezone(&self.zone)
            .date_naive()
    }

    /// The instant local hour `hour` (0-24) of warmup day `day` begins.
    fn at_hour(&self, day: i64, hour: u32) -> i64 {
        let date = NaiveDate::from_num_days_from_ce_opt(day as i32).unwrap_or_default();
        let (date, hour) = if hour >= 24 {
            (date.succ_opt().unwrap_or(date), hour - 24)
        } else {
            (date, hour)
        };
        let local = date.and_hms_opt(hour, 0, 0).unwrap_or_default();
        // A clock change can skip or repeat the hour: take its earliest
        // existing instant, else an hour later.
        self.zone
            .from_local_datetime(&local)
            .earliest()
            .or_else(|| {
                self.zone
                    .from_local_datetime(&(local + chrono::Duration::hours(1)))
                    .earliest()
            })
            .map_or(day * DAY_MS, |t| t.timestamp_millis())
    }

    /// The ramp day of `now` for a member whose ramp began at `origin`.
    pub fn ramp_day(&self, origin: i64, now: i64) -> i64 {
        (self.day(now) - self.day(origin)).max(0)
    }

    /// The daily volume of ramp day `d`.
    pub fn volume(&self, d: i64) -> i64 {
        (self.start + d * self.increase).min(self.target)
    }

    /// The first ramp day whose volume is the target.
    pub fn days_to_target(&self) -> i64 {
        if self.start >= self.target {
            0
        } else if self.increase == 0 {
            i64::MAX / 4
        } else {
            (self.target - self.start + self.increase - 1) / self.increase
        }
    }

    /// The ramp day on which the member is completed: the target has then
    /// been the volume for `hold_days` days.
    pub fn completion_day(&self) -> i64 {
        self.days_to_target().saturating_add(self.hold_days)
    }

    /// `warmup_progress_pct` on ramp day `d`, one decimal.
    pub fn progress_pct(&self, d: i64) -> f64 {
        let end = self.completion_day();
        if end == 0 {
            return 100.0;
        }
        ((d.min(end) as f64 * 1000.0 / end as f64).round() / 10.0).min(100.0)
    }

    /// When the volume next grows (the start of the next day), or `None` at
    /// the target.
    pub fn next_ramp_up_at(&self, origin: i64, now: i64) -> Option<i64> {
        let d = self.ramp_day(origin, now);
        (self.volume(d + 1) > self.volume(d)).then(|| self.at_hour(self.day(now) + 1, 0))
    }

    /// The send times of a day's `volume` messages for the member whose
    /// offset within a slot is `offset` (0.0-1.0), ascending.
    pub fn slots(&self, day: i64, volume: i64, offset: f64) -> Vec<i64> {
        if volume <= 0 {
            return Vec::new();
        }
        if !self.spread {
            return vec![self.at_hour(day, 0); volume as usize];
        }
        let open = self.at_hour(day, self.hours.0);
        let close = self.at_hour(day, self.hours.1);
        let slot = (close - open) as f64 / volume as f64;
        (0..volume)
            .map(|i| open + (slot * (i as f64 + offset)) as i64)
            .collect()
    }

    /// How many of the day's slots are due at `now`, and when the next one
    /// is (the first slot of the next day when none is left today).
    pub fn due(
        &self,
        now: i64,
        volume_today: i64,
        volume_tomorrow: i64,
        offset: f64,
    ) -> (i64, i64) {
        let day = self.day(now);
        let slots = self.slots(day, volume_today, offset);
        let due = slots.iter().filter(|t| **t <= now).count() as i64;
        let next = slots
            .iter()
            .copied()
            .find(|t| *t > now)
            .or_else(|| {
                self.slots(day + 1, volume_tomorrow.max(1), offset)
                    .first()
                    .copied()
            })
            .unwrap_or(now + DAY_MS);
        (due, next)
    }
}

/// A member's offset within its slots, stable for its id.
pub fn offset(send_account_id: i64) -> f64 {
    // A multiplicative hash spreads consecutive ids over the slot.
    let h = (send_account_id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
    h as f64 / (1u64 << 24) as f64
}

#[cfg(test)]
mod unit {
    use super::*;

    fn plan(spread: bool) -> Plan {
        Plan::from_config(&SmartWarmupConfig {
            spread_over_day: spread,
            ..SmartWarmupConfig::default()
        })
    }

    const NOV_21_NOON: i64 = 1_795_262_400_000;

    #[test]
    fn the_ramp_climbs_holds_and_completes() {
        let p = plan(true);
        let volumes: Vec<i64> = (0..22).map(|d| p.volume(d)).collect();
        assert_eq!(&volumes[..4], &[2, 4, 6, 8]);
        assert_eq!(volumes[19], 40);
        assert_eq!(volumes[21], 40);
        assert_eq!(p.days_to_target(), 19);
        assert_eq!(p.completion_day(), 33);
        assert_eq!(p.progress_pct(0), 0.0);
        assert_eq!(p.progress_pct(11), 33.3);
        assert_eq!(p.progress_pct(40), 100.0);
    }

    #[test]
    fn a_day_is_spread_over_the_working_hours() {
        let p = plan(true);
        let day = p.day(NOV_21_NOON);
        let slots = p.slots(day, 4, 0.5);
        let open = NOV_21_NOON - 4 * 3_600_000;
        let minutes = |m: i64| open + m * 60_000;
        // 10 hours in four slots of 150 minutes, each taken at its middle.
        assert_eq!(
            slots,
            vec![minutes(75), minutes(225), minutes(375), minutes(525)]
        );
        // At noon the first two (09:15, 11:45) are due; the next is 14:15.
        assert_eq!(p.due(NOV_21_NOON, 4, 6, 0.5), (2, minutes(375)));
        // Without spreading, the whole day is due at once.
        assert_eq!(plan(false).due(NOV_21_NOON, 4, 6, 0.5).0, 4);
    }

    #[test]
    fn the_working_hours_follow_the_time_zone() {
        let p = Plan::from_config(&SmartWarmupConfig {
            timezone: "America/New_York".into(),
            ..SmartWarmupConfig::default()
        });
        let day = p.day(NOV_21_NOON);
        // 08:00 in New York in November is 13:00 UTC.
        assert_eq!(p.slots(day, 1, 0.0)[0], NOV_21_NOON + 3_600_000);
        assert!(p.next_ramp_up_at(NOV_21_NOON, NOV_21_NOON).unwrap() > NOV_21_NOON);
    }

    #[test]
    fn offsets_stay_within_a_slot() {
        for id in 1..1000 {
            let o = offset(id);
            assert!((0.0..1.0).contains(&o));
        }
        assert_ne!(offset(1), offset(2));
    }
}
