//! Alert rules (spec/2 "Alert rule", "Alert history entry", "Alerts"):
//! saved filters that record a history entry when pool records start
//! matching, delivered in the app, by email and to Slack
//! ([decisions](../../../../docs/decisions/audiences-alerts.md)).
//!
//! - `model.rs`: bodies, filters and delivery channels with their checks;
//!   `routes.rs`, `service.rs`, `store.rs`: the endpoints.
//! - `evaluate.rs`: the rules' part of a pool-evaluation batch (history,
//!   `search.alert`, `domain.new_match`, `intent.high_detected`, delivery
//!   jobs); `deliver.rs`: the email and Slack delivery worker.

pub mod deliver;
pub mod evaluate;
pub mod model;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
