//! `workflow-action` `filter_domains`: keeps the items whose dot-path field
//! satisfies a condition, optionally only the first `limit` of them.
//!
//! Comparison rules (the same for every operator):
//! - a missing field counts as `null`;
//! - two strings compare as text, ignoring case;
//! - a number against a number or a numeric string compares numerically;
//! - a boolean equals the strings `"true"` / `"false"` (any case);
//! - anything else must be equal as JSON.
//!
//! `gt`, `gte`, `lt`, `lte` compare numerically when both sides are numbers
//! or numeric strings, else as case-insensitive text when both are strings;
//! any other pair (a missing field included) does not match.

use outreach_plugin_sdk::prelude::*;
use serde_json::{Map, Value, json};
use std::cmp::Ordering;

pub struct FilterDomains;

/// The operators, as they are spelled in `config.op`.
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
/// The settings of the config object.
const KEYS: [&str; 4] = ["op", "field", "value", "limit"];
const NULL: &Value = &Value::Null;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Equals,
    NotEquals,
    Contains,
    NotContains,
    In,
    NotIn,
    Gt,
    Gte,
    Lt,
    Lte,
    Exists,
    NotExists,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        use Op::*;
        Some(match s {
            "equals" => Equals,
            "not_equals" => NotEquals,
            "contains" => Contains,
            "not_contains" => NotContains,
            "in" => In,
            "not_in" => NotIn,
            "gt" => Gt,
            "gte" => Gte,
            "lt" => Lt,
            "lte" => Lte,
            "exists" => Exists,
            "not_exists" => NotExists,
            _ => return None,
        })
    }
}

/// A validated config.
struct Filter {
    op: Op,
    field: String,
    value: Value,
    limit: Option<usize>,
}

fn invalid(msg: impl Into<String>) -> PluginError {
    PluginError::InvalidInput(msg.into())
}

/// A non-negative integer, also written as an integral float (`2.0`), which
/// JSON Schema counts as an integer.
fn as_count(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
            .map(|f| f as u64)
    })
}

fn parse_config(text: &str) -> Result<Filter, PluginError> {
    let config: Value = from_json("config", text)?;
    let Value::Object(map) = config else {
        return Err(invalid("config must be a JSON object"));
    };
    if let Some(key) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(invalid(format!(
            "config.{key} is not a setting of filter_domains (settings: op, field, value, limit)"
        )));
    }
    let op = match map.get("op") {
        None | Some(Value::Null) => {
            return Err(invalid(format!(
                "config.op is required (one of {})",
                OPS.join(", ")
            )));
        }
        Some(v) => v.as_str().and_then(Op::parse).ok_or_else(|| {
            invalid(format!(
                "config.op must be one of {}, not {v}",
                OPS.join(", ")
            ))
        })?,
    };
    let op_name = map["op"].as_str().unwrap_or_default();
    let field = map
        .get("field")
        .and_then(Value::as_str)
        .filter(|f| !f.is_empty())
        .ok_or_else(|| invalid("config.field is required (a dot-path such as industry)"))?
        .to_string();
    let value = match (op, map.get("value")) {
        (Op::Exists | Op::NotExists, _) => Value::Null,
        (_, None) => {
            return Err(invalid(format!(
                "config.value is required for op {op_name}"
            )));
        }
        (Op::In | Op::NotIn, Some(v)) if !v.is_array() => {
            return Err(invalid(format!(
                "config.value must be an array for op {op_name}"
            )));
        }
        (Op::Gt | Op::Gte | Op::Lt | Op::Lte, Some(v)) if !(v.is_number() || v.is_string()) => {
            return Err(invalid(format!(
                "config.value must be a number or a string for op {op_name}"
            )));
        }
        (_, Some(v)) => v.clone(),
    };
    let limit = match map.get("limit") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            as_count(v)
                .filter(|n| *n >= 1)
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                .ok_or_else(|| invalid("config.limit must be an integer >= 1"))?,
        ),
    };
    Ok(Filter {
        op,
        field,
        value,
        limit,
    })
}

/// The value at a dot-path; a numeric segment indexes an array.
fn lookup<'a>(item: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(item, |v, key| match v {
        Value::Object(m) => m.get(key),
        Value::Array(a) => key.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    })
}

/// A number, or a string holding a finite number.
fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

fn fold(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars().flat_map(char::to_lowercase)
}

/// Equality under the rules of the module documentation.
fn loose_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => fold(x).eq(fold(y)),
        (Value::Number(_), Value::Number(_) | Value::String(_))
        | (Value::String(_), Value::Number(_)) => {
            matches!((as_number(a), as_number(b)), (Some(x), Some(y)) if x == y)
        }
        (Value::Bool(x), Value::String(s)) | (Value::String(s), Value::Bool(x)) => s
            .trim()
            .eq_ignore_ascii_case(if *x { "true" } else { "false" }),
        _ => a == b,
    }
}

/// Order for gt/gte/lt/lte; `None` when the two cannot be compared.
fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (as_number(a), as_number(b)) {
        return x.partial_cmp(&y);
    }
    match (a, b) {
        (Value::String(x), Value::String(y)) => Some(fold(x).cmp(fold(y))),
        _ => None,
    }
}

/// `actual` contains `value`: a substring of a string (ignoring case), or an
/// element of an array.
fn contains(actual: &Value, value: &Value) -> bool {
    match actual {
        Value::Array(a) => a.iter().any(|e| loose_eq(e, value)),
        Value::String(s) => {
            let needle = match value {
                Value::String(v) => v.to_lowercase(),
                Value::Number(_) | Value::Bool(_) => value.to_string(),
                _ => return false,
            };
            s.to_lowercase().contains(&needle)
        }
        _ => false,
    }
}

/// `actual` is one of `list`; an array field matches when any of its
/// elements is.
fn is_in(actual: &Value, list: &Value) -> bool {
    let list = list.as_array().map(Vec::as_slice).unwrap_or_default();
    match actual {
        Value::Array(a) => a.iter().any(|x| list.iter().any(|e| loose_eq(x, e))),
        _ => list.iter().any(|e| loose_eq(actual, e)),
    }
}

impl Filter {
    fn matches(&self, item: &Value) -> bool {
        let actual = lookup(item, &self.field).unwrap_or(NULL);
        let v = &self.value;
        let ord = || compare(actual, v);
        match self.op {
            Op::Equals => loose_eq(actual, v),
            Op::NotEquals => !loose_eq(actual, v),
            Op::Contains => contains(actual, v),
            Op::NotContains => !contains(actual, v),
            Op::In => is_in(actual, v),
            Op::NotIn => !is_in(actual, v),
            Op::Gt => ord() == Some(Ordering::Greater),
            Op::Gte => matches!(ord(), Some(Ordering::Greater | Ordering::Equal)),
            Op::Lt => ord() == Some(Ordering::Less),
            Op::Lte => matches!(ord(), Some(Ordering::Less | Ordering::Equal)),
            Op::Exists => !actual.is_null(),
            Op::NotExists => actual.is_null(),
        }
    }
}

fn config_schema() -> Value {
    let with_value: Vec<&str> = OPS
        .iter()
        .copied()
        .filter(|o| !matches!(*o, "exists" | "not_exists"))
        .collect();
    let when_op = |ops: &[&str], then: Value| {
        json!({
            "if": {"required": ["op"], "properties": {"op": {"enum": ops}}},
            "then": then
        })
    };
    let mut properties = Map::new();
    properties.insert(
        "op".into(),
        json!({"type": "string", "enum": OPS, "description": "how the field is compared with value"}),
    );
    properties.insert(
        "field".into(),
        json!({"type": "string", "minLength": 1,
               "description": "dot-path into the item, e.g. industry, country, confidence, signals or enrichment.employees; a number selects an array element (signals.0)"}),
    );
    properties.insert(
        "value".into(),
        json!({"description": "what the field is compared with: required except for exists and not_exists; an array for in and not_in; a number or a string for gt, gte, lt and lte"}),
    );
    properties.insert(
        "limit".into(),
        json!({"type": "integer", "minimum": 1, "description": "keep only the first N matching items"}),
    );
    json!({
        "type": "object",
        "required": ["op", "field"],
        "additionalProperties": false,
        "properties": properties,
        "allOf": [
            when_op(&with_value, json!({"required": ["value"]})),
            when_op(&["in", "not_in"], json!({"properties": {"value": {"type": "array"}}})),
            when_op(&["gt", "gte", "lt", "lte"], json!({"properties": {"value": {"type": ["number", "string"]}}})),
        ]
    })
}

impl WorkflowAction for FilterDomains {
    fn describe() -> ActionDescriptor {
        ActionDescriptor {
            type_name: "filter_domains".into(),
            display_name: "Filter domains".into(),
            description: "Keeps the items whose field matches a condition (equals, contains, in, \
                          greater than, exists...), optionally only the first N."
                .into(),
            config_schema: to_json(&config_schema()),
        }
    }

    fn execute(config: &str, items: Vec<String>) -> Result<ActionOutput, PluginError> {
        let filter = parse_config(config)?;
        let total = items.len();
        let mut out = Vec::new();
        for (i, text) in items.into_iter().enumerate() {
            if filter.limit.is_some_and(|n| out.len() >= n) {
                break;
            }
            let item: Value = from_json(&format!("items[{i}]"), &text)?;
            if filter.matches(&item) {
                out.push(text);
            }
        }
        let result = json!({"kept": out.len(), "removed": total - out.len()});
        Ok(ActionOutput {
            items: out,
            previous_result: Some(to_json(&result)),
        })
    }
}

outreach_plugin_sdk::export_workflow_action!(FilterDomains);

#[cfg(test)]
mod tests {
    use super::*;

    fn items() -> Vec<String> {
        [
            json!({"domain": "a.com", "industry": "SaaS", "country": "US", "confidence": 0.9,
                   "intent_score": 80, "signals": ["hiring", "Funding"], "enrichment": {"employees": "120"}}),
            json!({"domain": "b.io", "industry": "saas", "country": "DE", "confidence": 0.4,
                   "intent_score": "35", "signals": [], "enrichment": {"employees": 8}}),
            json!({"domain": "c.org", "industry": "Non-profit", "country": "us", "confidence": null,
                   "signals": ["hiring"]}),
            json!({"domain": "d.net", "industry": "Retail", "intent_score": 55}),
        ]
        .iter()
        .map(|v| v.to_string())
        .collect()
    }

    /// The domains kept by `config`.
    fn kept(config: Value) -> Vec<String> {
        let out = FilterDomains::execute(&config.to_string(), items()).unwrap();
        out.items
            .iter()
            .map(|t| {
                serde_json::from_str::<Value>(t).unwrap()["domain"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    fn error(config: Value) -> String {
        match FilterDomains::execute(&config.to_string(), items()) {
            Err(PluginError::InvalidInput(m)) => m,
            other => panic!("expected invalid-input, got {other:?}"),
        }
    }

    #[test]
    fn equality_ignores_case_and_coerces_numbers() {
        assert_eq!(
            kept(json!({"op": "equals", "field": "industry", "value": "SAAS"})),
            ["a.com", "b.io"]
        );
        assert_eq!(
            kept(json!({"op": "equals", "field": "country", "value": "us"})),
            ["a.com", "c.org"]
        );
        assert_eq!(
            kept(json!({"op": "not_equals", "field": "country", "value": "US"})),
            ["b.io", "d.net"]
        );
        assert_eq!(
            kept(json!({"op": "equals", "field": "intent_score", "value": 35})),
            ["b.io"]
        );
        assert_eq!(
            kept(json!({"op": "equals", "field": "intent_score", "value": "80.0"})),
            ["a.com"]
        );
        // A missing field counts as null.
        assert_eq!(
            kept(json!({"op": "equals", "field": "confidence", "value": null})),
            ["c.org", "d.net"]
        );
        assert_eq!(
            kept(json!({"op": "equals", "field": "enrichment.employees", "value": 120})),
            ["a.com"]
        );
        assert_eq!(
            kept(json!({"op": "equals", "field": "signals.0", "value": "HIRING"})),
            ["a.com", "c.org"]
        );
    }

    #[test]
    fn contains_is_substring_or_array_element() {
        assert_eq!(
            kept(json!({"op": "contains", "field": "domain", "value": ".I"})),
            ["b.io"]
        );
        assert_eq!(
            kept(json!({"op": "contains", "field": "signals", "value": "funding"})),
            ["a.com"]
        );
        assert_eq!(
            kept(json!({"op": "contains", "field": "signals", "value": "hiring"})),
            ["a.com", "c.org"]
        );
        assert_eq!(
            kept(json!({"op": "not_contains", "field": "signals", "value": "hiring"})),
            ["b.io", "d.net"]
        );
        assert_eq!(
            kept(json!({"op": "contains", "field": "nothing", "value": "x"})),
            Vec::<String>::new()
        );
    }

    #[test]
    fn in_and_not_in() {
        assert_eq!(
            kept(json!({"op": "in", "field": "country", "value": ["de", "FR"]})),
            ["b.io"]
        );
        assert_eq!(
            kept(json!({"op": "not_in", "field": "country", "value": ["US"]})),
            ["b.io", "d.net"]
        );
        // An array field matches when any element is listed.
        assert_eq!(
            kept(json!({"op": "in", "field": "signals", "value": ["funding", "launch"]})),
            ["a.com"]
        );
        assert_eq!(
            kept(json!({"op": "in", "field": "intent_score", "value": [55, "35"]})),
            ["b.io", "d.net"]
        );
    }

    #[test]
    fn ordering_is_numeric_for_numbers_and_numeric_strings() {
        assert_eq!(
            kept(json!({"op": "gt", "field": "intent_score", "value": 50})),
            ["a.com", "d.net"]
        );
        assert_eq!(
            kept(json!({"op": "gte", "field": "intent_score", "value": "55"})),
            ["a.com", "d.net"]
        );
        assert_eq!(
            kept(json!({"op": "lt", "field": "intent_score", "value": 55})),
            ["b.io"]
        );
        assert_eq!(
            kept(json!({"op": "lte", "field": "confidence", "value": 0.9})),
            ["a.com", "b.io"]
        );
        // "120" > 9 numerically, although "120" < "9" as text.
        assert_eq!(
            kept(json!({"op": "gt", "field": "enrichment.employees", "value": 9})),
            ["a.com"]
        );
        // Text ordering ignores case.
        assert_eq!(
            kept(json!({"op": "lt", "field": "industry", "value": "r"})),
            ["c.org"]
        );
    }

    #[test]
    fn exists_limit_and_previous_result() {
        assert_eq!(
            kept(json!({"op": "exists", "field": "confidence"})),
            ["a.com", "b.io"]
        );
        assert_eq!(
            kept(json!({"op": "not_exists", "field": "intent_score"})),
            ["c.org"]
        );
        let out = FilterDomains::execute(r#"{"op":"exists","field":"domain","limit":3}"#, items())
            .unwrap();
        assert_eq!(out.items.len(), 3);
        let r: Value = serde_json::from_str(out.previous_result.as_deref().unwrap()).unwrap();
        assert_eq!(r, json!({"kept": 3, "removed": 1}));
        // Kept items are passed through unchanged.
        assert_eq!(out.items[0], items()[0]);
        assert_eq!(
            kept(json!({"op": "equals", "field": "country", "value": "us", "limit": 1.0})),
            ["a.com"]
        );
    }

    #[test]
    fn config_errors_name_the_setting() {
        assert!(error(json!({"field": "x"})).starts_with("config.op is required"));
        assert!(
            error(json!({"op": "like", "field": "x", "value": 1}))
                .starts_with("config.op must be one of")
        );
        assert!(error(json!({"op": "exists"})).starts_with("config.field"));
        assert_eq!(
            error(json!({"op": "equals", "field": "x"})),
            "config.value is required for op equals"
        );
        assert_eq!(
            error(json!({"op": "in", "field": "x", "value": "a"})),
            "config.value must be an array for op in"
        );
        assert!(
            error(json!({"op": "gt", "field": "x", "value": [1]}))
                .starts_with("config.value must be a number")
        );
        assert_eq!(
            error(json!({"op": "exists", "field": "x", "limit": 0})),
            "config.limit must be an integer >= 1"
        );
        assert!(
            error(json!({"op": "exists", "field": "x", "count": 2}))
                .starts_with("config.count is not a setting")
        );
        assert!(error(json!([])).starts_with("config must be"));
        let bad = FilterDomains::execute(r#"{"op":"exists","field":"x"}"#, vec!["{".into()]);
        assert!(matches!(bad, Err(PluginError::InvalidInput(m)) if m.starts_with("items[0]")));
    }

    #[test]
    fn schema_requires_op_and_field() {
        let d = FilterDomains::describe();
        let s: Value = serde_json::from_str(&d.config_schema).unwrap();
        assert_eq!(d.type_name, "filter_domains");
        assert_eq!(s["required"], json!(["op", "field"]));
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["properties"]["op"]["enum"].as_array().unwrap().len(), 12);
    }
}
