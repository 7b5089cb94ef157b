//! Market intelligence (spec/2 "Market intelligence"): aggregate views of
//! the pool, an account's competitors and tracked keywords. Decisions where
//! the spec is silent: docs/decisions/intelligence.md.
//!
//! - `funnel.rs`: the funnel over the account's lists and its trends.
//! - `geo.rs`: countries and cities of the records that entered the pool
//!   in a window, and their CSV (Starter+).
//! - `reports.rs`: the industry report, its lighter form and the overview,
//!   read from the pool's rollups (`rollups.rs` reads them; the pool's
//!   saves write them, `crate::domains::rollups`); `pdf/` draws the report
//!   as an A4 PDF.
//! - `competitors/`, `keywords/`: the account's competitors and tracked
//!   keywords (the keyword automaton runs in the pool's save).
//!
//! Everything but geo is Pro and Enterprise.

pub mod competitors;
pub mod funnel;
pub mod geo;
pub mod keywords;
pub mod pdf;
pub mod reports;
pub mod rollups;
pub mod routes;

#[cfg(test)]
mod geo_tests;
#[cfg(test)]
mod report_tests;
#[cfg(test)]
mod tests;

use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::extract::within;
use outreach_domain_analysis::classify::TAXONOMY;

use crate::domains::rollups::DAY_MS;

/// An industry of the taxonomy, as a path segment or parameter names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Industry {
    /// The taxonomy's spelling ("Financial Services").
    pub name: &'static str,
    /// The rollups' key: lower case.
    pub key: String,
}

impl Industry {
    /// The taxonomy industry named `text`, case-insensitively (axum has
    /// already decoded `Financial%20Services`); 404 for any other name.
    pub fn named(text: &str) -> ApiResult<Industry> {
        let text = text.trim();
        TAXONOMY
            .iter()
            .find(|i| i.name.eq_ignore_ascii_case(text))
            .map(|i| Industry {
                name: i.name,
                key: i.name.to_lowercase(),
            })
            .ok_or_else(|| ApiError::not_found("Industry"))
    }

    /// [`Industry::named`] for an optional parameter; an empty one is none.
    pub fn optional(text: Option<&str>) -> ApiResult<Option<Industry>> {
        match text.map(str::trim).filter(|t| !t.is_empty()) {
            Some(t) => Industry::named(t).map(Some),
            None => Ok(None),
        }
    }
}

/// How a rollup's lower-case industry key is shown: the taxonomy's
/// spelling, else the key as stored (imported records may carry others).
pub fn display_industry(key: &str) -> String {
    TAXONOMY
        .iter()
        .find(|i| i.name.eq_ignore_ascii_case(key))
        .map_or_else(|| key.to_string(), |i| i.name.to_string())
}

/// Lookback of the geo endpoints: 7-365 days, default 30 (spec/2).
pub fn lookback_days(days: Option<i64>) -> ApiResult<i64> {
    within("days", days.unwrap_or(30), 7..=365)
}

/// The first UTC day of the last `days` days, today included.
pub fn first_day(now: i64, days: i64) -> i64 {
    now.div_euclid(DAY_MS) - (days - 1)
}

/// `part` of `whole` in percent, two decimals; 0 when `whole` is 0.
pub fn pct(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    round2(part as f64 * 100.0 / whole as f64)
}

pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The mean 0-1 confidence of `cnt` records summing `bp` basis points,
/// two decimals.
pub fn mean_confidence(bp: i64, cnt: i64) -> f64 {
    if cnt == 0 {
        return 0.0;
    }
    round2(bp as f64 / cnt as f64 / 10_000.0)
}
