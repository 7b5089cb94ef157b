//! The community marketplace (spec/3 "Marketplace entry"): accounts
//! publish their workflows, scrubbed of secrets and of their own ids
//! (`scrub.rs`), and other accounts search, install and rate them.
//! Decisions: docs/decisions/marketplace.md.

pub mod model;
pub mod routes;
pub mod scrub;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
