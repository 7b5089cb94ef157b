//! What publishing removes from a definition: every secret and everything
//! of the author's tenancy becomes a named placeholder
//! (`workflows/placeholders.rs`) that the installer fills before the
//! workflow may run. docs/decisions/marketplace.md ("What publishing
//! scrubs") lists the fields.
//!
//! - trigger targets: `alert_id`, `audience_id`, `watch_id`, `keyword_id`;
//! - ids of the author's rows in actions: `sequence_id`, `list_id`,
//!   `rule_id`, `workflow_id`, `connection_id`;
//! - `http_request` headers named `Authorization`, `Proxy-Authorization`,
//!   `Cookie`, `X-Api-Key` or containing token, secret, key, auth or
//!   cookie; a URL with credentials, a secret-named query parameter or a
//!   chat webhook host (its path is the secret);
//! - `wait_for_approval`'s `email` and `slack_url`;
//! - in any action's config (components included) and any request body,
//!   a value under a key that names a secret (token, secret, password,
//!   api key, credential, authorization...).
//!
//! Webhook tokens and canvas data are not part of what is published.

use serde_json::{Map, Value};

use crate::workflows::definition::nested_lists;
use crate::workflows::model::{WorkflowAction, WorkflowDefinition};
use crate::workflows::placeholders::{name_of, placeholder};

/// Keys of ids that name the author's rows, wherever they appear in an
/// action's config.
const TENANT_IDS: &[&str] = &[
    "sequence_id",
    "list_id",
    "rule_id",
    "workflow_id",
    "connection_id",
];
const TRIGGER_TARGETS: &[&str] = &["alert_id", "audience_id", "watch_id", "keyword_id"];

/// Hosts whose webhook URLs carry their secret in the path.
const WEBHOOK_HOSTS: &[&str] = &[
    "hooks.slack.com",
    "discord.com",
    "discordapp.com",
    "outlook.office.com",
    "webhook.office.com",
    "chat.googleapis.com",
];

/// Whether an HTTP header's value is a secret.
pub fn secret_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["token", "secret", "key", "auth", "cookie"]
        .iter()
        .any(|w| n.contains(w))
}

/// Whether a config or body key holds a secret. Narrower than headers:
/// `key` alone is a memory key and `keyword_id` an id, not secrets.
pub fn secret_key(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    [
        "token",
        "secret",
        "password",
        "passwd",
        "api_key",
        "apikey",
        "access_key",
        "private_key",
        "credential",
        "authorization",
        "signature",
        "cookie",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n == "auth"
}

/// Whether a URL carries a secret: credentials, a secret-named query
/// parameter, or a chat webhook host.
fn secret_url(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    !parsed.username().is_empty()
        || parsed.password().is_some()
        || parsed
            .query_pairs()
            .any(|(k, _)| secret_key(&k) || k == "key" || k == "sig")
        || parsed.host_str().is_some_and(|h| {
            WEBHOOK_HOSTS
                .iter()
                .any(|w| h == *w || h.ends_with(&format!(".{w}")))
        })
}

/// The published form of `d`: paused, its secrets and ids placeholders.
pub fn scrub(d: &WorkflowDefinition) -> WorkflowDefinition {
    let mut out = d.clone();
    if let Some(config) = out.trigger_config.as_object_mut() {
        for key in TRIGGER_TARGETS {
            if let Some(v) = config.get_mut(*key)
                && !v.is_null()
            {
                *v = placeholder(key);
            }
        }
    }
    out.actions = d.actions.iter().map(scrub_action).collect();
    out.is_active = false;
    out
}

fn scrub_action(a: &WorkflowAction) -> WorkflowAction {
    let mut out = a.clone();
    // Nested action lists first, each element scrubbed as an action.
    let nested: Vec<(String, Value)> = nested_lists(a)
        .into_iter()
        .map(|(path, list)| (path, list.clone()))
        .collect();
    for (path, list) in nested {
        let scrubbed: Vec<Value> = serde_json::from_value::<Vec<WorkflowAction>>(list)
            .map(|l| {
                l.iter()
                    .map(|x| serde_json::to_value(scrub_action(x)).unwrap_or_default())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(slot) = pointer_mut(&mut out.config, &path) {
            *slot = Value::Array(scrubbed);
        }
    }
    let Some(config) = out.config.as_object_mut() else {
        return out;
    };
    for key in TENANT_IDS {
        if config.get(*key).is_some_and(|v| !v.is_null()) {
            config.insert((*key).to_owned(), placeholder(key));
        }
    }
    match a.action_type.as_str() {
        "http_request" => {
            if let Some(headers) = config.get_mut("headers").and_then(Value::as_object_mut) {
                for (name, value) in headers.iter_mut() {
                    if secret_header(name) {
                        *value = placeholder(name);
                    }
                }
            }
            if config
                .get("url")
                .and_then(Value::as_str)
                .is_some_and(secret_url)
            {
                config.insert("url".to_owned(), placeholder("url"));
            }
        }
        "wait_for_approval" => {
            for key in ["email", "slack_url"] {
                if config.contains_key(key) {
                    config.insert(key.to_owned(), placeholder(key));
                }
            }
        }
        _ => {}
    }
    scrub_secret_keys(config);
    out
}

/// Replaces the values under secret-named keys, at any depth (nested
/// action lists, scrubbed already, are walked again harmlessly).
fn scrub_secret_keys(map: &mut Map<String, Value>) {
    for (k, v) in map.iter_mut() {
        if name_of(v).is_some() {
            continue;
        }
        if secret_key(k) && !v.is_null() {
            *v = placeholder(k);
            continue;
        }
        match v {
            Value::Object(inner) => scrub_secret_keys(inner),
            Value::Array(list) => {
                for item in list.iter_mut() {
                    if let Value::Object(inner) = item {
                        scrub_secret_keys(inner);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The value at a `nested_lists` path (`branches[1].then`, `else`).
fn pointer_mut<'a>(root: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut at = root;
    for part in path.split('.') {
        let (key, index) = match part.split_once('[') {
            Some((k, rest)) => (k, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        at = at.get_mut(key)?;
        if let Some(i) = index {
            at = at.get_mut(i)?;
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflows::placeholders::unfilled;
    use serde_json::json;

    #[test]
    fn secrets_and_tenancy_become_placeholders() {
        let d: WorkflowDefinition = serde_json::from_value(json!({
            "name": "n", "description": "", "trigger_type": "intent_alert",
            "trigger_config": {"alert_id": 42}, "conditions": [],
            "execution_limits": {}, "is_active": true,
            "actions": [
                {"type": "http_request", "config": {"method": "POST",
                    "url": "https://api.example.com/x?api_key=abc123", "connection_id": 3,
                    "headers": {"Authorization": "Bearer sk-live", "X-Trace": "ok",
                        "X-Custom-Token": "t0k"},
                    "body": {"nested": {"password": "hunter2"}, "plain": 1}}},
                {"type": "conditional_branch", "config": {"branches": [{"when":
                    {"field": "industry", "value": "Software"},
                    "then": [{"type": "add_to_list", "config": {"list_id": 9}}]}]}},
                {"type": "wait_for_approval", "config": {"message": "ok?",
                    "slack_url": "https://hooks.slack.com/services/T0/B0/XYZ"}},
                {"type": "cross_run_memory", "config": {"op": "store", "key": "k", "value": 1}},
            ],
        }))
        .unwrap();
        let s = scrub(&d);
        let text = serde_json::to_string(&s).unwrap();
        for secret in [
            "abc123",
            "sk-live",
            "t0k",
            "hunter2",
            "XYZ",
            "42",
            "\"list_id\":9",
        ] {
            assert!(!text.contains(secret), "{secret} left in {text}");
        }
        assert!(
            text.contains("X-Trace") && text.contains("\"key\":\"k\""),
            "{text}"
        );
        assert!(!s.is_active);
        let names: Vec<String> = unfilled(&s).into_iter().map(|(_, n)| n).collect();
        for n in [
            "alert_id",
            "url",
            "connection_id",
            "authorization",
            "x_custom_token",
            "password",
            "list_id",
            "slack_url",
        ] {
            assert!(names.contains(&n.to_owned()), "{n} not in {names:?}");
        }
    }
}
