//! Named placeholders: the values a template or a published marketplace
//! entry leaves for its installer to fill (a list, a sequence, an alert, a
//! Slack URL, a secret header). A placeholder is the JSON string
//! `"{{placeholder:NAME}}"`, NAME of a-z, 0-9 and `_`.
//!
//! A definition holding one is valid (the schema check passes over it) but
//! cannot run: activating it (a save with `is_active: true`, or
//! `POST .../execute`) is a 400 naming the first one, so an installed
//! workflow never acts on a value its author left behind.

use serde_json::Value;

use super::model::WorkflowDefinition;
use outreach_core::error::ApiError;

const OPEN: &str = "{{placeholder:";
const CLOSE: &str = "}}";

/// The placeholder string for `name` (lowercased; other characters than
/// a-z, 0-9 and `_` become `_`).
pub fn placeholder(name: &str) -> Value {
    let name: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '_'
            }
        })
        .collect();
    Value::String(format!("{OPEN}{name}{CLOSE}"))
}

/// The name of a placeholder value, `None` for any other value.
pub fn name_of(value: &Value) -> Option<&str> {
    let name = value.as_str()?.strip_prefix(OPEN)?.strip_suffix(CLOSE)?;
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    valid.then_some(name)
}

/// Every placeholder left in a definition, as (path, name) in the order a
/// reader scans it: trigger_config, conditions, actions.
pub fn unfilled(d: &WorkflowDefinition) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(&d.trigger_config, "trigger_config".to_owned(), &mut out);
    for (i, c) in d.conditions.iter().enumerate() {
        walk(&c.value, format!("conditions[{i}].value"), &mut out);
    }
    for (i, a) in d.actions.iter().enumerate() {
        walk(&a.config, format!("actions[{i}].config"), &mut out);
    }
    out
}

fn walk(value: &Value, at: String, out: &mut Vec<(String, String)>) {
    if let Some(name) = name_of(value) {
        out.push((at, name.to_owned()));
        return;
    }
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                walk(v, format!("{at}.{k}"), out);
            }
        }
        Value::Array(list) => {
            for (i, v) in list.iter().enumerate() {
                walk(v, format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// 400 when `d` still holds a placeholder: `doing` says what was refused
/// ("activate", "run").
pub fn refuse_unfilled(d: &WorkflowDefinition, doing: &str) -> Result<(), ApiError> {
    let left = unfilled(d);
    let Some((at, name)) = left.first() else {
        return Ok(());
    };
    Err(ApiError::bad_request(format!(
        "cannot {doing} this workflow: {at} is the unfilled placeholder '{name}'{}; \
         fill it with PUT /v1/workflows/{{id}} first",
        if left.len() > 1 {
            format!(" ({} placeholders left)", left.len())
        } else {
            String::new()
        }
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_are_named_strings_and_nothing_else() {
        assert_eq!(placeholder("List ID"), json!("{{placeholder:list_id}}"));
        assert_eq!(name_of(&json!("{{placeholder:list_id}}")), Some("list_id"));
        for other in [
            json!("{{placeholder:}}"),
            json!("{{placeholder:Bad}}"),
            json!("x {{placeholder:a}}"),
            json!("{{domain}}"),
            json!(7),
        ] {
            assert_eq!(name_of(&other), None, "{other}");
        }
    }

    #[test]
    fn unfilled_names_each_path() {
        let d: WorkflowDefinition = serde_json::from_value(json!({
            "name": "n", "description": "", "trigger_type": "intent_alert",
            "conditions": [], "execution_limits": {}, "is_active": false,
            "trigger_config": {"alert_id": "{{placeholder:alert_id}}"},
            "actions": [{"type": "http_request", "config": {"url": "https://x",
                "headers": {"Authorization": "{{placeholder:authorization}}"}}}],
        }))
        .unwrap();
        assert_eq!(
            unfilled(&d),
            vec![
                ("trigger_config.alert_id".to_owned(), "alert_id".to_owned()),
                (
                    "actions[0].config.headers.Authorization".to_owned(),
                    "authorization".to_owned()
                ),
            ]
        );
        let e = refuse_unfilled(&d, "activate").unwrap_err();
        assert!(e.to_string().contains("trigger_config.alert_id"), "{e}");
    }
}
