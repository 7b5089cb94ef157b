//! Rules of the tracked-keyword endpoints (Pro and Enterprise).
//!
//! - A keyword is a word or phrase of 1-200 characters after trimming;
//!   the account's keywords are distinct ignoring case and spacing (409).
//! - The plan's cap (`tracked_keywords`) answers 400 and writes nothing.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::matcher::normalise;
use super::store::{self, KeywordRow};
use crate::domains::rollups::DAY_MS;
use outreach_core::accounts::plans::{Plan, Quota, ensure_quota_after_insert, quota_view};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

/// Longest keyword (characters).
pub const MAX_LEN: usize = 200;
/// Days of `stats`' `by_day`.
const STATS_DAYS: i64 = 30;
/// Matches `stats` lists.
const RECENT: i64 = 20;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKeyword {
    /// A word or phrase, 1-200 characters; matched case-insensitively on
    /// whole words.
    pub keyword: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TrackedKeyword {
    pub id: i64,
    pub keyword: String,
    pub created_at: String,
    pub matches_7d: i64,
    pub matches_30d: i64,
    pub last_match_at: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeywordPage {
    /// Oldest first.
    pub keywords: Vec<TrackedKeyword>,
    pub count: usize,
    /// null: unlimited.
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeywordCount {
    pub id: i64,
    pub keyword: String,
    pub matches_7d: i64,
    pub matches_30d: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeywordSummary {
    /// Most matches in 30 days first.
    pub keywords: Vec<KeywordCount>,
    pub total_7d: i64,
    pub total_30d: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DayCount {
    /// YYYY-MM-DD (UTC).
    pub day: String,
    pub cnt: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeywordMatch {
    pub domain: String,
    /// The summary's text around the keyword.
    pub excerpt: String,
    pub matched_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeywordStats {
    pub id: i64,
    pub keyword: String,
    pub created_at: String,
    pub total_matches: i64,
    pub matches_7d: i64,
    pub matches_30d: i64,
    /// The last 30 days, oldest first, days without matches included.
    pub by_day: Vec<DayCount>,
    /// The 20 newest matches.
    pub recent: Vec<KeywordMatch>,
}

fn not_found() -> ApiError {
    ApiError::not_found("Tracked keyword")
}

/// `(start of the last 7 days, start of the last 30 days)`, whole UTC days.
fn windows(now: i64) -> (i64, i64) {
    let today = now.div_euclid(DAY_MS);
    ((today - 6) * DAY_MS, (today - 29) * DAY_MS)
}

fn view(row: KeywordRow, counts: &HashMap<i64, (i64, i64, Option<i64>)>) -> TrackedKeyword {
    let (week, month, last) = counts.get(&row.id).copied().unwrap_or_default();
    TrackedKeyword {
        id: row.id,
        keyword: row.keyword,
        created_at: iso(row.created_at),
        matches_7d: week,
        matches_30d: month,
        last_match_at: last.map(iso),
    }
}

async fn counts(
    state: &AppState,
    account_id: i64,
) -> ApiResult<HashMap<i64, (i64, i64, Option<i64>)>> {
    let (week, month) = windows(state.clock.now_ms());
    Ok(store::match_counts(&state.db, account_id, week, month)
        .await?
        .into_iter()
        .map(|(id, w, m, last)| (id, (w, m, last)))
        .collect())
}

/// `GET /v1/intelligence/tracked-keywords`.
pub async fn list(state: &AppState, caller: &Caller) -> ApiResult<KeywordPage> {
    caller.require(Plan::Pro)?;
    let rows = store::list(&state.db, caller.account_id).await?;
    let counts = counts(state, caller.account_id).await?;
    let (limit, remaining) = quota_view(
        state.plan_limits(caller.plan),
        Quota::TrackedKeywords,
        rows.len() as u64,
    );
    let keywords: Vec<TrackedKeyword> = rows.into_iter().map(|r| view(r, &counts)).collect();
    Ok(KeywordPage {
        count: keywords.len(),
        keywords,
        limit,
        remaining,
    })
}

/// `POST /v1/intelligence/tracked-keywords`.
pub async fn add(state: &AppState, caller: &Caller, body: NewKeyword) -> ApiResult<TrackedKeyword> {
    caller.require(Plan::Pro)?;
    let keyword = body.keyword.trim();
    let length = keyword.chars().count();
    if length == 0 || length > MAX_LEN {
        return Err(ApiError::bad_request(format!(
            "keyword must be 1 to {MAX_LEN} characters"
        )));
    }
    if keyword.chars().any(char::is_control) {
        return Err(ApiError::bad_request(
            "keyword may not hold control characters",
        ));
    }
    let normalised = normalise(keyword);
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let Some(id) = store::insert(&mut tx, caller.account_id, (keyword, &normalised), now).await?
    else {
        return Err(ApiError::Conflict("Keyword already tracked".into()));
    };
    ensure_quota_after_insert(
        &mut tx,
        caller.plan,
        state.plan_limits(caller.plan),
        (Quota::TrackedKeywords, "tracked_keywords"),
        caller.account_id,
    )
    .await?;
    tx.commit().await?;
    Ok(TrackedKeyword {
        id,
        keyword: keyword.to_string(),
        created_at: iso(now),
        matches_7d: 0,
        matches_30d: 0,
        last_match_at: None,
    })
}

/// `DELETE /v1/intelligence/tracked-keywords/{id}`: the keyword and its
/// matches.
pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    caller.require(Plan::Pro)?;
    if store::delete(&state.db, caller.account_id, id).await? {
        Ok(())
    } else {
        Err(not_found())
    }
}

/// `GET /v1/intelligence/tracked-keywords/summary`.
pub async fn summary(state: &AppState, caller: &Caller) -> ApiResult<KeywordSummary> {
    caller.require(Plan::Pro)?;
    let rows = store::list(&state.db, caller.account_id).await?;
    let counts = counts(state, caller.account_id).await?;
    let mut keywords: Vec<KeywordCount> = rows
        .into_iter()
        .map(|r| {
            let v = view(r, &counts);
            KeywordCount {
                id: v.id,
                keyword: v.keyword,
                matches_7d: v.matches_7d,
                matches_30d: v.matches_30d,
            }
        })
        .collect();
    keywords.sort_by(|a, b| b.matches_30d.cmp(&a.matches_30d).then(a.id.cmp(&b.id)));
    Ok(KeywordSummary {
        total_7d: keywords.iter().map(|k| k.matches_7d).sum(),
        total_30d: keywords.iter().map(|k| k.matches_30d).sum(),
        keywords,
    })
}

/// `GET /v1/intelligence/tracked-keywords/{id}/stats`.
pub async fn stats(state: &AppState, caller: &Caller, id: i64) -> ApiResult<KeywordStats> {
    caller.require(Plan::Pro)?;
    let row = store::get(&state.db, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    let now = state.clock.now_ms();
    let (week, _) = windows(now);
    let first_day = now.div_euclid(DAY_MS) - (STATS_DAYS - 1);
    let month = store::matches_since(&state.db, id, first_day * DAY_MS).await?;
    let mut by_day: Vec<DayCount> = (0..STATS_DAYS)
        .map(|i| DayCount {
            day: iso((first_day + i) * DAY_MS)[..10].to_string(),
            cnt: 0,
        })
        .collect();
    for m in &month {
        if let Some(d) = by_day.get_mut((m.matched_at.div_euclid(DAY_MS) - first_day) as usize) {
            d.cnt += 1;
        }
    }
    let (total_matches, recent) = store::recent(&state.db, id, RECENT).await?;
    Ok(KeywordStats {
        id: row.id,
        keyword: row.keyword,
        created_at: iso(row.created_at),
        total_matches,
        matches_7d: month.iter().filter(|m| m.matched_at >= week).count() as i64,
        matches_30d: month.len() as i64,
        by_day,
        recent: recent
            .into_iter()
            .map(|m| KeywordMatch {
                domain: m.domain,
                excerpt: m.excerpt,
                matched_at: iso(m.matched_at),
            })
            .collect(),
    })
}
