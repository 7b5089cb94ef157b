//! Bulk operations (spec/2 "Bulk operations"; issue 12): remove or archive
//! up to 500 domains of a list at once, and export up to 1,000 pool
//! records as CSV.
//!
//! - `routes.rs`: the handlers; `service.rs`: the rules, over the lists'
//!   store and the pool's; `export.rs`: the export's fields and rows.
//!
//! `domain_ids` are domain names, as spec/2 says; each is normalised as the
//! pool normalises. A domain the list does not hold is not counted. The
//! archive list is found by name among the account's lists (the oldest of
//! that name) and created when missing; archived items keep their stage and
//! history (they move, they are not copied), and one the archive already
//! holds is only removed from the source.

pub mod export;
pub mod routes;
pub mod service;

#[cfg(test)]
mod tests;
