//! Workflows (spec/3 "Workflow", "Action types", "Workflow run",
//! "Versioning"): trigger-driven automations that take a set of domain
//! items through an action graph.
//!
//! - `model.rs`: the bodies; `definition.rs`: a definition's checks;
//!   `action_types.rs`: built-in and component types with their schemas.
//! - `service.rs`, `store.rs`: definitions, versions, the webhook token.
//! - `triggers.rs`: manual, incoming webhook, schedule (`cron.rs`) and
//!   outbox events; `runs.rs`: the run queue, worker and checkpoints
//!   (their writes in `run_progress.rs`, group-committed by `run_writer.rs`), records read by
//!   `run_records.rs`; `engine/`: one action (templating, conditions, the types);
//!   `http_action.rs`: the `http_request` call; `memory.rs`:
//!   `cross_run_memory`; `dry_run.rs`: `POST .../test`.
//! - `approvals/`: `wait_for_approval`, its announcement and public page.
//! - `ai_actions.rs`: `ai_extract` and `ai_write`, batched, on the
//!   account's AI keys; `budget/`: the monthly cap on their spend and its
//!   endpoints.
//! - `placeholders.rs`: the named values an installed template or
//!   marketplace entry leaves to fill before it may run.
//! - `analytics.rs`: `GET /v1/workflows/analytics`; `retention.rs`: the
//!   hourly pruning of old runs.

pub mod action_types;
pub mod ai_actions;
pub mod analytics;
pub mod approvals;
pub mod budget;
pub mod cron;
pub mod definition;
pub mod dry_run;
pub mod engine;
pub mod http_action;
pub mod memory;
pub mod model;
pub mod placeholders;
pub mod retention;
pub mod routes;
pub mod run_batch;
pub mod run_progress;
pub mod run_records;
pub mod run_writer;
pub mod runs;
pub mod service;
pub mod store;
pub mod triggers;

// The connections' tests reuse the helpers and the receiver.
#[cfg(test)]
pub(crate) mod tests;

use outreach_core::state::{AppState, Extensions};

/// The services workflows add to the state.
pub fn extend(state: &AppState, ext: &mut Extensions) {
    ext.insert(action_types::ActionCatalog::default());
    ext.insert(runs::RunQueue::new());
    ext.insert(run_writer::RunWriter::default());
    ext.insert(budget::spend::BudgetLocks::default());
    ext.insert(http_action::HttpActionClient::new(state.outbound.clone()));
    ext.insert(outreach_core::platform::slack::SlackClient::new(
        state.outbound.clone(),
    ));
}

/// The run worker and the scheduler.
pub fn start_workers(state: &AppState) {
    runs::start(state);
    triggers::start_scheduler(state);
    approvals::notify::start(state);
}
