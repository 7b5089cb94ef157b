//! AI completions through the host's `ai` import (reply classifiers).
//!
//! The plugin holds no key: the host runs the request through the calling
//! account's AI key chain and bills that account. An empty
//! [`CompletionRequest::model`] picks the default model of the key that
//! answers; the response names the model that actually did. Without a
//! connected AI provider the call fails with a permanent [`PluginError`].
//!
//! Natively (`cargo test`) the import is answered by a handler installed with
//! [`crate::testing::mock_ai`].

use crate::types::{ChatMessage, CompletionRequest, CompletionResponse, PluginError, Role};

/// Runs one chat completion on the account's AI keys.
pub fn complete(request: &CompletionRequest) -> Result<CompletionResponse, PluginError> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::outreach::plugin::ai::complete(request)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        crate::testing::dispatch_ai(request)
    }
}

/// A classifier's question: one system and one user message, answered in
/// JSON at temperature 0 by the default model of the key that answers.
pub fn json_request(system: String, user: String, max_tokens: u32) -> CompletionRequest {
    CompletionRequest {
        model: String::new(),
        messages: vec![
            ChatMessage {
                role: Role::System,
                content: system,
            },
            ChatMessage {
                role: Role::User,
                content: user,
            },
        ],
        max_tokens: Some(max_tokens),
        temperature: Some(0.0),
        stop: vec![],
        json_mode: true,
    }
}
