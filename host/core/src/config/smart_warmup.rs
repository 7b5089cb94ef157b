//! `[smart_warmup]`: the operator's settings of the smart warmup pool
//! (environment `OUTREACH_SMART_WARMUP_<SETTING>`). The ramp defaults follow
//! what warmup services publish: a few messages on the first day, a couple
//! more each day, about forty a day at full volume.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SmartWarmupConfig {
    /// How often each member's schedule and mailbox are looked at, seconds.
    pub tick_seconds: u64,
    /// `HH-HH`: the hours of the day (in `timezone`) pool mail is spread over.
    pub working_hours: String,
    /// IANA time zone of the working hours and of the warmup day.
    pub timezone: String,
    /// false: each day's volume is due at once, whatever the hour.
    pub spread_over_day: bool,
    /// Messages a member sends on its first day.
    pub start_volume: u32,
    /// Added to the daily volume each day.
    pub daily_increase: u32,
    /// The daily volume the ramp stops at.
    pub target_volume: u32,
    /// Days the target volume is held before the warmup is completed.
    pub hold_days: u32,
    /// How often the analytics roll-up is refreshed, seconds.
    pub analytics_refresh_seconds: u64,
}

impl Default for SmartWarmupConfig {
    fn default() -> Self {
        SmartWarmupConfig {
            tick_seconds: 60,
            working_hours: "08-18".into(),
            timezone: "UTC".into(),
            spread_over_day: true,
            start_volume: 2,
            daily_increase: 2,
            target_volume: 40,
            hold_days: 14,
            analytics_refresh_seconds: 900,
        }
    }
}

impl SmartWarmupConfig {
    /// The working hours as (first hour, end hour), end exclusive.
    pub fn hours(&self) -> anyhow::Result<(u32, u32)> {
        let (a, b) = self
            .working_hours
            .split_once('-')
            .ok_or_else(|| anyhow::anyhow!("smart_warmup.working_hours must be HH-HH"))?;
        let start: u32 = a.trim().parse()?;
        let end: u32 = b.trim().parse()?;
        anyhow::ensure!(
            start < end && end <= 24,
            "smart_warmup.working_hours must be HH-HH with 0 <= start < end <= 24"
        );
        Ok((start, end))
    }

    /// The time zone of the working hours.
    pub fn zone(&self) -> anyhow::Result<chrono_tz::Tz> {
        self.timezone
            .parse()
            .map_err(|_| anyhow::anyhow!("smart_warmup.timezone must be an IANA time zone"))
    }

    pub(super) fn apply_env(
        &mut self,
        get: &impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<()> {
        let var = |name: &str| get(&format!("OUTREACH_SMART_WARMUP_{name}"));
        let number = |name: &str, v: String| -> anyhow::Result<u64> {
            v.trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("OUTREACH_SMART_WARMUP_{name} must be a number"))
        };
        if let Some(v) = var("TICK_SECONDS") {
            self.tick_seconds = number("TICK_SECONDS", v)?;
        }
        if let Some(v) = var("WORKING_HOURS") {
            self.working_hours = v;
        }
        if let Some(v) = var("TIMEZONE") {
            self.timezone = v;
        }
        if let Some(v) = var("SPREAD_OVER_DAY") {
            self.spread_over_day = v.trim().parse().map_err(|_| {
                anyhow::anyhow!("OUTREACH_SMART_WARMUP_SPREAD_OVER_DAY must be true or false")
            })?;
        }
        for (name, field) in [
            ("START_VOLUME", &mut self.start_volume),
            ("DAILY_INCREASE", &mut self.daily_increase),
            ("TARGET_VOLUME", &mut self.target_volume),
            ("HOLD_DAYS", &mut self.hold_days),
        ] {
            if let Some(v) = var(name) {
                *field = number(name, v)? as u32;
            }
        }
        if let Some(v) = var("ANALYTICS_REFRESH_SECONDS") {
            self.analytics_refresh_seconds = number("ANALYTICS_REFRESH_SECONDS", v)?;
        }
        Ok(())
    }

    pub(super) fn validate(&self) -> anyhow::Result<()> {
        self.hours()?;
        self.zone()?;
        anyhow::ensure!(
            (1..=3600).contains(&self.tick_seconds),
            "smart_warmup.tick_seconds must be 1-3600"
        );
        anyhow::ensure!(
            (1..=86_400).contains(&self.analytics_refresh_seconds),
            "smart_warmup.analytics_refresh_seconds must be 1-86400"
        );
        anyhow::ensure!(
            self.start_volume >= 1 && self.start_volume <= self.target_volume,
            "smart_warmup.start_volume must be at least 1 and at most target_volume"
        );
        anyhow::ensure!(
            self.target_volume <= 10_000,
            "smart_warmup.target_volume must be at most 10000"
        );
        anyhow::ensure!(
            self.hold_days <= 365,
            "smart_warmup.hold_days must be at most 365"
        );
        Ok(())
    }
}
