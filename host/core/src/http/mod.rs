//! The HTTP edge: router assembly, extractors that answer bad input in the
//! spec's error shape, API-key and dashboard authentication, client IPs and
//! the OpenAPI document, and the small HTML pages of public links.

pub mod app;
pub mod auth;
pub mod client_ip;
pub mod errors;
pub mod extract;
pub mod openapi;
pub mod page;
#[cfg(test)]
mod tests;
pub mod upload;
