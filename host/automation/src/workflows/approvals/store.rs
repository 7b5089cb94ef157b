//! The `workflow_approvals` rows.

use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

/// A new approval, as the waiting run stores it.
pub struct NewApproval<'a> {
    pub account_id: i64,
    pub workflow_id: i64,
    pub run_id: i64,
    pub action_index: i64,
    pub token_hash: &'a str,
    pub token_sealed: &'a str,
    pub message: &'a str,
    pub channels: &'a str,
    pub target_sealed: &'a str,
    pub items: &'a [Value],
    pub expires_at: i64,
    pub now: i64,
}

/// An approval as the page, the decision and the announcement read it.
#[derive(Debug, Clone)]
pub struct ApprovalRow {
    pub id: i64,
    pub account_id: i64,
    pub workflow_id: i64,
    pub workflow_name: String,
    pub run_id: i64,
    pub action_index: i64,
    pub token_sealed: String,
    pub message: String,
    pub channels: String,
    pub target_sealed: String,
    pub items: Vec<Value>,
    pub expires_at: i64,
    pub decision: Option<String>,
    pub decided_at: Option<i64>,
    pub decision_run_id: Option<i64>,
}

const COLUMNS: &str = "a.id, a.account_id, a.workflow_id, w.name AS workflow_name, a.run_id, \
     a.action_index, a.token_sealed, a.message, a.channels, a.target_sealed, a.items, \
     a.expires_at, a.decision, a.decided_at, a.decision_run_id";

fn row(r: &AnyRow) -> sqlx::Result<ApprovalRow> {
    let items: String = r.try_get("items")?;
    Ok(ApprovalRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        workflow_id: r.try_get("workflow_id")?,
        workflow_name: r.try_get("workflow_name")?,
        run_id: r.try_get("run_id")?,
        action_index: r.try_get("action_index")?,
        token_sealed: r.try_get("token_sealed")?,
        message: r.try_get("message")?,
        channels: r.try_get("channels")?,
        target_sealed: r.try_get("target_sealed")?,
        items: serde_json::from_str(&items).unwrap_or_default(),
        expires_at: r.try_get("expires_at")?,
        decision: r.try_get("decision")?,
        decided_at: r.try_get("decided_at")?,
        decision_run_id: r.try_get("decision_run_id")?,
    })
}

/// Stores the approval unless the run already stored one for this action
/// (a server killed after storing it and before the checkpoint); answers
/// the new row's id, or `None` when it was there.
pub async fn insert(conn: &mut AnyConnection, a: &NewApproval<'_>) -> sqlx::Result<Option<i64>> {
    sqlx::query_scalar(
        "INSERT INTO workflow_approvals (account_id, workflow_id, run_id, action_index, \
         token_hash, token_sealed, message, channels, target_sealed, items, expires_at, \
         created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT (run_id, action_index) DO NOTHING RETURNING id",
    )
    .bind(a.account_id)
    .bind(a.workflow_id)
    .bind(a.run_id)
    .bind(a.action_index)
    .bind(a.token_hash)
    .bind(a.token_sealed)
    .bind(a.message)
    .bind(a.channels)
    .bind(a.target_sealed)
    .bind(Value::from(a.items.to_vec()).to_string())
    .bind(a.expires_at)
    .bind(a.now)
    .fetch_optional(conn)
    .await
}

/// The one approval `query` (a SELECT of [`selecting`]) finds.
async fn one(
    conn: &mut AnyConnection,
    query: sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments>,
) -> sqlx::Result<Option<ApprovalRow>> {
    query
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

/// The approvals (with their workflow's name) that meet `condition`.
fn selecting(condition: &str) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM workflow_approvals a JOIN workflows w ON w.id = a.workflow_id \
         WHERE {condition}"
    ))
}

pub async fn by_run_action(
    conn: &mut AnyConnection,
    run_id: i64,
    action_index: i64,
) -> sqlx::Result<Option<ApprovalRow>> {
    let sql = selecting("a.run_id = $1 AND a.action_index = $2");
    one(conn, sqlx::query(sql).bind(run_id).bind(action_index)).await
}

pub async fn by_token_hash(
    conn: &mut AnyConnection,
    token_hash: &str,
) -> sqlx::Result<Option<ApprovalRow>> {
    let sql = selecting("a.token_hash = $1");
    one(conn, sqlx::query(sql).bind(token_hash.to_owned())).await
}

pub async fn by_id(conn: &mut AnyConnection, id: i64) -> sqlx::Result<Option<ApprovalRow>> {
    one(conn, sqlx::query(selecting("a.id = $1")).bind(id)).await
}

/// Records `decision` if nobody decided before and the approval has not
/// expired: one conditional UPDATE, so of two servers deciding at once
/// exactly one changes the row (PostgreSQL re-checks the condition after
/// the other's commit; SQLite runs writers one at a time). Answers whether
/// this call decided.
pub async fn decide(
    conn: &mut AnyConnection,
    token_hash: &str,
    decision: &str,
    now: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE workflow_approvals SET decision = $1, decided_at = $2 \
         WHERE token_hash = $3 AND decision IS NULL AND expires_at > $2",
    )
    .bind(decision)
    .bind(now)
    .bind(token_hash)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn set_decision_run(conn: &mut AnyConnection, id: i64, run_id: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE workflow_approvals SET decision_run_id = $1 WHERE id = $2")
        .bind(run_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn mark_notified(conn: &mut AnyConnection, id: i64, now: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE workflow_approvals SET notified_at = $1 WHERE id = $2")
        .bind(now)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}
