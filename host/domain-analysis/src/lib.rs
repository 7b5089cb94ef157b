//! What a company's web presence says about it, for the domain pool
//! (spec/2): the enrichment pipeline of `outreach-leads`, `outreach domains
//! import` and the first-party `domain-classifier` plugin all call this
//! crate, so they agree on every domain and page. Pure: no I/O, no clock,
//! no async; builds for `wasm32-wasip2`.
//!
//! - `domain.rs`: the one normalisation of a domain name (lowercase, IDNA
//!   to ASCII, scheme, path, port and `www.` dropped, public-suffix aware).
//! - `email_patterns.rs`: the email finder's candidate addresses.
//! - `extract/`: company name, summary, emails, phones, social links,
//!   address and language read from fetched pages.
//! - `technologies/`: the Wappalyzer fingerprints compiled once into fast
//!   matchers, and detection over a page with its headers and cookies.
//! - `classify.rs`: the rules classifier (industry, sub-industry, business
//!   type) and its taxonomy.
//! - `rdap.rs`: the RDAP bootstrap and what RDAP answers say.
//! - `signals.rs`: spec/2's alert and audience signals, the intent score
//!   and level, `likely_buys` and `gaps`, by one documented mapping.

pub mod classify;
pub mod domain;
pub mod email_patterns;
pub mod extract;
pub mod rdap;
pub mod signals;
pub mod technologies;
