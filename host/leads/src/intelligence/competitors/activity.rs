//! What the competitor endpoints read beyond the competitor itself: its
//! 90-day activity, the diff of its last two enrichments, the market share
//! of its industry and the digest of its industry's new domains.

use std::collections::BTreeSet;

use super::model::*;
use super::service::{owned, view};
use super::store::{self, Snapshot};
use crate::domains::rollups::DAY_MS;
use crate::domains::store as pool;
use crate::intelligence::pct;
use crate::intelligence::reports::industry_stats;
use outreach_core::accounts::plans::Plan;
use outreach_core::error::ApiResult;
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// Days of the detail's activity.
const ACTIVITY_DAYS: i64 = 90;
/// Days of the digest.
const DIGEST_DAYS: i64 = 7;
/// Domains the digest lists per competitor.
const DIGEST_DOMAINS: i64 = 50;

fn entry(s: &Snapshot) -> EnrichmentEntry {
    EnrichmentEntry {
        enriched_at: iso(s.enriched_at),
        industry: s.industry.clone(),
        confidence: s.confidence,
        summary: s.summary.clone(),
        technologies: s.technologies.clone(),
        signals: s.signals.clone(),
    }
}

/// `GET /v1/intelligence/competitors/{id}/detail`.
pub async fn detail(state: &AppState, caller: &Caller, id: i64) -> ApiResult<CompetitorDetail> {
    let row = owned(state, caller, id).await?;
    let since = state.clock.now_ms() - ACTIVITY_DAYS * DAY_MS;
    let record = pool::find(&state.db, &row.domain)
        .await?
        .map(|s| s.record)
        .filter(|_| row.has_facts());
    let enrichments = store::snapshots(&state.db, row.domain_id, since, 100).await?;
    let changes = store::changes(&state.db, row.domain_id, since).await?;
    Ok(CompetitorDetail {
        competitor: view(&row),
        record,
        activity: Activity {
            since: iso(since),
            enrichments: enrichments.iter().map(entry).collect(),
            changes: changes
                .into_iter()
                .map(|(field, old, new, at)| FieldChange {
                    field_changed: field,
                    old_value: old,
                    new_value: new,
                    detected_at: iso(at),
                })
                .collect(),
        },
    })
}

fn set_diff(before: &[String], after: &[String]) -> SetDiff {
    let b: BTreeSet<&String> = before.iter().collect();
    let a: BTreeSet<&String> = after.iter().collect();
    SetDiff {
        added: a.difference(&b).map(|s| s.to_string()).collect(),
        removed: b.difference(&a).map(|s| s.to_string()).collect(),
    }
}

fn text_diff(before: &Option<String>, after: &Option<String>) -> TextDiff {
    TextDiff {
        changed: before != after,
        before: before.clone(),
        after: after.clone(),
    }
}

/// `GET /v1/intelligence/competitors/{id}/analysis`.
pub async fn analysis(state: &AppState, caller: &Caller, id: i64) -> ApiResult<CompetitorAnalysis> {
    let row = owned(state, caller, id).await?;
    let count = store::snapshot_count(&state.db, row.domain_id).await?;
    let last = store::snapshots(&state.db, row.domain_id, 0, 2).await?;
    let mut answer = CompetitorAnalysis {
        id: row.id,
        domain: row.domain.clone(),
        enrichments: count,
        comparable: false,
        message: format!(
            "An analysis needs two enrichments of {}; {count} so far. POST .../refresh queues \
             another.",
            row.domain
        ),
        from: None,
        to: None,
        signals: None,
        technologies: None,
        summary: None,
        industry: None,
        confidence: None,
    };
    let [after, before] = last.as_slice() else {
        return Ok(answer);
    };
    answer.comparable = true;
    answer.message = format!(
        "Changes between the enrichments of {} and {}",
        iso(before.enriched_at),
        iso(after.enriched_at)
    );
    answer.from = Some(iso(before.enriched_at));
    answer.to = Some(iso(after.enriched_at));
    answer.signals = Some(set_diff(&before.signals, &after.signals));
    answer.technologies = Some(set_diff(&before.technologies, &after.technologies));
    answer.summary = Some(text_diff(&before.summary, &after.summary));
    answer.industry = Some(text_diff(&before.industry, &after.industry));
    answer.confidence = Some(ConfidenceChange {
        before: before.confidence,
        after: after.confidence,
    });
    Ok(answer)
}

/// `GET /v1/intelligence/competitors/market-share`.
pub async fn market_share(state: &AppState, caller: &Caller) -> ApiResult<MarketShare> {
    caller.require(Plan::Pro)?;
    let rows = store::list(&state.db, caller.account_id).await?;
    let (stats, _, _) = industry_stats(state).await?;
    let total_market_domains: i64 = stats.iter().map(|s| s.domain_count).sum();
    let of = |industry: &Option<String>| {
        industry
            .as_ref()
            .and_then(|i| stats.iter().find(|s| s.industry.eq_ignore_ascii_case(i)))
    };
    let competitors: Vec<CompetitorShare> = rows
        .iter()
        .map(|r| {
            let industry = r.industry();
            let count = of(&industry).map_or(0, |s| s.domain_count);
            CompetitorShare {
                id: r.id,
                domain: r.domain.clone(),
                industry,
                industry_domain_count: count,
                industry_share_pct: pct(count, total_market_domains),
            }
        })
        .collect();
    let industries = stats
        .iter()
        .filter_map(|s| {
            let n = competitors
                .iter()
                .filter(|c| {
                    c.industry
                        .as_ref()
                        .is_some_and(|i| s.industry.eq_ignore_ascii_case(i))
                })
                .count() as i64;
            (n > 0).then(|| ShareIndustry {
                stats: s.clone(),
                competitors: n,
            })
        })
        .collect();
    Ok(MarketShare {
        industries,
        competitors,
        total_market_domains,
    })
}

/// `GET /v1/intelligence/competitors/digest`.
pub async fn digest(state: &AppState, caller: &Caller) -> ApiResult<Digest> {
    caller.require(Plan::Pro)?;
    let since = state.clock.now_ms() - DIGEST_DAYS * DAY_MS;
    let mut competitors = Vec::new();
    for row in store::list(&state.db, caller.account_id).await? {
        let industry = row.industry();
        let (new_count, newest) = match &industry {
            Some(i) => {
                let key = i.to_lowercase();
                store::entered_since(&state.db, &key, since, row.domain_id, DIGEST_DOMAINS).await?
            }
            None => (0, Vec::new()),
        };
        competitors.push(DigestEntry {
            id: row.id,
            domain: row.domain,
            industry,
            new_count,
            new_domains: newest
                .into_iter()
                .map(|(domain, confidence, at)| NewDomain {
                    domain,
                    confidence,
                    entered_at: iso(at),
                })
                .collect(),
        });
    }
    Ok(Digest {
        since: iso(since),
        competitors,
    })
}
