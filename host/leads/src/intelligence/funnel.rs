//! `GET /v1/intelligence/funnel` and `GET /v1/intelligence/funnel/trends`:
//! the funnel over all the account's lists, now and week by week.
//!
//! - Rates are spec/2's list funnel rates: the later stage's count over the
//!   earlier one's, x 100, two decimals, 0 over an empty stage;
//!   `overall_conversion_rate` is converted over all items.
//! - Trends: 12 weeks, Monday 00:00 UTC to Monday, oldest first, the last
//!   being the week now running. Each week's `stages` is the funnel as it
//!   stood at the week's end (now, for the running week), replayed from the
//!   stage history, so items removed since still count where they were;
//!   `entered` counts the moves into each stage during the week.

use chrono::{Datelike, Duration, TimeZone, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::lists::funnel::{counts_in_order, percent};
use crate::lists::history;
use outreach_core::accounts::plans::Plan;
use outreach_core::error::ApiResult;
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// Weeks of `funnel/trends` (spec/2 "Limits").
pub const TREND_WEEKS: i64 = 12;
const WEEK_MS: i64 = 7 * 86_400_000;

#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
pub struct StageCounts {
    pub discovered: i64,
    pub contacted: i64,
    pub qualified: i64,
    pub converted: i64,
}

impl StageCounts {
    fn from_rows(rows: &[(String, i64)]) -> StageCounts {
        let [discovered, contacted, qualified, converted] = counts_in_order(rows);
        StageCounts {
            discovered,
            contacted,
            qualified,
            converted,
        }
    }

    fn total(&self) -> i64 {
        self.discovered + self.contacted + self.qualified + self.converted
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StageConversionRates {
    pub discovered_to_contacted: f64,
    pub contacted_to_qualified: f64,
    pub qualified_to_converted: f64,
}

/// The funnel over every list of the account.
#[derive(Debug, Serialize, ToSchema)]
pub struct FunnelRollup {
    pub stages: StageCounts,
    pub stage_conversion_rates: StageConversionRates,
    /// converted / all items x 100.
    pub overall_conversion_rate: f64,
    pub total: i64,
}

impl FunnelRollup {
    fn of(stages: StageCounts) -> FunnelRollup {
        let total = stages.total();
        FunnelRollup {
            stage_conversion_rates: StageConversionRates {
                discovered_to_contacted: percent(stages.contacted, stages.discovered),
                contacted_to_qualified: percent(stages.qualified, stages.contacted),
                qualified_to_converted: percent(stages.converted, stages.qualified),
            },
            overall_conversion_rate: percent(stages.converted, total),
            total,
            stages,
        }
    }
}

/// One week of the trends.
#[derive(Debug, Serialize, ToSchema)]
pub struct FunnelWeek {
    /// The week's Monday (YYYY-MM-DD).
    pub week_start: String,
    /// The instant the snapshot describes: the week's end, or now.
    pub as_of: String,
    #[serde(flatten)]
    pub funnel: FunnelRollup,
    /// Moves into each stage during the week.
    pub entered: StageCounts,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FunnelTrends {
    pub weeks: Vec<FunnelWeek>,
    pub lookback_weeks: i64,
}

/// `GET /v1/intelligence/funnel`.
pub async fn rollup(state: &AppState, caller: &Caller) -> ApiResult<FunnelRollup> {
    caller.require(Plan::Pro)?;
    let rows = history::stage_counts(&state.db, caller.account_id, None).await?;
    Ok(FunnelRollup::of(StageCounts::from_rows(&rows)))
}

/// Milliseconds of the Monday 00:00 UTC starting the week of `ms`.
pub fn week_start(ms: i64) -> i64 {
    let t = Utc.timestamp_millis_opt(ms).single().unwrap_or_default();
    let monday = t.date_naive() - Duration::days(i64::from(t.weekday().num_days_from_monday()));
    monday
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc()
        .timestamp_millis()
}

/// `GET /v1/intelligence/funnel/trends`.
pub async fn trends(state: &AppState, caller: &Caller) -> ApiResult<FunnelTrends> {
    caller.require(Plan::Pro)?;
    let now = state.clock.now_ms();
    let current = week_start(now);
    let mut weeks = Vec::with_capacity(TREND_WEEKS as usize);
    for back in (0..TREND_WEEKS).rev() {
        let start = current - back * WEEK_MS;
        let end = start + WEEK_MS;
        // The snapshot holds what was written up to the week's last
        // millisecond, or up to now for the running week.
        let as_of = (end - 1).min(now);
        let at = history::stage_counts_at(&state.db, caller.account_id, as_of).await?;
        let entered = history::entries_between(&state.db, caller.account_id, start, end).await?;
        weeks.push(FunnelWeek {
            week_start: iso(start)[..10].to_string(),
            as_of: iso(as_of),
            funnel: FunnelRollup::of(StageCounts::from_rows(&at)),
            entered: StageCounts::from_rows(&entered),
        });
    }
    Ok(FunnelTrends {
        weeks,
        lookback_weeks: TREND_WEEKS,
    })
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn weeks_start_on_monday_midnight_utc() {
        // 2026-11-21 is a Saturday; its week began Monday 2026-11-16.
        let sat = chrono::DateTime::parse_from_rfc3339("2026-11-21T12:00:00Z").unwrap();
        assert_eq!(
            iso(week_start(sat.timestamp_millis())),
            "2026-11-16T00:00:00Z"
        );
        let mon = chrono::DateTime::parse_from_rfc3339("2026-11-16T00:00:00Z").unwrap();
        assert_eq!(week_start(mon.timestamp_millis()), mon.timestamp_millis());
    }
}
