//! Customer vendor keys (spec/3 "AI provider keys", "Email verifier keys",
//! "Contact enricher keys"): keys validated against the vendor and stored
//! encrypted, fallback chains over the account's active keys, per-user result
//! caches, the cost ledger and its usage reports. Other areas call
//! [`service::Vendors`] to complete a prompt, verify an address or enrich a
//! domain on the account's own keys.

pub mod account_ai;
pub mod catalogue;
pub mod keys;
pub mod routes;
pub mod service;
pub mod store;
pub mod usage;

#[cfg(test)]
mod tests;
