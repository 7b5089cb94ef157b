//! SQL of `alert_rules` and `alert_history`. Every query takes the account
//! id, except the evaluation worker's read of every active rule and the
//! delivery worker's reads by history id (ids its own jobs carry).

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::model::{AlertFilters, AlertMatchedDomain};
use outreach_core::store::{Arg, Args, Db};

#[derive(Debug, Clone)]
pub struct RuleRow {
    pub id: i64,
    pub account_id: i64,
    pub name: String,
    pub filters: AlertFilters,
    pub via_email: bool,
    pub via_slack: bool,
    pub via_in_app: bool,
    /// Sealed.
    pub slack_webhook_url: Option<String>,
    pub is_active: bool,
    pub last_triggered_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

const RULE_COLUMNS: &str = "id, account_id, name, filters, via_email, via_slack, via_in_app, \
     slack_webhook_url, is_active, last_triggered_at, created_at, updated_at";

fn flag(r: &AnyRow, column: &str) -> sqlx::Result<bool> {
    Ok(r.try_get::<i64, _>(column)? != 0)
}

fn rule_row(r: &AnyRow) -> sqlx::Result<RuleRow> {
    let filters: String = r.try_get("filters")?;
    Ok(RuleRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        name: r.try_get("name")?,
        // Written by us from checked filters.
        filters: serde_json::from_str(&filters).unwrap_or_default(),
        via_email: flag(r, "via_email")?,
        via_slack: flag(r, "via_slack")?,
        via_in_app: flag(r, "via_in_app")?,
        slack_webhook_url: r.try_get("slack_webhook_url")?,
        is_active: flag(r, "is_active")?,
        last_triggered_at: r.try_get("last_triggered_at")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// A rule's changeable fields, checked (the Slack URL sealed).
pub struct RuleFields<'a> {
    pub name: &'a str,
    pub filters: &'a AlertFilters,
    pub via_email: bool,
    pub via_slack: bool,
    pub via_in_app: bool,
    pub slack_webhook_url: Option<&'a str>,
    pub is_active: bool,
}

fn filters_text(f: &AlertFilters) -> String {
    serde_json::to_string(f).unwrap_or_else(|_| "{}".into())
}

/// Inserts a rule without its Slack URL (sealed with the row's id, so
/// written by [`update`] next); returns its id.
pub async fn insert(
    conn: &mut AnyConnection,
    account_id: i64,
    f: &RuleFields<'_>,
    now: i64,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO alert_rules (account_id, name, filters, via_email, via_slack, via_in_app, \
         is_active, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) \
         RETURNING id",
    )
    .bind(account_id)
    .bind(f.name)
    .bind(filters_text(f.filters))
    .bind(i64::from(f.via_email))
    .bind(i64::from(f.via_slack))
    .bind(i64::from(f.via_in_app))
    .bind(i64::from(f.is_active))
    .bind(now)
    .fetch_one(conn)
    .await
}

pub async fn update(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
    f: &RuleFields<'_>,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE alert_rules SET name = $1, filters = $2, via_email = $3, via_slack = $4, \
         via_in_app = $5, slack_webhook_url = $6, is_active = $7, updated_at = $8 \
         WHERE id = $9 AND account_id = $10",
    )
    .bind(f.name)
    .bind(filters_text(f.filters))
    .bind(i64::from(f.via_email))
    .bind(i64::from(f.via_slack))
    .bind(i64::from(f.via_in_app))
    .bind(f.slack_webhook_url)
    .bind(i64::from(f.is_active))
    .bind(now)
    .bind(id)
    .bind(account_id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
) -> sqlx::Result<Option<RuleRow>> {
    let sql = format!("SELECT {RULE_COLUMNS} FROM alert_rules WHERE id = $1 AND account_id = $2");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(account_id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(rule_row)
        .transpose()
}

pub async fn list(db: &Db, account_id: i64) -> sqlx::Result<Vec<RuleRow>> {
    let sql = format!("SELECT {RULE_COLUMNS} FROM alert_rules WHERE account_id = $1 ORDER BY id");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(rule_row)
        .collect()
}

/// Every account's active rules (the evaluation worker).
pub async fn active(conn: &mut AnyConnection) -> sqlx::Result<Vec<RuleRow>> {
    let sql = format!("SELECT {RULE_COLUMNS} FROM alert_rules WHERE is_active = 1 ORDER BY id");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(conn)
        .await?
        .iter()
        .map(rule_row)
        .collect()
}

pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM alert_rules WHERE id = $1 AND account_id = $2")
        .bind(id)
        .bind(account_id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Records a history entry and the rule's `last_triggered_at`; returns
/// the entry's id.
pub async fn insert_history(
    conn: &mut AnyConnection,
    rule: &RuleRow,
    matched: &[AlertMatchedDomain],
    now: i64,
) -> sqlx::Result<i64> {
    sqlx::query("UPDATE alert_rules SET last_triggered_at = $1 WHERE id = $2")
        .bind(now)
        .bind(rule.id)
        .execute(&mut *conn)
        .await?;
    sqlx::query_scalar(
        "INSERT INTO alert_history (account_id, alert_id, alert_name, matched_domains, in_app, \
         created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(rule.account_id)
    .bind(rule.id)
    .bind(&rule.name)
    .bind(serde_json::to_string(matched).unwrap_or_else(|_| "[]".into()))
    .bind(i64::from(rule.via_in_app))
    .bind(now)
    .fetch_one(conn)
    .await
}

#[derive(Debug, Clone)]
pub struct HistoryRow {
    pub id: i64,
    pub account_id: i64,
    pub alert_id: i64,
    pub alert_name: String,
    pub matched_domains: Vec<AlertMatchedDomain>,
    pub in_app: bool,
    pub delivered_email: bool,
    pub delivered_slack: bool,
    pub created_at: i64,
}

const HISTORY_COLUMNS: &str = "id, account_id, alert_id, alert_name, matched_domains, in_app, \
     delivered_email, delivered_slack, created_at";

fn history_row(r: &AnyRow) -> sqlx::Result<HistoryRow> {
    let matched: String = r.try_get("matched_domains")?;
    Ok(HistoryRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        alert_id: r.try_get("alert_id")?,
        alert_name: r.try_get("alert_name")?,
        matched_domains: serde_json::from_str(&matched).unwrap_or_default(),
        in_app: flag(r, "in_app")?,
        delivered_email: flag(r, "delivered_email")?,
        delivered_slack: flag(r, "delivered_slack")?,
        created_at: r.try_get("created_at")?,
    })
}

/// One page of the account's history, newest first, and the total.
pub async fn history(
    db: &Db,
    account_id: i64,
    alert_id: Option<i64>,
    limit: i64,
    offset: i64,
) -> sqlx::Result<(Vec<HistoryRow>, i64)> {
    let mut args = Args::default();
    let mut filter = format!("account_id = {}", args.push(Arg::Int(account_id)));
    if let Some(a) = alert_id {
        filter.push_str(&format!(" AND alert_id = {}", args.push(Arg::Int(a))));
    }
    let count_sql = format!("SELECT COUNT(*) FROM alert_history WHERE {filter}");
    let total: i64 = args
        .bind_scalar(sqlx::query_scalar(sqlx::AssertSqlSafe(count_sql)).persistent(false))
        .fetch_one(&db.pool)
        .await?;
    let limit = args.push(Arg::Int(limit));
    let offset = args.push(Arg::Int(offset));
    let sql = format!(
        "SELECT {HISTORY_COLUMNS} FROM alert_history WHERE {filter} ORDER BY id DESC \
         LIMIT {limit} OFFSET {offset}"
    );
    let rows = args
        .bind(sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false))
        .fetch_all(&db.pool)
        .await?;
    let page = rows.iter().map(history_row).collect::<sqlx::Result<_>>()?;
    Ok((page, total))
}

/// A history entry by id (the delivery worker's jobs name it).
pub async fn history_entry(db: &Db, id: i64) -> sqlx::Result<Option<HistoryRow>> {
    let sql = format!("SELECT {HISTORY_COLUMNS} FROM alert_history WHERE id = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(history_row)
        .transpose()
}

/// Notes that `channel` (`email` or `slack`) delivered entry `id`.
pub async fn mark_delivered(db: &Db, id: i64, channel: &str) -> sqlx::Result<()> {
    let column = if channel == "slack" {
        "delivered_slack"
    } else {
        "delivered_email"
    };
    let sql = format!("UPDATE alert_history SET {column} = 1 WHERE id = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// The account owner's address, where alert email goes.
pub async fn owner_email(db: &Db, account_id: i64) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar(
        "SELECT email FROM users WHERE account_id = $1 ORDER BY CASE WHEN role = 'owner' \
         THEN 0 ELSE 1 END, id LIMIT 1",
    )
    .bind(account_id)
    .fetch_optional(&db.pool)
    .await
}
