//! The Step resource of spec/1 as the API reads and writes it.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use outreach_core::http::extract::nullable;

pub const STEP_TYPES: [&str; 7] = [
    "email",
    "delay",
    "linkedin_connect",
    "linkedin_message",
    "phone_call",
    "manual_task",
    "sms",
];

/// spec/1 names replied, clicked, opened; their negations are ours.
pub const CONDITION_TYPES: [&str; 6] = [
    "replied",
    "clicked",
    "opened",
    "not_replied",
    "not_clicked",
    "not_opened",
];

/// Steps one sequence may hold.
pub const MAX_STEPS: usize = 50;

/// One arm of a multivariate test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub label: String,
    pub subject: String,
    pub body_html: String,
    /// Percent of sends; the weights of a step sum to 100.
    pub weight: i64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Step {
    pub id: i64,
    pub sequence_id: i64,
    /// 1, 2, ... in sending order.
    pub position: i64,
    pub step_type: String,
    pub delay_days: i64,
    pub delay_hours: i64,
    pub subject: Option<String>,
    pub body_html: Option<String>,
    pub variant_b_subject: Option<String>,
    pub variant_b_body_html: Option<String>,
    pub ab_test_enabled: bool,
    /// `a` or `b` once locked.
    pub ab_winner: Option<String>,
    pub condition_type: Option<String>,
    pub condition_step_id: Option<i64>,
    pub variants: Option<Vec<Variant>>,
    pub created_at: String,
    pub updated_at: String,
}

/// The step body of create and update. On update every field is optional
/// and an explicit `null` clears a nullable one; `position` moves the step.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StepInput {
    /// Default email.
    pub step_type: Option<String>,
    /// Where the step goes (1 = first); default last. On update, moves it.
    pub position: Option<i64>,
    /// >= 0; the wait after the previous step (after enrollment for the first).
    pub delay_days: Option<i64>,
    /// 0-23, added to delay_days.
    pub delay_hours: Option<i64>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub subject: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub body_html: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub variant_b_subject: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub variant_b_body_html: Option<Option<String>>,
    pub ab_test_enabled: Option<bool>,
    /// replied, clicked, opened, not_replied, not_clicked, not_opened.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub condition_type: Option<Option<String>>,
    /// An earlier step of the same sequence.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>)]
    pub condition_step_id: Option<Option<i64>>,
    /// Two or more, labels unique, weights summing to 100.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<Vec<Variant>>)]
    pub variants: Option<Option<Vec<Variant>>>,
}
