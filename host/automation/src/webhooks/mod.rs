//! Outbound webhooks (spec/2 "Webhooks", "Events"): subscriptions, the
//! deliverer of the event outbox, signed deliveries with retries, the
//! delivery log and replay.
//!
//! - `model.rs`: resources, request bodies, event-name rules.
//! - `routes.rs` / `service.rs`: the endpoints and their rules.
//! - `store.rs`: subscriptions and delivery claims; `log.rs`: the delivery log.
//! - `dispatch.rs`: outbox events become deliveries (fan-out).
//! - `deliver.rs`: attempts and the workers; `outcomes.rs`: what an
//!   attempt's result does (retry schedule, attempt log, disabling).
//! - `signing.rs`: the signature headers; `housekeeping.rs`: retention.

pub mod deliver;
pub mod dispatch;
pub mod housekeeping;
pub mod log;
pub mod model;
pub mod outcomes;
pub mod routes;
pub mod service;
pub mod signing;
pub mod store;

#[cfg(test)]
pub(crate) mod tests;
