//! The mailbox pool of a sequence (spec/1 "Mailbox pool entry", "Mailbox
//! pool"): the send accounts the sender rotates through, in order. The PUT
//! replaces the pool in one transaction; accounts the caller does not own
//! are dropped silently; an empty list returns the sequence to
//! single-mailbox mode (its `send_account_id`).

pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
