//! Audiences (spec/2 "Audience", "Audiences"): saved filters over the
//! whole pool whose `match_count` and `new_since_viewed` move as the pool
//! changes ([decisions](../../../../docs/decisions/audiences-alerts.md)).
//!
//! - `model.rs`: the request and answer bodies, the filters and their
//!   checks; `routes.rs`, `service.rs`, `store.rs`: the endpoints.
//! - `evaluate.rs`: what the evaluation worker (`crate::evaluation`) does
//!   for audiences with a batch of pool events.

pub mod evaluate;
pub mod model;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
