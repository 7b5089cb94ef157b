//! Lead intelligence: the domain pool and its enrichment pipeline, lead
//! lists, scoring, audiences, alerts, the watchlist, market intelligence,
//! spreadsheet export and the automation-platform endpoints (spec/2).
//!
//! Each spec area becomes one module folder here (`domains/`, then `lists/`,
//! `scoring/`, `audiences/`, `alerts/`, `watchlist/`, `intelligence/`,
//! `export/`, `integrations/`) with `routes.rs`, `service.rs`, `store.rs` and
//! `tests.rs`, as its issue lands. The crawler and DNS lookups follow the
//! core's outbound policy; events go to the core's outbox.

use outreach_core::Area;
use utoipa_axum::router::OpenApiRouter;

pub mod domains;

pub const AREA: Area = Area {
    name: "leads",
    v1: domains::routes::router,
    public: OpenApiRouter::new,
    extend: |state, ext| {
        let crawler = domains::pipeline::crawl::Crawler::new(state.outbound.clone())
            .expect("the crawler's HTTP client can be built");
        ext.insert(crawler);
        let rdap = domains::pipeline::rdap::Rdap::new(
            state.outbound.clone(),
            &state.config.rdap_bootstrap_url,
        )
        .expect("the RDAP client can be built");
        ext.insert(rdap);
    },
    workers: domains::start_workers,
};
