//! SQL of an account's scoring rules (`scoring_rules`). Every query takes
//! the account id, so no query can reach another tenant's rules.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::rules::ScoringCondition;
use outreach_core::store::Db;

/// A stored rule. `description` is empty when none was given.
#[derive(Debug, Clone)]
pub struct RuleRow {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub conditions: Vec<ScoringCondition>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, name, description, conditions, created_at, updated_at";

fn rule_row(r: &AnyRow) -> sqlx::Result<RuleRow> {
    let conditions: String = r.try_get("conditions")?;
    Ok(RuleRow {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        description: r.try_get("description")?,
        // Written by us from checked conditions; an unreadable column shows
        // as no conditions, which scoring then refuses with a 400.
        conditions: serde_json::from_str(&conditions).unwrap_or_default(),
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// The changeable fields of a rule, already checked.
pub struct RuleFields<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub conditions: &'a [ScoringCondition],
}

fn conditions_text(conditions: &[ScoringCondition]) -> String {
    serde_json::to_string(conditions).unwrap_or_else(|_| "[]".into())
}

/// Adds a rule on `conn`, the creating transaction; the service checks the
/// cap after it (`ensure_quota_after_insert`).
pub async fn insert(
    conn: &mut sqlx::AnyConnection,
    account_id: i64,
    f: &RuleFields<'_>,
    now: i64,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO scoring_rules (account_id, name, description, conditions, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $5) RETURNING id",
    )
    .bind(account_id)
    .bind(f.name)
    .bind(f.description)
    .bind(conditions_text(f.conditions))
    .bind(now)
    .fetch_one(conn)
    .await
}

pub async fn get(db: &Db, account_id: i64, id: i64) -> sqlx::Result<Option<RuleRow>> {
    let sql = format!("SELECT {COLUMNS} FROM scoring_rules WHERE id = $1 AND account_id = $2");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(account_id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(rule_row)
        .transpose()
}

/// The account's rules, oldest first.
pub async fn list(db: &Db, account_id: i64) -> sqlx::Result<Vec<RuleRow>> {
    let sql = format!("SELECT {COLUMNS} FROM scoring_rules WHERE account_id = $1 ORDER BY id");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(rule_row)
        .collect()
}

/// Writes every changeable field; `None` when the account has no such rule.
pub async fn update(
    db: &Db,
    account_id: i64,
    id: i64,
    f: &RuleFields<'_>,
    now: i64,
) -> sqlx::Result<Option<RuleRow>> {
    let sql = format!(
        "UPDATE scoring_rules SET name = $1, description = $2, conditions = $3, updated_at = $4 \
         WHERE id = $5 AND account_id = $6 RETURNING {COLUMNS}"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(f.name)
        .bind(f.description)
        .bind(conditions_text(f.conditions))
        .bind(now)
        .bind(id)
        .bind(account_id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(rule_row)
        .transpose()
}

/// Whether the account had the rule.
pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM scoring_rules WHERE id = $1 AND account_id = $2")
        .bind(id)
        .bind(account_id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}
