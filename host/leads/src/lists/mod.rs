//! Lead lists (spec/2 "Lead list", "List item", "Lead lists"; issue 12):
//! an account's lists of pool domains, each item moving through the four
//! fixed funnel stages.
//!
//! - `model.rs`: the shapes; `routes.rs`: the handlers.
//! - `service.rs`: lists and items (caps, normalisation, the pool, events);
//!   `status.rs`: stage changes (one item, by id, in bulk).
//! - `funnel.rs`: `GET .../funnel` and `.../funnel/export`.
//! - `import.rs`: `POST /v1/lists/import-csv`.
//! - `store.rs`: lists and items SQL; `history.rs`: the stage history.
//!
//! Every stage change stamps `status_changed_at` and writes a history row,
//! so time in stage and weekly trends are computed, not guessed. Any move
//! is allowed, backwards and skipping stages included: the funnel is the
//! account's own record of its pipeline, and the history keeps the truth.
//! Setting the stage an item already has changes nothing.

pub mod funnel;
pub mod history;
pub mod import;
pub mod model;
pub mod routes;
pub mod service;
pub mod status;
pub mod store;

#[cfg(test)]
pub(crate) mod funnel_tests;
#[cfg(test)]
mod import_tests;
#[cfg(test)]
mod tests;

use outreach_core::error::{ApiError, ApiResult};

/// The funnel's stages, in order (spec/2 "List item funnel status").
pub const STAGES: [&str; 4] = ["discovered", "contacted", "qualified", "converted"];
/// The stage of a new item.
pub const DISCOVERED: &str = STAGES[0];

/// The stage named `status`, or 400.
pub fn stage(status: &str) -> ApiResult<&'static str> {
    STAGES
        .iter()
        .find(|s| **s == status)
        .copied()
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "status must be one of {} (got '{}')",
                STAGES.join(", "),
                status.chars().take(40).collect::<String>()
            ))
        })
}

/// The 404 of a list the account does not have.
pub fn list_not_found() -> ApiError {
    ApiError::NotFound(outreach_core::error::details::LEAD_LIST_NOT_FOUND.to_owned())
}

/// The 404 of an item the list does not hold.
pub fn item_not_found() -> ApiError {
    ApiError::not_found("List item")
}
