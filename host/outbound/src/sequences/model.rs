//! The Sequence resource of spec/1 as the API reads and writes it.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::enrollment::model::Enrollment;
use crate::steps::model::Step;
use outreach_core::http::extract::nullable;

/// The goal types (spec/1 leaves them open; docs/decisions/sequences.md,
/// "Goals").
/// `none`: the sequence ends when its steps run out. `reply`: a reply meets
/// the goal. `click`: a click on any tracked link. `url_click`: a click on a
/// link that starts with `goal_url`. Meeting the goal marks the enrollment
/// `goal_completed` and ends it (status completed).
pub const GOAL_TYPES: [&str; 4] = ["none", "reply", "click", "url_click"];

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Sequence {
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    pub from_name: Option<String>,
    pub from_email: Option<String>,
    /// draft, active, paused.
    pub status: String,
    pub daily_send_limit: i64,
    pub warmup_enabled: bool,
    pub warmup_start_volume: i64,
    pub warmup_increment: i64,
    pub warmup_started_at: Option<String>,
    /// none (default), reply, click, url_click.
    pub goal_type: String,
    /// The link a `url_click` goal waits for.
    pub goal_url: Option<String>,
    /// Percent; the sender pauses the sequence above it. 0 never pauses.
    pub auto_pause_bounce_rate: f64,
    pub enable_unsubscribe: bool,
    pub step_count: i64,
    pub enrollment_count: i64,
    /// As given; the keys the sender reads are in
    /// docs/decisions/sequences.md, "Settings".
    #[schema(value_type = Object)]
    pub settings: Value,
    pub send_account_id: Option<i64>,
    /// Why the sending engine paused the sequence (the bounce-rate
    /// auto-pause); null when it was paused by a user or is not paused.
    pub paused_reason: Option<String>,
    /// When sequence warmup was paused (spec/3); null otherwise.
    pub warmup_paused_at: Option<String>,
    /// conservative, moderate, aggressive or custom; null until one is chosen.
    pub warmup_preset: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SequenceDetail {
    #[serde(flatten)]
    pub sequence: Sequence,
    pub steps: Vec<Step>,
    /// The most recent 100.
    pub enrollments: Vec<Enrollment>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SequenceList {
    pub sequences: Vec<Sequence>,
    pub count: i64,
    /// The plan's sequence quota; null is unlimited.
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
}

/// Create (only `name` required) and update (everything optional) share
/// this body. On update an explicit `null` clears a nullable field.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SequenceInput {
    /// 1-200 characters.
    pub name: Option<String>,
    /// Up to 1000 characters.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub from_name: Option<Option<String>>,
    /// Must be a connected send account of this account.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub from_email: Option<Option<String>>,
    /// 1-10000, default 50.
    pub daily_send_limit: Option<i64>,
    pub warmup_enabled: Option<bool>,
    /// 1-1000, default 10.
    pub warmup_start_volume: Option<i64>,
    /// 1-100, default 5.
    pub warmup_increment: Option<i64>,
    pub goal_type: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub goal_url: Option<Option<String>>,
    /// 0-100, default 5.
    pub auto_pause_bounce_rate: Option<f64>,
    /// Default true.
    pub enable_unsubscribe: Option<bool>,
    #[schema(value_type = Option<Object>)]
    pub settings: Option<Value>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>)]
    pub send_account_id: Option<Option<i64>>,
}
