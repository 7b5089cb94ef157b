//! Bodies of spec/3 "Workflow", "Workflow run" and "Versioning" as they
//! travel over HTTP. Type names carry `Workflow` because utoipa names
//! schemas after types, across every area.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// One pre-filter rule: `{field, op, value}` (docs/decisions/workflows.md,
/// "Conditions").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowCondition {
    /// An item field (`domain`, `industry`, `country`, `confidence`,
    /// `intent_score`, `signals`...), a dot-path into it, or
    /// `trigger.<path>` for the trigger's data.
    pub field: String,
    /// equals, not_equals, contains, not_contains, in, not_in, gt, gte,
    /// lt, lte, exists, not_exists.
    #[serde(default = "default_op")]
    pub op: String,
    #[serde(default)]
    pub value: Value,
}

fn default_op() -> String {
    "equals".to_owned()
}

/// Per-action retry (spec/3): extra attempts after the first failure, and
/// the first wait, which doubles.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowRetry {
    #[serde(default)]
    pub attempts: i64,
    #[serde(default)]
    pub backoff_seconds: f64,
}

/// One step of the action graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowAction {
    #[serde(rename = "type")]
    pub action_type: String,
    #[serde(default = "empty_object")]
    #[schema(value_type = Object)]
    pub config: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<WorkflowRetry>,
    /// When true a failure (after retries) does not stop the run, which
    /// then ends `partial`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub continue_on_error: bool,
}

pub fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// `execution_limits`: overrides of the plan's defaults, up to them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowExecutionLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_domains_per_run: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_runtime_seconds: Option<i64>,
}

/// A workflow as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Workflow {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub trigger_type: String,
    #[schema(value_type = Object)]
    pub trigger_config: Value,
    pub conditions: Vec<WorkflowCondition>,
    pub actions: Vec<WorkflowAction>,
    pub execution_limits: WorkflowExecutionLimits,
    #[schema(value_type = Option<Object>)]
    pub canvas_data: Option<Value>,
    pub retry_failed: bool,
    pub is_active: bool,
    pub last_run_at: Option<String>,
    pub run_count: i64,
    pub created_at: String,
    pub updated_at: String,
    /// Webhook triggers only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_token: Option<String>,
}

/// `GET /v1/workflows`: quotas, not pagination; `limit` and `remaining`
/// are null on an unlimited plan.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowList {
    pub workflows: Vec<Workflow>,
    pub count: usize,
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
}

/// `POST /v1/workflows`, and `PUT` with every field optional.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowInput {
    pub name: Option<String>,
    pub description: Option<String>,
    pub trigger_type: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub trigger_config: Option<Value>,
    pub conditions: Option<Vec<WorkflowCondition>>,
    pub actions: Option<Vec<WorkflowAction>>,
    pub execution_limits: Option<WorkflowExecutionLimits>,
    #[schema(value_type = Option<Object>)]
    pub canvas_data: Option<Value>,
    pub retry_failed: Option<bool>,
    pub is_active: Option<bool>,
}

/// A stored definition: what a version snapshots and a rollback restores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowDefinition {
    pub name: String,
    pub description: String,
    pub trigger_type: String,
    #[schema(value_type = Object)]
    pub trigger_config: Value,
    pub conditions: Vec<WorkflowCondition>,
    pub actions: Vec<WorkflowAction>,
    pub execution_limits: WorkflowExecutionLimits,
    #[serde(default)]
    pub retry_failed: bool,
    pub is_active: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowVersionSummary {
    pub id: i64,
    pub version_number: i64,
    pub change_summary: String,
    pub created_at: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowVersionList {
    pub versions: Vec<WorkflowVersionSummary>,
}

/// `GET .../versions/{id}`: the snapshot's fields at the top level.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowVersion {
    pub id: i64,
    pub workflow_id: i64,
    pub version_number: i64,
    pub change_summary: String,
    pub created_at: String,
    #[serde(flatten)]
    pub definition: WorkflowDefinition,
}

/// One entry of a run's `actions_executed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowActionRecord {
    /// Position in the workflow's top-level `actions`.
    pub index: usize,
    #[serde(rename = "type")]
    pub action_type: String,
    /// success, error or skipped.
    pub status: String,
    pub input_count: usize,
    pub output_count: usize,
    #[schema(value_type = Object)]
    pub result: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub attempts: u32,
    pub started_at: String,
    pub finished_at: String,
    pub duration_ms: i64,
    /// What `capture_field` took from a response ({{previous_result}}).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub captured: Option<Value>,
}

/// A run record.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WorkflowRun {
    pub id: i64,
    pub workflow_id: i64,
    /// queued or running while in progress; then success, error or partial.
    pub status: String,
    pub trigger_event: String,
    #[schema(value_type = Object)]
    pub trigger_data: Value,
    pub domain_count: i64,
    /// The run's working set was cut to `max_domains_per_run`, from this
    /// many.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domains_truncated_from: Option<i64>,
    pub actions_executed: Vec<WorkflowActionRecord>,
    pub error: Option<String>,
    /// The run this one reruns (`retry_failed`).
    pub rerun_of: Option<i64>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowRunList {
    pub runs: Vec<WorkflowRun>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

/// `POST .../execute`: 202.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowRunQueued {
    pub run_id: i64,
    pub status: String,
}

/// `POST /v1/workflows/incoming/{token}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowWebhookAccepted {
    pub status: String,
    pub workflow_id: i64,
    pub run_id: i64,
    pub run_status: String,
}

/// `POST /v1/workflows/approvals/{token}`: the decision's outcome.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowApprovalDecision {
    /// approved, rejected, already_decided or expired.
    pub status: String,
    /// Why nothing changed (already_decided, expired).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub workflow_id: i64,
    /// The decision on record (the earlier one for already_decided).
    pub decision: Option<String>,
    /// The run the decision started.
    pub run_id: Option<i64>,
    pub decided_at: Option<String>,
    pub expires_at: String,
}

/// The decision's JSON body (a form post sends the field `decision`).
#[derive(Debug, Deserialize, ToSchema)]
pub struct WorkflowApprovalDecisionRequest {
    /// approved or rejected.
    pub decision: Option<String>,
}

/// `GET .../webhook-token`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowWebhookToken {
    pub webhook_token: String,
    pub webhook_url: String,
    pub trigger_count: i64,
}

/// One action type of `GET /v1/workflows/action-types`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowActionType {
    #[serde(rename = "type")]
    pub type_name: String,
    pub display_name: String,
    pub description: String,
    /// `built_in` or `plugin`.
    pub source: String,
    /// The plugin id of a component type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin_id: Option<String>,
    #[schema(value_type = Object)]
    pub config_schema: Value,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowActionTypeList {
    pub action_types: Vec<WorkflowActionType>,
}

/// `POST .../test`: spec/3's dry-run body.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowTestResult {
    pub workflow: Workflow,
    pub test_results: WorkflowTestFindings,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowTestFindings {
    pub sample_domains_checked: usize,
    pub domains_after_conditions: usize,
    #[schema(value_type = Vec<Object>)]
    pub sample_filtered: Vec<Value>,
    pub actions_that_would_execute: Vec<WorkflowAction>,
}

/// `GET /v1/workflows/analytics`: the account's finished runs created in
/// the last `days` UTC calendar days, today included.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowAnalytics {
    /// The window asked for (ours).
    pub days: i64,
    /// Midnight UTC of the window's first day (ours).
    pub since: String,
    /// The account's workflows now, whatever the window.
    pub total_workflows: i64,
    pub active_workflows: i64,
    /// Finished runs (success, error, partial); queued and running ones
    /// are not counted anywhere.
    pub total_runs: i64,
    pub runs_by_status: WorkflowRunsByStatus,
    /// One entry per day of the window, oldest first, 0 on a day without
    /// runs; `date` is YYYY-MM-DD (UTC) of the run's creation.
    pub runs_by_day: Vec<WorkflowRunsOnDay>,
    /// The five workflows with the most runs in the window (ties: lower id
    /// first); workflows without runs are left out.
    pub top_workflows: Vec<WorkflowRunLeader>,
    /// By action type, over the top-level entries of the runs'
    /// `actions_executed`.
    #[schema(value_type = Object)]
    pub action_success_rates: std::collections::BTreeMap<String, WorkflowActionRate>,
    /// Mean of finished_at - started_at, 2 decimals; 0 without runs.
    pub avg_duration_seconds: f64,
}

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowRunsByStatus {
    pub success: i64,
    pub error: i64,
    pub partial: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowRunsOnDay {
    pub date: String,
    pub count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowRunLeader {
    pub id: i64,
    pub name: String,
    pub runs: i64,
    pub is_active: bool,
}

/// One action type's outcomes: `total` is success + error (an action a
/// run skipped did not run).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowActionRate {
    pub total: i64,
    pub success: i64,
    pub error: i64,
    /// success / total x 100, 1 decimal (rounded half up); 0 when total
    /// is 0.
    pub success_rate: f64,
}
