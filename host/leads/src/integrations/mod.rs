//! Integrations (spec/2 "Spreadsheet export" and "Automation-platform
//! integration"): `zapier/` is the automation platform's polling triggers
//! and actions (its REST hooks are delivered by the automation crate's
//! `rest_hooks/` through `PoolPort::trigger_items`), `sheets/` the OAuth
//! 2.0 connection to the spreadsheet service and the exports.
//! Decisions: docs/decisions/integrations.md.

pub mod sheets;
pub mod zapier;
