//! Outbound email: send accounts, sequences, enrollment, suppression, the
//! rendering engine, the sender, tracking, warmup and the unified inbox
//! (spec/1 "Sequences" to "Inbox", spec/3 "Send accounts" and "Sequence
//! warmup").
//!
//! Each spec area is one module folder here with `routes.rs`, `service.rs`,
//! `store.rs` and `tests.rs`: `suppression/`, `email_health/` and `ai_writer/` now; `send_accounts/`,
//! `sequences/`, `enrollment/`, `rendering/`, `sender/`, `tracking/`,
//! the warmups (`sequence_warmup/`, `send_account_warmup/`, `smart_warmup/`)
//! and `inbox/`. Mail servers are reached
//! through `mail/` (SMTP and IMAP connections, opened by
//! `outreach_ssrf::connect_checked` under the core's outbound policy,
//! `AppState::outbound`); events go to the core's outbox. `ports.rs` offers
//! enrolment and automatic replies to workflows
//! (`outreach_core::ports::OutboundPort`).

use outreach_core::Area;

pub mod ai_writer;
pub mod analytics;
pub mod email_health;
pub mod enrollment;
pub mod inbox;
pub mod mail;
pub mod mailbox_pool;
pub mod ports;
pub mod preview;
pub mod rendering;
pub mod send_account_warmup;
pub mod send_accounts;
pub mod sender;
pub mod sequence_events;
pub mod sequence_warmup;
pub mod sequences;
pub mod smart_warmup;
pub mod steps;
pub mod suppression;
pub mod tasks;
pub mod test_send;
pub mod tracking;

#[cfg(test)]
mod testkit;

/// The outbound areas' routes.
pub const AREA: Area = Area {
    name: "outbound",
    v1: || {
        suppression::routes::router()
            .merge(send_accounts::routes::router())
            .merge(sequences::routes::router())
            .merge(steps::routes::router())
            .merge(enrollment::routes::router())
            .merge(mailbox_pool::routes::router())
            .merge(preview::routes::router())
            .merge(email_health::routes::router())
            .merge(ai_writer::routes::router())
            .merge(analytics::routes::router())
            .merge(tasks::routes::router())
            .merge(test_send::routes::router())
            .merge(sequence_warmup::routes::router())
            .merge(send_account_warmup::routes::router())
            .merge(smart_warmup::routes::router())
            .merge(inbox::routes::router())
    },
    public: tracking::routes::public_router,
    extend: |state, ext| {
        ext.insert(sender::Sender::new(state));
        ext.insert(inbox::Inbox::new(state));
        ext.insert(smart_warmup::SmartWarmup::new());
        // Workflows enrol contacts and answer replies through it.
        ext.insert::<outreach_core::ports::SharedOutboundPort>(std::sync::Arc::new(
            ports::SequencesPort,
        ));
    },
    workers: start_workers,
};

/// The area's background loops (`outreach serve`).
fn start_workers(state: &outreach_core::state::AppState) {
    sender::start_workers(state);
    send_account_warmup::start_workers(state);
    smart_warmup::start_workers(state);
    inbox::start_workers(state);
}
