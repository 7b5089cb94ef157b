//! Sequence warmup (spec/3): the ramp of daily volume and the deliverability
//! checks around it.
//!
//! - `ramp.rs`: the cap formula the sender and the dashboard share.
//! - `service.rs`: dashboard, presets, adjust, pause, resume, reset, phases,
//!   and the hourly log of each ramp's cap (`note_effective_limits`).
//! - `auth_records.rs`, `blacklist.rs`, `dns_guide.rs`: SPF, DKIM and DMARC,
//!   DNSBL lookups (cached 24 h per domain), record snippets; all through
//!   the core's resolver (`AppState::dns`).
//! - `checks.rs`: the four DNS endpoints, the overall score and the advice
//!   the send-account report shares.
//!
//! Phase moves (spec/3 "States and transitions"): pause needs a running
//! ramp (warmup on, started, not paused), turns warmup off and stamps
//! `warmup_paused_at`; resume needs a start, moves `warmup_started_at`
//! forward by the pause and turns warmup on; reset wipes the start, the
//! pause and the log of effective limits in `sequence_days` (sent, bounce
//! and complaint counts stay: the daily limit and reputation read them).

pub mod auth_records;
pub mod blacklist;
pub mod checks;
pub mod dns_guide;
pub mod model;
pub mod ramp;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
pub(crate) mod tests;
