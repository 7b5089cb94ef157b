//! Lead intelligence: the domain pool and its enrichment pipeline, lead
//! lists, scoring, audiences, alerts, the watchlist, market intelligence,
//! spreadsheet export and the automation-platform endpoints (spec/2).
//!
//! Each spec area becomes one module folder here (`domains/`, `lists/`,
//! `scoring/`, `audiences/`, `alerts/`, `watchlist/`, `intelligence/`,
//! `export/`, `integrations/`) with `routes.rs`, `service.rs`, `store.rs` and
//! `tests.rs`, as its issue lands. The crawler and DNS lookups follow the
//! core's outbound policy; events go to the core's outbox.

use outreach_core::Area;

/// Routes and services of the lead areas (none have landed yet).
pub const AREA: Area = Area::empty("leads");
