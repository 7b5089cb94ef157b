//! Bodies of spec/3 "Saved connection" as they travel over HTTP. Type
//! names carry `SavedConnection` because utoipa names schemas after types,
//! across every area.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A saved connection as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SavedConnection {
    pub id: i64,
    pub name: String,
    pub base_url: String,
    /// Header names, each with the value `********`: values are sealed at
    /// rest and never returned. Sending `********` back in a PUT keeps the
    /// stored value of that header.
    pub headers: BTreeMap<String, String>,
    /// none, bearer, basic or api_key.
    pub auth_type: String,
    pub description: String,
    pub created_at: String,
    pub updated_at: String,
}

/// `GET /v1/connections`: quotas, not pagination; `limit` and `remaining`
/// are null when the plan has no cap.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SavedConnectionList {
    pub connections: Vec<SavedConnection>,
    pub count: usize,
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
}

/// `POST /v1/connections` (`name` and `base_url` required, `auth_type`
/// none by default) and `PUT /v1/connections/{id}` (any field; `headers`
/// replaces the whole set).
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SavedConnectionInput {
    /// 1-200 characters.
    pub name: Option<String>,
    /// An http or https URL whose address the outbound policy admits.
    pub base_url: Option<String>,
    /// Header names to values; credentials go here (`Authorization:
    /// Bearer ...`, `X-Api-Key: ...`).
    pub headers: Option<BTreeMap<String, String>>,
    /// none, bearer, basic or api_key.
    pub auth_type: Option<String>,
    /// Up to 2000 characters.
    pub description: Option<String>,
}
