//! The checks of spec/3 "Workflow" on a definition: lengths, trigger and
//! its config, conditions, actions (each config against its type's
//! schema, nested branches included), retry blocks and execution limits.
//! Checks that need the database (targets, `sub_workflow` cycles) are in
//! `service.rs`.

use serde_json::Value;

use super::action_types::ActionCatalog;
use super::cron::CronSchedule;
use super::model::*;
use super::placeholders;
use outreach_core::accounts::Plan;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::ports::TriggerTarget;
use outreach_plugin_runtime::PluginRuntime;

pub const MAX_NAME_CHARS: usize = 200;
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
pub const MAX_CONDITIONS: usize = 50;
/// Every action counts, nested branch actions included.
pub const MAX_ACTIONS: usize = 100;
pub const MAX_RETRY_ATTEMPTS: i64 = 5;
pub const MAX_BACKOFF_SECONDS: f64 = 30.0;

pub const TRIGGER_TYPES: &[&str] = &[
    "intent_alert",
    "audience_match",
    "watchlist_change",
    "new_domain",
    "schedule",
    "webhook",
    "manual",
    "tracked_keyword_match",
];

pub const CONDITION_OPS: &[&str] = &[
    "equals",
    "not_equals",
    "contains",
    "not_contains",
    "in",
    "not_in",
    "gt",
    "gte",
    "lt",
    "lte",
    "exists",
    "not_exists",
];

/// The plan's execution limits (docs/decisions/workflows.md, "Execution
/// limits"): (max_domains_per_run, max_runtime_seconds). A workflow's
/// `execution_limits` may lower them, not raise them.
pub fn plan_execution_limits(plan: Plan) -> (i64, i64) {
    match plan {
        Plan::Free | Plan::Starter => (100, 60),
        Plan::Pro => (1_000, 300),
        Plan::Enterprise => (10_000, 900),
    }
}

fn bad(detail: String) -> ApiError {
    ApiError::bad_request(detail)
}

pub fn check_name(name: &str) -> ApiResult<String> {
    let name = name.trim();
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS {
        return Err(bad(format!(
            "name must be 1-{MAX_NAME_CHARS} characters (it has {n})"
        )));
    }
    Ok(name.to_owned())
}

pub fn check_description(description: &str) -> ApiResult<String> {
    let n = description.chars().count();
    if n > MAX_DESCRIPTION_CHARS {
        return Err(bad(format!(
            "description must be at most {MAX_DESCRIPTION_CHARS} characters (it has {n})"
        )));
    }
    Ok(description.to_owned())
}

/// What a trigger config names, for the ownership check and the event
/// fan-out's lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetRef {
    pub target: TriggerTarget,
    pub id: i64,
}

/// The target key of each targeted trigger, and whether it is required.
fn target_of(trigger_type: &str) -> Option<(&'static str, TriggerTarget, bool)> {
    match trigger_type {
        "intent_alert" => Some(("alert_id", TriggerTarget::Alert, true)),
        "audience_match" => Some(("audience_id", TriggerTarget::Audience, true)),
        "watchlist_change" => Some(("watch_id", TriggerTarget::Watch, false)),
        "tracked_keyword_match" => Some(("keyword_id", TriggerTarget::Keyword, false)),
        _ => None,
    }
}

/// Checks `trigger_type` and its config; answers the config to store and
/// the target it names.
pub fn check_trigger(trigger_type: &str, config: &Value) -> ApiResult<(Value, Option<TargetRef>)> {
    if !TRIGGER_TYPES.contains(&trigger_type) {
        return Err(bad(format!(
            "trigger_type must be one of {} (got '{trigger_type}')",
            TRIGGER_TYPES.join(", ")
        )));
    }
    let Some(object) = config.as_object() else {
        return Err(bad("trigger_config must be an object".to_owned()));
    };
    let allowed: Vec<&str> = match trigger_type {
        "schedule" => vec!["cron", "timezone"],
        t => target_of(t)
            .map(|(key, _, _)| vec![key])
            .unwrap_or_default(),
    };
    if let Some(extra) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(bad(format!(
            "trigger_config.{extra} is not a setting of a {trigger_type} trigger{}",
            if allowed.is_empty() {
                String::new()
            } else {
                format!(" (settings: {})", allowed.join(", "))
            }
        )));
    }
    if trigger_type == "schedule" {
        let cron = object.get("cron").and_then(Value::as_str).ok_or_else(|| {
            bad("trigger_config.cron is required for a schedule trigger (5 fields)".to_owned())
        })?;
        let timezone = match object.get("timezone") {
            None | Some(Value::Null) => None,
            Some(Value::String(tz)) => Some(tz.as_str()),
            Some(_) => return Err(bad("trigger_config.timezone must be a string".to_owned())),
        };
        CronSchedule::parse(cron, timezone).map_err(bad)?;
        return Ok((config.clone(), None));
    }
    let Some((key, target, required)) = target_of(trigger_type) else {
        return Ok((config.clone(), None));
    };
    match object.get(key) {
        // An installed template's target, filled before activation.
        Some(v) if placeholders::name_of(v).is_some() => Ok((config.clone(), None)),
        None | Some(Value::Null) if !required => Ok((config.clone(), None)),
        None | Some(Value::Null) => Err(bad(format!(
            "trigger_config.{key} is required for a {trigger_type} trigger"
        ))),
        Some(v) => match v.as_i64().filter(|id| *id > 0) {
            Some(id) => Ok((config.clone(), Some(TargetRef { target, id }))),
            None => Err(bad(format!(
                "trigger_config.{key} must be a positive integer"
            ))),
        },
    }
}

pub fn check_conditions(conditions: &[WorkflowCondition], at: &str) -> ApiResult<()> {
    if conditions.len() > MAX_CONDITIONS {
        return Err(bad(format!(
            "{at} holds at most {MAX_CONDITIONS} rules (got {})",
            conditions.len()
        )));
    }
    for (i, c) in conditions.iter().enumerate() {
        check_condition(c, &format!("{at}[{i}]"))?;
    }
    Ok(())
}

fn check_condition(c: &WorkflowCondition, at: &str) -> ApiResult<()> {
    if c.field.trim().is_empty() {
        return Err(bad(format!("{at}.field is required")));
    }
    if !CONDITION_OPS.contains(&c.op.as_str()) {
        return Err(bad(format!(
            "{at}.op must be one of {} (got '{}')",
            CONDITION_OPS.join(", "),
            c.op
        )));
    }
    let needs_array = matches!(c.op.as_str(), "in" | "not_in");
    if needs_array && !c.value.is_array() {
        return Err(bad(format!("{at}.value must be an array for op {}", c.op)));
    }
    Ok(())
}

/// Checks the actions recursively; answers how many there are, nested
/// ones included.
pub fn check_actions(
    catalog: &ActionCatalog,
    plugins: &PluginRuntime,
    actions: &[WorkflowAction],
) -> ApiResult<()> {
    if actions.is_empty() {
        return Err(bad("actions must hold at least one action".to_owned()));
    }
    let mut count = 0;
    check_list(catalog, plugins, actions, "actions", &mut count)?;
    if count > MAX_ACTIONS {
        return Err(bad(format!(
            "actions holds at most {MAX_ACTIONS} actions, nested branch actions included (got {count})"
        )));
    }
    Ok(())
}

fn check_list(
    catalog: &ActionCatalog,
    plugins: &PluginRuntime,
    actions: &[WorkflowAction],
    at: &str,
    count: &mut usize,
) -> ApiResult<()> {
    for (i, action) in actions.iter().enumerate() {
        *count += 1;
        if *count > MAX_ACTIONS {
            return Ok(());
        }
        let nested = at != "actions";
        let at = format!("{at}[{i}]");
        check_action(catalog, plugins, action, &at)?;
        if nested && action.action_type == "wait_for_approval" {
            return Err(bad(format!(
                "{at}: wait_for_approval must be a top-level action (a branch cannot wait)"
            )));
        }
        for (path, nested) in nested_lists(action) {
            let list: Vec<WorkflowAction> = serde_json::from_value(nested.clone())
                .map_err(|e| bad(format!("{at}.config.{path}: {e}")))?;
            check_list(
                catalog,
                plugins,
                &list,
                &format!("{at}.config.{path}"),
                count,
            )?;
        }
    }
    Ok(())
}

fn check_action(
    catalog: &ActionCatalog,
    plugins: &PluginRuntime,
    action: &WorkflowAction,
    at: &str,
) -> ApiResult<()> {
    let Some(resolved) = catalog.resolve(plugins, &action.action_type) else {
        return Err(bad(format!(
            "{at}.type: unknown action type '{}' (GET /v1/workflows/action-types lists them)",
            action.action_type
        )));
    };
    catalog
        .check(
            plugins,
            &action.action_type,
            &resolved,
            &action.config,
            &format!("{at}.config"),
        )
        .map_err(bad)?;
    if action.action_type == "conditional_branch" {
        for (b, branch) in action.config["branches"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let when = parse_when(&branch["when"])
                .map_err(|e| bad(format!("{at}.config.branches[{b}].when: {e}")))?;
            check_conditions(&when, &format!("{at}.config.branches[{b}].when"))?;
        }
    }
    if let Some(retry) = &action.retry {
        if !(0..=MAX_RETRY_ATTEMPTS).contains(&retry.attempts) {
            return Err(bad(format!(
                "{at}.retry.attempts must be 0-{MAX_RETRY_ATTEMPTS} (got {})",
                retry.attempts
            )));
        }
        if !(0.0..=MAX_BACKOFF_SECONDS).contains(&retry.backoff_seconds) {
            return Err(bad(format!(
                "{at}.retry.backoff_seconds must be 0-{MAX_BACKOFF_SECONDS} (got {})",
                retry.backoff_seconds
            )));
        }
    }
    Ok(())
}

/// The nested action lists of a branching action, with their paths under
/// `config`.
pub fn nested_lists(action: &WorkflowAction) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    match action.action_type.as_str() {
        "conditional_branch" => {
            if let Some(branches) = action.config["branches"].as_array() {
                for (b, branch) in branches.iter().enumerate() {
                    if branch["then"].is_array() {
                        out.push((format!("branches[{b}].then"), &branch["then"]));
                    }
                }
            }
            if action.config["else"].is_array() {
                out.push(("else".to_owned(), &action.config["else"]));
            }
        }
        "parallel_split" => {
            if let Some(branches) = action.config["branches"].as_array() {
                for (b, branch) in branches.iter().enumerate() {
                    if branch.is_array() {
                        out.push((format!("branches[{b}]"), branch));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// A branch's `when`: one condition or an array of them (all must hold).
pub fn parse_when(when: &Value) -> Result<Vec<WorkflowCondition>, serde_json::Error> {
    match when {
        Value::Array(_) => serde_json::from_value(when.clone()),
        one => serde_json::from_value(one.clone()).map(|c| vec![c]),
    }
}

/// The id at `key` of every action of the given types, nested ones
/// included.
fn id_refs(actions: &[WorkflowAction], types: &[&str], key: &str) -> Vec<i64> {
    let mut out = Vec::new();
    for action in actions {
        if types.contains(&action.action_type.as_str())
            && let Some(id) = action.config[key].as_i64()
        {
            out.push(id);
        }
        for (_, nested) in nested_lists(action) {
            if let Ok(list) = serde_json::from_value::<Vec<WorkflowAction>>(nested.clone()) {
                out.extend(id_refs(&list, types, key));
            }
        }
    }
    out
}

fn workflow_refs(actions: &[WorkflowAction], types: &[&str]) -> Vec<i64> {
    id_refs(actions, types, "workflow_id")
}

/// Every saved connection `http_request` actions name, for the ownership
/// check.
pub fn connection_ids(actions: &[WorkflowAction]) -> Vec<i64> {
    id_refs(actions, &["http_request"], "connection_id")
}

/// Whether any action, nested ones included, is of type `name`.
pub fn uses_type(actions: &[WorkflowAction], name: &str) -> bool {
    actions.iter().any(|a| {
        a.action_type == name
            || nested_lists(a).into_iter().any(|(_, list)| {
                serde_json::from_value::<Vec<WorkflowAction>>(list.clone())
                    .is_ok_and(|l| uses_type(&l, name))
            })
    })
}

/// Every sequence `enroll_in_sequence` actions enrol into (template
/// suggestions look for sequences without one).
pub fn sequence_ids(actions: &[WorkflowAction]) -> Vec<i64> {
    id_refs(actions, &["enroll_in_sequence"], "sequence_id")
}

/// Every `sub_workflow` id (the inlining the cycle check walks).
pub fn sub_workflow_ids(actions: &[WorkflowAction]) -> Vec<i64> {
    workflow_refs(actions, &["sub_workflow"])
}

/// Every `sub_workflow` and `schedule_workflow` id, for the ownership
/// check.
pub fn referenced_workflow_ids(actions: &[WorkflowAction]) -> Vec<i64> {
    workflow_refs(actions, &["sub_workflow", "schedule_workflow"])
}

pub fn check_execution_limits(limits: &WorkflowExecutionLimits, plan: Plan) -> ApiResult<()> {
    let (domains, runtime) = plan_execution_limits(plan);
    let pairs = [
        ("max_domains_per_run", limits.max_domains_per_run, domains),
        ("max_runtime_seconds", limits.max_runtime_seconds, runtime),
    ];
    for (name, value, max) in pairs {
        if let Some(v) = value
            && !(1..=max).contains(&v)
        {
            return Err(bad(format!(
                "execution_limits.{name} must be 1-{max} on this plan (got {v})"
            )));
        }
    }
    Ok(())
}

/// The limits a run uses: the workflow's, else the plan's.
pub fn effective_limits(limits: &WorkflowExecutionLimits, plan: Plan) -> (i64, i64) {
    let (domains, runtime) = plan_execution_limits(plan);
    (
        limits.max_domains_per_run.unwrap_or(domains).min(domains),
        limits.max_runtime_seconds.unwrap_or(runtime).min(runtime),
    )
}
