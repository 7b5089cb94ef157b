//! Bodies of spec/2 "Alerts", the alert filters and delivery channels.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domains::facet_filter::{
    FacetFilter, check_country, check_industry, check_percent, check_signal,
};
use crate::domains::facets::alert_bits;
use outreach_core::error::ApiResult;
use outreach_core::http::extract::nullable;
use outreach_domain_analysis::signals::ALERT_SIGNALS;

/// spec/2's default `min_intent_score` of an alert rule.
pub const DEFAULT_MIN_INTENT: i64 = 50;

fn default_min_intent() -> i64 {
    DEFAULT_MIN_INTENT
}

/// spec/2's alert filters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertFilters {
    /// An industry of the taxonomy, any case; null for any.
    #[serde(default)]
    pub industry: Option<String>,
    /// ISO 3166-1 alpha-2; null for any.
    #[serde(default)]
    pub country: Option<String>,
    /// 0-100, default 50.
    #[serde(default = "default_min_intent")]
    pub min_intent_score: i64,
    /// Alert signals that must all be present.
    #[serde(default)]
    pub required_signals: Vec<String>,
}

impl Default for AlertFilters {
    fn default() -> Self {
        AlertFilters {
            industry: None,
            country: None,
            min_intent_score: DEFAULT_MIN_INTENT,
            required_signals: Vec::new(),
        }
    }
}

impl AlertFilters {
    /// The filters in canonical spelling, or 400 naming an unknown value.
    pub fn checked(&self) -> ApiResult<AlertFilters> {
        let mut signals: Vec<String> = Vec::new();
        for s in &self.required_signals {
            let s = check_signal("required_signals", s, &ALERT_SIGNALS)?;
            if !signals.contains(&s) {
                signals.push(s);
            }
        }
        Ok(AlertFilters {
            industry: self
                .industry
                .as_deref()
                .map(|i| check_industry("industry", i))
                .transpose()?,
            country: self
                .country
                .as_deref()
                .map(|c| check_country("country", c))
                .transpose()?,
            min_intent_score: check_percent("min_intent_score", self.min_intent_score)?,
            required_signals: signals,
        })
    }

    pub fn compile(&self) -> FacetFilter {
        FacetFilter {
            industries: self.industry.iter().map(|i| i.to_lowercase()).collect(),
            countries: self.country.iter().cloned().collect(),
            min_intent_score: self.min_intent_score,
            required_bits: alert_bits(&self.required_signals),
            ..FacetFilter::default()
        }
    }
}

/// The filters a PUT sends: absent fields keep their value, `null` clears
/// industry or country.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertFiltersChange {
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub industry: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub country: Option<Option<String>>,
    pub min_intent_score: Option<i64>,
    pub required_signals: Option<Vec<String>>,
}

impl AlertFiltersChange {
    pub fn over(self, old: &AlertFilters) -> AlertFilters {
        AlertFilters {
            industry: self.industry.unwrap_or_else(|| old.industry.clone()),
            country: self.country.unwrap_or_else(|| old.country.clone()),
            min_intent_score: self.min_intent_score.unwrap_or(old.min_intent_score),
            required_signals: self
                .required_signals
                .unwrap_or_else(|| old.required_signals.clone()),
        }
    }
}

/// Where a rule's history entries go, as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeliveryChannels {
    pub email: bool,
    pub slack: bool,
    pub in_app: bool,
    /// The Slack incoming-webhook URL, masked (`https://hooks.slack.com/…`);
    /// null when none.
    pub slack_webhook_url: Option<String>,
}

/// Channels as create and PUT send them: absent fields keep their value
/// (on create, spec/2's defaults: email and in_app on, slack off).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertChannelsChange {
    pub email: Option<bool>,
    pub slack: Option<bool>,
    pub in_app: Option<bool>,
    /// A Slack incoming-webhook URL (HTTPS); null removes it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub slack_webhook_url: Option<Option<String>>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AlertRule {
    pub id: i64,
    pub name: String,
    pub filters: AlertFilters,
    pub delivery_channels: DeliveryChannels,
    pub is_active: bool,
    pub last_triggered_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AlertRuleList {
    pub data: Vec<AlertRule>,
    /// The plan's cap on rules; null when unlimited.
    pub plan_limit: Option<u64>,
    pub plan: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAlertRule {
    /// 1-200 characters.
    pub name: String,
    #[serde(default)]
    pub filters: Option<AlertFilters>,
    #[serde(default)]
    pub delivery_channels: Option<AlertChannelsChange>,
    /// Default true.
    #[serde(default)]
    pub is_active: Option<bool>,
}

/// Only the fields sent change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAlertRule {
    pub name: Option<String>,
    pub filters: Option<AlertFiltersChange>,
    pub delivery_channels: Option<AlertChannelsChange>,
    pub is_active: Option<bool>,
}

/// One matched domain of a history entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AlertMatchedDomain {
    pub domain: String,
    pub intent_score: i64,
    /// hot, warm, neutral or cold.
    pub level: String,
    /// The record's alert signals.
    pub signals: Vec<String>,
    pub likely_buys: Vec<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeliveredVia {
    pub email: bool,
    pub in_app: bool,
    pub slack: bool,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AlertHistoryEntry {
    pub id: i64,
    pub alert_id: i64,
    pub alert_name: String,
    pub matched_domains: Vec<AlertMatchedDomain>,
    /// What was actually delivered so far (a channel being retried shows
    /// false until it succeeds).
    pub delivered_via: DeliveredVia,
    pub created_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AlertHistoryPage {
    pub data: Vec<AlertHistoryEntry>,
    pub total: i64,
    pub page: i64,
    pub pages: i64,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct HistoryQuery {
    /// Default 1.
    pub page: Option<i64>,
    /// Default 20, at most 100.
    pub limit: Option<i64>,
    /// Only this rule's entries.
    pub alert_id: Option<i64>,
}

/// A domain the rule would match now.
#[derive(Debug, Serialize, ToSchema)]
pub struct AlertTestMatch {
    pub domain: String,
    pub intent_score: i64,
    pub level: String,
    pub signals: Vec<String>,
    pub likely_buys: Vec<String>,
    /// What the company lacks that it would need.
    pub gaps: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AlertTestResult {
    pub alert_id: i64,
    pub alert_name: String,
    /// Every pool record the rule matches now.
    pub matched_count: i64,
    /// Up to 10, highest intent first.
    pub matched_domains: Vec<AlertTestMatch>,
}
