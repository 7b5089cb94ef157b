//! Automation: outbound webhooks (the outbox's deliverer), workflows,
//! templates and the marketplace (spec/2 "Webhooks", spec/3 "Workflows",
//! "Templates").
//!
//! Each spec area is one module folder here with `routes.rs`, `service.rs`,
//! `store.rs` and `tests.rs`: `webhooks/` now; `workflows/`, `templates/`
//! and `marketplace/` as their issues land.

use outreach_core::Area;

pub mod webhooks;
pub mod workflows;

/// The automation areas: webhook routes, the deliverer service and its
/// fan-out and delivery workers.
pub const AREA: Area = Area {
    name: "automation",
    v1: webhooks::routes::router,
    public: utoipa_axum::router::OpenApiRouter::new,
    extend: |state, ext| {
        ext.insert(webhooks::deliver::Deliverer::new(state));
    },
    workers: webhooks::deliver::start_workers,
};
