//! The `ai` host import: completions a plugin asks for without holding a key.
//!
//! The runtime has no AI keys of its own. The caller of a call that may use AI
//! ([`PluginRuntime::classify_reply`](crate::PluginRuntime::classify_reply))
//! passes an [`AiBridge`] that runs the request on the calling account's AI
//! key chain (provider fallback, billing, ledger); the bridge lives in that
//! call's store only. Without a bridge the import answers a permanent
//! [`PluginError`] ([`NO_AI_PROVIDER`]).

use crate::bindings::types::{CompletionRequest, CompletionResponse, PluginError};
use std::future::Future;
use std::pin::Pin;

/// The future an [`AiBridge`] returns; the same type as
/// `futures::future::BoxFuture<'a, Result<CompletionResponse, PluginError>>`.
pub type AiFuture<'a> =
    Pin<Box<dyn Future<Output = Result<CompletionResponse, PluginError>> + Send + 'a>>;

/// Runs a plugin's completion request for the account a call is made for.
///
/// `request.model` may be empty: the plugin leaves the choice to the key that
/// answers (its default model). The error is handed to the plugin as is, so
/// classify failures the way fallback chains read them: `Transient` or
/// `RateLimited` when every provider failed for a passing reason (the
/// plugin call then ends in a transient [`CallError`](crate::CallError)),
/// `Permanent` otherwise (no key, refused request).
pub trait AiBridge: Send + Sync {
    /// One completion.
    fn complete(&self, request: CompletionRequest) -> AiFuture<'_>;
}

/// What the import answers when the call has no [`AiBridge`].
pub const NO_AI_PROVIDER: &str = "no AI provider is connected for this account";

/// Completions one plugin call may ask for; more are refused, so a looping
/// plugin cannot spend an account's AI credits.
pub const MAX_AI_CALLS_PER_CALL: u32 = 4;
