//! Outbound email: send accounts, sequences, enrollment, suppression, the
//! rendering engine, the sender, tracking, warmup and the unified inbox
//! (spec/1 "Sequences" to "Inbox", spec/3 "Send accounts" and "Sequence
//! warmup").
//!
//! Each spec area becomes one module folder here (`send_accounts/`,
//! `sequences/`, `enrollment/`, `suppression/`, `rendering/`, `sender/`,
//! `tracking/`, `warmup/`, `inbox/`) with `routes.rs`, `service.rs`,
//! `store.rs` and `tests.rs`, as its issue lands. Mail servers are reached
//! through the core's outbound policy (`AppState::outbound` with
//! `outreach_ssrf::connect_checked`); events go to the core's outbox.

use outreach_core::Area;

/// Routes and services of the outbound areas (none have landed yet).
pub const AREA: Area = Area::empty("outbound");
