//! `outreach`, the binary: the command line, the assembly of every area
//! crate's routes and services, and the start-up of the server and its
//! workers. It holds no area logic; see ARCHITECTURE.md for the crate graph.

use outreach_core::Area;

pub mod cli;
pub mod memory;
pub mod server;

#[cfg(test)]
mod spec_details_tests;
#[cfg(test)]
mod tests;

/// Every area of the product, in the order their routers are merged. A new
/// area crate adds its `AREA` here (ARCHITECTURE.md, "Adding an area crate's
/// router").
pub const AREAS: [Area; 5] = [
    outreach_core::AREA,
    outreach_vendors::AREA,
    outreach_outbound::AREA,
    outreach_leads::AREA,
    outreach_automation::AREA,
];
