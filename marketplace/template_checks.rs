//! Test-only checks of template packs, shared by the first-party packs (and
//! the third-party test pack) through `#[path]`: one copy of the rules, so a
//! pack cannot drift from them.
//!
//! The host refuses a template that is not a valid workflow definition, and
//! it only learns so when the pack is loaded. These checks mirror its rules
//! (host/automation/src/workflows: `definition.rs`, `action_types.rs`, and
//! the component actions' config schemas in plugins/action-*) so that a bad
//! template fails `cargo test` instead. The one difference is deliberate:
//! wherever the host wants an id or an address the installer must choose, a
//! template holds a named placeholder ("{{placeholder:NAME}}"), and these
//! checks insist on one rather than on an integer or a URL.

use outreach_plugin_sdk::prelude::*;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Id prefixes: the industry a template is for, or `general_` for none.
pub const PREFIXES: [(&str, Option<&str>); 10] = [
    ("saas_", Some("Software")),
    ("agency_", Some("Marketing & Advertising")),
    ("ecommerce_", Some("Retail")),
    ("fintech_", Some("Financial Services")),
    ("health_", Some("Healthcare")),
    ("realestate_", Some("Real Estate & Construction")),
    ("edu_", Some("Education")),
    ("manufacturing_", Some("Manufacturing")),
    ("logistics_", Some("Transportation & Logistics")),
    ("general_", None),
];

/// The host's industry taxonomy.
pub const INDUSTRIES: [&str; 16] = [
    "Software",
    "IT Services",
    "Retail",
    "Manufacturing",
    "Financial Services",
    "Healthcare",
    "Professional Services",
    "Marketing & Advertising",
    "Education",
    "Real Estate & Construction",
    "Hospitality & Travel",
    "Transportation & Logistics",
    "Energy & Utilities",
    "Media & Entertainment",
    "Non-profit",
    "Government",
];

pub const TRIGGERS: [&str; 8] = [
    "intent_alert",
    "audience_match",
    "watchlist_change",
    "new_domain",
    "schedule",
    "webhook",
    "manual",
    "tracked_keyword_match",
];

const OPS: [&str; 12] = [
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

/// Reply labels `auto_reply_template.only_classes` may name (the inbox's
/// classifications; the host refuses any other when the action runs).
const REPLY_CLASSES: [&str; 7] = [
    "interested",
    "not_now",
    "objection",
    "ooo",
    "unsubscribe",
    "bounce",
    "other",
];

/// Each action type with its required and optional config keys.
const ACTIONS: [(&str, &[&str], &[&str]); 18] = [
    ("enroll_in_sequence", &["sequence_id"], &[]),
    ("add_to_list", &["list_id"], &[]),
    ("score_domains", &["rule_id"], &[]),
    ("enrich", &["fields"], &[]),
    (
        "http_request",
        &["method", "url"],
        &[
            "headers",
            "body",
            "timeout_seconds",
            "capture_field",
            "iterate_into_domains",
            "per_domain",
        ],
    ),
    ("conditional_branch", &["branches"], &["else"]),
    ("parallel_split", &["branches"], &[]),
    ("merge_branches", &[], &["strategy", "key"]),
    (
        "cross_run_memory",
        &["op", "key"],
        &["value", "ttl_seconds"],
    ),
    (
        "auto_reply_template",
        &["template_subject", "template_body"],
        &["only_classes"],
    ),
    ("schedule_workflow", &["workflow_id"], &["delay_seconds"]),
    ("sub_workflow", &["workflow_id"], &[]),
    (
        "wait_for_approval",
        &["message"],
        &["email", "slack_url", "expires_in_hours"],
    ),
    ("ai_extract", &["prompt", "fields"], &[]),
    ("ai_write", &["prompt", "output_field"], &[]),
    ("filter_domains", &["op", "field"], &["value", "limit"]),
    ("dedup_by_field", &["field"], &["case_insensitive"]),
    ("data_transform", &["operation"], &[]),
];

/// `data_transform` operations with their required and optional settings
/// (plugins/action-transform).
const TRANSFORMS: [(&str, &[&str], &[&str]); 7] = [
    ("map_fields", &["mapping"], &[]),
    ("sort", &["field"], &["order"]),
    ("dedup", &["field"], &["case_insensitive"]),
    ("limit", &["count"], &[]),
    ("slice", &["start"], &["end"]),
    ("set_field", &["field", "value"], &[]),
    ("pick_fields", &["fields"], &[]),
];

type Checked = Result<(), String>;

fn ensure(ok: bool, message: impl FnOnce() -> String) -> Checked {
    if ok { Ok(()) } else { Err(message()) }
}

/// A name for a placeholder, an item field or an id: snake_case.
fn is_snake(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Whether `v` is exactly one named placeholder.
fn is_placeholder(v: &Value) -> bool {
    v.as_str()
        .and_then(|s| s.strip_prefix("{{placeholder:"))
        .and_then(|s| s.strip_suffix("}}"))
        .is_some_and(is_snake)
}

/// Every string of `v`: a placeholder is a whole string, and nothing is
/// null (the installer could not tell what an empty slot stands for).
fn check_values(v: &Value, at: &str) -> Checked {
    match v {
        Value::Null => Err(format!("{at}: null (use a named placeholder)")),
        Value::String(s) if s.contains("{{placeholder:") => ensure(is_placeholder(v), || {
            format!("{at}: {s:?} must be exactly \"{{{{placeholder:NAME}}}}\"")
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| check_values(x, &format!("{at}[{i}]"))),
        Value::Object(m) => m
            .iter()
            .try_for_each(|(k, x)| check_values(x, &format!("{at}.{k}"))),
        _ => Ok(()),
    }
}

fn object<'a>(v: &'a Value, at: &str) -> Result<&'a Map<String, Value>, String> {
    v.as_object().ok_or_else(|| format!("{at}: not an object"))
}

fn array<'a>(v: Option<&'a Value>, at: &str) -> Result<&'a Vec<Value>, String> {
    v.and_then(Value::as_array)
        .ok_or_else(|| format!("{at}: not an array"))
}

fn text<'a>(m: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a str, String> {
    m.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| format!("{at}.{key}: not a non-empty string"))
}

/// Exactly the keys a table allows, the required ones present.
fn keys(m: &Map<String, Value>, required: &[&str], optional: &[&str], at: &str) -> Checked {
    for key in m.keys() {
        ensure(
            required.contains(&key.as_str()) || optional.contains(&key.as_str()),
            || format!("{at}.{key}: not a setting here"),
        )?;
    }
    for key in required {
        ensure(m.contains_key(*key), || format!("{at}.{key}: missing"))?;
    }
    Ok(())
}

/// An id the installer picks: a placeholder (templates name no account's
/// own records).
fn id(m: &Map<String, Value>, key: &str, at: &str) -> Checked {
    match m.get(key) {
        None => Ok(()),
        Some(v) => ensure(is_placeholder(v), || {
            format!("{at}.{key}: {v} must be a named placeholder")
        }),
    }
}

/// A URL or address the installer picks, else a literal of the right shape.
fn address(m: &Map<String, Value>, key: &str, literal: fn(&str) -> bool, at: &str) -> Checked {
    match m.get(key) {
        None => Ok(()),
        Some(v) if is_placeholder(v) => Ok(()),
        Some(v) => ensure(v.as_str().is_some_and(literal), || {
            format!("{at}.{key}: {v} is neither a placeholder nor a valid value")
        }),
    }
}

fn unique_names(list: &[Value], min: usize, max: usize, at: &str) -> Checked {
    let names: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
    let distinct: HashSet<&str> = names.iter().copied().collect();
    ensure(
        names.len() == list.len()
            && distinct.len() == names.len()
            && (min..=max).contains(&names.len()),
        || format!("{at}: {min}-{max} distinct names expected"),
    )
}

fn check_trigger(trigger: &str, config: &Value) -> Checked {
    ensure(TRIGGERS.contains(&trigger), || {
        format!("trigger_type {trigger:?} is unknown")
    })?;
    let m = object(config, "trigger_config")?;
    let at = "trigger_config";
    match trigger {
        // The alert or audience is the installer's; both are required.
        "intent_alert" => keys(m, &["alert_id"], &[], at).and(id(m, "alert_id", at)),
        "audience_match" => keys(m, &["audience_id"], &[], at).and(id(m, "audience_id", at)),
        "schedule" => {
            keys(m, &["cron"], &["timezone"], at)?;
            let cron = text(m, "cron", at)?;
            ensure(
                cron.split_whitespace().count() == 5 || cron.starts_with('@'),
                || format!("{at}.cron: {cron:?} must have 5 fields"),
            )?;
            if m.contains_key("timezone") {
                let tz = text(m, "timezone", at)?;
                ensure(tz == "UTC" || tz.contains('/'), || {
                    format!("{at}.timezone: {tz:?} is not an IANA name")
                })?;
            }
            Ok(())
        }
        // Optional targets are left out: the workflow then takes every
        // watch or keyword of the account, which suits a template.
        _ => keys(m, &[], &[], at),
    }
}

fn check_condition(c: &Value, at: &str) -> Checked {
    let m = object(c, at)?;
    keys(m, &["field", "op"], &["value"], at)?;
    text(m, "field", at)?;
    let op = text(m, "op", at)?;
    ensure(OPS.contains(&op), || format!("{at}.op: {op:?} is unknown"))?;
    match op {
        "exists" | "not_exists" => Ok(()),
        "in" | "not_in" => ensure(m.get("value").is_some_and(Value::is_array), || {
            format!("{at}.value: an array is needed for {op}")
        }),
        "gt" | "gte" | "lt" | "lte" => ensure(
            m.get("value")
                .is_some_and(|v| v.is_number() || v.is_string()),
            || format!("{at}.value: a number or a string is needed for {op}"),
        ),
        _ => ensure(m.contains_key("value"), || format!("{at}.value: missing")),
    }
}

fn check_conditions(list: &[Value], at: &str) -> Checked {
    ensure(list.len() <= 50, || format!("{at}: more than 50 rules"))?;
    list.iter()
        .enumerate()
        .try_for_each(|(i, c)| check_condition(c, &format!("{at}[{i}]")))
}

/// Checks a list of actions; `count` adds up every action, nested ones too.
fn check_actions(list: &[Value], at: &str, top: bool, count: &mut usize) -> Checked {
    ensure(!list.is_empty(), || format!("{at}: no actions"))?;
    for (i, action) in list.iter().enumerate() {
        *count += 1;
        check_action(action, &format!("{at}[{i}]"), top, count)?;
    }
    Ok(())
}

fn check_action(action: &Value, at: &str, top: bool, count: &mut usize) -> Checked {
    let a = object(action, at)?;
    keys(a, &["type", "config"], &["retry"], at)?;
    let kind = text(a, "type", at)?;
    let Some(&(_, required, optional)) = ACTIONS.iter().find(|t| t.0 == kind) else {
        return Err(format!("{at}.type: unknown action type {kind:?}"));
    };
    if let Some(retry) = a.get("retry") {
        let r = object(retry, &format!("{at}.retry"))?;
        keys(
            r,
            &["attempts", "backoff_seconds"],
            &[],
            &format!("{at}.retry"),
        )?;
        let attempts = r["attempts"].as_u64().unwrap_or(u64::MAX);
        let backoff = r["backoff_seconds"].as_f64().unwrap_or(-1.0);
        ensure(attempts <= 5 && (0.0..=30.0).contains(&backoff), || {
            format!("{at}.retry: attempts 0-5 and backoff_seconds 0-30")
        })?;
    }
    let at = &format!("{at}.config");
    let c = object(&a["config"], at)?;
    // data_transform's settings depend on its operation: checked below.
    if kind != "data_transform" {
        keys(c, required, optional, at)?;
    }
    match kind {
        "enroll_in_sequence" => id(c, "sequence_id", at),
        "add_to_list" => id(c, "list_id", at),
        "score_domains" => id(c, "rule_id", at),
        "sub_workflow" => id(c, "workflow_id", at),
        "schedule_workflow" => {
            id(c, "workflow_id", at)?;
            ensure(
                c.get("delay_seconds")
                    .is_none_or(|d| d.as_u64().is_some_and(|d| d <= 2_592_000)),
                || format!("{at}.delay_seconds: 0-2592000"),
            )
        }
        "enrich" => {
            let fields = array(c.get("fields"), &format!("{at}.fields"))?;
            unique_names(fields, 1, 4, &format!("{at}.fields"))?;
            ensure(
                fields
                    .iter()
                    .all(|f| matches!(f.as_str(), Some("dns" | "ssl" | "whois" | "tech_stack"))),
                || format!("{at}.fields: only dns, ssl, whois, tech_stack"),
            )
        }
        "http_request" => {
            let method = text(c, "method", at)?;
            ensure(
                ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method),
                || format!("{at}.method: {method:?}"),
            )?;
            address(c, "url", |u| u.starts_with("https://"), at)?;
            if let Some(h) = c.get("headers") {
                let h = object(h, &format!("{at}.headers"))?;
                ensure(h.values().all(Value::is_string), || {
                    format!("{at}.headers: string values only")
                })?;
            }
            if let Some(body) = c.get("body") {
                object(body, &format!("{at}.body"))?;
                ensure(method != "GET" && method != "DELETE", || {
                    format!("{at}.body: only POST, PUT and PATCH send one")
                })?;
            }
            ensure(
                c.get("timeout_seconds")
                    .is_none_or(|t| t.as_u64().is_some_and(|t| (1..=300).contains(&t))),
                || format!("{at}.timeout_seconds: 1-300"),
            )?;
            for flag in ["iterate_into_domains", "per_domain"] {
                ensure(c.get(flag).is_none_or(Value::is_boolean), || {
                    format!("{at}.{flag}: a boolean")
                })?;
            }
            match c.get("capture_field") {
                None => Ok(()),
                Some(_) => text(c, "capture_field", at).map(|_| ()),
            }
        }
        "conditional_branch" => {
            let branches = array(c.get("branches"), &format!("{at}.branches"))?;
            ensure(!branches.is_empty(), || format!("{at}.branches: empty"))?;
            for (b, branch) in branches.iter().enumerate() {
                let bat = format!("{at}.branches[{b}]");
                let m = object(branch, &bat)?;
                keys(m, &["when", "then"], &[], &bat)?;
                match &m["when"] {
                    Value::Array(list) => check_conditions(list, &format!("{bat}.when"))?,
                    one => check_condition(one, &format!("{bat}.when"))?,
                }
                let then = array(m.get("then"), &format!("{bat}.then"))?;
                check_actions(then, &format!("{bat}.then"), false, count)?;
            }
            match c.get("else") {
                None => Ok(()),
                Some(e) => check_actions(
                    array(Some(e), &format!("{at}.else"))?,
                    &format!("{at}.else"),
                    false,
                    count,
                ),
            }
        }
        "parallel_split" => {
            let branches = array(c.get("branches"), &format!("{at}.branches"))?;
            ensure((2..=10).contains(&branches.len()), || {
                format!("{at}.branches: 2-10 branches")
            })?;
            branches.iter().enumerate().try_for_each(|(b, branch)| {
                let bat = format!("{at}.branches[{b}]");
                check_actions(array(Some(branch), &bat)?, &bat, false, count)
            })
        }
        "merge_branches" => ensure(
            c.get("strategy")
                .is_none_or(|s| matches!(s.as_str(), Some("union" | "intersection"))),
            || format!("{at}.strategy: union or intersection"),
        ),
        "cross_run_memory" => {
            let op = text(c, "op", at)?;
            ensure(["store", "recall", "delete"].contains(&op), || {
                format!("{at}.op: {op:?}")
            })?;
            ensure(text(c, "key", at)?.len() <= 200, || {
                format!("{at}.key: long")
            })?;
            ensure(
                c.get("ttl_seconds")
                    .is_none_or(|t| t.as_u64().is_some_and(|t| t >= 1)),
                || format!("{at}.ttl_seconds: >= 1"),
            )
        }
        "auto_reply_template" => {
            ensure(text(c, "template_subject", at)?.len() <= 998, || {
                format!("{at}.template_subject: over 998 characters")
            })?;
            text(c, "template_body", at)?;
            match c.get("only_classes") {
                None => Ok(()),
                Some(list) => ensure(
                    array(Some(list), at)?
                        .iter()
                        .all(|l| l.as_str().is_some_and(|l| REPLY_CLASSES.contains(&l))),
                    || format!("{at}.only_classes: one of {REPLY_CLASSES:?}"),
                ),
            }
        }
        "wait_for_approval" => {
            // The run ends at the wait and a decision starts a new one at the
            // next top-level action; a branch cannot end halfway.
            ensure(top, || format!("{at}: wait_for_approval in a branch"))?;
            text(c, "message", at)?;
            ensure(
                c.contains_key("email") || c.contains_key("slack_url"),
                || format!("{at}: email or slack_url needed"),
            )?;
            address(c, "email", |e| e.contains('@'), at)?;
            address(c, "slack_url", |u| u.starts_with("https://"), at)?;
            ensure(
                c.get("expires_in_hours")
                    .is_none_or(|h| h.as_f64().is_some_and(|h| h > 0.0 && h <= 720.0)),
                || format!("{at}.expires_in_hours: over 0, at most 720"),
            )
        }
        "ai_extract" => {
            text(c, "prompt", at)?;
            let fields = array(c.get("fields"), &format!("{at}.fields"))?;
            unique_names(fields, 1, 20, &format!("{at}.fields"))?;
            ensure(
                fields
                    .iter()
                    .all(|f| f.as_str().is_some_and(|f| is_snake(f) && f != "domain")),
                || format!("{at}.fields: snake_case names other than domain"),
            )
        }
        "ai_write" => {
            text(c, "prompt", at)?;
            let field = text(c, "output_field", at)?;
            ensure(is_snake(field) && field != "domain", || {
                format!("{at}.output_field: {field:?}")
            })
        }
        "filter_domains" => {
            let mut condition = c.clone();
            let limit = condition.remove("limit");
            ensure(
                limit.is_none_or(|l| l.as_u64().is_some_and(|l| l >= 1)),
                || format!("{at}.limit: an integer >= 1"),
            )?;
            check_condition(&Value::Object(condition), at)
        }
        "dedup_by_field" => {
            text(c, "field", at)?;
            ensure(
                c.get("case_insensitive").is_none_or(Value::is_boolean),
                || format!("{at}.case_insensitive: a boolean"),
            )
        }
        "data_transform" => {
            let op = text(c, "operation", at)?;
            let Some(&(_, required, optional)) = TRANSFORMS.iter().find(|t| t.0 == op) else {
                return Err(format!("{at}.operation: {op:?} is unknown"));
            };
            let mut settings = c.clone();
            settings.remove("operation");
            keys(&settings, required, optional, at)
        }
        _ => Ok(()),
    }
}

/// Checks one template; the error names what is wrong and where.
pub fn check_template(t: &Template) -> Checked {
    let id = t.id.as_str();
    let at = |e: String| format!("{id}: {e}");
    ensure(is_snake(id), || format!("{id:?}: not snake_case")).map_err(at)?;
    let Some(&(_, industry)) = PREFIXES.iter().find(|p| id.starts_with(p.0)) else {
        return Err(at("no known industry prefix".into()));
    };
    ensure(
        (1..=200).contains(&t.name.chars().count())
            && (1..=2000).contains(&t.description.chars().count()),
        || "name 1-200 and description 1-2000 characters".into(),
    )
    .map_err(at)?;
    for name in &t.industries {
        ensure(INDUSTRIES.contains(&name.as_str()), || {
            format!("industry {name:?} is not in the taxonomy")
        })
        .map_err(at)?;
    }
    let parse = |what: &str, text: &str| {
        serde_json::from_str::<Value>(text).map_err(|e| at(format!("{what}: {e}")))
    };
    let trigger_config = parse("trigger_config", &t.trigger_config)?;
    let conditions = parse("conditions", &t.conditions)?;
    let actions = parse("actions", &t.actions)?;
    check_values(&trigger_config, "trigger_config").map_err(at)?;
    check_values(&conditions, "conditions").map_err(at)?;
    check_values(&actions, "actions").map_err(at)?;
    check_trigger(&t.trigger_type, &trigger_config).map_err(at)?;
    let conditions = array(Some(&conditions), "conditions").map_err(at)?;
    check_conditions(conditions, "conditions").map_err(at)?;
    // An industry template narrows its working set to that industry up
    // front, so installing it never acts on the wrong companies.
    if let Some(industry) = industry {
        let narrowed = conditions.iter().any(|c| {
            c["field"] == "industry"
                && match c["op"].as_str() {
                    Some("equals") => c["value"] == industry,
                    Some("in") => c["value"]
                        .as_array()
                        .is_some_and(|v| v.iter().any(|x| x == industry)),
                    _ => false,
                }
        });
        ensure(
            narrowed && t.industries.iter().any(|i| i == industry),
            || format!("an industry condition and industries naming {industry:?}"),
        )
        .map_err(at)?;
    }
    let actions = array(Some(&actions), "actions").map_err(at)?;
    let mut count = 0;
    check_actions(actions, "actions", true, &mut count).map_err(at)?;
    ensure(count <= 100, || format!("{count} actions (at most 100)")).map_err(at)
}

/// Checks every template of a pack, and that their ids are unique.
pub fn check_pack(templates: &[Template]) {
    assert!(!templates.is_empty(), "the pack has no templates");
    let mut ids = HashSet::new();
    let mut errors = Vec::new();
    for t in templates {
        if !ids.insert(t.id.as_str()) {
            errors.push(format!("{}: duplicate id", t.id));
        }
        if let Err(e) = check_template(t) {
            errors.push(e);
        }
    }
    assert!(
        errors.is_empty(),
        "invalid templates:\n{}",
        errors.join("\n")
    );
}

/// The `id` of a plugin.toml, for comparing with the pack's metadata.
pub fn manifest_id(manifest: &str) -> &str {
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("id = "))
        .map(|v| v.trim().trim_matches('"'))
        .expect("plugin.toml has an id")
}
