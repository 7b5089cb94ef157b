//! Saved connections (spec/3 "Saved connection"): a base URL and headers
//! (credentials among them) that `http_request` actions name by
//! `connection_id`.
//!
//! - `model.rs`: the bodies; `routes.rs`, `service.rs`, `store.rs`: the
//!   endpoints, their rules (cap, checks, sealing, masking) and SQL.
//! - `apply.rs`: merging a connection into an `http_request` when a run
//!   sends it.

pub mod apply;
pub mod model;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
