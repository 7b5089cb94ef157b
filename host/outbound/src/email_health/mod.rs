//! Email health (spec/1 "Test send, preview, email health"):
//! `POST /v1/sequences/email-health` scores a subject and HTML body for
//! what spam filters and readers punish, and writes nothing.
//!
//! `score.rs` holds the checks and their documented penalties; `routes.rs`
//! the endpoint.

pub mod routes;
pub mod score;

#[cfg(test)]
mod tests;
