//! Usage (spec/1 "Limits", "Usage endpoints"): every `/v1` request is recorded
//! through a batched writer, monthly quotas are counted, and three endpoints
//! report the figures.

pub mod quota;
pub mod recorder;
pub mod routes;
pub mod service;
pub mod store;
#[cfg(test)]
mod tests;
