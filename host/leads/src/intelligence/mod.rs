//! Market intelligence (spec/2 "Market intelligence"). Issue 12 brings the
//! funnel rollup and its weekly trends (`funnel.rs`), Pro and Enterprise
//! as the section gates most of its endpoints; the geo, report and
//! competitor endpoints land with their own issue.

pub mod funnel;
pub mod routes;

#[cfg(test)]
mod tests;
