//! `POST /v1/sequences/{id}/preview` (spec/1 "Test send, preview, email
//! health"): renders one step for a sample contact or an enrollment exactly
//! as the sender will, through `rendering/`. Writes nothing.

pub mod routes;
pub mod service;

#[cfg(test)]
mod tests;
