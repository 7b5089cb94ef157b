//! `ai_extract` and `ai_write` (spec/3 "Action types"): completions on the
//! account's AI keys through the vendors service (fallback chain, cost
//! ledger under `workflow:ai_extract` / `workflow:ai_write`), debited from
//! the workflow's budget (`budget::spend`).
//!
//! Items go in batches, one completion each, answered as one JSON object
//! keyed by the items' keys (their domains): a run of 200 domains is 10
//! calls, not 200. Every provider takes a prompt of many items; JSON mode
//! is asked for and used where the adapter supports it, and the answer is
//! read leniently either way (code fences, prose around the object).

use serde_json::{Map, Value, json};

use super::budget::spend;
use super::engine::{Failure, Outcome, RunEnv};
use outreach_plugin_runtime::{ChatMessage, CompletionRequest, Role};

/// Items per `ai_extract` completion.
pub const EXTRACT_BATCH: usize = 20;
/// Items per `ai_write` completion: written text is longer than
/// extracted fields, and the answer must fit the output token limit.
pub const WRITE_BATCH: usize = 10;
/// What of an item is sent: this many fields, each string cut to
/// `MAX_VALUE_CHARS`, so a large pool record cannot make a costly prompt.
pub const MAX_ITEM_FIELDS: usize = 12;
pub const MAX_VALUE_CHARS: usize = 300;
/// Items whose values the run record shows (the items carry them all).
pub const MAX_SHOWN: usize = 200;

/// A field name an action may write: an identifier, never `domain`.
pub fn field_name_schema() -> Value {
    json!({"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,63}$",
        "not": {"enum": ["domain"]}})
}

/// The config schema of `ai_extract` or `ai_write`.
pub fn config_schema(type_name: &str) -> Value {
    let prompt = json!({"type": "string", "minLength": 1, "maxLength": 4000});
    if type_name == "ai_extract" {
        json!({"type": "object", "required": ["prompt", "fields"], "additionalProperties": false,
            "properties": {"prompt": prompt, "fields": {"type": "array", "minItems": 1,
                "maxItems": 20, "uniqueItems": true, "items": field_name_schema()}}})
    } else {
        json!({"type": "object", "required": ["prompt", "output_field"],
            "additionalProperties": false,
            "properties": {"prompt": prompt, "output_field": field_name_schema()}})
    }
}

/// What one of the two actions asks for.
enum Ask {
    Extract(Vec<String>),
    Write(String),
}

/// Runs `ai_extract` or `ai_write` (config already rendered) on `items`.
pub async fn run(
    env: &RunEnv<'_>,
    type_name: &str,
    config: &Value,
    mut items: Vec<Value>,
) -> Result<Outcome, Failure> {
    let prompt = config["prompt"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned();
    if prompt.is_empty() {
        return Err(Failure::fatal("config.prompt must not be empty"));
    }
    let (ask, batch, ledger) = if type_name == "ai_extract" {
        let fields: Vec<String> = serde_json::from_value(config["fields"].clone())
            .map_err(|e| Failure::fatal(format!("config.fields: {e}")))?;
        (Ask::Extract(fields), EXTRACT_BATCH, "workflow:ai_extract")
    } else {
        let field = config["output_field"]
            .as_str()
            .ok_or_else(|| Failure::fatal("config.output_field must be a string"))?;
        (
            Ask::Write(field.to_owned()),
            WRITE_BATCH,
            "workflow:ai_write",
        )
    };
    let mut calls = 0usize;
    let mut cost = 0.0f64;
    let mut providers: Vec<String> = Vec::new();
    let mut missing = 0usize;
    for start in (0..items.len()).step_by(batch) {
        let end = (start + batch).min(items.len());
        let keys: Vec<String> = (start..end).map(|i| key_of(&items[i], i)).collect();
        let request = request(&ask, &prompt, &keys, &items[start..end]);
        let done = spend::complete(env, ledger, request).await?;
        calls += 1;
        cost += done.cost_estimate_usd;
        if !providers.contains(&done.provider) {
            providers.push(done.provider.clone());
        }
        let answers = read_answers(&done.completion.content, &keys).ok_or_else(|| {
            Failure::retry(format!(
                "{} answered with no JSON object of the items (batch of {})",
                done.provider,
                keys.len()
            ))
        })?;
        for (i, key) in (start..end).zip(&keys) {
            let answer = answers.get(key);
            missing += usize::from(answer.is_none());
            gain(&mut items[i], &ask, answer);
        }
    }
    let shown: Vec<Value> = items
        .iter()
        .take(MAX_SHOWN)
        .map(|i| shown(i, &ask))
        .collect();
    let result = json!({
        "calls": calls,
        "items": items.len(),
        "cost_usd": cost,
        "providers": providers,
        "unanswered": missing,
        "values": shown,
        "values_truncated": items.len() > MAX_SHOWN,
    });
    Ok(Outcome {
        previous_result: Some(Value::Array(shown)),
        items,
        result,
        ..Outcome::default()
    })
}

/// The key an item is answered under: its domain, else its position.
fn key_of(item: &Value, index: usize) -> String {
    item.get("domain")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map_or_else(|| format!("item-{index}"), str::to_owned)
}

/// What is sent of an item: the domain first, then up to
/// `MAX_ITEM_FIELDS` other scalar fields, strings cut short. Nested values
/// (branch outputs, HTTP captures) are left out.
fn brief(item: &Value) -> Value {
    let mut out = Map::new();
    let Value::Object(o) = item else {
        return Value::Object(out);
    };
    let fields = o
        .iter()
        .filter(|(k, v)| *k != "domain" && !k.starts_with('_') && !v.is_null())
        .filter(|(_, v)| !v.is_object() && !v.is_array())
        .take(MAX_ITEM_FIELDS);
    for (k, v) in fields {
        let v = match v {
            Value::String(s) if s.chars().count() > MAX_VALUE_CHARS => {
                Value::String(s.chars().take(MAX_VALUE_CHARS).collect())
            }
            v => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

fn request(ask: &Ask, prompt: &str, keys: &[String], items: &[Value]) -> CompletionRequest {
    let (system, per_item_tokens) = match ask {
        Ask::Extract(fields) => (
            format!(
                "You extract facts about companies for a B2B sales workflow. Answer with one \
                 JSON object only: one key per item, exactly the item's \"key\", whose value is \
                 an object with exactly these fields: {}. Use null for a field you cannot \
                 determine from the item or common knowledge; never invent facts.",
                serde_json::to_string(fields).unwrap_or_default()
            ),
            40 * fields.len() as u32,
        ),
        Ask::Write(_) => (
            "You write short texts for a B2B sales workflow, one per item. Answer with one \
             JSON object only: one key per item, exactly the item's \"key\", whose value is \
             the text as a plain string (no HTML or markdown). Never invent facts about a \
             company."
                .to_owned(),
            250,
        ),
    };
    let lines: Vec<String> = keys
        .iter()
        .zip(items)
        .map(|(key, item)| json!({"key": key, "item": brief(item)}).to_string())
        .collect();
    let n = keys.len() as u32;
    CompletionRequest {
        model: String::new(),
        messages: vec![
            ChatMessage {
                role: Role::System,
                content: system,
            },
            ChatMessage {
                role: Role::User,
                content: format!(
                    "Instruction: {prompt}\n\nItems, one JSON object a line:\n{}",
                    lines.join("\n")
                ),
            },
        ],
        max_tokens: Some((200 + per_item_tokens * n).min(8000)),
        temperature: Some(0.2),
        stop: vec![],
        json_mode: true,
    }
}

/// The JSON value in a model's answer: the whole text, else inside a code
/// fence, else from its first `{` or `[` to the matching last one.
pub fn find_json(content: &str) -> Option<Value> {
    let s = content.trim();
    if let Ok(v) = serde_json::from_str(s) {
        return Some(v);
    }
    if let Some(start) = s.find("```") {
        let after = &s[start + 3..];
        let body = after.split_once('\n').map_or(after, |(_, rest)| rest);
        if let Some(end) = body.find("```")
            && let Ok(v) = serde_json::from_str(body[..end].trim())
        {
            return Some(v);
        }
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (s.find(open), s.rfind(close))
            && a < b
            && let Ok(v) = serde_json::from_str(&s[a..=b])
        {
            return Some(v);
        }
    }
    None
}

/// The answers by item key: an object keyed by key (maybe wrapped in one
/// other key), or a list of objects naming their `key` or `domain`.
/// `None` when the answer holds neither.
pub fn read_answers(content: &str, keys: &[String]) -> Option<Map<String, Value>> {
    let v = find_json(content)?;
    let from_list = |list: &Vec<Value>| -> Map<String, Value> {
        list.iter()
            .filter_map(|e| {
                let k = e.get("key").or_else(|| e.get("domain"))?.as_str()?;
                Some((k.to_owned(), e.clone()))
            })
            .collect()
    };
    match v {
        Value::Object(o) if keys.iter().any(|k| o.contains_key(k)) => Some(o),
        Value::Object(o) => {
            // {"results": {...}} or {"items": [...]}: one wrapper key.
            let single = (o.len() == 1).then(|| o.values().next().cloned()).flatten();
            match single {
                Some(Value::Object(inner)) => Some(inner),
                Some(Value::Array(list)) => Some(from_list(&list)),
                // One item answered bare, without its key.
                _ if keys.len() == 1 => {
                    let mut bare = Map::new();
                    bare.insert(keys[0].clone(), Value::Object(o));
                    Some(bare)
                }
                // JSON, but none of the items: each gets null.
                _ => Some(Map::new()),
            }
        }
        Value::Array(list) => Some(from_list(&list)),
        _ => None,
    }
}

/// Adds the answer's values to the item; what the answer lacks is null.
fn gain(item: &mut Value, ask: &Ask, answer: Option<&Value>) {
    let Value::Object(o) = item else {
        return;
    };
    match ask {
        Ask::Extract(fields) => {
            for f in fields {
                let v = match answer {
                    Some(Value::Object(a)) => a.get(f).cloned().unwrap_or(Value::Null),
                    // A single field may come back bare.
                    Some(v) if fields.len() == 1 && !v.is_object() => v.clone(),
                    _ => Value::Null,
                };
                o.insert(f.clone(), v);
            }
        }
        Ask::Write(field) => {
            let text = match answer {
                Some(Value::String(s)) => Some(s.trim().to_owned()),
                Some(Value::Object(a)) => [field.as_str(), "text", "output"]
                    .iter()
                    .find_map(|k| a.get(*k).and_then(Value::as_str))
                    .map(|s| s.trim().to_owned()),
                _ => None,
            };
            let text = text.filter(|t| !t.is_empty());
            o.insert(field.clone(), text.map_or(Value::Null, Value::String));
        }
    }
}

/// An item's domain and the values the action gave it, for the record.
fn shown(item: &Value, ask: &Ask) -> Value {
    let mut out = Map::new();
    if let Some(d) = item.get("domain") {
        out.insert("domain".into(), d.clone());
    }
    let fields: Vec<&String> = match ask {
        Ask::Extract(fields) => fields.iter().collect(),
        Ask::Write(field) => vec![field],
    };
    for f in fields {
        out.insert(f.clone(), item.get(f).cloned().unwrap_or(Value::Null));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn answers_are_read_from_fences_prose_wrappers_and_lists() {
        let k = keys(&["a.com", "b.com"]);
        let fenced = "Sure!\n```json\n{\"a.com\": {\"x\": 1}}\n```\nDone.";
        assert_eq!(read_answers(fenced, &k).unwrap()["a.com"]["x"], 1);
        let prose = "Here: {\"b.com\": \"hi\"} hope it helps";
        assert_eq!(read_answers(prose, &k).unwrap()["b.com"], "hi");
        let wrapped = r#"{"results": {"a.com": {"x": 2}}}"#;
        assert_eq!(read_answers(wrapped, &k).unwrap()["a.com"]["x"], 2);
        let list = r#"{"items": [{"domain": "b.com", "x": 3}]}"#;
        assert_eq!(read_answers(list, &k).unwrap()["b.com"]["x"], 3);
        assert!(read_answers("I cannot help with that.", &k).is_none());
        assert!(read_answers("42", &k).is_none());
    }

    #[test]
    fn items_are_sent_short_and_answers_fill_fields_or_null() {
        let long = "x".repeat(1000);
        let item = json!({"domain": "a.com", "about": long, "nested": {"a": 1}, "n": 5});
        let b = brief(&item);
        assert_eq!(b["about"].as_str().unwrap().len(), MAX_VALUE_CHARS);
        assert!(b.get("nested").is_none() && b.get("domain").is_none());
        assert_eq!(b["n"], 5);

        let ask = Ask::Extract(keys(&["industry", "size"]));
        let mut i = json!({"domain": "a.com"});
        gain(&mut i, &ask, Some(&json!({"industry": "SaaS"})));
        assert_eq!(
            i,
            json!({"domain": "a.com", "industry": "SaaS", "size": null})
        );
        let ask = Ask::Write("opener".into());
        let mut i = json!({"domain": "a.com"});
        gain(&mut i, &ask, None);
        assert_eq!(i["opener"], Value::Null);
        gain(&mut i, &ask, Some(&json!("  Hello  ")));
        assert_eq!(i["opener"], "Hello");
    }
}
