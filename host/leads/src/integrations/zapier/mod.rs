//! The automation platform's endpoints (spec/2 "Automation-platform
//! integration"): `auth/test`, three polling triggers (`triggers.rs`) and
//! three actions (`actions.rs`). Every route but `auth/test` is Starter+
//! and counts against the account's `automation_daily_queries`
//! (`outreach_core::usage::limits::automation_query`); a missing or bad
//! key is 401 'Not authenticated' (the API-key layer's detail for the
//! `zapier` group).

pub mod actions;
pub mod routes;
#[cfg(test)]
mod tests;
pub mod triggers;
