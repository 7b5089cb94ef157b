//! Workflow conditions (`{field, op, value}`) on a working item
//! (docs/decisions/workflows.md, "Conditions"): a field is a dot-path into
//! the item, which carries the pool record's fields when its domain is in
//! the pool, or `trigger.<path>` into the trigger's data. Strings compare
//! without regard to case; numbers, and strings that read as numbers,
//! compare as numbers.

use serde_json::Value;

use super::template::lookup;
use crate::workflows::model::WorkflowCondition;

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(_) | Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.eq_ignore_ascii_case(y),
        _ => match (as_number(a), as_number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

fn contains(have: &Value, want: &Value) -> bool {
    match have {
        Value::Array(a) => a.iter().any(|v| same(v, want)),
        Value::String(s) => want
            .as_str()
            .map(|w| s.to_lowercase().contains(&w.to_lowercase()))
            .unwrap_or(false),
        _ => false,
    }
}

/// Whether `item` meets the condition.
pub fn holds(c: &WorkflowCondition, item: &Value, trigger: &Value) -> bool {
    let found = match c.field.strip_prefix("trigger.") {
        Some(path) => lookup(trigger, path),
        None => lookup(item, &c.field),
    }
    .filter(|v| !v.is_null());
    let order = |f: fn(f64, f64) -> bool| match (found.and_then(as_number), as_number(&c.value)) {
        (Some(x), Some(y)) => f(x, y),
        _ => false,
    };
    match c.op.as_str() {
        "exists" => found.is_some(),
        "not_exists" => found.is_none(),
        "equals" => found.is_some_and(|v| same(v, &c.value)),
        "not_equals" => !found.is_some_and(|v| same(v, &c.value)),
        "contains" => found.is_some_and(|v| contains(v, &c.value)),
        "not_contains" => !found.is_some_and(|v| contains(v, &c.value)),
        "in" => found.is_some_and(|v| {
            c.value
                .as_array()
                .is_some_and(|list| list.iter().any(|w| same(v, w)))
        }),
        "not_in" => !found.is_some_and(|v| {
            c.value
                .as_array()
                .is_some_and(|list| list.iter().any(|w| same(v, w)))
        }),
        "gt" => order(|x, y| x > y),
        "gte" => order(|x, y| x >= y),
        "lt" => order(|x, y| x < y),
        "lte" => order(|x, y| x <= y),
        _ => false,
    }
}

/// Whether `item` meets every condition.
pub fn all_hold(conditions: &[WorkflowCondition], item: &Value, trigger: &Value) -> bool {
    conditions.iter().all(|c| holds(c, item, trigger))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn c(field: &str, op: &str, value: Value) -> WorkflowCondition {
        WorkflowCondition {
            field: field.into(),
            op: op.into(),
            value,
        }
    }

    #[test]
    fn operators() {
        let item = json!({"domain": "a.com", "industry": "SaaS", "confidence": 80,
            "signals": ["hiring", "funding"], "company": {"size": "51"}});
        let trigger = json!({"approval_decision": "approved"});
        let yes = [
            c("industry", "equals", json!("saas")),
            c("industry", "not_equals", json!("retail")),
            c("signals", "contains", json!("hiring")),
            c("domain", "contains", json!(".COM")),
            c("industry", "in", json!(["Retail", "SaaS"])),
            c("confidence", "gte", json!(80)),
            c("confidence", "gt", json!("79.5")),
            c("company.size", "lt", json!(100)),
            c("country", "not_exists", Value::Null),
            c("signals", "exists", Value::Null),
            c("trigger.approval_decision", "equals", json!("approved")),
            c("country", "not_in", json!(["US"])),
        ];
        for cond in &yes {
            assert!(holds(cond, &item, &trigger), "{cond:?}");
        }
        let no = [
            c("industry", "equals", json!("retail")),
            c("confidence", "lt", json!(80)),
            c("country", "equals", json!("US")),
            c("signals", "not_contains", json!("funding")),
            c("industry", "gt", json!(3)),
        ];
        for cond in &no {
            assert!(!holds(cond, &item, &trigger), "{cond:?}");
        }
    }
}
