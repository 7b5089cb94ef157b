//! Run records as the API reads them: the list, one run, and the stream
//! events (`runs.rs` writes them).

use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use super::model::WorkflowRun;
use super::runs::Checkpoint;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

const RUN_COLUMNS: &str = "id, workflow_id, status, trigger_event, trigger_data, domain_count, \
     checkpoint, actions_executed, error, rerun_of, created_at, started_at, finished_at";

fn run_view(r: &AnyRow) -> sqlx::Result<WorkflowRun> {
    let data: String = r.try_get("trigger_data")?;
    let cp: String = r.try_get("checkpoint")?;
    let records: String = r.try_get("actions_executed")?;
    let cp: Checkpoint = serde_json::from_str(&cp).unwrap_or_default();
    let status: String = r.try_get("status")?;
    Ok(WorkflowRun {
        id: r.try_get("id")?,
        workflow_id: r.try_get("workflow_id")?,
        // A retry's wait is a detail of running.
        status: if status == "waiting" {
            "running".to_owned()
        } else {
            status
        },
        trigger_event: r.try_get("trigger_event")?,
        trigger_data: serde_json::from_str(&data).unwrap_or(Value::Null),
        domain_count: r.try_get("domain_count")?,
        domains_truncated_from: cp.truncated_from,
        actions_executed: serde_json::from_str(&records).unwrap_or_default(),
        error: r.try_get("error")?,
        rerun_of: r.try_get("rerun_of")?,
        created_at: iso(r.try_get("created_at")?),
        started_at: r.try_get::<Option<i64>, _>("started_at")?.map(iso),
        finished_at: r.try_get::<Option<i64>, _>("finished_at")?.map(iso),
    })
}

pub async fn list(
    state: &AppState,
    account_id: i64,
    workflow_id: i64,
    limit: i64,
    offset: i64,
) -> sqlx::Result<(Vec<WorkflowRun>, i64)> {
    let runs = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {RUN_COLUMNS} FROM workflow_runs WHERE account_id = $1 AND workflow_id = $2 \
         ORDER BY id DESC LIMIT $3 OFFSET $4"
    )))
    .bind(account_id)
    .bind(workflow_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(&state.db.pool)
    .await?
    .iter()
    .map(run_view)
    .collect::<sqlx::Result<Vec<_>>>()?;
    let total = sqlx::query_scalar(
        "SELECT COUNT(*) FROM workflow_runs WHERE account_id = $1 AND workflow_id = $2",
    )
    .bind(account_id)
    .bind(workflow_id)
    .fetch_one(&state.db.pool)
    .await?;
    Ok((runs, total))
}

pub async fn get(
    state: &AppState,
    account_id: i64,
    workflow_id: i64,
    run_id: i64,
) -> sqlx::Result<Option<WorkflowRun>> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {RUN_COLUMNS} FROM workflow_runs WHERE account_id = $1 AND workflow_id = $2 \
         AND id = $3"
    )))
    .bind(account_id)
    .bind(workflow_id)
    .bind(run_id)
    .fetch_optional(&state.db.pool)
    .await?
    .map(|r| run_view(&r))
    .transpose()
}

/// A stream event as stored.
pub struct RunEvent {
    pub seq: i64,
    pub name: String,
    pub data: String,
}

pub async fn events_after(
    state: &AppState,
    run_id: i64,
    after: i64,
) -> sqlx::Result<Vec<RunEvent>> {
    let rows = sqlx::query(
        "SELECT seq, name, data FROM workflow_run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq",
    )
    .bind(run_id)
    .bind(after)
    .fetch_all(&state.db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(RunEvent {
                seq: r.try_get("seq")?,
                name: r.try_get("name")?,
                data: r.try_get("data")?,
            })
        })
        .collect()
}
