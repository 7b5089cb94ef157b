//! `POST /v1/workflows/{id}/test`: spec/3's dry run. It reads a sample of
//! the pool, applies the conditions and lists the actions a run would
//! execute; it calls no action, writes no run and charges nothing.

use serde_json::Value;

use super::definition::effective_limits;
use super::engine::conditions::all_hold;
use super::model::*;
use super::service;
use outreach_core::error::ApiResult;
use outreach_core::http::auth::Caller;
use outreach_core::ports::SharedPoolPort;
use outreach_core::state::AppState;

/// Dry runs a workflow takes per minute (spec/3 "Limits").
pub const TESTS_PER_MINUTE: u32 = 10;
/// Matching items the answer shows.
const SHOWN: usize = 10;

pub async fn test(state: &AppState, caller: &Caller, id: i64) -> ApiResult<WorkflowTestResult> {
    let workflow = service::get(state, caller, id).await?;
    state
        .limit_per_minute("workflow_test", &id.to_string(), TESTS_PER_MINUTE)
        .await?;
    let (max_domains, _) = effective_limits(&workflow.execution_limits, caller.plan);
    let sample = state
        .ext::<SharedPoolPort>()
        .sample(state, max_domains.max(0) as usize)
        .await?;
    let checked = sample.len();
    let trigger = Value::Null;
    let passing: Vec<Value> = sample
        .into_iter()
        .map(Value::Object)
        .filter(|i| all_hold(&workflow.conditions, i, &trigger))
        .collect();
    Ok(WorkflowTestResult {
        test_results: WorkflowTestFindings {
            sample_domains_checked: checked,
            domains_after_conditions: passing.len(),
            sample_filtered: passing.into_iter().take(SHOWN).collect(),
            actions_that_would_execute: workflow.actions.clone(),
        },
        workflow,
    })
}
