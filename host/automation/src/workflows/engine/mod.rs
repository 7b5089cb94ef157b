//! The engine: one action on a working set of domain items.
//!
//! A run (`runs.rs`) walks the workflow's top-level actions in order and
//! checkpoints after each; this module executes one of them, including
//! the branching ones, whose nested lists run here without checkpoints of
//! their own (docs/decisions/workflows.md, "The engine").

pub mod actions;
pub mod conditions;
pub mod template;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::model::WorkflowAction;
use outreach_core::ports::Actor;
use outreach_core::state::AppState;

/// What a run carries between actions (and in its checkpoint).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Working {
    pub items: Vec<Value>,
    #[serde(default)]
    pub previous_result: Value,
    /// The outputs of the last `parallel_split`, until `merge_branches`
    /// takes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branches: Option<Vec<Vec<Value>>>,
}

/// The run an action belongs to.
#[derive(Clone)]
pub struct RunEnv<'a> {
    pub state: &'a AppState,
    pub actor: Actor,
    pub workflow_id: i64,
    pub run_id: i64,
    pub trigger: &'a Value,
    /// Workflows being inlined by `sub_workflow`, outermost first: the run
    /// refuses to enter one twice (a cycle saved before a check, or made
    /// by two concurrent saves).
    pub inline_stack: Vec<i64>,
    /// The top-level position of the action running; `None` inside a
    /// branch or an inlined workflow (where `wait_for_approval` cannot
    /// end the run).
    pub action_index: Option<usize>,
}

/// What one attempt of an action produced.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub items: Vec<Value>,
    pub previous_result: Option<Value>,
    pub result: Value,
    pub captured: Option<Value>,
    /// Set by `parallel_split`; `Some(None)` clears it (`merge_branches`).
    pub branches: Option<Option<Vec<Vec<Value>>>>,
    /// The run ends after this action, which is recorded as waiting
    /// (`wait_for_approval`).
    pub waits: bool,
}

impl Outcome {
    pub fn pass(items: Vec<Value>, result: Value) -> Outcome {
        Outcome {
            items,
            result,
            ..Outcome::default()
        }
    }
}

/// Why an attempt failed: `retryable` says whether another attempt could
/// do better (a blocked address or a refused id will not).
#[derive(Debug, Clone)]
pub struct Failure {
    pub message: String,
    pub retryable: bool,
}

impl Failure {
    pub fn retry(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            retryable: true,
        }
    }

    pub fn fatal(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            retryable: false,
        }
    }
}

impl From<outreach_core::ports::PortError> for Failure {
    fn from(e: outreach_core::ports::PortError) -> Failure {
        match e {
            outreach_core::ports::PortError::Refused(detail) => Failure::fatal(detail),
            outreach_core::ports::PortError::Internal(e) => {
                tracing::warn!("workflow action: {e:#}");
                Failure::retry("internal error")
            }
        }
    }
}

/// The domain of a webhook or event item: trimmed, lower case, without
/// scheme, path or a leading `www.`.
pub fn normalise_domain(raw: &str) -> String {
    let s = raw.trim().to_lowercase();
    let s = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .unwrap_or(&s);
    let s = s.split(['/', '?', '#']).next().unwrap_or_default();
    s.strip_prefix("www.")
        .unwrap_or(s)
        .trim_end_matches('.')
        .to_owned()
}

/// Items as they arrive (strings or objects) as objects with a normalised
/// `domain`; other values are dropped.
pub fn items_from(values: &[Value]) -> Vec<Value> {
    values
        .iter()
        .filter_map(|v| match v {
            Value::String(s) if !s.trim().is_empty() => {
                Some(json!({"domain": normalise_domain(s)}))
            }
            Value::Object(o) => {
                let mut o = o.clone();
                if let Some(Value::String(d)) = o.get("domain") {
                    let d = normalise_domain(d);
                    o.insert("domain".into(), Value::String(d));
                }
                Some(Value::Object(o))
            }
            _ => None,
        })
        .collect()
}

/// Adds the fields of `records` (pool records by domain, read for a whole
/// batch of runs at once) to each item; the item's own fields win.
pub fn with_records(items: Vec<Value>, records: &PoolRecords) -> Vec<Value> {
    items
        .into_iter()
        .map(|item| merge_record(item, records))
        .collect()
}

/// Pool records by normalised domain.
pub type PoolRecords = HashMap<String, Map<String, Value>>;

fn merge_record(item: Value, records: &PoolRecords) -> Value {
    let Value::Object(mut own) = item else {
        return item;
    };
    let Some(record) = own
        .get("domain")
        .and_then(Value::as_str)
        .and_then(|d| records.get(d))
    else {
        return Value::Object(own);
    };
    for (k, v) in record {
        own.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Value::Object(own)
}

/// Runs a nested list of actions (a branch) on `items`. Retries of nested
/// actions wait here, in the worker, which keeps renewing the run's lease.
pub async fn run_list(
    env: &RunEnv<'_>,
    list: &[WorkflowAction],
    mut working: Working,
) -> Result<Working, Failure> {
    let env = &RunEnv {
        action_index: None,
        ..env.clone()
    };
    for action in list {
        let outcome = attempt_with_retries(env, action, &working).await;
        match outcome {
            Ok(o) => apply(&mut working, o),
            Err(f)
                if action.continue_on_error
                    && !crate::workflows::budget::spend::is_budget_stop(&f.message) =>
            {
                tracing::debug!(action = %action.action_type, "nested action failed, continuing: {}", f.message);
            }
            Err(f) => {
                return Err(Failure {
                    message: format!("{}: {}", action.action_type, f.message),
                    retryable: f.retryable,
                });
            }
        }
    }
    Ok(working)
}

async fn attempt_with_retries(
    env: &RunEnv<'_>,
    action: &WorkflowAction,
    working: &Working,
) -> Result<Outcome, Failure> {
    let mut attempt = 0u32;
    loop {
        match actions::execute(env, action, working).await {
            Ok(o) => return Ok(o),
            Err(f) => {
                let Some(wait) = retry_wait(action, attempt).filter(|_| f.retryable) else {
                    return Err(f);
                };
                attempt += 1;
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// The wait before retry `failed + 1` (spec/3: backoff x 2^(n-1)), or
/// `None` when the retries are spent.
pub fn retry_wait(action: &WorkflowAction, failed: u32) -> Option<std::time::Duration> {
    let retry = action.retry?;
    if i64::from(failed) >= retry.attempts {
        return None;
    }
    let secs = retry.backoff_seconds * f64::from(2u32.pow(failed));
    Some(std::time::Duration::from_secs_f64(secs.max(0.0)))
}

/// Takes an action's outcome into the working state.
pub fn apply(working: &mut Working, outcome: Outcome) {
    working.items = outcome.items;
    if let Some(prev) = outcome.previous_result {
        working.previous_result = prev;
    }
    if let Some(branches) = outcome.branches {
        working.branches = branches;
    }
}
