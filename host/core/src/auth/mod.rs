//! Dashboard sign-in under `/auth` (spec/1 "Authentication" rule 5):
//! registration, login with a 30-minute JWT, password reset by mail, TOTP
//! two-factor, and the dashboard's own API-key management.

pub mod jwt;
pub mod password;
pub mod routes;
pub mod service;
#[cfg(test)]
mod tests;
pub mod totp;
