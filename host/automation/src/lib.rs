//! Automation: outbound webhooks (the outbox's deliverer), workflows,
//! templates and the marketplace (spec/2 "Webhooks", spec/3 "Workflows",
//! "Templates").
//!
//! Each spec area becomes one module folder here (`webhooks/`, `workflows/`,
//! `templates/`, `marketplace/`) with `routes.rs`, `service.rs`, `store.rs`
//! and `tests.rs`, as its issue lands.

use outreach_core::Area;

/// Routes and services of the automation areas (none have landed yet).
pub const AREA: Area = Area::empty("automation");
