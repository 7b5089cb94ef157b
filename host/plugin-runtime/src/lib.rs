//! Sandboxed wasmtime host for Outreach plugin components.
//!
//! Vendor adapters (LLM providers, email verifiers, contact enrichers),
//! workflow action types and template packs are WebAssembly components that
//! implement one world of the WIT package `outreach:plugin@0.1.0` (`wit/`).
//! This crate loads them (first-party ones embedded at build time, operator
//! ones from a watched folder), runs every call in a fresh store from a
//! cached `InstancePre` under the manifest's memory cap, CPU deadline and
//! wall-clock timeout, and gives them no files, no environment and no
//! sockets: their only way out is the `http` import, limited to the hosts
//! of their `plugin.toml` and sent through the SSRF-guarded client.
//!
//! Start with [`PluginRuntime::new`], then call the typed methods
//! ([`PluginRuntime::verify_email`], [`PluginRuntime::llm_complete`], ...).

mod allow;
mod bindings;
mod calls;
mod canonical;
mod dir;
mod embedded;
mod engine;
mod error;
mod manifest;
mod runtime;
mod state;
mod stats;

pub use allow::HostRule;
pub use bindings::types::{
    ChatMessage, CompletionRequest, KeyValidation, LlmKeyValidation, LlmMetadata, ModelInfo,
    PackMetadata, Role, VendorMetadata,
};
pub use canonical::{
    ActionDescriptor, ActionOutput, Completion, EnrichmentResult, Template, VerificationResult,
};
pub use dir::{InspectReport, ValidationReport};
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
    /// Folder holding `trivial.wasm`/`.toml` and `hostile.wasm`/`.toml`.
    pub const TEST_GUESTS_DIR: &str = env!("OUTREACH_TEST_GUESTS");
}
