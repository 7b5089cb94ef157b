//! The rules of the budget endpoints: the plan gate, the account's own
//! workflow, the cap's checks, and the reset that lifts the budget's pause
//! (never a user's own).

use super::store::{self, BudgetRow, month_of};
use super::{WorkflowBudget, WorkflowBudgetInput};
use crate::workflows::service::not_found;
use outreach_core::accounts::Plan;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

/// Highest cap accepted: a typo of many zeros is refused, not stored.
pub const MAX_CAP_USD: f64 = 1_000_000.0;

/// The view of `row` (or of no row) in `month`.
pub fn view(workflow_id: i64, row: Option<&BudgetRow>, month: &str) -> WorkflowBudget {
    let row = row.cloned().unwrap_or_default();
    let spend = row.spend_in(month);
    WorkflowBudget {
        workflow_id,
        configured: row.capped(),
        monthly_cap_usd: row.monthly_cap_usd,
        auto_pause_on_exceed: row.auto_pause_on_exceed,
        month_to_date_spend_usd: spend,
        remaining_usd: row.capped().then(|| (row.monthly_cap_usd - spend).max(0.0)),
        month: month.to_owned(),
        paused_by_budget: row.paused_by_budget,
    }
}

pub fn check_cap(cap: f64) -> ApiResult<f64> {
    if !cap.is_finite() || !(0.0..=MAX_CAP_USD).contains(&cap) {
        return Err(ApiError::bad_request(format!(
            "monthly_cap_usd must be a number from 0 (no cap) to {MAX_CAP_USD}"
        )));
    }
    Ok(cap)
}

pub async fn get(state: &AppState, caller: &Caller, id: i64) -> ApiResult<WorkflowBudget> {
    caller.require(Plan::Starter)?;
    let mut conn = state.db.pool.acquire().await?;
    store::workflow_active(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    let row = store::get(&mut conn, caller.account_id, id).await?;
    let month = month_of(state.clock.now_ms());
    Ok(view(id, row.as_ref(), &month))
}

/// Runs `change` on the workflow's budget row (made if missing, carried
/// into this month) in one transaction under the account's lock.
async fn change(
    state: &AppState,
    caller: &Caller,
    id: i64,
    change: impl FnOnce(&mut BudgetRow, bool) -> Option<bool>,
) -> ApiResult<WorkflowBudget> {
    caller.require(Plan::Starter)?;
    let now = state.clock.now_ms();
    let month = month_of(now);
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let active = store::workflow_active(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    store::ensure(&mut tx, caller.account_id, id, &month, now).await?;
    let mut row = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    row.spend_usd = row.spend_in(&month);
    row.spend_month = month.clone();
    if let Some(set_active) = change(&mut row, active) {
        store::set_workflow_active(&mut tx, id, set_active).await?;
    }
    store::save(&mut tx, id, &row, now).await?;
    tx.commit().await?;
    Ok(view(id, Some(&row), &month))
}

/// Sets the cap (0 removes it) and, when given, `auto_pause_on_exceed`.
/// Spend so far this month counts against a new cap; a cap already
/// reached takes effect at the workflow's next AI call.
pub async fn put(
    state: &AppState,
    caller: &Caller,
    id: i64,
    input: WorkflowBudgetInput,
) -> ApiResult<WorkflowBudget> {
    let cap = check_cap(input.monthly_cap_usd)?;
    change(state, caller, id, |row, _| {
        row.monthly_cap_usd = cap;
        if let Some(p) = input.auto_pause_on_exceed {
            row.auto_pause_on_exceed = p;
        }
        None
    })
    .await
}

/// Removes the cap; month-to-date spend is kept (it is still spent).
pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<WorkflowBudget> {
    change(state, caller, id, |row, _| {
        row.monthly_cap_usd = 0.0;
        row.auto_pause_on_exceed = false;
        None
    })
    .await
}

/// Zeroes this month's spend and lifts the budget's pause: the workflow
/// is made active again only when the cap paused it and it is still
/// paused (a user's own pause stays).
pub async fn reset(state: &AppState, caller: &Caller, id: i64) -> ApiResult<WorkflowBudget> {
    change(state, caller, id, |row, active| {
        row.spend_usd = 0.0;
        let lift = row.paused_by_budget && !active;
        row.paused_by_budget = false;
        lift.then_some(true)
    })
    .await
}
