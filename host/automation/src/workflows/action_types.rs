//! The catalogue of action types: the built-in ones with their JSON
//! Schemas, and every loaded `workflow-action` component's `describe`.
//!
//! A config is checked against its type's schema when a workflow is saved
//! (so a 400 names the field) and again before a component runs (a plugin
//! may have been replaced since). Compiled validators are cached by type
//! and schema version (built-in, or the component's hash), so a run pays
//! for a lookup, not a compilation.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::http_action;
use super::model::{WorkflowActionType, WorkflowActionTypeList};
use outreach_plugin_runtime::PluginMetadata;
use outreach_plugin_runtime::PluginRuntime;

/// The built-in types, in the order `GET /v1/workflows/action-types`
/// lists them.
pub const BUILT_IN: &[&str] = &[
    "enroll_in_sequence",
    "add_to_list",
    "score_domains",
    "enrich",
    "http_request",
    "conditional_branch",
    "parallel_split",
    "merge_branches",
    "cross_run_memory",
    "auto_reply_template",
    "schedule_workflow",
    "sub_workflow",
    "wait_for_approval",
    "ai_extract",
    "ai_write",
];

/// Whether running `name` can reach anything outside the run (see
/// [`ResolvedType::effects`]); cheap enough for every action of a run.
pub fn has_effects(plugins: &PluginRuntime, name: &str) -> bool {
    if BUILT_IN.contains(&name) {
        return name != "merge_branches";
    }
    plugins.workflow_action_type(name).is_none_or(|t| t.network)
}

/// The longest an approval may wait (30 days); spec/3 gives only the
/// 24-hour default.
pub const MAX_APPROVAL_HOURS: f64 = 720.0;

fn id_schema(name: &str, what: &str) -> Value {
    json!({
        "type": "object",
        "required": [name],
        "additionalProperties": false,
        "properties": {name: {"type": "integer", "minimum": 1, "description": what}},
    })
}

/// A nested list of actions (branches); each element is checked as an
/// action by `definition` itself, so the schema only says its shape.
fn action_list() -> Value {
    json!({"type": "array", "items": {"type": "object", "required": ["type"]}})
}

fn condition() -> Value {
    json!({"type": "object", "required": ["field"], "properties": {
        "field": {"type": "string", "minLength": 1},
        "op": {"type": "string"},
        "value": {},
    }})
}

/// The schema and description of a built-in type.
pub fn built_in(type_name: &str) -> Option<(&'static str, &'static str, Value)> {
    let (display, description, schema) = match type_name {
        "enroll_in_sequence" => (
            "Enroll in sequence",
            "Enrols each item's email (else its pool record's website_email) in a sequence; items without an address are skipped and counted.",
            id_schema("sequence_id", "the account's sequence"),
        ),
        "add_to_list" => (
            "Add to lead list",
            "Adds the items' domains to one of the account's lead lists.",
            id_schema("list_id", "the account's lead list"),
        ),
        "score_domains" => (
            "Score domains",
            "Scores each item with a scoring rule; items gain score and score_breakdown.",
            id_schema("rule_id", "the account's scoring rule"),
        ),
        "enrich" => (
            "Enrich",
            "Queues enrichment of the items' domains.",
            json!({"type": "object", "required": ["fields"], "additionalProperties": false,
                "properties": {"fields": {"type": "array", "minItems": 1, "uniqueItems": true,
                    "items": {"enum": ["dns", "ssl", "whois", "tech_stack"]}}}}),
        ),
        "http_request" => (
            "HTTP request",
            "Calls an HTTP endpoint once per run (or per item with per_domain), through the SSRF guard.",
            http_action::config_schema(),
        ),
        "conditional_branch" => (
            "Conditional branch",
            "Sends each item down the first branch whose `when` holds (else `else`, else on unchanged).",
            json!({"type": "object", "required": ["branches"], "additionalProperties": false,
            "properties": {
                "branches": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "required": ["when", "then"], "additionalProperties": false,
                    "properties": {
                        "when": {"oneOf": [condition(), {"type": "array", "items": condition()}]},
                        "then": action_list(),
                    }}},
                "else": action_list(),
            }}),
        ),
        "parallel_split" => (
            "Parallel split",
            "Runs each branch on a copy of the items at once; merge_branches (or the next action) gets their union.",
            json!({"type": "object", "required": ["branches"], "additionalProperties": false,
                "properties": {"branches": {"type": "array", "minItems": 2, "maxItems": 10,
                    "items": action_list()}}}),
        ),
        "merge_branches" => (
            "Merge branches",
            "Merges the outputs of the last parallel_split by key: union (default) or intersection.",
            json!({"type": "object", "additionalProperties": false, "properties": {
                "strategy": {"enum": ["union", "intersection"]},
                "key": {"type": "string", "minLength": 1},
            }}),
        ),
        "cross_run_memory" => (
            "Cross-run memory",
            "Stores, recalls or deletes a value kept by this workflow across runs; keys expire after ttl_seconds.",
            json!({"type": "object", "required": ["op", "key"], "additionalProperties": false,
            "properties": {
                "op": {"enum": ["store", "recall", "delete"]},
                "key": {"type": "string", "minLength": 1, "maxLength": 200},
                "value": {},
                "ttl_seconds": {"type": "integer", "minimum": 1},
            }}),
        ),
        "auto_reply_template" => (
            "Auto-reply from template",
            "Replies to the items' domains' latest inbound replies (of the given classes) through their send accounts.",
            json!({"type": "object", "required": ["template_subject", "template_body"],
            "additionalProperties": false, "properties": {
                "template_subject": {"type": "string", "minLength": 1, "maxLength": 998},
                "template_body": {"type": "string", "minLength": 1},
                "only_classes": {"type": "array", "items": {"type": "string"}},
            }}),
        ),
        "schedule_workflow" => (
            "Schedule workflow",
            "Queues a run of another of the account's workflows with these items, now or after delay_seconds.",
            json!({"type": "object", "required": ["workflow_id"], "additionalProperties": false,
            "properties": {
                "workflow_id": {"type": "integer", "minimum": 1},
                "delay_seconds": {"type": "integer", "minimum": 0, "maximum": 2_592_000},
            }}),
        ),
        "sub_workflow" => (
            "Sub-workflow",
            "Runs another of the account's workflows' conditions and actions inline on the items.",
            id_schema("workflow_id", "the account's workflow"),
        ),
        "wait_for_approval" => (
            "Wait for approval",
            "Ends the run and asks for a decision by email or Slack; the decision starts a new run at the next action with {{trigger.approval_decision}}. Top level only.",
            json!({"type": "object", "required": ["message"], "additionalProperties": false,
            "anyOf": [{"required": ["email"]}, {"required": ["slack_url"]}],
            "properties": {
                "email": {"type": "string", "minLength": 3, "maxLength": 320, "pattern": "^[^@\\s]+@[^@\\s]+$"},
                "slack_url": {"type": "string", "maxLength": 2000, "pattern": "^https?://"},
                "message": {"type": "string", "minLength": 1, "maxLength": 4000},
                "expires_in_hours": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_APPROVAL_HOURS},
            }}),
        ),
        "ai_extract" => (
            "AI extract",
            "Asks the account's AI keys for the named fields of each item (batched); each item gains them, null when unknown.",
            super::ai_actions::config_schema("ai_extract"),
        ),
        "ai_write" => (
            "AI write",
            "Asks the account's AI keys to write a text for each item (batched); each item gains it in output_field.",
            super::ai_actions::config_schema("ai_write"),
        ),
        _ => return None,
    };
    Some((display, description, schema))
}

/// Where an action type comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    BuiltIn,
    Plugin { plugin_id: String },
}

/// A resolved type: its source and the version of its schema (the schema
/// itself is read when its validator is first compiled).
#[derive(Debug, Clone)]
pub struct ResolvedType {
    pub source: Source,
    /// Names this version of the schema: `built-in`, or the component's
    /// hash (a replaced plugin gets a new validator).
    pub version: String,
    /// Whether running it can reach anything outside the run: every
    /// built-in may (lists, sequences, HTTP); a component may only when
    /// its manifest allows a host.
    pub effects: bool,
}

/// Compiled validators by (type name, schema version).
type Validators = HashMap<(String, String), Arc<jsonschema::Validator>>;

/// The catalogue; a typed extension of the state.
#[derive(Clone, Default)]
pub struct ActionCatalog {
    validators: Arc<Mutex<Validators>>,
}

impl ActionCatalog {
    /// The type `name`: built-ins first (a component cannot shadow one),
    /// then the loaded components.
    pub fn resolve(&self, plugins: &PluginRuntime, name: &str) -> Option<ResolvedType> {
        if BUILT_IN.contains(&name) {
            return Some(ResolvedType {
                source: Source::BuiltIn,
                version: "built-in".to_owned(),
                effects: has_effects(plugins, name),
            });
        }
        let found = plugins.workflow_action_type(name)?;
        Some(ResolvedType {
            source: Source::Plugin {
                plugin_id: found.plugin_id,
            },
            version: found.sha256,
            effects: found.network,
        })
    }

    /// Checks `config` against the type's schema; the error names the
    /// field under `at` (for example `actions[2].config`).
    pub fn check(
        &self,
        plugins: &PluginRuntime,
        type_name: &str,
        resolved: &ResolvedType,
        config: &Value,
        at: &str,
    ) -> Result<(), String> {
        let validator = self.validator(plugins, type_name, resolved)?;
        // A placeholder stands for a value the installer fills in later
        // (`placeholders.rs`): whatever the schema says of that field, it
        // is checked again when the workflow is saved with the value.
        let Some(error) = validator
            .iter_errors(config)
            .find(|e| super::placeholders::name_of(e.instance()).is_none())
        else {
            return Ok(());
        };
        let path = error.instance_path().to_string();
        let field = path
            .trim_start_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .fold(at.to_owned(), |acc, seg| match seg.parse::<usize>() {
                Ok(i) => format!("{acc}[{i}]"),
                Err(_) => format!("{acc}.{seg}"),
            });
        Err(format!("{field}: {error}"))
    }

    fn validator(
        &self,
        plugins: &PluginRuntime,
        type_name: &str,
        resolved: &ResolvedType,
    ) -> Result<Arc<jsonschema::Validator>, String> {
        let key = (type_name.to_owned(), resolved.version.clone());
        let mut cache = self.validators.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = cache.get(&key) {
            return Ok(v.clone());
        }
        let schema = match &resolved.source {
            Source::BuiltIn => built_in(type_name).map(|(_, _, schema)| schema),
            Source::Plugin { plugin_id } => plugins
                .workflow_action_describe(plugin_id)
                .ok()
                .map(|d| d.config_schema),
        }
        .ok_or_else(|| format!("action type {type_name} is no longer loaded"))?;
        let v =
            Arc::new(jsonschema::validator_for(&schema).map_err(|e| {
                format!("action type {type_name} has an invalid config schema: {e}")
            })?);
        cache.insert(key, v.clone());
        Ok(v)
    }

    /// `GET /v1/workflows/action-types`: built-ins, then components by
    /// type name. A component whose type a built-in already has is left
    /// out (and warned about when it loads).
    pub fn list(&self, plugins: &PluginRuntime) -> WorkflowActionTypeList {
        let mut out: Vec<WorkflowActionType> = BUILT_IN
            .iter()
            .filter_map(|t| {
                let (display, description, schema) = built_in(t)?;
                Some(WorkflowActionType {
                    type_name: (*t).to_owned(),
                    display_name: display.to_owned(),
                    description: description.to_owned(),
                    source: "built_in".to_owned(),
                    plugin_id: None,
                    config_schema: schema,
                })
            })
            .collect();
        let mut components: Vec<WorkflowActionType> = plugins
            .list()
            .into_iter()
            .filter_map(|info| match info.metadata {
                Some(PluginMetadata::WorkflowAction(d)) if built_in(&d.type_name).is_none() => {
                    Some(WorkflowActionType {
                        type_name: d.type_name,
                        display_name: d.display_name,
                        description: d.description,
                        source: "plugin".to_owned(),
                        plugin_id: Some(info.id),
                        config_schema: d.config_schema,
                    })
                }
                _ => None,
            })
            .collect();
        components.sort_by(|a, b| a.type_name.cmp(&b.type_name));
        out.extend(components);
        WorkflowActionTypeList { action_types: out }
    }
}
