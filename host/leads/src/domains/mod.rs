//! The domain pool (spec/2; issue 11): one enriched record per company
//! domain, global to the installation, which lists, scoring, audiences,
//! alerts, the watchlist and intelligence read.
//!
//! - `record.rs`: the record as the API shows it; `store.rs`: its SQL.
//! - `routes.rs`, `service.rs`: `GET /v1/enrichment/domain`,
//!   `POST /v1/enrichment/bulk`, `GET /v1/enrichment/tech-stack`,
//!   `GET /v1/search/domains`.
//! - `email_finder.rs`: `GET /v1/enrichment/email-finder`.
//! - `facets.rs`: what audiences, alerts and watches read of a record, and
//!   the pool events that tell them it changed; `rollups.rs`: the
//!   market-intelligence counts every save keeps up to date.
//! - `pipeline/`: the enrichment jobs and their stages.
//! - `import.rs`: `outreach domains import`.

pub mod email_finder;
pub mod facet_filter;
pub mod facets;
pub mod import;
pub mod pipeline;
pub mod record;
pub mod rollups;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod crawl_tests;
#[cfg(test)]
mod email_finder_tests;
#[cfg(test)]
mod import_tests;
#[cfg(test)]
mod imported_tests;
#[cfg(test)]
mod tests;

/// The pool's background work: the enrichment worker with its refresh scan.
pub fn start_workers(state: &outreach_core::state::AppState) {
    tokio::spawn(pipeline::run(state.clone()));
}
