//! The unified inbox (spec/1 "Inbox thread", "Reply", "Inbox"): what comes
//! back from the mailboxes we send from.
//!
//! - `routes.rs`, `service.rs`, `store.rs`: the thread API (list, counts,
//!   detail, update, bulk, reclassify-bulk); `suggest.rs`: suggest-reply.
//! - `collect.rs`: the IMAP poller, one leased mailbox at a time.
//! - `ingest.rs`: a fetched message parsed, matched to the sequence message
//!   it answers, threaded and stored; `effects.rs`: what a bounce,
//!   complaint, auto-reply or reply does to its enrollment.
//! - `classify.rs`: the classification worker over the reply-classifier
//!   plugins; `spoofing.rs`: the sender-authentication check.

pub mod routes;
pub mod service;
pub mod store;
pub mod suggest;

#[cfg(test)]
mod tests;

/// How often the classification worker looks for unclassified replies; the
/// reclassify answer's `next_run_within_seconds`.
pub const CLASSIFY_INTERVAL_SECS: i64 = 15;
