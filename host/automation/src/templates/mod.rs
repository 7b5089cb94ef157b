//! Templates (spec/3 "Template"): workflow definitions shipped in
//! `template-pack` components, first-party (`marketplace/` at the top of
//! the repository, embedded) or dropped into the plugins folder.
//!
//! - `catalog.rs`: the loaded packs' templates, each checked as a
//!   workflow definition; prices, perks and industries.
//! - `service.rs`, `store.rs`: ownership, install, ratings, statistics,
//!   suggestions; grants for `outreach templates`.
//!
//! Decisions: docs/decisions/templates.md.

pub mod catalog;
pub mod model;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
