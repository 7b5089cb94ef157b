//! Spend accounting for a run's AI calls: check, call, debit.
//!
//! Each call holds this process's lock of the paying workflow from the
//! check to the debit, so a server has at most one call of a capped
//! workflow in flight and every check reads the spend committed by all
//! finished calls (of every server). Spend can then pass the cap by at
//! most one call per server: the calls that were in flight when it was
//! reached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use outreach_core::error::ApiError;
use outreach_core::store::lock_account;
use outreach_plugin_runtime::CompletionRequest;
use outreach_vendors::vendor_keys::service::AiCompletion;
use outreach_vendors::vendor_keys::service::NO_AI_KEY;
use outreach_vendors::{Actor, VendorsExt};

use super::store::{self, month_of};
use crate::workflows::engine::{Failure, RunEnv};

/// Marks the failure of a call the cap refused: the run stops there even
/// when the action may fail without stopping it (`continue_on_error`).
pub const BUDGET_REACHED: &str = "Workflow budget reached";

/// Per-workflow locks of this process; a typed extension of the state.
#[derive(Clone, Default)]
pub struct BudgetLocks {
    locks: Arc<Mutex<HashMap<i64, Arc<tokio::sync::Mutex<()>>>>>,
}

impl BudgetLocks {
    fn of(&self, workflow_id: i64) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        // Locks nobody holds or waits for are dropped now and then, so the
        // map does not keep one for every workflow that ever ran.
        if locks.len() > 1024 {
            locks.retain(|_, l| Arc::strong_count(l) > 1);
        }
        locks.entry(workflow_id).or_default().clone()
    }
}

/// Whether a failure is the cap's refusal (nested actions prefix it).
pub fn is_budget_stop(message: &str) -> bool {
    message.contains(BUDGET_REACHED)
}

/// The workflow that pays for `env`'s calls: the run's own, also while a
/// `sub_workflow` runs another one's actions inline.
pub fn payer(env: &RunEnv<'_>) -> i64 {
    env.inline_stack.first().copied().unwrap_or(env.workflow_id)
}

fn db(e: impl std::fmt::Display) -> Failure {
    Failure::retry(format!("workflow budget: {e}"))
}

fn refused(spend: f64, cap: f64) -> Failure {
    Failure::fatal(format!(
        "{BUDGET_REACHED}: month-to-date AI spend ${spend:.4} has reached the monthly cap ${cap:.2}; \
         raise the cap or reset the budget"
    ))
}

/// One completion for a run's action on the account's AI keys, recorded
/// in the vendor ledger under `action_type` and debited from the paying
/// workflow's budget. Refused (fatal) when this month's spend has reached
/// the cap.
pub async fn complete(
    env: &RunEnv<'_>,
    action_type: &str,
    request: CompletionRequest,
) -> Result<AiCompletion, Failure> {
    let state = env.state;
    let workflow_id = payer(env);
    let account_id = env.actor.account_id;
    let lock = state.ext::<BudgetLocks>().of(workflow_id);
    let guard = lock.lock().await;
    let row = {
        let mut conn = state.db.pool.acquire().await.map_err(db)?;
        store::get(&mut conn, account_id, workflow_id)
            .await
            .map_err(db)?
    };
    let month = month_of(state.clock.now_ms());
    let capped = row.as_ref().is_some_and(store::BudgetRow::capped);
    if let Some(row) = row.as_ref().filter(|r| r.capped()) {
        let spend = row.spend_in(&month);
        if spend >= row.monthly_cap_usd {
            // A cap lowered under the spend pauses here, as a debit
            // reaching it would have.
            if row.auto_pause_on_exceed {
                debit(env, workflow_id, 0.0).await?;
            }
            return Err(refused(spend, row.monthly_cap_usd));
        }
    }
    // Without a cap there is nothing to overspend: calls need not wait
    // for each other.
    let guard = capped.then_some(guard);
    let actor = Actor {
        account_id,
        user_key: format!("workflow:{workflow_id}"),
    };
    let done = state
        .vendors()
        .complete(&actor, action_type, request)
        .await
        .map_err(|e| match e {
            ApiError::BadRequest(m) if m == NO_AI_KEY => Failure::fatal(format!(
                "{m}: add an AI provider key (POST /v1/ai/providers) to run AI actions"
            )),
            // Every key failed for now (timeouts, 429, 5xx): a retry may do.
            ApiError::BadGateway(m) => Failure::retry(m),
            ApiError::Internal(e) => {
                tracing::warn!("workflow AI call: {e:#}");
                Failure::retry("internal error")
            }
            other => Failure::fatal(other.to_string()),
        })?;
    debit(env, workflow_id, done.cost_estimate_usd).await?;
    drop(guard);
    Ok(done)
}

/// Adds `cost` to this month's spend and, when that reaches a cap with
/// `auto_pause_on_exceed`, pauses the active workflow in the same
/// transaction (marked as the budget's pause).
async fn debit(env: &RunEnv<'_>, workflow_id: i64, cost: f64) -> Result<(), Failure> {
    let state = env.state;
    let account_id = env.actor.account_id;
    let now = state.clock.now_ms();
    let month = month_of(now);
    let mut tx = state.db.pool.begin().await.map_err(db)?;
    lock_account(&mut tx, state.db.backend, account_id)
        .await
        .map_err(db)?;
    let Some(active) = store::workflow_active(&mut tx, account_id, workflow_id)
        .await
        .map_err(db)?
    else {
        // Deleted while the call ran; its spend went with it.
        return Ok(());
    };
    store::ensure(&mut tx, account_id, workflow_id, &month, now)
        .await
        .map_err(db)?;
    let Some(mut row) = store::get(&mut tx, account_id, workflow_id)
        .await
        .map_err(db)?
    else {
        return Ok(());
    };
    row.spend_usd = row.spend_in(&month) + cost.max(0.0);
    row.spend_month = month;
    if row.capped() && row.spend_usd >= row.monthly_cap_usd && row.auto_pause_on_exceed && active {
        store::set_workflow_active(&mut tx, workflow_id, false)
            .await
            .map_err(db)?;
        row.paused_by_budget = true;
        tracing::info!(
            workflow_id,
            spend = row.spend_usd,
            "workflow paused: its AI budget is spent"
        );
    }
    store::save(&mut tx, workflow_id, &row, now)
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)?;
    Ok(())
}
