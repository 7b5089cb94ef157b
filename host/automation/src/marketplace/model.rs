//! Bodies of spec/3 "Marketplace entry" and its endpoints.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::templates::model::Placeholder;
use crate::workflows::model::{WorkflowAction, WorkflowCondition, WorkflowExecutionLimits};

/// Categories an entry may have (docs/decisions/marketplace.md).
pub const CATEGORIES: &[&str] = &[
    "outbound",
    "enrichment",
    "monitoring",
    "notifications",
    "data-cleanup",
    "scoring",
    "ai",
    "integrations",
];
pub const DIFFICULTIES: &[&str] = &["beginner", "intermediate", "advanced"];
pub const SORTS: &[&str] = &["popular", "newest", "top_rated"];
pub const MAX_TAGS: usize = 10;
pub const MAX_TAG_CHARS: usize = 30;
pub const MAX_PAGE_SIZE: i64 = 50;
pub const DEFAULT_PAGE_SIZE: i64 = 20;

/// spec/3 "Marketplace entry", plus the published trigger settings,
/// conditions and the placeholders an installer fills.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MarketplaceEntry {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub category: String,
    pub tags: Vec<String>,
    pub difficulty: String,
    pub trigger_type: String,
    #[schema(value_type = Object)]
    pub trigger_config: Value,
    pub conditions: Vec<WorkflowCondition>,
    pub actions: Vec<WorkflowAction>,
    pub placeholders: Vec<Placeholder>,
    /// The publishing user (the account's id for an operator's key).
    pub user_id: i64,
    pub author_handle: String,
    pub install_count: i64,
    pub rating_sum: i64,
    pub rating_count: i64,
    /// rating_sum / rating_count, two decimals; 0 without ratings.
    pub average_rating: f64,
    pub is_public: bool,
    pub created_at: String,
}

/// What publishing stores besides the entry's own fields: the scrubbed
/// definition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PublishedDefinition {
    pub trigger_config: Value,
    pub conditions: Vec<WorkflowCondition>,
    pub actions: Vec<WorkflowAction>,
    #[serde(default)]
    pub execution_limits: WorkflowExecutionLimits,
    #[serde(default)]
    pub retry_failed: bool,
}

/// `POST /v1/workflows/{id}/publish`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishInput {
    /// 1-200 characters, unique among the author's entries (any case);
    /// default the workflow's name.
    pub name: Option<String>,
    /// Default the workflow's description.
    pub description: Option<String>,
    /// One of outbound, enrichment, monitoring, notifications,
    /// data-cleanup, scoring, ai, integrations.
    pub category: String,
    /// Up to 10 tags of 1-30 characters.
    pub tags: Option<Vec<String>>,
    /// beginner, intermediate or advanced; default from the number of
    /// actions (up to 3 beginner, up to 8 intermediate).
    pub difficulty: Option<String>,
    /// Default true; false keeps the entry visible to its author only.
    pub is_public: Option<bool>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct MarketplaceQuery {
    pub category: Option<String>,
    /// beginner, intermediate or advanced.
    pub difficulty: Option<String>,
    /// popular (default: installs), newest, top_rated.
    pub sort: Option<String>,
    /// From 1, default 1.
    pub page: Option<i64>,
    /// 1-50, default 20.
    pub limit: Option<i64>,
    /// Substring of the name or description, any case.
    pub q: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MarketplacePage {
    pub items: Vec<MarketplaceEntry>,
    pub total: i64,
    pub page: i64,
    pub pages: i64,
}

/// `POST /v1/workflows/marketplace/{id}/rate`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RateEntryInput {
    /// Integer 1-5.
    #[schema(value_type = i64)]
    pub rating: Value,
    /// Up to 2000 characters.
    pub review: Option<String>,
}
