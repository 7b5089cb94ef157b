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
//!   plugins; `spoofing/`: the sender-authentication check;
//!   `reply_store.rs`: the SQL of collection and classification.

pub mod classify;
pub mod collect;
pub mod effects;
pub mod ingest;
pub mod reply_store;
pub mod routes;
pub mod service;
pub mod spoofing;
pub mod store;
pub mod suggest;

#[cfg(test)]
mod collect_tests;
#[cfg(test)]
mod effects_tests;
#[cfg(test)]
mod tests;

pub use collect::Inbox;

/// The inbox's background loops: the IMAP poller and the classifier.
pub fn start_workers(state: &outreach_core::state::AppState) {
    tokio::spawn(collect::run(state.clone()));
    tokio::spawn(classify::run(state.clone()));
}

/// How often the classification worker looks for unclassified replies; the
/// reclassify answer's `next_run_within_seconds`.
pub const CLASSIFY_INTERVAL_SECS: i64 = 15;
