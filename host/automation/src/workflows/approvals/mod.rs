//! Approvals (spec/3 `wait_for_approval`, the Approval row of "States and
//! transitions", "Events" 2): `service.rs` stores an approval when a run
//! reaches the action and records the first decision, which starts a new
//! run after the wait; `notify.rs` announces it by email or Slack;
//! `routes.rs` and `page.rs` are the public page and its decision;
//! `store.rs` the rows. Decisions: docs/decisions/workflows.md,
//! "Approvals".

pub mod notify;
pub mod page;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
