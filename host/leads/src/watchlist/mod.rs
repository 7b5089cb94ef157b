//! The watchlist (spec/2 "Watched domain", "Watchlist"): domains an
//! account follows, with a snapshot of the six monitored fields and a
//! change record for every field that moves.
//!
//! - `model.rs`: the shapes; `routes.rs`: the handlers.
//! - `service.rs`: the endpoints' rules (Starter+, the plan's cap,
//!   normalisation, the pool, paging).
//! - `observe.rs`: the one comparison of a record with a watch's snapshot,
//!   which writes the change records, moves the snapshot and records
//!   `watchlist.change`; `GET .../check` and the pool evaluation share it.
//! - `evaluate.rs`: [`evaluate::apply`], the watchlist's part of the pool
//!   evaluation (`crate::evaluation`), run on each batch of pool events.
//! - `worker.rs`: re-enriches watched domains on a per-plan interval.
//! - `store.rs`: the SQL.
//!
//! A domain added without facts (not enriched or imported yet) has no
//! snapshot; the first facts that arrive become its baseline without change
//! records (docs/decisions/watchlist.md).

pub mod evaluate;
pub mod model;
pub mod observe;
pub mod routes;
pub mod service;
pub mod store;
pub mod worker;

#[cfg(test)]
mod evaluate_tests;
#[cfg(test)]
mod tests;

use outreach_core::error::{ApiError, ApiResult};

/// The monitored fields, in spec/2's order (`Monitored::fields`).
pub const FIELDS: [&str; 6] = [
    "industry",
    "sub_industry",
    "website_email",
    "summary",
    "is_trusted",
    "confidence",
];

/// The alert preferences of a watch (spec/2 "Watched domain"), each
/// governing some of the monitored fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preferences {
    pub industry: bool,
    pub email: bool,
    pub tech: bool,
    pub status: bool,
}

impl Default for Preferences {
    /// spec/2: each defaults to true.
    fn default() -> Self {
        Preferences {
            industry: true,
            email: true,
            tech: true,
            status: true,
        }
    }
}

impl Preferences {
    /// Whether a change of `field` raises `watchlist.change` (spec/2's
    /// table: industry and sub_industry by the industry preference,
    /// website_email by the email one, summary by the tech one, is_trusted
    /// and confidence by the status one).
    pub fn covers(&self, field: &str) -> bool {
        match field {
            "industry" | "sub_industry" => self.industry,
            "website_email" => self.email,
            "summary" => self.tech,
            "is_trusted" | "confidence" => self.status,
            _ => false,
        }
    }
}

/// The monitored field named `field`, or 400 naming the six.
pub fn field(field: &str) -> ApiResult<&'static str> {
    FIELDS
        .iter()
        .find(|f| **f == field)
        .copied()
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "field must be one of {} (got '{}')",
                FIELDS.join(", "),
                field.chars().take(40).collect::<String>()
            ))
        })
}

/// The 404 of a watch the account does not have.
pub fn watch_not_found() -> ApiError {
    ApiError::not_found("Watched domain")
}
