//! `GET /v1/intelligence/report/{industry}` (JSON or PDF),
//! `/industry/{industry}` and `/overview`, all from the pool's rollups
//! (Pro and Enterprise).
//!
//! - An industry's records are those with facts whose industry is the
//!   taxonomy's name in any case, enriched or imported.
//! - `growth_rate_pct`: records that entered in the last 30 days against
//!   the 30 days before, in percent, two decimals; null with none before.
//! - `weekly_trend`: records that entered per ISO week (Monday to Sunday,
//!   UTC), the 12 weeks up to the running one, oldest first.
//! - `country_distribution`: by count, `pct` of the records with a country.
//! - `avg_confidence` is 0-1 with two decimals, like a record's.

use std::collections::BTreeMap;

use chrono::{Datelike, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::rollups::{self, Total};
use super::{Industry, display_industry, mean_confidence, pct, round2};
use crate::domains::rollups::DAY_MS;
use crate::intelligence::funnel::{TREND_WEEKS, week_start};
use outreach_core::accounts::plans::Plan;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;

/// Domains in the JSON report's `top_domains`.
pub const TOP_DOMAINS: i64 = 10;
/// Domains in the PDF's table (it flows over pages).
pub const PDF_TOP_DOMAINS: i64 = 50;
/// Countries the lighter report and the overview list.
const TOP_COUNTRIES: usize = 10;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReportSummary {
    pub total_leads: i64,
    pub with_email: i64,
    pub email_coverage_pct: f64,
    /// 0-1, two decimals.
    pub avg_confidence: f64,
    /// Last 30 days against the 30 before, in percent; null with none before.
    pub growth_rate_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WeekCount {
    /// ISO week, such as `2026-W48`.
    pub week: String,
    pub cnt: i64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CountryShare {
    pub country: String,
    pub cnt: i64,
    /// Of the industry's records with a country.
    pub pct: f64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TopDomain {
    pub domain: String,
    pub confidence: f64,
    pub summary: Option<String>,
}

/// spec/2's industry report.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IndustryReport {
    pub industry: String,
    pub summary: ReportSummary,
    pub weekly_trend: Vec<WeekCount>,
    pub country_distribution: Vec<CountryShare>,
    pub top_domains: Vec<TopDomain>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct ReportQuery {
    /// `json` (default) or `pdf`.
    pub format: Option<String>,
}

/// What `report/{industry}` answers.
pub enum Report {
    Json(Box<IndustryReport>),
    Pdf { name: String, bytes: Vec<u8> },
}

/// The lighter report of `industry/{industry}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct IndustrySnapshot {
    pub industry: String,
    pub total_leads: i64,
    pub with_email: i64,
    pub email_coverage_pct: f64,
    pub avg_confidence: f64,
    pub new_7d: i64,
    pub new_30d: i64,
    pub growth_rate_pct: Option<f64>,
    /// The 10 largest, `pct` of the records with a country.
    pub top_countries: Vec<CountryShare>,
}

/// One industry's figures, in the overview and in the market share.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IndustryStats {
    pub industry: String,
    pub domain_count: i64,
    /// Records with a website email, in percent.
    pub email_rate: f64,
    pub avg_confidence: f64,
    pub new_7d: i64,
    pub new_30d: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OverviewIndustry {
    #[serde(flatten)]
    pub stats: IndustryStats,
    /// Of the records with an industry, in percent.
    pub share_pct: f64,
}

/// The dashboard rollup across industries.
#[derive(Debug, Serialize, ToSchema)]
pub struct Overview {
    /// Records with facts (enriched or imported).
    pub total_domains: i64,
    /// Of those, the records with an industry.
    pub with_industry: i64,
    pub with_email: i64,
    pub email_rate: f64,
    pub avg_confidence: f64,
    pub new_7d: i64,
    pub new_30d: i64,
    /// Every industry with records, largest first.
    pub industries: Vec<OverviewIndustry>,
    /// The 10 largest countries, `pct` of the records with a country.
    pub top_countries: Vec<CountryShare>,
}

/// Counts of records that entered in the last 30 days and the 30 before.
fn growth(last: i64, before: i64) -> Option<f64> {
    (before > 0).then(|| round2((last - before) as f64 * 100.0 / before as f64))
}

/// `rows` merged by country ('' left out), largest first, with their share.
fn country_shares(rows: &[Total], limit: usize) -> Vec<CountryShare> {
    let mut by: BTreeMap<&str, i64> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.country.is_empty()) {
        *by.entry(&r.country).or_default() += r.cnt;
    }
    let with_country: i64 = by.values().sum();
    let mut shares: Vec<CountryShare> = by
        .into_iter()
        .map(|(country, cnt)| CountryShare {
            country: country.to_string(),
            cnt,
            pct: pct(cnt, with_country),
        })
        .collect();
    shares.sort_by(|a, b| b.cnt.cmp(&a.cnt).then_with(|| a.country.cmp(&b.country)));
    shares.truncate(limit);
    shares
}

fn summed(rows: &[Total]) -> Total {
    let mut all = Total::default();
    rows.iter().for_each(|r| all.absorb(r));
    all
}

/// Today's UTC day.
fn today(state: &AppState) -> i64 {
    state.clock.now_ms().div_euclid(DAY_MS)
}

/// The first UTC day of [`last_two_months`]' window.
fn two_months_ago(today: i64) -> i64 {
    today - 59
}

/// Of `days` (`(day, count)` of one industry), the records that entered in
/// the last 7 days, the last 30 days and the 30 days before those.
fn last_two_months(today: i64, days: &[(i64, i64)]) -> (i64, i64, i64) {
    let (mut last7, mut last30, mut before) = (0, 0, 0);
    for &(day, n) in days.iter().filter(|(d, _)| *d >= two_months_ago(today)) {
        if day > today - 7 {
            last7 += n;
        }
        if day > today - 30 {
            last30 += n;
        } else {
            before += n;
        }
    }
    (last7, last30, before)
}

/// The ISO week (`2026-W48`) of a UTC day.
fn iso_week(day: i64) -> String {
    let t = Utc
        .timestamp_millis_opt(day * DAY_MS)
        .single()
        .unwrap_or_default();
    let w = t.iso_week();
    format!("{}-W{:02}", w.year(), w.week())
}

/// The first UTC day of the 12 weeks of the trend.
fn trend_start(now: i64) -> i64 {
    (week_start(now) - (TREND_WEEKS - 1) * 7 * DAY_MS) / DAY_MS
}

/// The 12 weeks' counts from `first_day` on, oldest first, of `days`.
fn weekly_trend(first_day: i64, days: &[(i64, i64)]) -> Vec<WeekCount> {
    let mut weeks: Vec<WeekCount> = (0..TREND_WEEKS)
        .map(|i| WeekCount {
            week: iso_week(first_day + i * 7),
            cnt: 0,
        })
        .collect();
    for &(day, n) in days.iter().filter(|(d, _)| *d >= first_day) {
        if let Some(w) = weeks.get_mut(((day - first_day) / 7) as usize) {
            w.cnt += n;
        }
    }
    weeks
}

async fn build(state: &AppState, industry: &Industry, top: i64) -> ApiResult<IndustryReport> {
    let rows = rollups::totals(&state.db, Some(&industry.key)).await?;
    let all = summed(&rows);
    // One read of the per-day rollup serves the growth and the trend.
    let today = today(state);
    let first_week_day = trend_start(state.clock.now_ms());
    let from = first_week_day.min(two_months_ago(today));
    let days = rollups::days_since(&state.db, &industry.key, from).await?;
    let (_, last30, before) = last_two_months(today, &days);
    let top_domains = rollups::most_confident(&state.db, &industry.key, top)
        .await?
        .into_iter()
        .map(|c| TopDomain {
            domain: c.domain,
            confidence: c.confidence,
            summary: c.summary,
        })
        .collect();
    Ok(IndustryReport {
        industry: industry.name.to_string(),
        summary: ReportSummary {
            total_leads: all.cnt,
            with_email: all.with_email,
            email_coverage_pct: pct(all.with_email, all.cnt),
            avg_confidence: mean_confidence(all.confidence_bp, all.cnt),
            growth_rate_pct: growth(last30, before),
        },
        weekly_trend: weekly_trend(first_week_day, &days),
        country_distribution: country_shares(&rows, usize::MAX),
        top_domains,
    })
}

/// `GET /v1/intelligence/report/{industry}`.
pub async fn report(
    state: &AppState,
    caller: &Caller,
    industry: &str,
    query: ReportQuery,
) -> ApiResult<Report> {
    caller.require(Plan::Pro)?;
    let pdf = match query.format.as_deref().unwrap_or("json") {
        "json" => false,
        "pdf" => true,
        _ => return Err(ApiError::bad_request("format must be json or pdf")),
    };
    let industry = Industry::named(industry)?;
    if !pdf {
        return Ok(Report::Json(Box::new(
            build(state, &industry, TOP_DOMAINS).await?,
        )));
    }
    let mut report = build(state, &industry, PDF_TOP_DOMAINS).await?;
    let top = report.top_domains.clone();
    report.top_domains.truncate(TOP_DOMAINS as usize);
    let date = &outreach_core::platform::clock::iso(state.clock.now_ms())[..10];
    // Drawing is CPU work of a few milliseconds; it stays off the runtime's
    // other tasks' threads.
    let date = date.to_string();
    let bytes = tokio::task::spawn_blocking(move || super::pdf::render(&report, &top, &date))
        .await
        .map_err(anyhow::Error::from)??;
    Ok(Report::Pdf {
        name: format!("{}-report.pdf", super::geo::slug(industry.name)),
        bytes,
    })
}

/// `GET /v1/intelligence/industry/{industry}`.
pub async fn snapshot(
    state: &AppState,
    caller: &Caller,
    industry: &str,
) -> ApiResult<IndustrySnapshot> {
    caller.require(Plan::Pro)?;
    let industry = Industry::named(industry)?;
    let rows = rollups::totals(&state.db, Some(&industry.key)).await?;
    let all = summed(&rows);
    let today = today(state);
    let days = rollups::days_since(&state.db, &industry.key, two_months_ago(today)).await?;
    let (new_7d, new_30d, before) = last_two_months(today, &days);
    Ok(IndustrySnapshot {
        industry: industry.name.to_string(),
        total_leads: all.cnt,
        with_email: all.with_email,
        email_coverage_pct: pct(all.with_email, all.cnt),
        avg_confidence: mean_confidence(all.confidence_bp, all.cnt),
        new_7d,
        new_30d,
        growth_rate_pct: growth(new_30d, before),
        top_countries: country_shares(&rows, TOP_COUNTRIES),
    })
}

/// Every industry's figures (records without an industry left out),
/// largest first, and the totals over all records.
pub async fn industry_stats(
    state: &AppState,
) -> ApiResult<(Vec<IndustryStats>, Vec<Total>, NewCounts)> {
    let rows = rollups::totals(&state.db, None).await?;
    let today = today(state);
    let recent = rollups::new_per_industry(&state.db, today - 6, today - 29).await?;
    let mut by: BTreeMap<&str, Total> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.industry.is_empty()) {
        by.entry(&r.industry).or_default().absorb(r);
    }
    let mut stats: Vec<IndustryStats> = by
        .into_iter()
        .map(|(key, t)| {
            let (new_7d, new_30d) = recent
                .iter()
                .find(|(i, _, _)| i == key)
                .map_or((0, 0), |(_, a, b)| (*a, *b));
            IndustryStats {
                industry: display_industry(key),
                domain_count: t.cnt,
                email_rate: pct(t.with_email, t.cnt),
                avg_confidence: mean_confidence(t.confidence_bp, t.cnt),
                new_7d,
                new_30d,
            }
        })
        .collect();
    stats.sort_by(|a, b| {
        b.domain_count
            .cmp(&a.domain_count)
            .then_with(|| a.industry.cmp(&b.industry))
    });
    Ok((stats, rows, recent))
}

/// `(industry, last 7 days, last 30 days)` of the records that entered.
type NewCounts = Vec<(String, i64, i64)>;

/// `GET /v1/intelligence/overview`.
pub async fn overview(state: &AppState, caller: &Caller) -> ApiResult<Overview> {
    caller.require(Plan::Pro)?;
    let (stats, rows, recent) = industry_stats(state).await?;
    let all = summed(&rows);
    let with_industry: i64 = stats.iter().map(|s| s.domain_count).sum();
    Ok(Overview {
        total_domains: all.cnt,
        with_industry,
        with_email: all.with_email,
        email_rate: pct(all.with_email, all.cnt),
        avg_confidence: mean_confidence(all.confidence_bp, all.cnt),
        new_7d: recent.iter().map(|r| r.1).sum(),
        new_30d: recent.iter().map(|r| r.2).sum(),
        industries: stats
            .into_iter()
            .map(|s| OverviewIndustry {
                share_pct: pct(s.domain_count, with_industry),
                stats: s,
            })
            .collect(),
        top_countries: country_shares(&rows, TOP_COUNTRIES),
    })
}
