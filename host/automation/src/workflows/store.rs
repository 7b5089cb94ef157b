//! SQL of workflows and their versions. Every query takes the account id,
//! except the trigger lookups of the workers (by token, by due time, by
//! event), which read every account's rows.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::model::*;
use outreach_core::store::Db;

#[derive(Debug, Clone)]
pub struct WorkflowRow {
    pub id: i64,
    pub account_id: i64,
    pub definition: WorkflowDefinition,
    pub canvas_data: Option<serde_json::Value>,
    pub webhook_token: Option<String>,
    pub trigger_count: i64,
    pub trigger_target: Option<i64>,
    pub next_due_at: Option<i64>,
    pub run_count: i64,
    pub last_run_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

pub const COLUMNS: &str = "id, account_id, name, description, trigger_type, trigger_config, \
     conditions, actions, execution_limits, canvas_data, retry_failed, is_active, webhook_token, \
     trigger_count, trigger_target, next_due_at, run_count, last_run_at, created_at, updated_at";

fn json<T: serde::de::DeserializeOwned + Default>(r: &AnyRow, col: &str) -> sqlx::Result<T> {
    let text: String = r.try_get(col)?;
    // Written by us from checked values.
    Ok(serde_json::from_str(&text).unwrap_or_default())
}

pub fn workflow_row(r: &AnyRow) -> sqlx::Result<WorkflowRow> {
    let canvas: Option<String> = r.try_get("canvas_data")?;
    Ok(WorkflowRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        definition: WorkflowDefinition {
            name: r.try_get("name")?,
            description: r.try_get("description")?,
            trigger_type: r.try_get("trigger_type")?,
            trigger_config: json::<serde_json::Value>(r, "trigger_config")?,
            conditions: json(r, "conditions")?,
            actions: json(r, "actions")?,
            execution_limits: json(r, "execution_limits")?,
            retry_failed: r.try_get::<i64, _>("retry_failed")? != 0,
            is_active: r.try_get::<i64, _>("is_active")? != 0,
        },
        canvas_data: canvas.and_then(|c| serde_json::from_str(&c).ok()),
        webhook_token: r.try_get("webhook_token")?,
        trigger_count: r.try_get("trigger_count")?,
        trigger_target: r.try_get("trigger_target")?,
        next_due_at: r.try_get("next_due_at")?,
        run_count: r.try_get("run_count")?,
        last_run_at: r.try_get("last_run_at")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

fn text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// Everything a write sets besides ids and counters.
pub struct Fields<'a> {
    pub definition: &'a WorkflowDefinition,
    pub canvas_data: Option<&'a serde_json::Value>,
    pub webhook_token: Option<&'a str>,
    pub trigger_target: Option<i64>,
    pub next_due_at: Option<i64>,
}

pub async fn insert(
    conn: &mut AnyConnection,
    account_id: i64,
    f: &Fields<'_>,
    now: i64,
) -> sqlx::Result<i64> {
    let d = f.definition;
    sqlx::query_scalar(
        "INSERT INTO workflows (account_id, name, description, trigger_type, trigger_config, \
         conditions, actions, execution_limits, canvas_data, retry_failed, is_active, \
         webhook_token, trigger_target, next_due_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15) RETURNING id",
    )
    .bind(account_id)
    .bind(&d.name)
    .bind(&d.description)
    .bind(&d.trigger_type)
    .bind(text(&d.trigger_config))
    .bind(text(&d.conditions))
    .bind(text(&d.actions))
    .bind(text(&d.execution_limits))
    .bind(f.canvas_data.map(text))
    .bind(i64::from(d.retry_failed))
    .bind(i64::from(d.is_active))
    .bind(f.webhook_token)
    .bind(f.trigger_target)
    .bind(f.next_due_at)
    .bind(now)
    .fetch_one(conn)
    .await
}

pub async fn update(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
    f: &Fields<'_>,
    now: i64,
) -> sqlx::Result<()> {
    let d = f.definition;
    sqlx::query(
        "UPDATE workflows SET name = $1, description = $2, trigger_type = $3, \
         trigger_config = $4, conditions = $5, actions = $6, execution_limits = $7, \
         canvas_data = $8, retry_failed = $9, is_active = $10, webhook_token = $11, \
         trigger_target = $12, next_due_at = $13, updated_at = $14 \
         WHERE account_id = $15 AND id = $16",
    )
    .bind(&d.name)
    .bind(&d.description)
    .bind(&d.trigger_type)
    .bind(text(&d.trigger_config))
    .bind(text(&d.conditions))
    .bind(text(&d.actions))
    .bind(text(&d.execution_limits))
    .bind(f.canvas_data.map(text))
    .bind(i64::from(d.retry_failed))
    .bind(i64::from(d.is_active))
    .bind(f.webhook_token)
    .bind(f.trigger_target)
    .bind(f.next_due_at)
    .bind(now)
    .bind(account_id)
    .bind(id)
    .execute(&mut *conn)
    .await?;
    if d.is_active {
        super::budget::store::forget_pause(conn, id).await?;
    }
    Ok(())
}

pub async fn get(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
) -> sqlx::Result<Option<WorkflowRow>> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM workflows WHERE account_id = $1 AND id = $2"
    )))
    .bind(account_id)
    .bind(id)
    .fetch_optional(conn)
    .await?
    .map(|r| workflow_row(&r))
    .transpose()
}

pub async fn list(db: &Db, account_id: i64) -> sqlx::Result<Vec<WorkflowRow>> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM workflows WHERE account_id = $1 ORDER BY id"
    )))
    .bind(account_id)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(workflow_row)
    .collect()
}

pub async fn by_token(db: &Db, token: &str) -> sqlx::Result<Option<WorkflowRow>> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM workflows WHERE webhook_token = $1"
    )))
    .bind(token)
    .fetch_optional(&db.pool)
    .await?
    .map(|r| workflow_row(&r))
    .transpose()
}

pub async fn delete(conn: &mut AnyConnection, account_id: i64, id: i64) -> sqlx::Result<bool> {
    // Runs, versions, run events and memory go with it (ON DELETE
    // CASCADE); SQLite enforces that with foreign_keys on, which Db sets.
    let done = sqlx::query("DELETE FROM workflows WHERE account_id = $1 AND id = $2")
        .bind(account_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

pub async fn set_token(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
    token: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE workflows SET webhook_token = $1, updated_at = $2 WHERE account_id = $3 AND id = $4",
    )
    .bind(token)
    .bind(now)
    .bind(account_id)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// A user's pause or resume; a resume ends a pause the budget made
/// (the budget pauses through `budget::store`).
pub async fn set_active(conn: &mut AnyConnection, id: i64, active: bool) -> sqlx::Result<()> {
    sqlx::query("UPDATE workflows SET is_active = $1 WHERE id = $2")
        .bind(i64::from(active))
        .bind(id)
        .execute(&mut *conn)
        .await?;
    if active {
        super::budget::store::forget_pause(conn, id).await?;
    }
    Ok(())
}

// Versions.

pub async fn next_version_number(conn: &mut AnyConnection, workflow_id: i64) -> sqlx::Result<i64> {
    let max: Option<i64> = sqlx::query_scalar(
        "SELECT MAX(version_number) FROM workflow_versions WHERE workflow_id = $1",
    )
    .bind(workflow_id)
    .fetch_one(conn)
    .await?;
    Ok(max.unwrap_or(0) + 1)
}

pub async fn insert_version(
    conn: &mut AnyConnection,
    account_id: i64,
    workflow_id: i64,
    summary: &str,
    snapshot: &WorkflowDefinition,
    now: i64,
) -> sqlx::Result<i64> {
    let number = next_version_number(conn, workflow_id).await?;
    sqlx::query(
        "INSERT INTO workflow_versions (workflow_id, account_id, version_number, change_summary, \
         snapshot, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(workflow_id)
    .bind(account_id)
    .bind(number)
    .bind(summary)
    .bind(text(snapshot))
    .bind(now)
    .execute(conn)
    .await?;
    Ok(number)
}

pub struct VersionRow {
    pub id: i64,
    pub workflow_id: i64,
    pub version_number: i64,
    pub change_summary: String,
    pub snapshot: Option<WorkflowDefinition>,
    pub created_at: i64,
}

fn version_row(r: &AnyRow, with_snapshot: bool) -> sqlx::Result<VersionRow> {
    Ok(VersionRow {
        id: r.try_get("id")?,
        workflow_id: r.try_get("workflow_id")?,
        version_number: r.try_get("version_number")?,
        change_summary: r.try_get("change_summary")?,
        snapshot: if with_snapshot {
            let s: String = r.try_get("snapshot")?;
            serde_json::from_str(&s).ok()
        } else {
            None
        },
        created_at: r.try_get("created_at")?,
    })
}

pub async fn versions(
    db: &Db,
    account_id: i64,
    workflow_id: i64,
    limit: i64,
) -> sqlx::Result<Vec<VersionRow>> {
    sqlx::query(
        "SELECT id, workflow_id, version_number, change_summary, created_at FROM workflow_versions \
         WHERE account_id = $1 AND workflow_id = $2 ORDER BY version_number DESC LIMIT $3",
    )
    .bind(account_id)
    .bind(workflow_id)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| version_row(r, false))
    .collect()
}

pub async fn version(
    conn: &mut AnyConnection,
    account_id: i64,
    workflow_id: i64,
    id: i64,
) -> sqlx::Result<Option<VersionRow>> {
    sqlx::query(
        "SELECT id, workflow_id, version_number, change_summary, snapshot, created_at \
         FROM workflow_versions WHERE account_id = $1 AND workflow_id = $2 AND id = $3",
    )
    .bind(account_id)
    .bind(workflow_id)
    .bind(id)
    .fetch_optional(conn)
    .await?
    .map(|r| version_row(&r, true))
    .transpose()
}

/// The actions of the account's workflows `ids` (the cycle check's walk).
pub async fn actions_of(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
) -> sqlx::Result<Option<Vec<WorkflowAction>>> {
    let text: Option<String> =
        sqlx::query_scalar("SELECT actions FROM workflows WHERE account_id = $1 AND id = $2")
            .bind(account_id)
            .bind(id)
            .fetch_optional(conn)
            .await?;
    Ok(text.map(|t| serde_json::from_str(&t).unwrap_or_default()))
}
