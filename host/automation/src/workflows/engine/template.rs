//! `{{variable}}` templating in every string of an action's config
//! (docs/decisions/workflows.md, "Templating").
//!
//! - `{{field}}` or `{{a.b}}`: the item's field when the action runs per
//!   item (`http_request` with `per_domain`), else nothing.
//! - `{{domains}}`: the working set's domains.
//! - `{{previous_result}}` (or a dot-path into it): what the last action
//!   exposed.
//! - `{{trigger.<path>}}`: the trigger's data.
//! - `{{ai_memory_recall:KEY}}`: the workflow's `cross_run_memory` value.
//!
//! A string that is exactly one token becomes that token's JSON value
//! (so `"domains": "{{domains}}"` sends an array); inside longer text a
//! value is written as text (arrays of domains comma-separated, other
//! arrays and objects as JSON). An unknown name renders as nothing.

use std::collections::HashMap;

use serde_json::Value;

/// What a config's tokens can read.
pub struct Scope<'a> {
    pub item: Option<&'a Value>,
    pub items: &'a [Value],
    pub previous_result: &'a Value,
    pub trigger: &'a Value,
    pub memory: &'a HashMap<String, Value>,
}

/// Follows a dot-path (numeric segments index arrays).
pub fn lookup<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    if path.is_empty() {
        return Some(value);
    }
    path.split('.').try_fold(value, |v, key| match v {
        Value::Array(a) => key.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => v.get(key),
    })
}

fn domains(items: &[Value]) -> Value {
    Value::Array(
        items
            .iter()
            .filter_map(|i| i.get("domain").cloned())
            .collect(),
    )
}

impl Scope<'_> {
    fn resolve(&self, name: &str) -> Option<Value> {
        let name = name.trim();
        if let Some(key) = name.strip_prefix("ai_memory_recall:") {
            return self.memory.get(key.trim()).cloned();
        }
        if name == "domains" {
            return Some(domains(self.items));
        }
        if let Some(rest) = name.strip_prefix("previous_result") {
            let path = rest.strip_prefix('.').unwrap_or(rest);
            return lookup(self.previous_result, path).cloned();
        }
        if let Some(path) = name.strip_prefix("trigger.") {
            return lookup(self.trigger, path).cloned();
        }
        self.item.and_then(|i| lookup(i, name)).cloned()
    }

    /// Renders every string in `value`.
    pub fn render(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => self.render_str(s),
            Value::Array(a) => Value::Array(a.iter().map(|v| self.render(v)).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), self.render(v))).collect())
            }
            other => other.clone(),
        }
    }

    fn render_str(&self, s: &str) -> Value {
        if !s.contains("{{") {
            return Value::String(s.to_owned());
        }
        let trimmed = s.trim();
        if let Some(inner) = trimmed
            .strip_prefix("{{")
            .and_then(|t| t.strip_suffix("}}"))
            .filter(|inner| !inner.contains("{{") && !inner.contains("}}"))
        {
            return self.resolve(inner).unwrap_or(Value::String(String::new()));
        }
        Value::String(self.render_text(s))
    }

    /// Renders tokens inside text.
    pub fn render_text(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                out.push_str(&rest[open..]);
                return out;
            };
            let value = self.resolve(&after[..close]);
            out.push_str(&as_text(value.as_ref()));
            rest = &after[close + 2..];
        }
        out.push_str(rest);
        out
    }
}

fn as_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => other.to_string(),
    }
}

/// The `{{ai_memory_recall:KEY}}` keys a config mentions, so the engine
/// loads them once before rendering.
pub fn memory_keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(start) = rest.find("{{ai_memory_recall:") {
                let after = &rest[start + "{{ai_memory_recall:".len()..];
                let Some(end) = after.find("}}") else { break };
                out.push(after[..end].trim().to_owned());
                rest = &after[end..];
            }
        }
        Value::Array(a) => a.iter().for_each(|v| memory_keys(v, out)),
        Value::Object(o) => o.values().for_each(|v| memory_keys(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_render_as_values_alone_and_as_text_inside() {
        let items = vec![
            json!({"domain": "a.com", "n": 2}),
            json!({"domain": "b.com"}),
        ];
        let trigger = json!({"approval_decision": "approved", "deep": {"x": [1, 2]}});
        let prev = json!({"count": 3, "list": ["x", "y"]});
        let mut memory = HashMap::new();
        memory.insert("cursor".to_owned(), json!("abc"));
        let scope = Scope {
            item: Some(&items[0]),
            items: &items,
            previous_result: &prev,
            trigger: &trigger,
            memory: &memory,
        };
        let config = json!({
            "all": "{{domains}}",
            "text": "Hi {{domain}} ({{n}}): {{domains}} / {{trigger.approval_decision}}",
            "prev": "{{previous_result.count}}",
            "deep": "{{ trigger.deep.x.1 }}",
            "mem": "cursor={{ai_memory_recall:cursor}}",
            "missing": "[{{nope}}]",
            "open": "a {{ b",
        });
        let out = scope.render(&config);
        assert_eq!(out["all"], json!(["a.com", "b.com"]));
        assert_eq!(out["text"], "Hi a.com (2): a.com, b.com / approved");
        assert_eq!(out["prev"], json!(3));
        assert_eq!(out["deep"], json!(2));
        assert_eq!(out["mem"], "cursor=abc");
        assert_eq!(out["missing"], "[]");
        assert_eq!(out["open"], "a {{ b");
        let mut keys = Vec::new();
        memory_keys(&config, &mut keys);
        assert_eq!(keys, vec!["cursor"]);
    }
}
