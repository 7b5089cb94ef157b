//! `cross_run_memory`: values a workflow keeps across its runs, by key,
//! until their TTL (docs/decisions/workflows.md, "Memory"). Read by the
//! action's `recall` and by `{{ai_memory_recall:KEY}}` in any config.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::engine::{Failure, Outcome, RunEnv, Working};
use outreach_core::state::AppState;

/// The live values of `keys` (expired ones are absent).
pub async fn recall_many(
    state: &AppState,
    workflow_id: i64,
    keys: &[String],
) -> sqlx::Result<HashMap<String, Value>> {
    let now = state.clock.now_ms();
    let mut out = HashMap::new();
    for key in keys {
        let row: Option<String> = sqlx::query_scalar(
            "SELECT value FROM workflow_memory WHERE workflow_id = $1 AND key = $2 \
             AND (expires_at IS NULL OR expires_at > $3)",
        )
        .bind(workflow_id)
        .bind(key)
        .bind(now)
        .fetch_optional(&state.db.pool)
        .await?;
        if let Some(text) = row {
            out.insert(
                key.clone(),
                serde_json::from_str(&text).unwrap_or(Value::Null),
            );
        }
    }
    Ok(out)
}

async fn store(
    state: &AppState,
    workflow_id: i64,
    key: &str,
    value: &Value,
    expires_at: Option<i64>,
) -> sqlx::Result<()> {
    // The same upsert text on both backends.
    let upsert = "INSERT INTO workflow_memory (workflow_id, key, value, expires_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (workflow_id, key) DO UPDATE SET value = excluded.value, \
             expires_at = excluded.expires_at";
    sqlx::query(upsert)
        .bind(workflow_id)
        .bind(key)
        .bind(value.to_string())
        .bind(expires_at)
        .execute(&state.db.pool)
        .await?;
    Ok(())
}

/// The action, on a rendered config.
pub async fn action(
    env: &RunEnv<'_>,
    config: &Value,
    working: &Working,
) -> Result<Outcome, Failure> {
    let state = env.state;
    let key = config["key"].as_str().unwrap_or_default();
    let items = working.items.clone();
    let db = |e: sqlx::Error| Failure::retry(format!("workflow memory: {e}"));
    match config["op"].as_str().unwrap_or_default() {
        "store" => {
            let expires_at = config["ttl_seconds"]
                .as_i64()
                .map(|ttl| state.clock.now_ms() + ttl * 1000);
            let value = config.get("value").cloned().unwrap_or(Value::Null);
            store(state, env.workflow_id, key, &value, expires_at)
                .await
                .map_err(db)?;
            Ok(Outcome::pass(items, json!({"op": "store", "key": key})))
        }
        "recall" => {
            let found = recall_many(state, env.workflow_id, &[key.to_owned()])
                .await
                .map_err(db)?;
            let value = found.get(key).cloned();
            Ok(Outcome {
                items,
                result: json!({"op": "recall", "key": key, "found": value.is_some()}),
                previous_result: Some(value.unwrap_or(Value::Null)),
                ..Outcome::default()
            })
        }
        "delete" => {
            sqlx::query("DELETE FROM workflow_memory WHERE workflow_id = $1 AND key = $2")
                .bind(env.workflow_id)
                .bind(key)
                .execute(&state.db.pool)
                .await
                .map_err(db)?;
            Ok(Outcome::pass(items, json!({"op": "delete", "key": key})))
        }
        other => Err(Failure::fatal(format!("config.op: unknown op '{other}'"))),
    }
}
