//! Canonical result shapes of spec/3, as the server serialises them. The
//! guest fills the vendor-derived fields; the host adds latency, cost and
//! the cache flag, which the guest cannot know.

use crate::bindings::types as wit;
use serde::{Deserialize, Serialize};

/// spec/3 "Verification result".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerificationResult {
    pub email: String,
    pub provider: String,
    /// valid, invalid, risky, unknown
    pub status: String,
    /// deliverable, undeliverable, risky, unknown
    pub deliverability: String,
    pub is_disposable: bool,
    pub is_role: bool,
    pub is_catch_all: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    pub raw_status: String,
    pub latency_ms: u64,
    pub cost_estimate_usd: f64,
    #[serde(rename = "_cache_hit")]
    pub cache_hit: bool,
}

/// spec/3 "Enrichment result".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnrichmentResult {
    pub domain: String,
    pub provider: String,
    pub name: Option<String>,
    pub legal_name: Option<String>,
    pub description: Option<String>,
    pub founded_year: Option<i32>,
    pub employee_count: Option<i64>,
    pub employee_range: Option<String>,
    pub annual_revenue_usd: Option<f64>,
    pub total_funding_usd: Option<f64>,
    pub latest_funding_stage: Option<String>,
    pub industry: Option<String>,
    pub subindustry: Option<String>,
    pub hq_country: Option<String>,
    pub hq_city: Option<String>,
    pub linkedin_url: Option<String>,
    pub twitter_handle: Option<String>,
    pub technologies: Vec<String>,
    pub latency_ms: u64,
    pub cost_estimate_usd: f64,
    /// Vendor-native JSON object.
    pub raw: serde_json::Value,
    #[serde(rename = "_cache_hit")]
    pub cache_hit: bool,
}

/// A template as its pack gives it (spec/3 "Template"); the templates area adds
/// the price, the per-account `owned` flag and derived industries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Template {
    pub id: String,
    pub name: String,
    pub description: String,
    /// beginner, intermediate, advanced
    pub tag: String,
    pub trigger_type: String,
    pub trigger_config: serde_json::Value,
    pub actions: serde_json::Value,
    pub conditions: serde_json::Value,
    /// The pack's own price; `None` leaves it to the tag's default, which
    /// the templates area decides.
    pub price_cents: Option<u32>,
    pub industries: Vec<String>,
    /// Id of the pack plugin that provided it.
    pub pack: String,
}

/// One LLM completion with its measured latency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completion {
    pub model: String,
    pub content: String,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub finish_reason: String,
    pub latency_ms: u64,
}

/// Workflow action output: items are parsed JSON values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionOutput {
    pub items: Vec<serde_json::Value>,
    pub previous_result: Option<serde_json::Value>,
}

/// Describe answer of a workflow action, schema parsed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionDescriptor {
    pub type_name: String,
    pub display_name: String,
    pub description: String,
    pub config_schema: serde_json::Value,
}

pub(crate) fn status(s: wit::VerificationStatus) -> &'static str {
    match s {
        wit::VerificationStatus::Valid => "valid",
        wit::VerificationStatus::Invalid => "invalid",
        wit::VerificationStatus::Risky => "risky",
        wit::VerificationStatus::Unknown => "unknown",
    }
}

pub(crate) fn deliverability(d: wit::Deliverability) -> &'static str {
    match d {
        wit::Deliverability::Deliverable => "deliverable",
        wit::Deliverability::Undeliverable => "undeliverable",
        wit::Deliverability::Risky => "risky",
        wit::Deliverability::Unknown => "unknown",
    }
}

pub(crate) fn verification(
    r: wit::VerificationResult,
    latency_ms: u64,
    cost: f64,
) -> VerificationResult {
    VerificationResult {
        email: r.email,
        provider: r.provider,
        status: status(r.status).into(),
        deliverability: deliverability(r.deliverability).into(),
        is_disposable: r.is_disposable,
        is_role: r.is_role,
        is_catch_all: r.is_catch_all,
        confidence: r
            .confidence
            .filter(|c| c.is_finite())
            .map(|c| c.clamp(0.0, 1.0)),
        raw_status: r.raw_status,
        latency_ms,
        cost_estimate_usd: cost,
        cache_hit: false,
    }
}

pub(crate) fn enrichment(
    r: wit::EnrichmentResult,
    latency_ms: u64,
    cost: f64,
) -> Result<EnrichmentResult, String> {
    let raw = if r.raw.trim().is_empty() {
        serde_json::Value::Object(Default::default())
    } else {
        serde_json::from_str(&r.raw).map_err(|e| format!("raw is not JSON: {e}"))?
    };
    Ok(EnrichmentResult {
        domain: r.domain,
        provider: r.provider,
        name: r.name,
        legal_name: r.legal_name,
        description: r.description,
        founded_year: r.founded_year,
        employee_count: r.employee_count,
        employee_range: r.employee_range,
        annual_revenue_usd: r.annual_revenue_usd,
        total_funding_usd: r.total_funding_usd,
        latest_funding_stage: r.latest_funding_stage,
        industry: r.industry,
        subindustry: r.subindustry,
        hq_country: r.hq_country,
        hq_city: r.hq_city,
        linkedin_url: r.linkedin_url,
        twitter_handle: r.twitter_handle,
        technologies: r.technologies,
        latency_ms,
        cost_estimate_usd: cost,
        raw,
        cache_hit: false,
    })
}

fn json(what: &str, text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| format!("{what} is not JSON: {e}"))
}

pub(crate) fn template(t: wit::Template, pack: &str) -> Result<Template, String> {
    let tag = match t.tag {
        wit::TemplateTag::Beginner => "beginner",
        wit::TemplateTag::Intermediate => "intermediate",
        wit::TemplateTag::Advanced => "advanced",
    };
    let actions = json("actions", &t.actions)?;
    if !actions.is_array() {
        return Err(format!("template {}: actions must be a JSON array", t.id));
    }
    Ok(Template {
        trigger_config: json("trigger_config", &t.trigger_config)?,
        conditions: json("conditions", &t.conditions)?,
        actions,
        id: t.id,
        name: t.name,
        description: t.description,
        tag: tag.into(),
        trigger_type: t.trigger_type,
        price_cents: t.price_cents,
        industries: t.industries,
        pack: pack.into(),
    })
}
