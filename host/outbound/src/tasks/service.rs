//! Listing and completing tasks; SQL is here because it is three small
//! statements over one table.

use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::any::AnyRow;
use utoipa::{IntoParams, ToSchema};

use crate::sequences::service::owned;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{one_of, within};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct Task {
    pub id: i64,
    pub sequence_id: i64,
    pub enrollment_id: i64,
    pub step_id: i64,
    /// linkedin_connect, linkedin_message, phone_call, manual_task or sms.
    pub step_type: String,
    /// open or completed.
    pub status: String,
    /// The step's subject when it has one, else what to do.
    pub title: String,
    pub notes: Option<String>,
    pub contact_email: String,
    pub domain: String,
    pub created_at: String,
    pub completed_at: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TaskList {
    pub tasks: Vec<Task>,
    /// Tasks matching the filter, ignoring limit and offset.
    pub total: i64,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TaskQuery {
    /// open or completed; both when absent.
    pub status: Option<String>,
    /// 1-500, default 50.
    pub limit: Option<i64>,
    /// 0-100000, default 0.
    pub offset: Option<i64>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteTask {
    /// Up to 2000 characters.
    pub notes: Option<String>,
}

const COLUMNS: &str = "t.id, t.sequence_id, t.enrollment_id, t.step_id, t.step_type, t.status, \
    t.title, t.notes, t.created_at, t.completed_at, e.contact_email, e.domain";

fn task(r: &AnyRow) -> sqlx::Result<Task> {
    Ok(Task {
        id: r.try_get("id")?,
        sequence_id: r.try_get("sequence_id")?,
        enrollment_id: r.try_get("enrollment_id")?,
        step_id: r.try_get("step_id")?,
        step_type: r.try_get("step_type")?,
        status: r.try_get("status")?,
        title: r.try_get("title")?,
        notes: r.try_get("notes")?,
        contact_email: r.try_get("contact_email")?,
        domain: r.try_get("domain")?,
        created_at: iso(r.try_get("created_at")?),
        completed_at: r.try_get::<Option<i64>, _>("completed_at")?.map(iso),
    })
}

/// A sequence's tasks (or one enrollment's), newest first.
pub async fn list(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    enrollment_id: Option<i64>,
    q: TaskQuery,
) -> ApiResult<TaskList> {
    let sequence = owned(state, caller, sequence_id).await?;
    if let Some(s) = &q.status {
        one_of("status", s, &["open", "completed"])?;
    }
    let limit = q.limit.unwrap_or(50);
    within("limit", limit, 1..=500)?;
    let offset = q.offset.unwrap_or(0);
    within("offset", offset, 0..=100_000)?;
    if let Some(id) = enrollment_id {
        crate::enrollment::store::get(&state.db, caller.account_id, sequence.id, id)
            .await?
            .ok_or_else(|| ApiError::not_found("Enrollment"))?;
    }
    // Both filters are optional: `$2 IS NULL OR ...` keeps one statement.
    let filter = "t.sequence_id = $1 AND t.account_id = $2 \
        AND (CAST($3 AS TEXT) IS NULL OR t.status = $3) \
        AND (CAST($4 AS BIGINT) IS NULL OR t.enrollment_id = $4)";
    let sql = format!(
        "SELECT {COLUMNS} FROM enrollment_tasks t JOIN enrollments e ON e.id = t.enrollment_id \
         WHERE {filter} ORDER BY t.id DESC LIMIT $5 OFFSET $6"
    );
    let tasks = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(sequence.id)
        .bind(caller.account_id)
        .bind(q.status.clone())
        .bind(enrollment_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(&state.db.pool)
        .await?
        .iter()
        .map(task)
        .collect::<sqlx::Result<Vec<_>>>()?;
    let sql = format!("SELECT COUNT(*) FROM enrollment_tasks t WHERE {filter}");
    let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(sequence.id)
        .bind(caller.account_id)
        .bind(q.status)
        .bind(enrollment_id)
        .fetch_one(&state.db.pool)
        .await?;
    Ok(TaskList { tasks, total })
}

/// Marks a task completed (idempotent: a completed task keeps its time;
/// new notes replace old ones).
pub async fn complete(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    task_id: i64,
    body: CompleteTask,
) -> ApiResult<Task> {
    let sequence = owned(state, caller, sequence_id).await?;
    if body
        .notes
        .as_ref()
        .is_some_and(|n| n.chars().count() > 2000)
    {
        return Err(ApiError::bad_request(
            "notes must be at most 2000 characters",
        ));
    }
    let now = state.clock.now_ms();
    let done = sqlx::query(
        "UPDATE enrollment_tasks SET status = 'completed',
             completed_at = COALESCE(completed_at, $1), notes = COALESCE($2, notes)
         WHERE id = $3 AND sequence_id = $4 AND account_id = $5",
    )
    .bind(now)
    .bind(body.notes)
    .bind(task_id)
    .bind(sequence.id)
    .bind(caller.account_id)
    .execute(&state.db.pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(ApiError::not_found("Task"));
    }
    let sql = format!(
        "SELECT {COLUMNS} FROM enrollment_tasks t JOIN enrollments e ON e.id = t.enrollment_id \
         WHERE t.id = $1"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(task_id)
        .fetch_one(&state.db.pool)
        .await?;
    Ok(task(&row)?)
}
