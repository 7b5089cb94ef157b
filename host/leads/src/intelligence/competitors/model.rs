//! Bodies of the competitor endpoints.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domains::record::DomainRecord;
use crate::intelligence::reports::IndustryStats;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCompetitor {
    /// Lower case, without protocol or path: `example.com`.
    pub domain: String,
    /// An industry of the taxonomy, any case; without it the pool
    /// record's industry is shown.
    pub industry: Option<String>,
    /// Up to 2000 characters.
    pub notes: Option<String>,
    /// Where this competitor's news may be sent; null for none.
    pub alert_email: Option<String>,
}

/// What the pool's record says of the competitor.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CompetitorEnrichment {
    pub industry: Option<String>,
    /// The registrant's country, else the server's.
    pub country: Option<String>,
    pub confidence: f64,
    pub website_email: Option<String>,
    pub business_type: String,
}

/// spec/2's competitor resource.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Competitor {
    pub id: i64,
    pub domain: String,
    /// The one given, else the pool record's; null until it is known.
    pub industry: Option<String>,
    pub notes: String,
    pub created_at: String,
    /// The pool record's last enrichment; null before the first.
    pub last_checked_at: Option<String>,
    pub alert_email: Option<String>,
    /// The pool record's status: queued, enriching, enriched, imported
    /// or failed.
    pub status: String,
    /// null until the record carries facts.
    pub enrichment: Option<CompetitorEnrichment>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompetitorPage {
    pub competitors: Vec<Competitor>,
    pub count: usize,
    /// null: unlimited.
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RefreshAnswer {
    pub id: i64,
    pub domain: String,
    /// `queued`, or `already_queued` when an enrichment of the record's
    /// current state is waiting or running.
    pub status: String,
}

/// One enrichment of the competitor's domain, as snapshotted.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EnrichmentEntry {
    pub enriched_at: String,
    pub industry: Option<String>,
    pub confidence: f64,
    pub summary: Option<String>,
    /// Technology names.
    pub technologies: Vec<String>,
    /// Alert and audience signals.
    pub signals: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FieldChange {
    pub field_changed: String,
    pub old_value: Option<String>,
    pub new_value: Option<String>,
    pub detected_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Activity {
    /// The start of the 90 days.
    pub since: String,
    /// Newest first.
    pub enrichments: Vec<EnrichmentEntry>,
    /// Changes of the monitored fields, newest first.
    pub changes: Vec<FieldChange>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompetitorDetail {
    pub competitor: Competitor,
    /// The pool's record; null until the domain is in it with facts.
    pub record: Option<DomainRecord>,
    pub activity: Activity,
}

/// Names added and removed between two enrichments.
#[derive(Debug, Serialize, ToSchema)]
pub struct SetDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TextDiff {
    pub changed: bool,
    pub before: Option<String>,
    pub after: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompetitorAnalysis {
    pub id: i64,
    pub domain: String,
    /// Snapshots kept of the domain's enrichments.
    pub enrichments: i64,
    /// false with fewer than two enrichments; the diffs are then null.
    pub comparable: bool,
    pub message: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub signals: Option<SetDiff>,
    pub technologies: Option<SetDiff>,
    pub summary: Option<TextDiff>,
    pub industry: Option<TextDiff>,
    pub confidence: Option<ConfidenceChange>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ConfidenceChange {
    pub before: f64,
    pub after: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ShareIndustry {
    #[serde(flatten)]
    pub stats: IndustryStats,
    /// The account's competitors in this industry.
    pub competitors: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompetitorShare {
    pub id: i64,
    pub domain: String,
    pub industry: Option<String>,
    /// Records of the competitor's industry in the pool.
    pub industry_domain_count: i64,
    /// industry_domain_count over total_market_domains, in percent.
    pub industry_share_pct: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MarketShare {
    /// The industries of the account's competitors, largest first.
    pub industries: Vec<ShareIndustry>,
    pub competitors: Vec<CompetitorShare>,
    /// Records in the pool with an industry.
    pub total_market_domains: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NewDomain {
    pub domain: String,
    pub confidence: f64,
    /// When it entered the pool.
    pub entered_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DigestEntry {
    pub id: i64,
    pub domain: String,
    pub industry: Option<String>,
    /// Records of the industry that entered the pool in the 7 days, the
    /// competitor's own domain left out.
    pub new_count: i64,
    /// The newest 50 of them.
    pub new_domains: Vec<NewDomain>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Digest {
    pub since: String,
    pub competitors: Vec<DigestEntry>,
}
