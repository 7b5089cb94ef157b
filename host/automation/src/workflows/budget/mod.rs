//! Workflow budgets (spec/3 "Workflow budget", "Spend accounting"): a
//! monthly cap on a workflow's AI spend.
//!
//! - `routes.rs`, `service.rs`, `store.rs`: `GET/PUT/DELETE
//!   /v1/workflows/{id}/budget` and `POST .../budget/reset`.
//! - `spend.rs`: every AI call of a run: check the cap, call, debit (and
//!   pause with `auto_pause_on_exceed`), under a per-workflow lock
//!   (docs/decisions/workflows.md, "Budgets").

pub mod routes;
pub mod service;
pub mod spend;
pub mod store;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `PUT /v1/workflows/{id}/budget`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct WorkflowBudgetInput {
    /// US dollars a calendar month (UTC); 0 means no cap.
    pub monthly_cap_usd: f64,
    /// Pause the workflow when its spend reaches the cap; unchanged when
    /// left out (false for a new budget).
    #[serde(default)]
    pub auto_pause_on_exceed: Option<bool>,
}

/// A workflow's budget with its month-to-date spend.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WorkflowBudget {
    pub workflow_id: i64,
    /// False when no cap is set (`monthly_cap_usd` 0).
    pub configured: bool,
    /// 0 when not configured.
    pub monthly_cap_usd: f64,
    pub auto_pause_on_exceed: bool,
    /// AI spend of the workflow's runs this calendar month (UTC).
    pub month_to_date_spend_usd: f64,
    /// Cap minus spend, never below 0; null without a cap.
    pub remaining_usd: Option<f64>,
    /// The month the spend is of, `YYYY-MM`.
    pub month: String,
    /// Whether the cap paused the workflow (a reset lifts that pause).
    pub paused_by_budget: bool,
}
