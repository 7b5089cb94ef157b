//! The shapes of spec/2 "Watched domain" and its change record, and the
//! request bodies and answers of "Watchlist".

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::domains::facets::Monitored;

/// The monitored fields as the watch last saw them. The snapshot is kept as
/// text (as change records show values); here the flag and the confidence
/// read as what they are.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Snapshot {
    pub industry: Option<String>,
    pub sub_industry: Option<String>,
    pub website_email: Option<String>,
    pub summary: Option<String>,
    pub is_trusted: Option<bool>,
    /// 0.0-1.0.
    pub confidence: Option<f64>,
}

impl From<&Monitored> for Snapshot {
    fn from(m: &Monitored) -> Snapshot {
        Snapshot {
            industry: m.industry.clone(),
            sub_industry: m.sub_industry.clone(),
            website_email: m.website_email.clone(),
            summary: m.summary.clone(),
            is_trusted: m.is_trusted.as_deref().map(|t| t == "true"),
            confidence: m.confidence.as_deref().and_then(|c| c.parse().ok()),
        }
    }
}

/// One change of one monitored field (spec/2 "Change record").
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChangeRecord {
    pub id: i64,
    pub watchlist_id: i64,
    /// One of the six monitored fields.
    pub field_changed: String,
    /// As text (`true`, `0.80`); null when the field had no value.
    pub old_value: Option<String>,
    pub new_value: Option<String>,
    pub detected_at: String,
}

/// A watched domain (spec/2 "Watched domain").
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchedDomain {
    pub id: i64,
    pub domain: String,
    /// Null until the record first has facts (it was added before its
    /// enrichment finished).
    pub last_snapshot: Option<Snapshot>,
    pub alert_on_industry_change: bool,
    pub alert_on_email_change: bool,
    pub alert_on_tech_change: bool,
    pub alert_on_status_change: bool,
    /// When the record was last compared with the snapshot.
    pub last_checked_at: Option<String>,
    /// When a comparison last found a change.
    pub last_changed_at: Option<String>,
    pub created_at: String,
    /// The latest five change records, newest first.
    pub recent_changes: Vec<ChangeRecord>,
    pub total_changes: i64,
}

/// `GET /v1/watchlist`.
#[derive(Debug, Serialize, ToSchema)]
pub struct WatchlistPage {
    /// Oldest first.
    pub domains: Vec<WatchedDomain>,
    /// The plan's cap; null when unlimited.
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
}

/// `POST /v1/watchlist`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWatch {
    /// A domain or URL; reduced to the registrable domain.
    pub domain: String,
    /// Default true.
    pub alert_on_industry_change: Option<bool>,
    /// Default true.
    pub alert_on_email_change: Option<bool>,
    /// Default true.
    pub alert_on_tech_change: Option<bool>,
    /// Default true.
    pub alert_on_status_change: Option<bool>,
}

/// `PUT /v1/watchlist/{watch_id}`: the preferences given change.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchUpdate {
    pub alert_on_industry_change: Option<bool>,
    pub alert_on_email_change: Option<bool>,
    pub alert_on_tech_change: Option<bool>,
    pub alert_on_status_change: Option<bool>,
}

/// `POST /v1/watchlist/bulk`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkWatch {
    /// 1-50 domains or URLs, watched with the default preferences.
    pub domains: Vec<String>,
}

/// The answer to a bulk add.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkWatchResult {
    pub added: usize,
    /// Domains already watched or repeated in the request.
    pub skipped: usize,
    /// Domains the account watches now.
    pub total: u64,
    /// The plan's cap; null when unlimited.
    pub limit: Option<u64>,
}

/// `GET /v1/watchlist/{watch_id}/history`.
#[derive(Debug, Deserialize, IntoParams)]
pub struct HistoryQuery {
    /// 1-200, default 50.
    pub limit: Option<i64>,
    /// Default 0.
    pub offset: Option<i64>,
    /// Only changes of this monitored field: industry, sub_industry,
    /// website_email, summary, is_trusted or confidence.
    pub field: Option<String>,
}

/// A watch's change records, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct History {
    pub domain: String,
    pub watchlist_id: i64,
    /// Change records matching the filter, on every page.
    pub total: i64,
    pub changes: Vec<ChangeRecord>,
}

/// `GET /v1/watchlist/changes`.
#[derive(Debug, Deserialize, IntoParams)]
pub struct ChangesQuery {
    /// 1-200, default 50.
    pub limit: Option<i64>,
}

/// A change record with its watch's domain.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountChange {
    #[serde(flatten)]
    pub change: ChangeRecord,
    pub domain: String,
}

/// The account's latest change records across its watches, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountChanges {
    /// Change records of the account's current watches.
    pub total: i64,
    pub changes: Vec<AccountChange>,
}

/// One changed field, as the check and `watchlist.change` show it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FieldChange {
    pub field: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// What the pool holds for the domain now.
#[derive(Debug, Serialize, ToSchema)]
pub struct Current {
    pub domain: String,
    pub industry: Option<String>,
    pub website_email: Option<String>,
    /// 0.0-1.0; null while the record has no facts.
    pub confidence: Option<f64>,
}

/// `GET /v1/watchlist/{watch_id}/check`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CheckResult {
    pub domain: String,
    pub has_changes: bool,
    /// Every changed field, whatever the preferences (they govern events).
    pub changes: Vec<FieldChange>,
    pub current: Current,
}
