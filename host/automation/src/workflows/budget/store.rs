//! SQL of `workflow_budgets`: one row per workflow, made by the first PUT
//! or the first debit, so spend is known before a cap is set.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

/// A budget row as stored; `spend_usd` is the spend of `spend_month`.
#[derive(Debug, Clone, Default)]
pub struct BudgetRow {
    pub monthly_cap_usd: f64,
    pub auto_pause_on_exceed: bool,
    pub spend_usd: f64,
    pub spend_month: String,
    pub paused_by_budget: bool,
}

impl BudgetRow {
    /// Spend in `month`: a row last debited in an earlier month has spent
    /// nothing yet in this one (the monthly reset needs no job).
    pub fn spend_in(&self, month: &str) -> f64 {
        if self.spend_month == month {
            self.spend_usd
        } else {
            0.0
        }
    }

    /// 0 means no cap (spec/3).
    pub fn capped(&self) -> bool {
        self.monthly_cap_usd > 0.0
    }
}

/// The UTC calendar month of `ms` as `YYYY-MM`.
pub fn month_of(ms: i64) -> String {
    outreach_core::platform::clock::ms_to_datetime(ms)
        .format("%Y-%m")
        .to_string()
}

fn budget_row(r: &AnyRow) -> sqlx::Result<BudgetRow> {
    Ok(BudgetRow {
        monthly_cap_usd: r.try_get("monthly_cap_usd")?,
        auto_pause_on_exceed: r.try_get::<i64, _>("auto_pause_on_exceed")? != 0,
        spend_usd: r.try_get("spend_usd")?,
        spend_month: r.try_get("spend_month")?,
        paused_by_budget: r.try_get::<i64, _>("paused_by_budget")? != 0,
    })
}

/// The budget of the account's workflow `workflow_id`, if it has a row.
pub async fn get(
    conn: &mut AnyConnection,
    account_id: i64,
    workflow_id: i64,
) -> sqlx::Result<Option<BudgetRow>> {
    sqlx::query(
        "SELECT monthly_cap_usd, auto_pause_on_exceed, spend_usd, spend_month, paused_by_budget \
         FROM workflow_budgets WHERE account_id = $1 AND workflow_id = $2",
    )
    .bind(account_id)
    .bind(workflow_id)
    .fetch_optional(conn)
    .await?
    .map(|r| budget_row(&r))
    .transpose()
}

/// Whether the account has the workflow (budgets of other accounts' ids
/// are 404s).
pub async fn workflow_active(
    conn: &mut AnyConnection,
    account_id: i64,
    workflow_id: i64,
) -> sqlx::Result<Option<bool>> {
    let active: Option<i64> =
        sqlx::query_scalar("SELECT is_active FROM workflows WHERE account_id = $1 AND id = $2")
            .bind(account_id)
            .bind(workflow_id)
            .fetch_optional(conn)
            .await?;
    Ok(active.map(|a| a != 0))
}

/// Makes the row if the workflow has none (no cap, nothing spent).
pub async fn ensure(
    conn: &mut AnyConnection,
    account_id: i64,
    workflow_id: i64,
    month: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO workflow_budgets (workflow_id, account_id, spend_month, updated_at) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (workflow_id) DO NOTHING",
    )
    .bind(workflow_id)
    .bind(account_id)
    .bind(month)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes the whole row (the caller read it in the same transaction).
pub async fn save(
    conn: &mut AnyConnection,
    workflow_id: i64,
    row: &BudgetRow,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE workflow_budgets SET monthly_cap_usd = $1, auto_pause_on_exceed = $2, \
         spend_usd = $3, spend_month = $4, paused_by_budget = $5, updated_at = $6 \
         WHERE workflow_id = $7",
    )
    .bind(row.monthly_cap_usd)
    .bind(i64::from(row.auto_pause_on_exceed))
    .bind(row.spend_usd)
    .bind(&row.spend_month)
    .bind(i64::from(row.paused_by_budget))
    .bind(now)
    .bind(workflow_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Pauses or resumes the workflow itself. The budget's own pause goes
/// through here, not `workflows::store::set_active`, which forgets it.
pub async fn set_workflow_active(
    conn: &mut AnyConnection,
    workflow_id: i64,
    active: bool,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE workflows SET is_active = $1 WHERE id = $2")
        .bind(i64::from(active))
        .bind(workflow_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// A workflow made active by its user (a save, a rollback, `execute
/// ?activate=true`) is no longer paused by its budget: a later pause is
/// the user's own, which a reset must not lift.
pub async fn forget_pause(conn: &mut AnyConnection, workflow_id: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE workflow_budgets SET paused_by_budget = 0 WHERE workflow_id = $1")
        .bind(workflow_id)
        .execute(conn)
        .await?;
    Ok(())
}
