//! `GET /v1/intelligence/geo`, `/geo/cities` and `/geo/export`: where the
//! records that entered the pool in the last `days` days are (Starter+).
//!
//! - A record counts when it carries facts (enriched or imported) and a
//!   country: the registrant's, else the server's (spec/2). Records with
//!   neither are left out of `countries` and `total` and counted in
//!   `without_country`, so a map never shows an "unknown" country.
//! - The window is whole UTC days: the last `days` days, today included.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::{Industry, first_day, lookback_days, pct, rollups};
use crate::csv_out::{self, CsvFile};
use outreach_core::accounts::plans::Plan;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;

/// Cities `geo/cities` lists (spec/2 "Limits").
pub const TOP_CITIES: usize = 30;

#[derive(Debug, Deserialize, IntoParams)]
pub struct GeoQuery {
    /// An industry of the taxonomy, any case; none means every industry.
    pub industry: Option<String>,
    /// 7-365, default 30.
    pub days: Option<i64>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct CitiesQuery {
    /// ISO 3166-1 alpha-2, any case; none means every country.
    pub country: Option<String>,
    /// An industry of the taxonomy, any case; none means every industry.
    pub industry: Option<String>,
    /// 7-365, default 30.
    pub days: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CountryCount {
    /// ISO 3166-1 alpha-2.
    pub country: String,
    pub cnt: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct GeoAnswer {
    /// By count, descending (ties by code).
    pub countries: Vec<CountryCount>,
    /// Records counted in `countries`.
    pub total: i64,
    /// Records of the window with no country, left out of `total`.
    pub without_country: i64,
    pub days: i64,
    /// The taxonomy's spelling, or null for every industry.
    pub industry: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CityCount {
    pub city: String,
    pub cnt: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CitiesAnswer {
    /// The top 30 by count, descending (ties by name).
    pub cities: Vec<CityCount>,
    /// Records of the window with a city (all cities, not only the 30).
    pub total: i64,
    /// Upper case, or null for every country.
    pub country: Option<String>,
    pub days: i64,
    pub industry: Option<String>,
}

/// Sorts `(name, count)` by count descending, then name.
fn ranked(mut rows: Vec<(String, i64)>) -> Vec<(String, i64)> {
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows
}

/// `GET /v1/intelligence/geo`.
pub async fn countries(state: &AppState, caller: &Caller, query: GeoQuery) -> ApiResult<GeoAnswer> {
    caller.require(Plan::Starter)?;
    let days = lookback_days(query.days)?;
    let industry = Industry::optional(query.industry.as_deref())?;
    let from = first_day(state.clock.now_ms(), days);
    let rows = rollups::countries_since(&state.db, from, industry.as_ref().map(|i| i.key.as_str()))
        .await?;
    let without_country = rows
        .iter()
        .filter(|(c, _)| c.is_empty())
        .map(|(_, n)| n)
        .sum();
    let countries: Vec<CountryCount> = ranked(rows)
        .into_iter()
        .filter(|(c, _)| !c.is_empty())
        .map(|(country, cnt)| CountryCount { country, cnt })
        .collect();
    Ok(GeoAnswer {
        total: countries.iter().map(|c| c.cnt).sum(),
        countries,
        without_country,
        days,
        industry: industry.map(|i| i.name.to_string()),
    })
}

/// `GET /v1/intelligence/geo/cities`.
pub async fn cities(
    state: &AppState,
    caller: &Caller,
    query: CitiesQuery,
) -> ApiResult<CitiesAnswer> {
    caller.require(Plan::Starter)?;
    let days = lookback_days(query.days)?;
    let industry = Industry::optional(query.industry.as_deref())?;
    let country = match query.country.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(c) if c.len() == 2 && c.chars().all(|ch| ch.is_ascii_alphabetic()) => {
            Some(c.to_ascii_uppercase())
        }
        Some(_) => {
            return Err(ApiError::bad_request(
                "country must be an ISO 3166-1 alpha-2 code such as DE",
            ));
        }
    };
    let from = first_day(state.clock.now_ms(), days);
    let rows = rollups::cities_since(
        &state.db,
        from,
        country.as_deref(),
        industry.as_ref().map(|i| i.key.as_str()),
    )
    .await?;
    let total = rows.iter().map(|(_, n)| n).sum();
    let cities = ranked(rows)
        .into_iter()
        .take(TOP_CITIES)
        .map(|(city, cnt)| CityCount { city, cnt })
        .collect();
    Ok(CitiesAnswer {
        cities,
        total,
        country,
        days,
        industry: industry.map(|i| i.name.to_string()),
    })
}

/// `GET /v1/intelligence/geo/export`: `country,cnt,pct` of
/// [`countries`], every cell safe from formula injection.
pub async fn export(state: &AppState, caller: &Caller, query: GeoQuery) -> ApiResult<CsvFile> {
    let answer = countries(state, caller, query).await?;
    let scope = answer
        .industry
        .as_deref()
        .map_or_else(|| "all".to_string(), slug);
    let rows = answer.countries.iter().map(|c| {
        vec![
            c.country.clone(),
            c.cnt.to_string(),
            format!("{:.2}", pct(c.cnt, answer.total)),
        ]
    });
    csv_out::file(
        &format!("geo-{scope}-{}d.csv", answer.days),
        &["country", "cnt", "pct"],
        rows,
    )
}

/// A file-name part: lower-case letters and digits, dashes between words.
pub fn slug(text: &str) -> String {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("-")
}
