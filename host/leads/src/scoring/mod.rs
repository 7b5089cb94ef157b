//! Scoring (spec/2 "Scoring"; issue 12): domains of the pool scored 0-100
//! by a rule of weighted conditions over their records, with a tier and a
//! per-condition breakdown, one at a time or up to 100 per query; and the
//! rules themselves, the first-party defaults every account may use and
//! the account's own (made in the dashboard, so the API serves them).
//!
//! - `rules.rs`: the condition model (ops, values), its checks,
//!   compilation and evaluation; `fields.rs`: the record fields conditions
//!   read. Pure.
//! - `defaults.rs`: the first-party default rules.
//! - `score.rs`: `POST /v1/scoring` and `POST /v1/scoring/batch`.
//! - `service.rs`: `GET/POST /v1/scoring/rules`,
//!   `GET/PUT/DELETE /v1/scoring/rules/{rule_id}`, and which rule a
//!   request names; `store.rs`: the rules' SQL.
//! - `routes.rs`: the handlers.

pub mod defaults;
pub mod fields;
pub mod routes;
pub mod rules;
pub mod score;
pub mod service;
pub mod store;

#[cfg(test)]
mod rules_api_tests;
#[cfg(test)]
mod rules_tests;
#[cfg(test)]
mod tests;
