//! Accounts (tenants), their members, plans and reseller clients.

pub mod limits;
pub mod plans;
pub mod reseller;
pub mod routes;
pub mod service;
pub mod store;

pub use limits::{LimitsTable, PlanLimits};
pub use plans::{Plan, Quota, ensure_quota, quota_view, require_plan};
