//! Sandboxed wasmtime host for Outreach plugin components.
//!
//! Vendor adapters (LLM providers, email verifiers, contact enrichers),
//! workflow action types, template packs, and reply and domain classifiers
//! are WebAssembly components that
//! implement one world of the WIT package `outreach:plugin@0.1.0` (`wit/`).
//! This crate loads them (first-party ones embedded at build time, operator
//! ones from a watched folder), runs every call in a fresh store from a
//! cached `InstancePre` under the manifest's memory cap, CPU deadline and
//! wall-clock timeout, and gives them no files, no environment and no
//! sockets: their only way out is the `http` import, limited to the hosts
//! of their `plugin.toml` and sent through the SSRF-guarded client. Reply
//! and domain classifiers get no `http`; their `ai` import is answered by
//! the [`AiBridge`] the caller passes with each call.
//!
//! Start with [`PluginRuntime::new`], then call the typed methods
//! ([`PluginRuntime::verify_email`], [`PluginRuntime::llm_complete`],
//! [`PluginRuntime::classify_reply`], [`PluginRuntime::classify_domain`],
//! ...).

mod ai;
mod allow;
mod bindings;
mod calls;
mod canonical;
mod classifiers;
mod dir;
mod domain_classifiers;
mod embedded;
mod engine;
mod error;
mod manifest;
mod runtime;
mod state;
mod stats;
mod warm;

pub use ai::{AiBridge, AiFuture, MAX_AI_CALLS_PER_CALL, NO_AI_PROVIDER};
pub use allow::HostRule;
pub use bindings::types::{
    ChatMessage, ClassifierMetadata, CompletionRequest, CompletionResponse, DomainInput,
    KeyValidation, LlmKeyValidation, LlmMetadata, ModelInfo, PackMetadata, PluginError, RateLimit,
    ReplyInput, Role, VendorMetadata,
};
pub use calls::WorkflowActionType;
pub use canonical::{
    ActionDescriptor, ActionOutput, Completion, EnrichmentResult, Template, VerificationResult,
};
pub use classifiers::{ClassifierInfo, REPLY_LABELS, ReplyClassifierInfo, ReplyVerdict};
pub use dir::{InspectReport, ValidationReport};
pub use domain_classifiers::{
    BUSINESS_TYPES, DomainClassifierInfo, DomainVerdict, MAX_DOMAIN_TEXT_BYTES,
};
pub use embedded::{EmbeddedPlugin, FIRST_PARTY};
pub use error::{CallError, LoadError};
pub use manifest::{Limits, Manifest, ManifestError, PluginKind, WIT_API_VERSION};
pub use outreach_ssrf::{ClientOptions, GuardPolicy};
pub use runtime::{PluginInfo, PluginMetadata, PluginRuntime, PluginSource, RuntimeConfig};
pub use stats::PluginStats;

/// Test fixtures (benchmark and hostile components) built alongside the
/// first-party plugins. Not part of the stable API.
#[doc(hidden)]
pub mod fixtures {
    /// Folder holding `trivial.wasm`/`.toml`, `hostile.wasm`/`.toml`,
    /// `hostile-action.wasm`/`.toml`,
    /// `echo-classifier.wasm`/`.toml` and `echo-domain-classifier.wasm`/`.toml`.
    pub const TEST_GUESTS_DIR: &str = env!("OUTREACH_TEST_GUESTS");
}
