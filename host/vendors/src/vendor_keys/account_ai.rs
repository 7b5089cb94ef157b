//! The `ai` import of a classifier plugin call, served from an account's AI
//! key chain: every completion goes through [`Vendors::complete`] with its
//! cost in the vendor ledger under the caller's action type. The inbox's
//! reply classifier and the domain pool's classifier both use it.

use std::sync::Mutex;

use outreach_core::error::ApiError;
use outreach_core::state::AppState;
use outreach_plugin_runtime::{
    AiBridge, AiFuture, CompletionRequest, CompletionResponse, PluginError,
};

use super::service::{Actor, VendorsExt};

pub struct AccountAi {
    state: AppState,
    actor: Actor,
    action_type: &'static str,
    provider: Mutex<Option<String>>,
}

impl AccountAi {
    /// Completions for `account_id`, recorded as `user_key` (who asked, for
    /// the ledger) under `action_type`.
    pub fn new(
        state: &AppState,
        account_id: i64,
        user_key: &str,
        action_type: &'static str,
    ) -> AccountAi {
        AccountAi {
            state: state.clone(),
            actor: Actor {
                account_id,
                user_key: user_key.to_owned(),
            },
            action_type,
            provider: Mutex::new(None),
        }
    }

    /// The provider that answered the last completion.
    pub fn provider(&self) -> Option<String> {
        self.provider.lock().ok().and_then(|p| p.clone())
    }
}

impl AiBridge for AccountAi {
    fn complete(&self, request: CompletionRequest) -> AiFuture<'_> {
        Box::pin(async move {
            let done = self
                .state
                .vendors()
                .complete(&self.actor, self.action_type, request)
                .await
                .map_err(|e| match e {
                    // Every key failed for now (timeouts, 5xx): a later pass may do.
                    ApiError::BadGateway(m) => PluginError::Transient(m),
                    other => PluginError::Permanent(other.to_string()),
                })?;
            if let Ok(mut p) = self.provider.lock() {
                *p = Some(done.provider.clone());
            }
            let c = done.completion;
            Ok(CompletionResponse {
                model: c.model,
                content: c.content,
                prompt_tokens: c.prompt_tokens,
                completion_tokens: c.completion_tokens,
                finish_reason: c.finish_reason,
            })
        })
    }
}
