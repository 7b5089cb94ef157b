//! Guest SDK for Outreach plugins.
//!
//! A plugin is a WebAssembly component built with
//! `cargo build --target wasm32-wasip2 --release`. It implements one trait per
//! kind and exports it with the matching macro:
//!
//! | Kind | Trait | Macro |
//! |---|---|---|
//! | `llm-provider` | [`LlmProvider`] | [`export_llm_provider!`] |
//! | `email-verifier` | [`EmailVerifier`] | [`export_email_verifier!`] |
//! | `contact-enricher` | [`ContactEnricher`] | [`export_contact_enricher!`] |
//! | `workflow-action` | [`WorkflowAction`] | [`export_workflow_action!`] |
//! | `template-pack` | [`TemplatePack`] | [`export_template_pack!`] |
//! | `reply-classifier` | [`ReplyClassifier`] | [`export_reply_classifier!`] |
//! | `domain-classifier` | [`DomainClassifier`] | [`export_domain_classifier!`] |
//!
//! The only way out of the sandbox is [`http::send`], which the host limits to
//! the `allowed_hosts` of the plugin's `plugin.toml`. Secrets arrive as call
//! arguments ([`types::VendorContext::api_key`]); there are no files, no
//! environment variables and no sockets. Reply and domain classifiers get no
//! HTTP at all; they reach a model only through [`ai::complete`], which the
//! host runs on the calling account's AI keys.
//!
//! Stderr (a panic's message, `eprintln!`) goes to the host's log at error
//! level, a line at a time, and a call that traps carries its last lines in
//! its error; stdout is discarded. The SDK routes stderr itself rather than
//! through WASI, so a component built with it imports no WASI interface and
//! each call instantiates it faster.
//!
//! Plugin logic is testable natively with `cargo test`: on a non-wasm target
//! [`http::send`] answers from a handler installed with
//! [`testing::mock_http`], [`ai::complete`] from one installed with
//! [`testing::mock_ai`], and [`log`] prints to stderr.
//!
//! # Example: an email verifier
//!
//! ```
//! use outreach_plugin_sdk::prelude::*;
//!
//! pub struct Acme;
//!
//! impl EmailVerifier for Acme {
//!     fn metadata() -> VendorMetadata {
//!         VendorMetadata {
//!             identifier: "acme".into(),
//!             display_name: "Acme Verify".into(),
//!             list_rate_usd: 0.005,
//!             fallback_rank: 1,
//!         }
//!     }
//!
//!     fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
//!         let url = format!("{}/v1/credits", base_url(ctx, "https://api.acme.example"));
//!         let body: serde_json::Value = Request::get(&url)
//!             .bearer(&ctx.api_key)
//!             .send()?
//!             .check()?
//!             .json()?;
//!         Ok(KeyValidation { credits_remaining: body["credits"].as_i64() })
//!     }
//!
//!     fn verify(ctx: &VendorContext, email: &str) -> Result<VerificationResult, PluginError> {
//!         let url = format!("{}/v1/verify", base_url(ctx, "https://api.acme.example"));
//!         let body: serde_json::Value = Request::get(&url)
//!             .query("email", email)
//!             .bearer(&ctx.api_key)
//!             .send()?
//!             .check()?
//!             .json()?;
//!         let ok = body["result"] == "deliverable";
//!         Ok(VerificationResult {
//!             email: email.into(),
//!             provider: "acme".into(),
//!             status: if ok { VerificationStatus::Valid } else { VerificationStatus::Invalid },
//!             deliverability: if ok { Deliverability::Deliverable } else { Deliverability::Undeliverable },
//!             is_disposable: body["disposable"] == true,
//!             is_role: body["role"] == true,
//!             is_catch_all: body["catch_all"].as_bool(),
//!             confidence: None,
//!             raw_status: body["result"].as_str().unwrap_or_default().into(),
//!         })
//!     }
//! }
//!
//! // In the plugin crate (a `cdylib`): outreach_plugin_sdk::export_email_verifier!(Acme);
//!
//! // Native test, no wasm needed:
//! let _guard = testing::mock_http(|req| {
//!     assert!(req.url.starts_with("https://api.acme.example/v1/verify?email="));
//!     Ok(testing::json_response(200, r#"{"result":"deliverable","disposable":false,"role":false}"#))
//! });
//! let ctx = VendorContext { api_key: "k".into(), base_url: None };
//! let r = Acme::verify(&ctx, "jane@example.com").unwrap();
//! assert_eq!(r.status, VerificationStatus::Valid);
//! ```
//!
//! Complete examples for every kind are in the documentation of each trait.

#![deny(missing_docs)]

/// Bindings of the host imports and shared types, generated from the WIT
/// package `outreach:plugin@0.1.0`. Most plugins only need [`types`],
/// [`http`], [`ai`] and [`log`].
#[allow(missing_docs, clippy::all, unsafe_code)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "imports",
        path: "wit",
        additional_derives: [Clone, PartialEq],
        generate_all,
    });
}

pub mod ai;
pub mod http;
pub mod json;
pub mod kinds;
pub mod log;
// Replaces libc's stderr and environment so components import no WASI.
#[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
#[doc(hidden)]
pub mod stdio;
pub mod testing;

pub use kinds::*;

/// The shared WIT types (results, errors, contexts), re-exported.
pub mod types {
    pub use crate::bindings::outreach::plugin::types::*;
}

/// Everything a plugin usually needs.
pub mod prelude {
    pub use crate::http::{Method, Request, Response};
    pub use crate::json::{from_json, to_json};
    pub use crate::kinds::*;
    pub use crate::testing;
    pub use crate::types::*;
    pub use crate::{ai, base_url, log};
}

#[doc(hidden)]
pub use wit_bindgen as __wit_bindgen;

include!(concat!(env!("OUT_DIR"), "/export_macros.rs"));

/// The base URL to call: the host's override when set (tests, self-hosted
/// endpoints), else the vendor's public `default`. Trailing slashes are removed.
pub fn base_url(ctx: &types::VendorContext, default: &str) -> String {
    ctx.base_url
        .as_deref()
        .unwrap_or(default)
        .trim_end_matches('/')
        .to_string()
}
