//! Customer vendor keys and the `Vendors` service: AI providers, email
//! verifiers and contact enrichers on the account's own keys (spec/3). Other
//! areas (sequences, the inbox, workflows) call
//! [`vendor_keys::service::VendorsExt::vendors`].

use outreach_core::Area;

pub mod vendor_keys;

pub use vendor_keys::account_ai::AccountAi;
pub use vendor_keys::service::{Actor, Vendors, VendorsExt};

/// The vendor keys area: key management, calls and usage behind the API
/// key; the verifier and enricher provider lists in public.
pub const AREA: Area = Area {
    name: "vendors",
    v1: vendor_keys::routes::router,
    public: vendor_keys::routes::public_router,
    extend: outreach_core::area::no_services,
    workers: outreach_core::area::no_workers,
};
