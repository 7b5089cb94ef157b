//! `POST /v1/scoring` and `POST /v1/scoring/batch`: domains of the pool
//! scored by a rule.
//!
//! - A domain is normalised the one way the pool knows; what that refuses
//!   is 400 'Invalid domain format', exactly (spec/2 quotes it, and
//!   clients compare the text; `outreach_core::error::details`).
//! - Only domains already in the pool are scored; scoring never adds one or
//!   queues an enrichment. A domain the pool has not enriched yet is scored
//!   on what its record holds (mostly nothing, so low).
//! - A batch is all or nothing: any refused domain is a 400 and any unknown
//!   one a 404 'Domain not found'. Repeats (after normalisation) answer
//!   once, in the order first asked.
//! - The records come from one query and the rule is compiled once, so the
//!   work per domain is the conditions' comparisons only.
//! - A request is one query against the monthly quota whatever its size:
//!   the API-key layer counts it, and nothing here counts domains.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::rules::{ScoreBreakdown, tier};
use super::service::{self, ResolvedRule};
use crate::domains::record::DomainRecord;
use crate::domains::store as pool;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;

/// spec/2 "Limits": batch scoring, 100 domains per query.
pub const MAX_BATCH_DOMAINS: usize = 100;

use outreach_core::error::details::{DOMAIN_NOT_FOUND, INVALID_DOMAIN_FORMAT};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScoreRequest {
    /// A domain or URL of a company in the pool.
    pub domain: String,
    /// The rule to use; the first default rule (`default`) when absent.
    #[serde(default)]
    pub rule_id: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScoreBatchRequest {
    /// 1-100 domains or URLs of companies in the pool.
    pub domains: Vec<String>,
    /// The rule to use; the first default rule (`default`) when absent.
    #[serde(default)]
    pub rule_id: Option<String>,
}

/// spec/2 "Scoring result".
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ScoringResult {
    /// As normalised.
    pub domain: String,
    pub rule_id: String,
    pub rule_name: String,
    /// The matched conditions' points, clamped to 0-100.
    pub score: i64,
    /// hot (80+), warm (50-79), neutral (20-49) or cold (below 20).
    pub tier: String,
    /// Every condition of the rule, in the rule's order.
    pub breakdown: Vec<ScoreBreakdown>,
}

/// The pool's normalisation, its refusal as spec/2's 400.
pub fn normalise(input: &str) -> ApiResult<String> {
    outreach_domain_analysis::domain::normalise(input)
        .map_err(|_| ApiError::bad_request(INVALID_DOMAIN_FORMAT))
}

/// One record's result under a rule.
pub fn result(rule: &ResolvedRule, record: &DomainRecord) -> ScoringResult {
    let s = rule.rule.evaluate(record);
    ScoringResult {
        domain: record.domain.clone(),
        rule_id: rule.id.clone(),
        rule_name: rule.name.clone(),
        score: s.score,
        tier: tier(s.score).to_owned(),
        breakdown: s.breakdown,
    }
}

/// `POST /v1/scoring`.
pub async fn score(
    state: &AppState,
    caller: &Caller,
    body: ScoreRequest,
) -> ApiResult<ScoringResult> {
    let domain = normalise(&body.domain)?;
    let rule = service::resolve(state, caller.account_id, body.rule_id.as_deref()).await?;
    let stored = pool::find(&state.db, &domain)
        .await?
        .ok_or_else(|| ApiError::NotFound(DOMAIN_NOT_FOUND.to_owned()))?;
    Ok(result(&rule, &stored.record))
}

/// `POST /v1/scoring/batch`.
pub async fn score_batch(
    state: &AppState,
    caller: &Caller,
    body: ScoreBatchRequest,
) -> ApiResult<Vec<ScoringResult>> {
    if body.domains.is_empty() || body.domains.len() > MAX_BATCH_DOMAINS {
        return Err(ApiError::bad_request(format!(
            "domains must hold 1 to {MAX_BATCH_DOMAINS} entries"
        )));
    }
    let mut domains: Vec<String> = Vec::with_capacity(body.domains.len());
    for input in &body.domains {
        let d = normalise(input)?;
        if !domains.contains(&d) {
            domains.push(d);
        }
    }
    let rule = service::resolve(state, caller.account_id, body.rule_id.as_deref()).await?;
    score_domains(state, &rule, &domains).await
}

/// Scores `domains` (normalised, distinct) in their order, reading their
/// records with one query; 404 when the pool lacks any of them.
pub async fn score_domains(
    state: &AppState,
    rule: &ResolvedRule,
    domains: &[String],
) -> ApiResult<Vec<ScoringResult>> {
    let found = pool::find_many(&state.db, domains).await?;
    let by_domain = pool::by_domain(&found);
    let missing: Vec<&str> = domains
        .iter()
        .map(String::as_str)
        .filter(|d| !by_domain.contains_key(d))
        .collect();
    if !missing.is_empty() {
        tracing::debug!(missing = ?missing, "scoring domains the pool lacks");
        return Err(ApiError::NotFound(DOMAIN_NOT_FOUND.to_owned()));
    }
    Ok(domains
        .iter()
        .map(|d| result(rule, by_domain[d.as_str()]))
        .collect())
}
