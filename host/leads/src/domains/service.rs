//! Rules of the enrichment and domain-search endpoints (spec/1 "Inbox",
//! last paragraph: they appear only by path; ARCHITECTURE.md "Domain pool"
//! records the shapes decided here).
//!
//! - A domain parameter is normalised the one way the pool knows
//!   (`outreach_domain_analysis::domain::normalise`); what it refuses is 400
//!   with the reason.
//! - Asking for a domain the pool does not have adds it (source `api`),
//!   queues its enrichment and answers 202 `{domain, status: "queued"}`; a
//!   domain added that way and still on its way answers 202 with its
//!   status. The asking account gets a `domain.enriched` event when the
//!   enrichment finishes.
//! - An imported record is a record (ARCHITECTURE.md "Imported records"):
//!   it answers 200 as it stands, `status: "imported"` with the fields the
//!   import carried, and asking for it queues its first enrichment (once)
//!   so it fills in later.
//! - A record whose enrichment failed in every stage answers 200 with
//!   `status: "failed"` and the reasons in `enrichment_errors`.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::pipeline;
use super::record::{DomainRecord, ENRICHED, FAILED, IMPORTED, QUEUED, StoredDomain, Technology};
use super::store::{self, SearchFilter};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{one_of, within};
use outreach_core::state::AppState;

/// The most domains one bulk request may name.
pub const MAX_BULK_DOMAINS: usize = 200;

#[derive(Debug, Deserialize, IntoParams)]
pub struct DomainQuery {
    /// A domain or URL; reduced to the registrable domain.
    pub domain: String,
}

/// A domain that is not enriched yet.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Pending {
    pub domain: String,
    /// queued or enriching.
    pub status: String,
}

/// The answer for one domain: its record, or that it is on its way.
pub enum Lookup {
    Ready(Box<DomainRecord>),
    Pending(Pending),
}

/// The pool's normalisation, with its refusal as a 400.
pub fn normalise(input: &str) -> ApiResult<String> {
    outreach_domain_analysis::domain::normalise(input)
        .map_err(|e| ApiError::bad_request(format!("Invalid domain '{}': {e}", clip(input))))
}

/// Input shown back in an error, cut so a hostile parameter stays short.
fn clip(input: &str) -> String {
    input.chars().take(100).collect()
}

/// `GET /v1/enrichment/domain`.
pub async fn domain(state: &AppState, caller: &Caller, query: DomainQuery) -> ApiResult<Lookup> {
    let domain = normalise(&query.domain)?;
    let mut looked = lookup(state, caller.account_id, &[domain]).await?;
    Ok(looked.remove(0))
}

/// The records of `domains` (normalised, distinct), in their order; the
/// unknown ones are added to the pool and queued, and `account_id` waits
/// for every one not enriched yet (`POST /v1/enrichment/bulk`, and the
/// workflows' enrich action through `crate::ports`).
pub async fn lookup(
    state: &AppState,
    account_id: i64,
    domains: &[String],
) -> ApiResult<Vec<Lookup>> {
    let found = store::find_many(&state.db, domains).await?;
    let mut answers = Vec::with_capacity(domains.len());
    let mut waiting = Vec::new();
    for domain in domains {
        match found.iter().find(|s| &s.record.domain == domain) {
            Some(s) if s.record.status == IMPORTED => {
                // Submitting queues it only if it was never queued.
                waiting.push(domain.clone());
                answers.push(Lookup::Ready(Box::new(s.record.clone())));
            }
            Some(s) if s.record.status == ENRICHED || s.record.status == FAILED => {
                answers.push(Lookup::Ready(Box::new(s.record.clone())));
            }
            Some(s) => {
                waiting.push(domain.clone());
                answers.push(Lookup::Pending(Pending {
                    domain: domain.clone(),
                    status: s.record.status.clone(),
                }));
            }
            None => {
                waiting.push(domain.clone());
                answers.push(Lookup::Pending(Pending {
                    domain: domain.clone(),
                    status: QUEUED.into(),
                }));
            }
        }
    }
    if !waiting.is_empty() {
        pipeline::submit(state, &waiting, "api", Some(account_id)).await?;
    }
    Ok(answers)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DomainBulkRequest {
    /// 1-200 domains or URLs.
    pub domains: Vec<String>,
}

/// One domain of a bulk answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct DomainBulkItem {
    /// As normalised (repeats in the request answer once).
    pub domain: String,
    /// imported, queued, enriching, enriched or failed.
    pub status: String,
    /// The record when imported, enriched or failed; null while a domain
    /// new to the pool is queued or being enriched.
    pub record: Option<DomainRecord>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DomainBulkAnswer {
    pub data: Vec<DomainBulkItem>,
    /// How many have no record yet (queued or being enriched).
    pub queued: usize,
}

/// `POST /v1/enrichment/bulk`.
pub async fn bulk(
    state: &AppState,
    caller: &Caller,
    body: DomainBulkRequest,
) -> ApiResult<DomainBulkAnswer> {
    if body.domains.is_empty() || body.domains.len() > MAX_BULK_DOMAINS {
        return Err(ApiError::bad_request(format!(
            "domains must hold 1 to {MAX_BULK_DOMAINS} entries"
        )));
    }
    let mut domains: Vec<String> = Vec::with_capacity(body.domains.len());
    for input in &body.domains {
        let d = normalise(input)?;
        if !domains.contains(&d) {
            domains.push(d);
        }
    }
    let answers = lookup(state, caller.account_id, &domains).await?;
    let mut queued = 0;
    let data = answers
        .into_iter()
        .map(|a| match a {
            Lookup::Ready(r) => DomainBulkItem {
                domain: r.domain.clone(),
                status: r.status.clone(),
                record: Some(*r),
            },
            Lookup::Pending(p) => {
                queued += 1;
                DomainBulkItem {
                    domain: p.domain,
                    status: p.status,
                    record: None,
                }
            }
        })
        .collect();
    Ok(DomainBulkAnswer { data, queued })
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TechStack {
    pub domain: String,
    pub technologies: Vec<Technology>,
    pub enriched_at: Option<String>,
}

/// `GET /v1/enrichment/tech-stack`: the record's technologies, or 202 as
/// for the record itself.
pub async fn tech_stack(
    state: &AppState,
    caller: &Caller,
    query: DomainQuery,
) -> ApiResult<Result<TechStack, Pending>> {
    Ok(match domain(state, caller, query).await? {
        Lookup::Ready(r) => Ok(TechStack {
            domain: r.domain,
            technologies: r.technologies,
            enriched_at: r.enriched_at,
        }),
        Lookup::Pending(p) => Err(p),
    })
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct SearchQuery {
    /// Words in the company name, summary or domain.
    pub q: Option<String>,
    pub industry: Option<String>,
    /// ISO 3166-1 alpha-2: the registrant's country, else the server's.
    pub country: Option<String>,
    /// Comma-separated technology names, all required.
    pub technologies: Option<String>,
    /// Comma-separated signal names (either of spec/2's sets), all required.
    pub signals: Option<String>,
    pub business_type: Option<String>,
    /// 0.0-1.0.
    pub min_confidence: Option<f64>,
    /// 0-100.
    pub min_intent_score: Option<i64>,
    /// A date (`2024-01-31`) or timestamp; registered strictly after it.
    pub registered_after: Option<String>,
    /// intent_score (default), confidence, created_at, enriched_at,
    /// registered_at, completeness_score or domain.
    pub sort: Option<String>,
    /// desc (default) or asc.
    pub order: Option<String>,
    /// 1-200, default 50.
    pub limit: Option<i64>,
    /// 0-10000, default 0.
    pub offset: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SearchAnswer {
    pub data: Vec<DomainRecord>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

/// spec/2's business types, as the classifiers answer them.
pub use outreach_domain_analysis::classify::BUSINESS_TYPES;

const SORTS: &[&str] = &[
    "intent_score",
    "confidence",
    "created_at",
    "enriched_at",
    "registered_at",
    "completeness_score",
    "domain",
];

/// `GET /v1/search/domains`.
pub async fn search(state: &AppState, query: SearchQuery) -> ApiResult<SearchAnswer> {
    let list = |v: &Option<String>| -> Vec<String> {
        v.as_deref()
            .unwrap_or("")
            .split(',')
            .map(|s| s.trim().to_lowercase())
            .filter(|s| !s.is_empty())
            .collect()
    };
    fn text(v: &Option<String>) -> Option<&str> {
        v.as_deref().map(str::trim).filter(|s| !s.is_empty())
    }
    let sort = text(&query.sort).unwrap_or("intent_score");
    one_of("sort", sort, SORTS)?;
    let order = text(&query.order).unwrap_or("desc");
    one_of("order", order, &["asc", "desc"])?;
    if let Some(b) = text(&query.business_type) {
        one_of("business_type", b, &BUSINESS_TYPES)?;
    }
    if let Some(c) = query.min_confidence
        && !(0.0..=1.0).contains(&c)
    {
        return Err(ApiError::bad_request(
            "min_confidence must be between 0 and 1",
        ));
    }
    if let Some(s) = query.min_intent_score {
        within("min_intent_score", s, 0..=100)?;
    }
    let country = text(&query.country);
    if let Some(c) = country
        && !(c.len() == 2 && c.chars().all(|ch| ch.is_ascii_alphabetic()))
    {
        return Err(ApiError::bad_request(
            "country must be an ISO 3166-1 alpha-2 code",
        ));
    }
    let registered_after = match text(&query.registered_after) {
        Some(t) => Some(parse_date(t).ok_or_else(|| {
            ApiError::bad_request(
                "registered_after must be a date (YYYY-MM-DD) or an RFC 3339 time",
            )
        })?),
        None => None,
    };
    let limit = within("limit", query.limit.unwrap_or(50), 1..=200)?;
    let offset = within("offset", query.offset.unwrap_or(0), 0..=10_000)?;
    let filter = SearchFilter {
        q: text(&query.q).map(str::to_lowercase),
        industry: text(&query.industry).map(str::to_owned),
        country: country.map(str::to_owned),
        technologies: list(&query.technologies),
        signals: list(&query.signals),
        business_type: text(&query.business_type).map(str::to_owned),
        min_confidence: query.min_confidence,
        min_intent_score: query.min_intent_score,
        registered_after,
        sort: SORTS
            .iter()
            .find(|s| **s == sort)
            .copied()
            .unwrap_or("intent_score"),
        descending: order == "desc",
        limit,
        offset,
    };
    let (rows, total) = store::search(&state.db, &filter).await?;
    Ok(SearchAnswer {
        data: rows.into_iter().map(|s: StoredDomain| s.record).collect(),
        total,
        limit,
        offset,
    })
}

/// Milliseconds of a `YYYY-MM-DD` date (midnight UTC) or an RFC 3339 time.
pub fn parse_date(text: &str) -> Option<i64> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(t.timestamp_millis());
    }
    let day = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    Some(day.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis())
}
