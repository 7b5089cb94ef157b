//! Competitors an account tracks (spec/2 "the service"; Pro 10, Enterprise
//! 100 by the `competitors` setting). `service.rs`: add, list, delete,
//! refresh, export; `activity.rs`: detail, analysis, market share and the
//! digest; `store.rs`: their SQL, and the snapshot the pool's save takes
//! of each enrichment of a tracked domain.

pub mod activity;
pub mod model;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;

use outreach_core::error::ApiError;

fn competitor_not_found() -> ApiError {
    ApiError::not_found("Competitor")
}
