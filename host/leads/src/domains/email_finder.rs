//! `GET /v1/enrichment/email-finder`: a person's likely addresses at a
//! company, ranked, and verified through the account's verifier chain when
//! it has one.
//!
//! Candidates come from `outreach_domain_analysis::email_patterns`: the
//! patterns of the personal addresses the company's pages publish first,
//! then the common ones. With a verifier chain, candidates are verified in
//! rank order, at most [`MAX_VERIFIED`] of them, stopping at the first
//! deliverable address on a domain that is not catch-all (a catch-all
//! domain accepts every guess, so every guess would look deliverable).
//! Verified candidates are re-ranked: deliverable, then risky or unknown,
//! then undeliverable. A domain the pool does not know is queued for
//! enrichment as a lookup would; its candidates are the common patterns.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::pipeline;
use super::service::normalise;
use super::store;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;
use outreach_domain_analysis::email_patterns;
use outreach_vendors::vendor_keys::catalogue::Family;
use outreach_vendors::{Actor, VendorsExt};

/// Verifications one request may spend.
pub const MAX_VERIFIED: usize = 5;
/// Names longer than this are not names.
const MAX_NAME_CHARS: usize = 100;

#[derive(Debug, Deserialize, IntoParams)]
pub struct FinderQuery {
    pub domain: String,
    pub first_name: String,
    /// Optional: without it only first-name patterns are guessed.
    #[serde(default)]
    pub last_name: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FoundCandidate {
    pub email: String,
    /// The pattern, such as `{first}.{last}`.
    pub pattern: String,
    /// `observed` on the company's pages, or `common`.
    pub source: String,
    /// 0.0-1.0: how likely the address is, verification included.
    pub score: f64,
    /// The verifier's deliverability (`deliverable`, `undeliverable`,
    /// `risky`, `unknown`), null when not verified.
    pub deliverability: Option<String>,
    /// The verifier's full result, null when not verified.
    #[schema(value_type = Option<Object>)]
    pub verification: Option<Value>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FinderAnswer {
    pub domain: String,
    pub first_name: String,
    pub last_name: Option<String>,
    /// Whether the account's verifier chain checked the candidates.
    pub verified: bool,
    /// The domain's enrichment state: the observed patterns come from an
    /// enriched record.
    pub domain_status: String,
    pub candidates: Vec<FoundCandidate>,
}

fn name(field: &str, value: &str) -> ApiResult<String> {
    let value = value.trim();
    if value.chars().count() > MAX_NAME_CHARS {
        return Err(ApiError::bad_request(format!(
            "{field} must be at most {MAX_NAME_CHARS} characters"
        )));
    }
    Ok(value.to_owned())
}

pub async fn find(state: &AppState, caller: &Caller, q: FinderQuery) -> ApiResult<FinderAnswer> {
    let domain = normalise(&q.domain)?;
    let first_name = name("first_name", &q.first_name)?;
    let last_name = q
        .last_name
        .as_deref()
        .map(|l| name("last_name", l))
        .transpose()?;
    let last = last_name.clone().unwrap_or_default();
    if email_patterns::name_part(&first_name).is_empty() {
        return Err(ApiError::bad_request("first_name must contain letters"));
    }

    let stored = store::find(&state.db, &domain).await?;
    let (seen, domain_status) = match &stored {
        Some(s) => (s.emails_seen.clone(), s.record.status.clone()),
        None => {
            pipeline::submit(
                state,
                std::slice::from_ref(&domain),
                "api",
                Some(caller.account_id),
            )
            .await?;
            (Vec::new(), super::record::QUEUED.to_owned())
        }
    };
    let mut candidates: Vec<FoundCandidate> =
        email_patterns::candidates(&first_name, &last, &domain, &seen)
            .into_iter()
            .map(|c| FoundCandidate {
                email: c.email,
                pattern: c.pattern,
                source: c.source,
                score: c.score,
                deliverability: None,
                verification: None,
            })
            .collect();

    let vendors = state.vendors();
    let actor = Actor::from(caller);
    let chain = vendors
        .chain(caller.account_id, Family::Verifier)
        .await
        .ok();
    if let Some(chain) = &chain {
        for candidate in candidates.iter_mut().take(MAX_VERIFIED) {
            let result = match vendors
                .verify_on(chain, &actor, &candidate.email, "email_finder")
                .await
            {
                Ok(result) => result,
                // Every provider failed: the rest would fail the same way.
                Err(e) => {
                    tracing::debug!(error = ?e, "email finder verification failed");
                    break;
                }
            };
            let deliverability = result["deliverability"]
                .as_str()
                .unwrap_or("unknown")
                .to_owned();
            let catch_all = result["is_catch_all"].as_bool().unwrap_or(false);
            candidate.score = rescore(candidate.score, &deliverability, catch_all);
            candidate.deliverability = Some(deliverability.clone());
            candidate.verification = Some(result);
            if deliverability == "deliverable" && !catch_all {
                break;
            }
        }
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
    }
    Ok(FinderAnswer {
        domain,
        first_name,
        last_name,
        verified: chain.is_some(),
        domain_status,
        candidates,
    })
}

/// A guess's score after its verification.
fn rescore(score: f64, deliverability: &str, catch_all: bool) -> f64 {
    let scored = match deliverability {
        "deliverable" if catch_all => score.max(0.5),
        "deliverable" => 0.99,
        "undeliverable" => 0.01,
        _ => score,
    };
    (scored * 100.0).round() / 100.0
}
