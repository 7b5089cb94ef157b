//! The platform core every area crate builds on: configuration, the store
//! and its migrations, the one error type, the HTTP plumbing (extractors,
//! the API-key layer, caller and plan gates, OpenAPI helpers), the platform
//! building blocks (clock, secrets, limiters, job queue, dashboard mail, the
//! event outbox, the outbound address policy), and the core areas: accounts,
//! API keys, dashboard sign-in and usage. See ARCHITECTURE.md for the map.

pub mod accounts;
pub mod api_keys;
pub mod area;
pub mod auth;
pub mod config;
pub mod error;
pub mod events;
pub mod http;
pub mod platform;
pub mod ports;
pub mod state;
pub mod store;
pub mod usage;

#[cfg(any(test, feature = "testing"))]
pub mod smtp_capture;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use area::Area;
pub use state::AppState;

/// The core's own routes: accounts, members, reseller clients and usage
/// behind the API key; dashboard sign-in without one.
pub const AREA: Area = Area {
    name: "core",
    v1: core_v1_routes,
    public: auth::routes::router,
    extend: area::no_services,
    workers: area::no_workers,
};

fn core_v1_routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .merge(accounts::routes::router())
        .merge(usage::routes::router())
}
