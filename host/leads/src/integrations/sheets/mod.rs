//! The spreadsheet export (spec/2 "Spreadsheet export"): an account
//! connects the spreadsheet service (Google Sheets) by OAuth 2.0, then
//! exports domains or a lead list to a new spreadsheet.
//!
//! - `oauth.rs`: the connection. Authorization code with PKCE through the
//!   `oauth2` crate; the state names the account (its hash is stored with
//!   the sealed verifier for 10 minutes); tokens are sealed at rest;
//!   access tokens are refreshed a minute before expiry and after a 401,
//!   once; a refresh the provider refuses marks the connection `broken`.
//! - `api.rs`: the provider's REST API (spreadsheets create, values
//!   update) with its error shapes, bounded retries on 429, a 30 s
//!   deadline per request; every call goes through the guarded client.
//! - `templates.rs`: the three templates' columns and cells.
//! - `export.rs`: the two exports and the `export.completed` event.
//!
//! Operator settings `[sheets]` (`outreach_core::config::SheetsConfig`).
//! Decisions: docs/decisions/integrations.md.

pub mod api;
pub mod export;
pub mod oauth;
pub mod routes;
pub mod store;
pub mod templates;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use outreach_ssrf::{ClientOptions, GuardedClient};

/// How long the provider has to answer one request (issue 33: 30 s).
pub const PROVIDER_TIMEOUT: Duration = Duration::from_secs(30);

/// The spreadsheet service's HTTP client, a typed extension of the state.
#[derive(Clone)]
pub struct Sheets {
    pub(crate) http: GuardedClient,
    /// The per-request deadline in milliseconds (tests shorten it).
    timeout_ms: Arc<AtomicU64>,
}

impl Sheets {
    pub fn new(policy: outreach_ssrf::GuardPolicy) -> anyhow::Result<Sheets> {
        let options = ClientOptions {
            timeout: PROVIDER_TIMEOUT,
            // The provider's API does not redirect; a redirect is an error.
            follow_redirects: false,
            max_request_bytes: api::MAX_REQUEST_BYTES + 64 * 1024,
            ..ClientOptions::default()
        };
        Ok(Sheets {
            http: GuardedClient::new(policy, options)?,
            timeout_ms: Arc::new(AtomicU64::new(PROVIDER_TIMEOUT.as_millis() as u64)),
        })
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed))
    }

    #[cfg(test)]
    pub(crate) fn set_timeout(&self, t: Duration) {
        self.timeout_ms
            .store(t.as_millis() as u64, Ordering::Relaxed);
    }
}
