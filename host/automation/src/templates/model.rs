//! Bodies of spec/3 "Templates and marketplace" for first-party and pack
//! templates.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::ToSchema;

use crate::workflows::model::{Workflow, WorkflowAction, WorkflowCondition};

/// spec/3 "Template": the catalogue fields, and with `detail=full` the
/// whole definition.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Template {
    /// Stable string id; its prefix names an industry (`saas_`...).
    pub id: String,
    pub name: String,
    /// beginner, intermediate or advanced; drives the default price.
    pub tag: String,
    pub price_cents: u32,
    /// "Free" or "$19.00".
    pub price_display: String,
    pub is_free: bool,
    /// Free, a plan perk, or granted to the account.
    pub owned: bool,
    /// From the id prefix, any industry condition and the pack's list.
    pub industries: Vec<String>,
    /// The template pack (plugin id) that provides it.
    pub pack: String,
    /// `detail=full` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `detail=full` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_type: Option<String>,
    /// `detail=full` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub trigger_config: Option<Value>,
    /// `detail=full` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<WorkflowCondition>>,
    /// `detail=full` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<WorkflowAction>>,
    /// `detail=full` only: the placeholders an install leaves to fill,
    /// by where they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholders: Option<Vec<Placeholder>>,
}

/// One value left for the installer (`"{{placeholder:NAME}}"`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Placeholder {
    /// Where it is, for example `actions[2].config.list_id`.
    pub path: String,
    pub name: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TemplateList {
    pub templates: Vec<Template>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct InstallTemplateInput {
    pub template_id: String,
}

/// The installed workflow (paused) and what it needs before activation.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct InstalledWorkflow {
    #[serde(flatten)]
    pub workflow: Workflow,
    /// Fill these with `PUT /v1/workflows/{id}`, then activate.
    pub placeholders: Vec<Placeholder>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TemplateRatingSummary {
    /// Mean rating, two decimals.
    pub avg: f64,
    pub count: i64,
}

/// `GET /v1/workflows/template-stats`, public.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TemplateStats {
    /// Every loaded template, 0 when never installed.
    pub install_counts: BTreeMap<String, i64>,
    /// Rated templates only.
    pub ratings: BTreeMap<String, TemplateRatingSummary>,
}

/// `POST /v1/workflows/rate-template`. Read field by field so that a
/// rating of "5" or 4.5 is a 400 naming the field.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RateTemplateInput {
    pub template_id: String,
    /// `first_party` (the default) is the only type: marketplace entries
    /// are rated at `POST /v1/workflows/marketplace/{id}/rate`.
    pub template_type: Option<String>,
    /// Integer 1-5.
    #[schema(value_type = i64)]
    pub rating: Value,
    /// Up to 2000 characters.
    pub review: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TemplateRating {
    pub template_id: String,
    pub template_type: String,
    pub rating: i64,
    pub review: String,
    pub created_at: String,
    pub updated_at: String,
}

/// One of the caller's marketplace ratings.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MarketplaceRating {
    pub marketplace_id: i64,
    pub name: String,
    pub rating: i64,
    pub review: String,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MyRatings {
    pub ratings: Vec<TemplateRating>,
    pub marketplace_ratings: Vec<MarketplaceRating>,
}

/// A suggested template with why (docs/decisions/templates.md,
/// "Suggestions").
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SuggestedTemplate {
    #[serde(flatten)]
    pub template: Template,
    pub score: i64,
    pub reasons: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SuggestedTemplates {
    pub templates: Vec<SuggestedTemplate>,
}
