//! Send-account warmup reports of spec/3: `GET /v1/send-accounts/{id}/warmup/
//! deliverability` (DNS authentication, blacklists and measured reputation,
//! cached 1 hour per send account) and `.../warmup/reputation-history` (the
//! daily roll-up, one row per send account and UTC day with activity).
//!
//! - **Reputation** is measured from the account's `sequence_events` of the
//!   last 30 days: `bounce_rate` = bounced / sent x 100; `sender_score` =
//!   spec/3's `100 - bounce_rate x 5 - complaint_rate x 20` (0-100);
//!   `inbox_placement_rate` = (100 - bounce_rate) x sender_score / 100, a
//!   heuristic. All three are null until the account has sent something in
//!   the window. `spam_complaint_rate` (and the history's `complaint_rate`)
//!   is null: complaints are not recorded per send account yet (the inbox
//!   issue adds them), and the formula counts them as 0 meanwhile.
//!   `domain_age_days` is null: the server makes no WHOIS or RDAP lookups.
//! - **Roll-up** (`rollup.rs`): an hourly pass writes every UTC day that
//!   ended at least 15 minutes earlier (so events from servers whose clocks
//!   trail a little still count) and that no pass wrote yet, up to 180 days
//!   back; a marker in `settings` remembers the last day written. Upserts
//!   make passes of several servers safe.

pub mod rollup;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;

pub use rollup::start_workers;
