//! Automation: outbound webhooks (the outbox's deliverer), workflows,
//! templates and the marketplace (spec/2 "Webhooks", spec/3 "Workflows",
//! "Templates").
//!
//! Each spec area is one module folder here with `routes.rs`, `service.rs`,
//! `store.rs` and `tests.rs`: `webhooks/`, `workflows/`, `connections/`
//! (the saved connections `http_request` actions name), `templates/` and
//! `marketplace/`; `rest_hooks/` delivers the automation platform's
//! triggers through the webhooks' machinery.

use outreach_core::Area;
use utoipa_axum::router::OpenApiRouter;

pub mod connections;
pub mod marketplace;
pub mod rest_hooks;
pub mod templates;
pub mod webhooks;
pub mod workflows;

/// The automation areas: webhook, workflow and connection routes, the deliverer and
/// the workflow services, the fan-out, delivery, run and schedule workers.
pub const AREA: Area = Area {
    name: "automation",
    v1: || {
        OpenApiRouter::new()
            .merge(webhooks::routes::router())
            .merge(workflows::routes::router())
            .merge(connections::routes::router())
            .merge(templates::routes::router())
            .merge(marketplace::routes::router())
            .merge(rest_hooks::routes::router())
    },
    public: || workflows::routes::public_router().merge(templates::routes::public_router()),
    extend: |state, ext| {
        ext.insert(webhooks::deliver::Deliverer::new(state));
        workflows::extend(state, ext);
        ext.insert(templates::catalog::TemplateCatalog::default());
    },
    workers: |state| {
        webhooks::deliver::start_workers(state);
        workflows::start_workers(state);
        tokio::spawn(rest_hooks::scan::run(state.clone()));
    },
};
