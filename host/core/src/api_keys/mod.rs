//! API keys (spec/1 "Authentication"): created with a name, shown once,
//! stored as a SHA-256 hash next to a lookup id, revocable one by one, with
//! optional IP/CIDR and endpoint-group restrictions. Reseller client keys are
//! `<prefix>_r_<client_id>_<random>` and count against the client's quota.

pub mod cache;
pub mod format;
pub mod service;
pub mod store;

pub use service::{ApiKeyService, KeyInfo, NewKey, Restrictions, VerifiedKey};
