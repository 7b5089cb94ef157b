//! `workflow-action` `data_transform`: one reshaping operation on the working
//! items, chosen by `config.operation`:
//!
//! | operation | settings | effect |
//! |---|---|---|
//! | `map_fields` | `mapping` (new field -> source dot-path) | each item gains (or overwrites) the new fields, `null` when the source is missing; sources are read before anything is written |
//! | `sort` | `field`, `order` (`asc` default, `desc`) | stable; numbers and numeric strings numerically, before text (ignoring case), before other values; items without the field last |
//! | `dedup` | `field`, `case_insensitive` (default false) | keeps the first item per value; items without the field pass |
//! | `limit` | `count` (>= 0) | the first `count` items |
//! | `slice` | `start` (>= 0), `end` (optional; negative counts from the end) | items `start..end`, as JavaScript's `Array.slice` |
//! | `set_field` | `field`, `value` | sets the constant on every item |
//! | `pick_fields` | `fields` (names) | keeps only those fields, and `domain` |
//!
//! Field names are dot-paths (`enrichment.employees`); reading, a numeric
//! segment indexes an array (`signals.0`); writing creates the objects along
//! the path.

use outreach_plugin_sdk::prelude::*;
use serde_json::{Map, Value, json};
use std::cmp::Ordering;
use std::collections::HashSet;

pub struct DataTransform;

/// Each operation with its required and optional settings.
const OPERATIONS: [(&str, &[&str], &[&str]); 7] = [
    ("map_fields", &["mapping"], &[]),
    ("sort", &["field"], &["order"]),
    ("dedup", &["field"], &["case_insensitive"]),
    ("limit", &["count"], &[]),
    ("slice", &["start"], &["end"]),
    ("set_field", &["field", "value"], &[]),
    ("pick_fields", &["fields"], &[]),
];

/// A validated config.
#[derive(Debug)]
enum Operation {
    MapFields(Vec<(String, String)>),
    Sort { field: String, desc: bool },
    Dedup { field: String, fold: bool },
    Limit(usize),
    Slice { start: usize, end: Option<i64> },
    SetField { field: String, value: Value },
    PickFields(Vec<String>),
}

fn invalid(msg: impl Into<String>) -> PluginError {
    PluginError::InvalidInput(msg.into())
}

fn operation_names() -> String {
    OPERATIONS.map(|o| o.0).join(", ")
}

/// An integer, also written as an integral float (`2.0`), which JSON Schema
/// counts as an integer.
fn as_int(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() <= i64::MAX as f64)
            .map(|f| f as i64)
    })
}

/// A non-negative integer setting.
fn count(map: &Map<String, Value>, key: &str) -> Result<usize, PluginError> {
    map.get(key)
        .and_then(as_int)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| invalid(format!("config.{key} must be an integer >= 0")))
}

/// A non-empty dot-path setting.
fn path(map: &Map<String, Value>, key: &str, op: &str) -> Result<String, PluginError> {
    map.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| {
            invalid(format!(
                "config.{key} must be a non-empty dot-path for {op}"
            ))
        })
}

/// An optional setting: absent and `null` are the same.
fn optional<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

fn parse_config(text: &str) -> Result<Operation, PluginError> {
    let config: Value = from_json("config", text)?;
    let Value::Object(map) = config else {
        return Err(invalid("config must be a JSON object"));
    };
    let op = match map.get("operation") {
        None | Some(Value::Null) => {
            return Err(invalid(format!(
                "config.operation is required (one of {})",
                operation_names()
            )));
        }
        Some(v) => v.as_str().unwrap_or_default(),
    };
    let Some(&(op, required, optional_keys)) = OPERATIONS.iter().find(|o| o.0 == op) else {
        return Err(invalid(format!(
            "config.operation must be one of {}, not {}",
            operation_names(),
            map["operation"]
        )));
    };
    let allowed: Vec<&str> = required.iter().chain(optional_keys).copied().collect();
    if let Some(key) = map
        .keys()
        .find(|k| *k != "operation" && !allowed.contains(&k.as_str()))
    {
        return Err(invalid(format!(
            "config.{key} is not a setting of operation {op} (settings: {})",
            allowed.join(", ")
        )));
    }
    if let Some(key) = required.iter().find(|k| !map.contains_key(**k)) {
        return Err(invalid(format!("config.{key} is required for {op}")));
    }
    Ok(match op {
        "map_fields" => {
            let mapping = map["mapping"]
                .as_object()
                .filter(|m| !m.is_empty())
                .ok_or_else(|| {
                    invalid(
                        "config.mapping must be a non-empty object of new field -> source dot-path",
                    )
                })?;
            let mut pairs = Vec::with_capacity(mapping.len());
            for (name, source) in mapping {
                if name.is_empty() {
                    return Err(invalid("config.mapping has an empty field name"));
                }
                let source = source.as_str().filter(|s| !s.is_empty()).ok_or_else(|| {
                    invalid(format!(
                        "config.mapping.{name} must be a non-empty dot-path"
                    ))
                })?;
                pairs.push((name.clone(), source.to_string()));
            }
            Operation::MapFields(pairs)
        }
        "sort" => Operation::Sort {
            field: path(&map, "field", op)?,
            desc: match optional(&map, "order").map(|v| v.as_str()) {
                None | Some(Some("asc")) => false,
                Some(Some("desc")) => true,
                Some(_) => return Err(invalid("config.order must be asc or desc")),
            },
        },
        "dedup" => Operation::Dedup {
            field: path(&map, "field", op)?,
            fold: match optional(&map, "case_insensitive") {
                None => false,
                Some(v) => v
                    .as_bool()
                    .ok_or_else(|| invalid("config.case_insensitive must be a boolean"))?,
            },
        },
        "limit" => Operation::Limit(count(&map, "count")?),
        "slice" => Operation::Slice {
            start: count(&map, "start")?,
            end: match optional(&map, "end") {
                None => None,
                Some(v) => Some(as_int(v).ok_or_else(|| invalid("config.end must be an integer"))?),
            },
        },
        "set_field" => Operation::SetField {
            field: path(&map, "field", op)?,
            value: map["value"].clone(),
        },
        _ => {
            let fields = map["fields"]
                .as_array()
                .ok_or_else(|| invalid("config.fields must be an array of field names"))?;
            let fields = fields
                .iter()
                .map(|f| f.as_str().filter(|s| !s.is_empty()).map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| invalid("config.fields must hold non-empty field names"))?;
            Operation::PickFields(fields)
        }
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

/// Sets the value at a dot-path, creating objects where the path is missing
/// or `null`. False when a value along the path is not an object.
fn set_path(target: &mut Value, path: &str, value: Value) -> bool {
    if target.is_null() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(map) = target else {
        return false;
    };
    match path.split_once('.') {
        None => {
            map.insert(path.to_string(), value);
            true
        }
        Some((head, rest)) => set_path(map.entry(head).or_insert(Value::Null), rest, value),
    }
}

/// Sort key: numbers (and numeric strings), then text, then anything else.
#[derive(Debug)]
enum Key {
    Num(f64),
    Text(String),
    Other(String),
}

impl Key {
    fn of(v: Option<&Value>) -> Option<Key> {
        match v? {
            Value::Null => None,
            Value::Number(n) => Some(Key::Num(n.as_f64().unwrap_or(0.0))),
            Value::String(s) => Some(
                match s.trim().parse::<f64>().ok().filter(|f| f.is_finite()) {
                    Some(n) => Key::Num(n),
                    None => Key::Text(s.to_lowercase()),
                },
            ),
            other => Some(Key::Other(other.to_string())),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Key::Num(_) => 0,
            Key::Text(_) => 1,
            Key::Other(_) => 2,
        }
    }

    fn compare(&self, other: &Key) -> Ordering {
        match (self, other) {
            (Key::Num(a), Key::Num(b)) => a.total_cmp(b),
            (Key::Text(a), Key::Text(b)) | (Key::Other(a), Key::Other(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

fn parse_item(i: usize, text: &str) -> Result<Value, PluginError> {
    from_json(&format!("items[{i}]"), text)
}

fn parse_object(i: usize, text: &str) -> Result<Map<String, Value>, PluginError> {
    match parse_item(i, text)? {
        Value::Object(m) => Ok(m),
        _ => Err(invalid(format!("items[{i}] is not a JSON object"))),
    }
}

fn set_or_fail(item: &mut Value, i: usize, path: &str, value: Value) -> Result<(), PluginError> {
    if set_path(item, path, value) {
        Ok(())
    } else {
        Err(invalid(format!(
            "items[{i}]: cannot set {path}, a value along the path is not an object"
        )))
    }
}

impl Operation {
    fn run(&self, items: Vec<String>) -> Result<Vec<String>, PluginError> {
        Ok(match self {
            Operation::MapFields(pairs) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, text) in items.iter().enumerate() {
                    let mut item = Value::Object(parse_object(i, text)?);
                    let values: Vec<Value> = pairs
                        .iter()
                        .map(|(_, source)| lookup(&item, source).cloned().unwrap_or(Value::Null))
                        .collect();
                    for ((name, _), value) in pairs.iter().zip(values) {
                        set_or_fail(&mut item, i, name, value)?;
                    }
                    out.push(to_json(&item));
                }
                out
            }
            Operation::Sort { field, desc } => {
                let mut keyed = Vec::with_capacity(items.len());
                for (i, text) in items.into_iter().enumerate() {
                    let key = Key::of(lookup(&parse_item(i, &text)?, field));
                    keyed.push((key, text));
                }
                // Stable: equal keys keep their order, in both directions.
                keyed.sort_by(|(a, _), (b, _)| match (a, b) {
                    (None, None) => Ordering::Equal,
                    (None, Some(_)) => Ordering::Greater,
                    (Some(_), None) => Ordering::Less,
                    (Some(a), Some(b)) if *desc => b.compare(a),
                    (Some(a), Some(b)) => a.compare(b),
                });
                keyed.into_iter().map(|(_, text)| text).collect()
            }
            Operation::Dedup { field, fold } => {
                let mut seen = HashSet::new();
                let mut out = Vec::with_capacity(items.len());
                for (i, text) in items.into_iter().enumerate() {
                    let keep = match lookup(&parse_item(i, &text)?, field) {
                        None | Some(Value::Null) => true,
                        Some(Value::String(s)) if *fold => seen.insert(s.to_lowercase()),
                        Some(Value::String(s)) => seen.insert(s.clone()),
                        Some(other) => seen.insert(other.to_string()),
                    };
                    if keep {
                        out.push(text);
                    }
                }
                out
            }
            Operation::Limit(n) => items.into_iter().take(*n).collect(),
            Operation::Slice { start, end } => {
                let len = items.len();
                let end = match *end {
                    None => len,
                    Some(e) if e < 0 => {
                        len.saturating_sub(usize::try_from(e.unsigned_abs()).unwrap_or(usize::MAX))
                    }
                    Some(e) => usize::try_from(e).unwrap_or(len).min(len),
                };
                items.into_iter().take(end).skip(*start).collect()
            }
            Operation::SetField { field, value } => {
                let mut out = Vec::with_capacity(items.len());
                for (i, text) in items.iter().enumerate() {
                    let mut item = Value::Object(parse_object(i, text)?);
                    set_or_fail(&mut item, i, field, value.clone())?;
                    out.push(to_json(&item));
                }
                out
            }
            Operation::PickFields(fields) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, text) in items.iter().enumerate() {
                    let item = Value::Object(parse_object(i, text)?);
                    let mut picked = Value::Object(Map::new());
                    if let Some(domain) = item.get("domain") {
                        set_path(&mut picked, "domain", domain.clone());
                    }
                    for f in fields {
                        if let Some(v) = lookup(&item, f) {
                            set_or_fail(&mut picked, i, f, v.clone())?;
                        }
                    }
                    out.push(to_json(&picked));
                }
                out
            }
        })
    }

    fn name(&self) -> &'static str {
        match self {
            Operation::MapFields(_) => "map_fields",
            Operation::Sort { .. } => "sort",
            Operation::Dedup { .. } => "dedup",
            Operation::Limit(_) => "limit",
            Operation::Slice { .. } => "slice",
            Operation::SetField { .. } => "set_field",
            Operation::PickFields(_) => "pick_fields",
        }
    }
}

fn config_schema() -> Value {
    let names: Vec<&str> = OPERATIONS.iter().map(|o| o.0).collect();
    // Per operation: its required settings, and no settings of the others.
    let per_operation: Vec<Value> = OPERATIONS
        .iter()
        .map(|(name, required, optional)| {
            let mut keys = vec!["operation"];
            keys.extend(required.iter().chain(optional.iter()));
            json!({
                "if": {"required": ["operation"], "properties": {"operation": {"const": name}}},
                "then": {"required": required, "propertyNames": {"enum": keys}}
            })
        })
        .collect();
    let mut properties = Map::new();
    properties.insert(
        "operation".into(),
        json!({"type": "string", "enum": names, "description": "what to do with the items"}),
    );
    properties.insert(
        "mapping".into(),
        json!({"type": "object", "minProperties": 1, "propertyNames": {"minLength": 1},
               "additionalProperties": {"type": "string", "minLength": 1},
               "description": "map_fields: new field name -> source dot-path (a missing source gives null)"}),
    );
    properties.insert(
        "field".into(),
        json!({"type": "string", "minLength": 1,
               "description": "sort, dedup, set_field: dot-path, e.g. intent_score or enrichment.employees"}),
    );
    properties.insert(
        "order".into(),
        json!({"type": "string", "enum": ["asc", "desc"], "default": "asc",
               "description": "sort: direction; items without the field come last either way"}),
    );
    properties.insert(
        "case_insensitive".into(),
        json!({"type": "boolean", "default": false, "description": "dedup: compare strings ignoring case"}),
    );
    properties.insert(
        "count".into(),
        json!({"type": "integer", "minimum": 0, "description": "limit: how many items to keep"}),
    );
    properties.insert(
        "start".into(),
        json!({"type": "integer", "minimum": 0, "description": "slice: index of the first item kept"}),
    );
    properties.insert(
        "end".into(),
        json!({"type": "integer", "description": "slice: index after the last item kept; negative counts from the end; default: to the end"}),
    );
    properties.insert(
        "value".into(),
        json!({"description": "set_field: the value to set (any JSON)"}),
    );
    properties.insert(
        "fields".into(),
        json!({"type": "array", "items": {"type": "string", "minLength": 1},
               "description": "pick_fields: the fields (dot-paths) to keep; domain is always kept"}),
    );
    json!({
        "type": "object",
        "required": ["operation"],
        "additionalProperties": false,
        "properties": properties,
        "allOf": per_operation
    })
}

impl WorkflowAction for DataTransform {
    fn describe() -> ActionDescriptor {
        ActionDescriptor {
            type_name: "data_transform".into(),
            display_name: "Transform data".into(),
            description: "Reshapes the items: map, set or pick fields, sort, deduplicate, \
                          limit or slice."
                .into(),
            config_schema: to_json(&config_schema()),
        }
    }

    fn execute(config: &str, items: Vec<String>) -> Result<ActionOutput, PluginError> {
        let operation = parse_config(config)?;
        let input = items.len();
        let out = operation.run(items)?;
        let result = json!({"operation": operation.name(), "input": input, "output": out.len()});
        Ok(ActionOutput {
            items: out,
            previous_result: Some(to_json(&result)),
        })
    }
}

outreach_plugin_sdk::export_workflow_action!(DataTransform);

#[cfg(test)]
mod tests {
    use super::*;

    fn items() -> Vec<String> {
        [
            json!({"domain": "a.com", "industry": "SaaS", "intent_score": 80, "signals": ["hiring"],
                   "enrichment": {"name": "Acme", "employees": "120"}}),
            json!({"domain": "b.io", "industry": "retail", "intent_score": "9", "enrichment": null}),
            json!({"domain": "c.org", "industry": "saas"}),
            json!({"domain": "d.net", "industry": "Banking", "intent_score": 35}),
        ]
        .iter()
        .map(|v| v.to_string())
        .collect()
    }

    fn run(config: Value) -> (Vec<Value>, Value) {
        let out = DataTransform::execute(&config.to_string(), items()).unwrap();
        let items = out
            .items
            .iter()
            .map(|t| serde_json::from_str(t).unwrap())
            .collect();
        let result = serde_json::from_str(out.previous_result.as_deref().unwrap()).unwrap();
        (items, result)
    }

    fn domains(config: Value) -> Vec<String> {
        run(config)
            .0
            .iter()
            .map(|v| v["domain"].as_str().unwrap().to_string())
            .collect()
    }

    fn error(config: Value) -> String {
        match DataTransform::execute(&config.to_string(), items()) {
            Err(PluginError::InvalidInput(m)) => m,
            other => panic!("expected invalid-input, got {other:?}"),
        }
    }

    #[test]
    fn map_fields_adds_and_overwrites() {
        let (out, result) = run(json!({"operation": "map_fields",
            "mapping": {"company": "enrichment.name", "industry": "domain", "first_signal": "signals.0", "meta.size": "enrichment.employees"}}));
        assert_eq!(
            out[0],
            json!({"domain": "a.com", "industry": "a.com", "intent_score": 80, "signals": ["hiring"],
                   "enrichment": {"name": "Acme", "employees": "120"}, "company": "Acme",
                   "first_signal": "hiring", "meta": {"size": "120"}})
        );
        assert_eq!(out[1]["company"], Value::Null);
        assert_eq!(
            result,
            json!({"operation": "map_fields", "input": 4, "output": 4})
        );
        // Sources are read before writing: a swap works.
        let (out, _) = run(
            json!({"operation": "map_fields", "mapping": {"domain": "industry", "industry": "domain"}}),
        );
        assert_eq!(
            (&out[2]["domain"], &out[2]["industry"]),
            (&json!("saas"), &json!("c.org"))
        );
    }

    #[test]
    fn sort_numbers_text_and_missing_last() {
        let by = |field: &str, order: Option<&str>| {
            let mut c = json!({"operation": "sort", "field": field});
            if let Some(o) = order {
                c["order"] = json!(o);
            }
            domains(c)
        };
        // "9" is numeric: 9 < 35 < 80; c.org has no score and comes last.
        assert_eq!(
            by("intent_score", None),
            ["b.io", "d.net", "a.com", "c.org"]
        );
        assert_eq!(
            by("intent_score", Some("desc")),
            ["a.com", "d.net", "b.io", "c.org"]
        );
        // Text ignores case, ties keep their order (a.com before c.org).
        assert_eq!(
            by("industry", Some("asc")),
            ["d.net", "b.io", "a.com", "c.org"]
        );
        assert_eq!(
            by("industry", Some("desc")),
            ["a.com", "c.org", "b.io", "d.net"]
        );
        assert_eq!(
            by("enrichment.employees", Some("desc")),
            ["a.com", "b.io", "c.org", "d.net"]
        );
    }

    #[test]
    fn dedup_limit_and_slice() {
        assert_eq!(
            domains(json!({"operation": "dedup", "field": "industry"})).len(),
            4
        );
        assert_eq!(
            domains(json!({"operation": "dedup", "field": "industry", "case_insensitive": true})),
            ["a.com", "b.io", "d.net"]
        );
        assert_eq!(
            domains(json!({"operation": "limit", "count": 2})),
            ["a.com", "b.io"]
        );
        assert_eq!(
            domains(json!({"operation": "limit", "count": 0})),
            Vec::<String>::new()
        );
        assert_eq!(domains(json!({"operation": "limit", "count": 10})).len(), 4);
        assert_eq!(
            domains(json!({"operation": "slice", "start": 1})),
            ["b.io", "c.org", "d.net"]
        );
        assert_eq!(
            domains(json!({"operation": "slice", "start": 1, "end": 3})),
            ["b.io", "c.org"]
        );
        assert_eq!(
            domains(json!({"operation": "slice", "start": 0, "end": -1})),
            ["a.com", "b.io", "c.org"]
        );
        assert_eq!(
            domains(json!({"operation": "slice", "start": 3, "end": 2})),
            Vec::<String>::new()
        );
        assert_eq!(
            domains(json!({"operation": "slice", "start": 9})),
            Vec::<String>::new()
        );
        assert_eq!(
            domains(json!({"operation": "slice", "start": 0, "end": -9})),
            Vec::<String>::new()
        );
        let (_, result) = run(json!({"operation": "slice", "start": 1, "end": 99}));
        assert_eq!(
            result,
            json!({"operation": "slice", "input": 4, "output": 3})
        );
    }

    #[test]
    fn set_and_pick_fields() {
        let (out, _) =
            run(json!({"operation": "set_field", "field": "stage", "value": {"name": "new"}}));
        assert!(
            out.iter()
                .all(|v| v["stage"] == json!({"name": "new"}) && v["domain"].is_string())
        );
        // Objects are created along the path, null included.
        let (out, _) =
            run(json!({"operation": "set_field", "field": "enrichment.checked", "value": true}));
        assert_eq!(
            out[0]["enrichment"],
            json!({"name": "Acme", "employees": "120", "checked": true})
        );
        assert_eq!(out[1]["enrichment"], json!({"checked": true}));
        assert!(
            error(json!({"operation": "set_field", "field": "industry.x", "value": 1}))
                .starts_with("items[0]: cannot set industry.x")
        );

        let (out, _) =
            run(json!({"operation": "pick_fields", "fields": ["intent_score", "enrichment.name"]}));
        assert_eq!(
            out[0],
            json!({"domain": "a.com", "intent_score": 80, "enrichment": {"name": "Acme"}})
        );
        assert_eq!(out[2], json!({"domain": "c.org"}));
        let (out, _) = run(json!({"operation": "pick_fields", "fields": []}));
        assert_eq!(out[3], json!({"domain": "d.net"}));
    }

    #[test]
    fn config_errors_name_the_setting() {
        assert!(error(json!({})).starts_with("config.operation is required"));
        assert!(
            error(json!({"operation": "explode"})).starts_with("config.operation must be one of")
        );
        assert_eq!(
            error(json!({"operation": "sort"})),
            "config.field is required for sort"
        );
        assert_eq!(
            error(json!({"operation": "sort", "field": "x", "count": 3})),
            "config.count is not a setting of operation sort (settings: field, order)"
        );
        assert_eq!(
            error(json!({"operation": "sort", "field": "x", "order": "up"})),
            "config.order must be asc or desc"
        );
        assert_eq!(
            error(json!({"operation": "limit", "count": -1})),
            "config.count must be an integer >= 0"
        );
        assert_eq!(
            error(json!({"operation": "slice"})),
            "config.start is required for slice"
        );
        assert_eq!(
            error(json!({"operation": "slice", "start": 0, "end": "x"})),
            "config.end must be an integer"
        );
        assert_eq!(
            error(json!({"operation": "set_field", "field": "x"})),
            "config.value is required for set_field"
        );
        assert!(
            error(json!({"operation": "map_fields", "mapping": {}}))
                .starts_with("config.mapping must be")
        );
        assert!(
            error(json!({"operation": "map_fields", "mapping": {"a": 1}}))
                .starts_with("config.mapping.a must be")
        );
        assert!(
            error(json!({"operation": "pick_fields", "fields": "domain"}))
                .starts_with("config.fields must be")
        );
        assert!(
            error(json!({"operation": "dedup", "field": ""})).starts_with("config.field must be")
        );
        let bad = DataTransform::execute(
            r#"{"operation":"set_field","field":"x","value":1}"#,
            vec!["[]".into()],
        );
        assert!(
            matches!(bad, Err(PluginError::InvalidInput(m)) if m == "items[0] is not a JSON object")
        );
        // Operations that only reorder or cut pass items through untouched.
        let out = DataTransform::execute(r#"{"operation":"limit","count":1}"#, items()).unwrap();
        assert_eq!(out.items[0], items()[0]);
    }

    #[test]
    fn schema_lists_operations() {
        let d = DataTransform::describe();
        let s: Value = serde_json::from_str(&d.config_schema).unwrap();
        assert_eq!(d.type_name, "data_transform");
        assert_eq!(s["required"], json!(["operation"]));
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(
            s["properties"]["operation"]["enum"]
                .as_array()
                .unwrap()
                .len(),
            7
        );
        assert_eq!(s["allOf"].as_array().unwrap().len(), 7);
    }
}
