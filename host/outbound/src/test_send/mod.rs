//! `POST /v1/sequences/{id}/test-send` (spec/1 "Test send, preview, email
//! health"): renders a step as the sender would and sends it for real
//! through the sequence's send account to an address the caller chooses.
//! It records no events and changes no counters; 5 per user per minute.

pub mod routes;
pub mod service;

#[cfg(test)]
mod tests;
