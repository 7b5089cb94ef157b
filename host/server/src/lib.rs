//! Outreach: a self-hostable B2B lead-intelligence and outbound-email
//! platform. See ARCHITECTURE.md for the map of this crate.

pub mod accounts;
pub mod api_keys;
pub mod auth;
pub mod cli;
pub mod config;
pub mod error;
pub mod http;
pub mod platform;
pub mod server;
pub mod state;
pub mod store;
pub mod usage;
pub mod vendor_keys;

#[cfg(test)]
pub mod testing;
