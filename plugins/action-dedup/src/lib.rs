//! `workflow-action` `dedup_by_field`: keeps the first item for each value of
//! a dot-path field, optionally case-insensitively. Items without the field
//! pass through unchanged.

use outreach_plugin_sdk::prelude::*;
use serde_json::{Value, json};
use std::collections::HashSet;

pub struct DedupByField;

fn lookup<'a>(item: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(item, |v, key| v.get(key))
}

impl WorkflowAction for DedupByField {
    fn describe() -> ActionDescriptor {
        ActionDescriptor {
            type_name: "dedup_by_field".into(),
            display_name: "Deduplicate by field".into(),
            description: "Keeps the first item for each value of a field.".into(),
            config_schema: to_json(&json!({
                "type": "object",
                "required": ["field"],
                "additionalProperties": false,
                "properties": {
                    "field": {"type": "string", "minLength": 1, "description": "dot-path, e.g. domain or company.name"},
                    "case_insensitive": {"type": "boolean", "default": false}
                }
            })),
        }
    }

    fn execute(config: &str, items: Vec<String>) -> Result<ActionOutput, PluginError> {
        let config: Value = from_json("config", config)?;
        let field = config["field"]
            .as_str()
            .filter(|f| !f.is_empty())
            .ok_or_else(|| PluginError::InvalidInput("config.field is required".into()))?;
        let fold = config["case_insensitive"].as_bool().unwrap_or(false);
        let mut seen = HashSet::new();
        let mut out = Vec::with_capacity(items.len());
        for text in items {
            let item: Value = from_json("item", &text)?;
            let keep = match lookup(&item, field) {
                None | Some(Value::Null) => true,
                Some(v) => {
                    let key = match v {
                        Value::String(s) if fold => s.to_lowercase(),
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    seen.insert(key)
                }
            };
            if keep {
                out.push(text);
            }
        }
        let removed = json!({"kept": out.len()});
        Ok(ActionOutput {
            items: out,
            previous_result: Some(to_json(&removed)),
        })
    }
}

outreach_plugin_sdk::export_workflow_action!(DedupByField);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_first_of_each_value() {
        let items = vec![
            r#"{"domain":"A.com"}"#.to_string(),
            r#"{"domain":"a.com"}"#.to_string(),
            r#"{"other":1}"#.to_string(),
        ];
        let out =
            DedupByField::execute(r#"{"field":"domain","case_insensitive":true}"#, items).unwrap();
        assert_eq!(out.items.len(), 2);
        assert!(matches!(
            DedupByField::execute("{}", vec![]),
            Err(PluginError::InvalidInput(_))
        ));
    }
}
