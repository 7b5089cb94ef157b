//! Send accounts (spec/3 "Send account", "Send accounts"): a customer's
//! own mailbox. Connecting tests SMTP and IMAP through `mail/` (and so the
//! outbound policy); the four credentials are stored as one AES-GCM sealed
//! JSON object with the row id as associated data, opened only by
//! [`service::connection`] for the workers, never returned or logged.

pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
