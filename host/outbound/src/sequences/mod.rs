//! Sequences (spec/1 "Sequence", "Sequence status", "Sequences"): the
//! resource, its quota, the sender address (a connected send account) and
//! the status operations. Steps live in `steps/`, enrollments in
//! `enrollment/`; deleting a sequence cascades to both and to its mailbox
//! pool through foreign keys.

pub mod model;
pub mod routes;
pub mod service;
pub mod settings;
pub mod store;

#[cfg(test)]
mod tests;
