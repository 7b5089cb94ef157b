//! The Enrollment resource of spec/1 and the enroll request and answer.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

pub const STATUSES: [&str; 6] = [
    "active",
    "completed",
    "bounced",
    "unsubscribed",
    "replied",
    "paused",
];

/// Contacts one enroll request may carry.
pub const MAX_CONTACTS: usize = 1000;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Enrollment {
    pub id: i64,
    pub sequence_id: i64,
    pub domain: String,
    /// Lowercased.
    pub contact_email: String,
    #[schema(value_type = Object)]
    pub metadata: Value,
    /// active, completed, bounced, unsubscribed, replied, paused.
    pub status: String,
    /// Position of the next step to run (past the last step once finished).
    pub current_step: i64,
    /// When that step is due; null once finished.
    pub next_send_at: Option<String>,
    /// cold (on enroll), warm, hot: raised by opens, clicks and replies.
    pub lead_temperature: String,
    /// Points from observed engagement (the sending issue defines them).
    pub engagement_score: i64,
    /// Whether the sequence's goal was met for this contact.
    pub goal_completed: bool,
    pub goal_completed_at: Option<String>,
    /// What met the goal (for example the clicked URL).
    #[schema(value_type = Option<Object>)]
    pub goal_metadata: Option<Value>,
    pub enrolled_at: String,
    pub paused_at: Option<String>,
    pub updated_at: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnrollContact {
    /// Company domain; enrichment tokens are looked up by it. When it is not
    /// a valid domain the address's domain is used.
    pub domain: String,
    pub contact_email: String,
    /// Free-form; its keys are template tokens.
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnrollRequest {
    /// 1-1000 contacts.
    pub contacts: Vec<EnrollContact>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EnrollResult {
    pub enrolled: u64,
    pub skipped: u64,
    /// Every skipped contact's address as the caller wrote it.
    pub skipped_emails: Vec<String>,
    /// enroll-csv only: data rows in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_in_file: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EnrollmentList {
    pub enrollments: Vec<Enrollment>,
    /// Enrollments matching the filter, ignoring limit and offset.
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct EnrollmentQuery {
    /// active, completed, bounced, unsubscribed, replied, paused.
    pub status: Option<String>,
    /// 1-500, default 50.
    pub limit: Option<i64>,
    /// 0-100000, default 0.
    pub offset: Option<i64>,
}
