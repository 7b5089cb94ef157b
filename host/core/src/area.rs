//! What an area crate contributes to the server: its routers and the
//! services it adds to the application state.
//!
//! The server assembles a list of [`Area`]s (`outreach::AREAS`); the router
//! plumbing in [`crate::http::app`] merges their routers and OpenAPI
//! documents, and [`crate::state::AppState::build_with`] lets each one add
//! its services as typed extensions. The core never names an area crate, so
//! the crate graph stays one-way: areas depend on the core, the server on
//! all of them.

use utoipa_axum::router::OpenApiRouter;

use crate::state::{AppState, Extensions};

/// One area crate's contribution. Plain function pointers keep it a value
/// the server can list in a `const`.
#[derive(Clone, Copy)]
pub struct Area {
    /// A short name for logs and the ARCHITECTURE code map.
    pub name: &'static str,
    /// Routes behind the API-key layer (`/v1/...`).
    pub v1: fn() -> OpenApiRouter<AppState>,
    /// Routes without an API key (public endpoints, dashboard sign-in).
    pub public: fn() -> OpenApiRouter<AppState>,
    /// Adds the area's services to the state before it is shared. Values
    /// are built from the core state they are given; they must not keep a
    /// clone of the `AppState` itself (that would be a reference cycle).
    pub extend: fn(&AppState, &mut Extensions),
    /// Starts the area's background workers (`outreach serve` calls it once,
    /// after the state is built). Tests leave workers off and drive one
    /// pass at a time with the manual clock.
    pub workers: fn(&AppState),
}

impl Area {
    /// An area with no routes and no services (a crate whose first issue
    /// has not landed yet).
    pub const fn empty(name: &'static str) -> Area {
        Area {
            name,
            v1: OpenApiRouter::new,
            public: OpenApiRouter::new,
            extend: no_services,
            workers: no_workers,
        }
    }
}

/// [`Area::extend`] for an area that adds no services.
pub fn no_services(_: &AppState, _: &mut Extensions) {}

/// [`Area::workers`] for an area without background work.
pub fn no_workers(_: &AppState) {}

impl std::fmt::Debug for Area {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Area").field("name", &self.name).finish()
    }
}
