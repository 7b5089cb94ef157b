//! Usage reports over the cost ledger (spec/3 usage endpoints).

use serde::Serialize;
use utoipa::ToSchema;

use super::catalogue::Family;
use super::store::{self, LedgerBucket, LedgerGroup};
use outreach_core::error::ApiResult;
use outreach_core::http::extract::within;
use outreach_core::platform::clock::{iso, ms_to_datetime};
use outreach_core::state::AppState;

const DAY_MS: i64 = 86_400_000;

fn round_usd(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProviderUsage {
    pub provider: String,
    pub calls: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<i64>,
    pub cost_usd: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ActionUsage {
    pub action_type: String,
    pub calls: i64,
    pub cost_usd: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DayUsage {
    pub day: String,
    pub cost_usd: f64,
    pub calls: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Deliverability {
    pub deliverable: i64,
    pub risky: i64,
    pub undeliverable: i64,
    pub unknown: i64,
}

/// One report shape for the three families; fields a family does not have
/// are left out.
#[derive(Debug, Serialize, ToSchema)]
pub struct UsageReport {
    pub days: i64,
    pub since: String,
    pub total_calls: i64,
    pub total_cost_usd: f64,
    /// AI only: last 7 days' cost x 30/7.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projected_monthly_cost_usd: Option<f64>,
    /// Enrichers only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_hits: Option<i64>,
    /// Enrichers only: cache hits / calls x 100, one decimal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_hit_rate_pct: Option<f64>,
    pub by_provider: Vec<ProviderUsage>,
    /// Sorted by cost, highest first.
    pub by_action_type: Vec<ActionUsage>,
    /// AI only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_day: Option<Vec<DayUsage>>,
    /// Verifiers only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_deliverability: Option<Deliverability>,
}

pub async fn report(
    state: &AppState,
    account_id: i64,
    family: Family,
    days: i64,
) -> ApiResult<UsageReport> {
    within("days", days, 1..=365)?;
    let now = state.clock.now_ms();
    let since = now - days * DAY_MS;
    let group = |g| store::ledger_grouped(&state.db, account_id, family, since, g);
    let all: Vec<LedgerBucket> = group(LedgerGroup::All).await?;
    let (total_calls, total_cost, cache_hits) = all
        .first()
        .map_or((0, 0.0, 0), |b| (b.calls, b.cost_usd, b.cache_hits));
    let ai = family == Family::Ai;
    let by_provider = group(LedgerGroup::Provider)
        .await?
        .into_iter()
        .map(|b| ProviderUsage {
            provider: b.name,
            calls: b.calls,
            prompt_tokens: ai.then_some(b.prompt_tokens),
            completion_tokens: ai.then_some(b.completion_tokens),
            cost_usd: round_usd(b.cost_usd),
        })
        .collect();
    let mut by_action_type: Vec<ActionUsage> = group(LedgerGroup::ActionType)
        .await?
        .into_iter()
        .map(|b| ActionUsage {
            action_type: b.name,
            calls: b.calls,
            cost_usd: round_usd(b.cost_usd),
        })
        .collect();
    by_action_type.sort_by(|a, b| {
        b.cost_usd
            .total_cmp(&a.cost_usd)
            .then(a.action_type.cmp(&b.action_type))
    });

    let (by_day, projected) = if ai {
        let by_day = group(LedgerGroup::Day)
            .await?
            .into_iter()
            .map(|b| DayUsage {
                day: ms_to_datetime(b.name.parse::<i64>().unwrap_or(0) * DAY_MS)
                    .date_naive()
                    .to_string(),
                cost_usd: round_usd(b.cost_usd),
                calls: b.calls,
            })
            .collect::<Vec<_>>();
        let last7 = store::ledger_grouped(
            &state.db,
            account_id,
            family,
            now - 7 * DAY_MS,
            LedgerGroup::All,
        )
        .await?
        .first()
        .map_or(0.0, |b| b.cost_usd);
        (Some(by_day), Some(round_usd(last7 * 30.0 / 7.0)))
    } else {
        (None, None)
    };
    let by_deliverability = if family == Family::Verifier {
        let buckets = group(LedgerGroup::Deliverability).await?;
        let count = |name: &str| {
            buckets
                .iter()
                .find(|b| b.name == name)
                .map_or(0, |b| b.calls)
        };
        Some(Deliverability {
            deliverable: count("deliverable"),
            risky: count("risky"),
            undeliverable: count("undeliverable"),
            unknown: count("unknown"),
        })
    } else {
        None
    };
    let enricher = family == Family::Enricher;
    Ok(UsageReport {
        days,
        since: iso(since),
        total_calls,
        total_cost_usd: round_usd(total_cost),
        projected_monthly_cost_usd: projected,
        cache_hits: enricher.then_some(cache_hits),
        cache_hit_rate_pct: enricher.then(|| {
            if total_calls == 0 {
                0.0
            } else {
                (cache_hits as f64 * 1000.0 / total_calls as f64).round() / 10.0
            }
        }),
        by_provider,
        by_action_type,
        by_day,
        by_deliverability,
    })
}
