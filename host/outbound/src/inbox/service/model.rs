//! The thread API's constants, request bodies, query parameters and
//! responses (spec/1 "Inbox thread", "Reply", "Inbox").

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use outreach_core::http::extract::nullable;

/// The seven classifications of spec/1.
pub const CLASSIFICATIONS: [&str; 7] = [
    "interested",
    "not_now",
    "objection",
    "ooo",
    "unsubscribe",
    "bounce",
    "other",
];
pub const STATUSES: [&str; 3] = ["open", "handled", "snoozed"];
pub const BULK_ACTIONS: [&str; 5] = [
    "mark_handled",
    "reopen",
    "snooze",
    "assign",
    "mark_classification",
];
/// Thread ids one bulk or reclassify request may carry.
pub const MAX_BULK: usize = 500;
pub const SNOOZE_HOURS: std::ops::RangeInclusive<i64> = 1..=720;
pub const MAX_NOTES: usize = 10_000;
pub const HOUR_MS: i64 = 3_600_000;

/// spec/1 "Inbox thread", in list-item shape.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Thread {
    pub id: i64,
    /// Stable hash of the sender and the normalised subject.
    pub thread_id: String,
    pub domain: String,
    pub contact_email: String,
    pub subject: String,
    pub last_received_at: String,
    /// The latest classified reply's label (its override when set); null
    /// until a reply is classified.
    pub last_classification: Option<String>,
    /// 0.0-1.0; 1.0 means a manual override.
    pub last_classification_confidence: Option<f64>,
    pub message_count: i64,
    /// open, handled, snoozed (an elapsed snooze reads open).
    pub status: String,
    pub assigned_to_user_id: Option<i64>,
    pub notes: Option<String>,
    pub snoozed_until: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ThreadList {
    /// Threads matching the filters, ignoring limit and offset.
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
    pub items: Vec<Thread>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct ThreadQuery {
    /// open (including snoozed threads whose window elapsed), handled, snoozed.
    pub status: Option<String>,
    /// interested, not_now, objection, ooo, unsubscribe, bounce, other.
    pub classification: Option<String>,
    /// A user id; 0 means unassigned.
    pub assigned_to: Option<i64>,
    pub domain: Option<String>,
    /// 1-200, default 50.
    pub limit: Option<i64>,
    /// 0-10000, default 0.
    pub offset: Option<i64>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct CountsQuery {
    /// open, handled, snoozed; ignored by `by_status`.
    pub status: Option<String>,
    /// One of the seven classifications; ignored by `by_classification`.
    pub classification: Option<String>,
    /// A user id; 0 means unassigned.
    pub assigned_to: Option<i64>,
    pub domain: Option<String>,
}

#[derive(Debug, Default, Serialize, ToSchema)]
pub struct StatusCounts {
    pub open: i64,
    pub handled: i64,
    pub snoozed: i64,
}

#[derive(Debug, Default, Serialize, ToSchema)]
pub struct ClassificationCounts {
    pub interested: i64,
    pub not_now: i64,
    pub ooo: i64,
    pub objection: i64,
    pub unsubscribe: i64,
    pub bounce: i64,
    pub other: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ThreadCounts {
    pub by_status: StatusCounts,
    /// Unclassified threads are in no group.
    pub by_classification: ClassificationCounts,
    /// Threads matching every filter.
    pub total: i64,
}

/// A reply's classification; every field is null until it is classified
/// (and `manually_overridden_to` until someone overrides it).
#[derive(Debug, Serialize, ToSchema)]
pub struct ReplyClassification {
    /// The classifier's label.
    pub label: Option<String>,
    /// The classifier's confidence, or 1.0 under a manual override.
    pub confidence: Option<f64>,
    pub manually_overridden_to: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub classified_at: Option<String>,
}

/// spec/1 "Reply", plus `kind` and `spoofing_suspected`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Reply {
    pub id: i64,
    pub from_email: String,
    pub from_name: String,
    pub subject: String,
    /// The new text, quoted history and signature trimmed.
    pub body_text: String,
    pub received_at: String,
    pub message_id: String,
    pub in_reply_to: String,
    pub domain: String,
    /// The sequence step whose email this answers, when matched.
    pub sequence_step_id: Option<i64>,
    pub classification: ReplyClassification,
    /// reply, bounce, complaint, auto_reply.
    pub kind: String,
    /// True when the sender failed authentication checks; classification
    /// is then deferred.
    pub spoofing_suspected: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ThreadDetail {
    pub thread: Thread,
    /// Oldest first.
    pub replies: Vec<Reply>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateThread {
    /// open, handled, snoozed (snoozed needs snooze_hours).
    pub status: Option<String>,
    /// One of the seven classifications; survives reclassification.
    pub classification_override: Option<String>,
    /// A user of the account; null unassigns.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>)]
    pub assigned_to_user_id: Option<Option<i64>>,
    /// Up to 10,000 characters; null clears.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub notes: Option<Option<String>>,
    /// 1-720; implies status snoozed.
    pub snooze_hours: Option<i64>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkRequest {
    /// 1-500 thread ids; other accounts' ids are left out.
    pub thread_ids: Vec<i64>,
    /// mark_handled, reopen, snooze, assign, mark_classification.
    pub action: String,
    /// 1-720; required for snooze.
    pub snooze_hours: Option<i64>,
    /// Required for assign: a user of the account, or null to unassign.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>)]
    pub assigned_to_user_id: Option<Option<i64>>,
    /// Required for mark_classification.
    pub classification: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BulkResult {
    pub updated: u64,
    /// The threads updated, ascending.
    pub thread_ids: Vec<i64>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReclassifyRequest {
    /// 1-500 thread ids; other accounts' ids are left out.
    pub thread_ids: Vec<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ReclassifyResult {
    /// Replies whose classification was cleared for the worker.
    pub queued: u64,
    /// Replies kept because of a manual override.
    pub preserved_overrides: i64,
    /// The account's threads among those asked, ascending.
    pub thread_ids: Vec<i64>,
    /// The worker's longest wait between passes.
    pub next_run_within_seconds: i64,
}
