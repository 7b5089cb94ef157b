//! Bodies of spec/2 "Audiences", and the audience filters with their
//! checks.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domains::facet_filter::{
    FacetFilter, check_business_type, check_country, check_industry, check_percent, check_signal,
};
use crate::domains::facets::audience_bits;
use outreach_core::error::ApiResult;
use outreach_domain_analysis::signals::AUDIENCE_SIGNALS;

/// spec/2's audience filters; every field may be left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AudienceFilters {
    /// Industries of the taxonomy (any of them), any case.
    #[serde(default)]
    pub industries: Vec<String>,
    /// ISO 3166-1 alpha-2 codes (any of them): the registrant's country,
    /// else the web server's.
    #[serde(default)]
    pub countries: Vec<String>,
    /// 0-100: the record's confidence in percent at least.
    #[serde(default)]
    pub min_confidence: i64,
    /// Audience signals that must all be present.
    #[serde(default)]
    pub required_signals: Vec<String>,
    /// Audience signals none of which may be present.
    #[serde(default)]
    pub excluded_signals: Vec<String>,
    /// Business types (any of them), for example `B2B`.
    #[serde(default)]
    pub business_types: Vec<String>,
    /// 0-100.
    #[serde(default)]
    pub min_intent_score: i64,
}

fn each(
    field: &str,
    values: &[String],
    check: impl Fn(&str, &str) -> ApiResult<String>,
) -> ApiResult<Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(values.len());
    for v in values {
        let v = check(field, v)?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

impl AudienceFilters {
    /// The filters in their canonical spelling (taxonomy names, upper-case
    /// codes, no repeats), or 400 naming the first unknown value.
    pub fn checked(&self) -> ApiResult<AudienceFilters> {
        let signal = |field: &str, v: &str| check_signal(field, v, &AUDIENCE_SIGNALS);
        Ok(AudienceFilters {
            industries: each("industries", &self.industries, check_industry)?,
            countries: each("countries", &self.countries, check_country)?,
            min_confidence: check_percent("min_confidence", self.min_confidence)?,
            required_signals: each("required_signals", &self.required_signals, signal)?,
            excluded_signals: each("excluded_signals", &self.excluded_signals, signal)?,
            business_types: each("business_types", &self.business_types, check_business_type)?,
            min_intent_score: check_percent("min_intent_score", self.min_intent_score)?,
        })
    }

    /// The pool filter of checked filters.
    pub fn compile(&self) -> FacetFilter {
        FacetFilter {
            industries: self.industries.iter().map(|i| i.to_lowercase()).collect(),
            countries: self.countries.clone(),
            min_confidence: self.min_confidence,
            min_intent_score: self.min_intent_score,
            required_bits: audience_bits(&self.required_signals),
            excluded_bits: audience_bits(&self.excluded_signals),
            business_types: self.business_types.clone(),
        }
    }
}

/// An audience as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Audience {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub filters: AudienceFilters,
    /// Pool records the filters match now.
    pub match_count: i64,
    /// Domains that started matching since the audience was last read
    /// with `GET /v1/audiences/{id}`.
    pub new_since_viewed: i64,
    pub is_active: bool,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AudienceList {
    pub audiences: Vec<Audience>,
    pub count: usize,
    /// The plan's cap; null when unlimited.
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAudience {
    /// 1-200 characters.
    pub name: String,
    /// Up to 1000 characters.
    #[serde(default)]
    pub description: Option<String>,
    pub filters: AudienceFilters,
    /// Default true.
    #[serde(default)]
    pub is_active: Option<bool>,
}

/// "Fields as create": the fields sent change, the others keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAudience {
    pub name: Option<String>,
    pub description: Option<String>,
    pub filters: Option<AudienceFilters>,
    pub is_active: Option<bool>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AudiencePreviewRequest {
    pub filters: AudienceFilters,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AudienceSample {
    pub domain: String,
    pub industry: Option<String>,
    /// 0-1.
    pub confidence: f64,
    pub country: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AudiencePreview {
    pub match_count: i64,
    /// Up to 10, newest enrichment first.
    pub sample_domains: Vec<AudienceSample>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AudienceSignalList {
    pub signals: Vec<&'static str>,
}
