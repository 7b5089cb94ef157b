//! The AI email writer (spec/1 "AI email writer"): `POST
//! /v1/sequences/ai-writer` drafts a subject and HTML body on the account's
//! own AI keys (the vendor chain of `outreach-vendors`), leaving the
//! template tokens `{{first_name}}`, `{{company}}` and `{{domain}}` for the
//! rendering engine.
//!
//! `draft.rs` holds the request rules, the prompt and the reading of the
//! model's answer; `routes.rs` the endpoint.

pub mod draft;
pub mod routes;

#[cfg(test)]
mod tests;
