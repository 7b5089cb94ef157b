//! Usage (spec/1 "Limits", "Usage endpoints"): every `/v1` request is counted
//! in memory and flushed as deltas into rollups, per-key limits and monthly quotas
//! are counted (shared across servers on PostgreSQL), and three endpoints
//! report the figures from the rollups.

pub mod housekeeping;
pub mod limits;
mod pending;
pub mod quota;
pub mod recorder;
pub mod routes;
#[cfg(test)]
mod scale_tests;
pub mod service;
pub mod store;
#[cfg(test)]
mod tests;
