//! Lead intelligence: the domain pool and its enrichment pipeline, lead
//! lists, scoring, audiences, alerts, the watchlist, market intelligence,
//! spreadsheet export and the automation-platform endpoints (spec/2).
//! `ports.rs` offers the pool, lists, scoring and enrichment to workflows
//! (`outreach_core::ports::PoolPort`).
//!
//! Each spec area is one module folder here with `routes.rs`, `service.rs`,
//! `store.rs` and `tests.rs`: `domains/` (the pool), `lists/` (lead lists
//! and the funnel), `bulk/`, `scoring/`, `intelligence/` (market
//! intelligence), `audiences/`, `alerts/`, `watchlist/`, `evaluation/` (the
//! worker that lets them follow the pool) and `integrations/` (the
//! automation platform and the spreadsheet export). `domain_csv.rs` reads files of
//! domains, `csv_out.rs` writes CSV downloads. The crawler and DNS lookups
//! follow the core's outbound policy; events go to the core's outbox.

use outreach_core::Area;
use utoipa_axum::router::OpenApiRouter;

pub mod alerts;
pub mod audiences;
pub mod bulk;
pub mod csv_out;
pub mod domain_csv;
pub mod domains;
pub mod evaluation;
pub mod integrations;
pub mod intelligence;
pub mod lists;
pub mod ports;
pub mod scoring;
#[cfg(test)]
pub(crate) mod testkit;
pub mod watchlist;

fn v1() -> OpenApiRouter<outreach_core::state::AppState> {
    OpenApiRouter::new()
        .merge(domains::routes::router())
        .merge(lists::routes::router())
        .merge(bulk::routes::router())
        .merge(intelligence::routes::router())
        .merge(scoring::routes::router())
        .merge(audiences::routes::router())
        .merge(alerts::routes::router())
        .merge(watchlist::routes::router())
        .merge(integrations::zapier::routes::router())
        .merge(integrations::sheets::routes::router())
}

pub const AREA: Area = Area {
    name: "leads",
    v1,
    public: integrations::sheets::routes::public_router,
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
        ext.insert(outreach_core::platform::slack::SlackClient::new(
            state.outbound.clone(),
        ));
        ext.insert(
            integrations::sheets::Sheets::new(state.outbound.clone())
                .expect("the spreadsheet service's HTTP client can be built"),
        );
        // The pipeline's save matches tracked keywords with it.
        ext.insert(intelligence::keywords::KeywordIndex::default());
        // Workflows reach lists, scoring and enrichment through it.
        ext.insert::<outreach_core::ports::SharedPoolPort>(std::sync::Arc::new(ports::LeadsPort));
    },
    workers: start_workers,
};

/// The crate's background work: the enrichment pipeline, pool evaluation
/// for audiences, alerts and watches, and the watched domains' refresh.
fn start_workers(state: &outreach_core::state::AppState) {
    domains::start_workers(state);
    tokio::spawn(alerts::deliver::run(state.clone()));
    tokio::spawn(watchlist::worker::run(state.clone()));
    let db = state.db.clone();
    let state = state.clone();
    tokio::spawn(async move {
        // Records saved before the facets existed get theirs first.
        if let Err(e) = domains::facets::backfill(&db).await {
            tracing::warn!(error = %e, "pool facets backfill failed");
        }
        evaluation::run(state).await;
    });
}
