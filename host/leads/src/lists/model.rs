//! The shapes of spec/2 "Lead list" and "List item", and the request
//! bodies of "Lead lists".

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use outreach_core::http::extract::nullable;

/// A lead list (spec/2 "Lead list").
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LeadList {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub leads_count: i64,
    /// Target conversion rate in percent (0-100), or null.
    pub conversion_goal: Option<f64>,
    pub created_at: String,
    pub updated_at: String,
}

/// `GET /v1/lists`.
#[derive(Debug, Serialize, ToSchema)]
pub struct LeadListPage {
    pub data: Vec<LeadList>,
    pub count: usize,
}

/// One domain of a list (spec/2 "List item").
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ListItem {
    pub id: i64,
    pub domain: String,
    pub notes: String,
    /// discovered, contacted, qualified or converted.
    pub status: String,
    pub added_at: String,
    /// Stamped on every status change; null until the first.
    pub status_changed_at: Option<String>,
}

/// `GET /v1/lists/{id}`: the list and a page of its items, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct LeadListDetail {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub leads_count: i64,
    pub conversion_goal: Option<f64>,
    pub created_at: String,
    pub updated_at: String,
    pub items: Vec<ListItem>,
}

/// What the pool knows of an item's domain; every field but the domain is
/// null while the domain is not in the pool or not enriched yet.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Lead {
    pub domain: String,
    pub industry: Option<String>,
    pub business_type: Option<String>,
    /// 0.0-1.0.
    pub confidence: Option<f64>,
    pub website_email: Option<String>,
    pub registrant_country: Option<String>,
}

/// A list item with its `lead`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EnrichedListItem {
    #[serde(flatten)]
    pub item: ListItem,
    pub lead: Lead,
}

/// `GET /v1/lists/{id}/enriched`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EnrichedLeadList {
    pub id: i64,
    pub name: String,
    pub items: Vec<EnrichedListItem>,
}

/// Paging of a list's items (not in the spec: a list raised past the
/// default 1,000 items by the operator is read a page at a time).
#[derive(Debug, Deserialize, IntoParams)]
pub struct ItemPage {
    /// 1-10000, default 1000.
    pub limit: Option<i64>,
    /// Default 0.
    pub offset: Option<i64>,
}

/// `POST /v1/lists`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewLeadList {
    /// 1-200 characters.
    pub name: String,
    /// Up to 1000 characters.
    #[serde(default)]
    pub description: Option<String>,
    /// Target conversion rate in percent, 0-100.
    #[serde(default)]
    pub conversion_goal: Option<f64>,
}

/// `PUT /v1/lists/{id}`: the fields given change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LeadListUpdate {
    pub name: Option<String>,
    pub description: Option<String>,
    /// A number sets the goal, null clears it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<f64>)]
    pub conversion_goal: Option<Option<f64>>,
}

/// One domain to add.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewListItem {
    /// A domain or URL; reduced to the registrable domain.
    pub domain: String,
    #[serde(default)]
    pub notes: Option<String>,
}

/// `POST /v1/lists/{list_id}/items`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewListItems {
    /// 1-1000 domains.
    pub items: Vec<NewListItem>,
}

/// The answer to adding items.
#[derive(Debug, Serialize, ToSchema)]
pub struct ListItemsAdded {
    pub added: usize,
    /// Domains already in the list or repeated in the request.
    pub skipped: usize,
    pub leads_count: i64,
}

/// `PUT .../items/{domain}/status`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListItemStatus {
    /// discovered, contacted, qualified or converted.
    pub status: String,
}

/// `PATCH .../items/{item_id}`: the status, the notes or both.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListItemPatch {
    pub status: Option<String>,
    /// Up to 2000 characters.
    pub notes: Option<String>,
}

/// `POST /v1/lists/{id}/bulk-status`: one of `domains` or `item_ids`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkStatusRequest {
    /// discovered, contacted, qualified or converted.
    pub status: String,
    /// 1-500 domains of the list.
    pub domains: Option<Vec<String>>,
    /// 1-500 item ids of the list.
    pub item_ids: Option<Vec<i64>>,
}

/// The answer to a bulk status change.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkStatusResult {
    /// Items whose status changed.
    pub updated: usize,
    /// Items already at the status (not stamped, no history, no event).
    pub unchanged: usize,
    /// Domains or item ids the list does not hold, as given.
    pub not_found: Vec<String>,
}

/// The 201 of `POST /v1/lists/import-csv`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CsvImportResult {
    pub list_id: i64,
    pub list_name: String,
    pub domains_added: usize,
    /// Malformed cells, repeats in the file and domains already in the list.
    pub domains_skipped: usize,
    /// Data rows of the file (the header and blank lines not counted).
    pub total_in_file: usize,
}
