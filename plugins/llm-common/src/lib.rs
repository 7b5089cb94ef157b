//! Logic shared by the LLM provider adapters (`plugins/llm-*`): sending a
//! vendor request and classifying its answer ([`send_json`]), the 1-token key
//! validation ([`validate`]), the OpenAI-shaped chat-completion body used by
//! several vendors ([`chat_completions`]) and small JSON helpers.
//!
//! Every adapter goes through [`send_json`], so that the fallback chain sees
//! the same error taxonomy from every vendor: 401/403 are `auth`, 429 is
//! `rate-limited` with the vendor's retry hint, 408 and 5xx (including
//! Anthropic's 529) are `transient`, other 4xx are `invalid-input`, and a
//! 2xx that is not the expected JSON is `permanent`.

pub mod chat_completions;
mod errors;

pub use errors::{VendorErrors, classify, parse_duration_ms, retry_after_ms};

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;

/// The prompt of a key validation. One token is enough to prove the key,
/// the model and the billing account work, at the smallest possible cost.
pub const VALIDATION_PROMPT: &str = "Reply with OK";

/// The 1-token completion request used to validate a key on `model`.
pub fn validation_request(model: &str) -> CompletionRequest {
    CompletionRequest {
        model: model.into(),
        messages: vec![ChatMessage {
            role: Role::User,
            content: VALIDATION_PROMPT.into(),
        }],
        max_tokens: Some(1),
        // Left unset: some reasoning models refuse any explicit temperature,
        // and a validation must not fail on a sampling parameter.
        temperature: None,
        stop: vec![],
        json_mode: false,
    }
}

/// Validates a key with a 1-token completion on `model`, or on `default`
/// when the caller names none (or an empty string).
pub fn validate(
    ctx: &VendorContext,
    model: Option<&str>,
    default: &str,
    complete: impl FnOnce(&VendorContext, CompletionRequest) -> Result<CompletionResponse, PluginError>,
) -> Result<LlmKeyValidation, PluginError> {
    let model = model
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .unwrap_or(default);
    if model.is_empty() {
        return Err(PluginError::InvalidInput(
            "a validation model is required".into(),
        ));
    }
    let r = complete(ctx, validation_request(model))?;
    Ok(LlmKeyValidation {
        model: r.model,
        prompt_tokens: r.prompt_tokens,
        completion_tokens: r.completion_tokens,
        echo: r.content,
    })
}

/// Sends `req` and returns the JSON body of a 2xx answer, classifying every
/// other outcome with [`classify`]. The API key is redacted from error texts
/// because some vendors echo part of a rejected key.
pub fn send_json(
    req: Request,
    ctx: &VendorContext,
    vendor: &VendorErrors,
) -> Result<Value, PluginError> {
    let resp = req.send()?;
    classify(&resp, &ctx.api_key, vendor)
}

/// Splits the messages into the system prompt (all system messages joined by
/// blank lines, `None` when there are none) and the conversation turns, for
/// vendors that take the system prompt apart from the messages.
pub fn split_system(messages: &[ChatMessage]) -> (Option<String>, Vec<&ChatMessage>) {
    let system: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    let turns = messages.iter().filter(|m| m.role != Role::System).collect();
    ((!system.is_empty()).then(|| system.join("\n\n")), turns)
}

/// The system instruction added for vendors without a JSON-mode switch, so
/// that `json_mode` still asks for a JSON object.
pub const JSON_INSTRUCTION: &str = "Answer with a single valid JSON object and nothing else.";

/// A token count from the vendor's usage block; absent or out-of-range values
/// count as 0 rather than failing a completion that otherwise succeeded.
pub fn tokens(v: &Value) -> u32 {
    v.as_u64()
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        .unwrap_or(0)
}

/// Maps vendor finish reasons onto the common vocabulary (`stop`, `length`),
/// so that callers can detect truncation without knowing the vendor. Other
/// reasons pass through in lower case.
pub fn finish_reason(raw: &str) -> String {
    match raw.to_ascii_lowercase().as_str() {
        "" | "stop" | "end_turn" | "stop_sequence" | "complete" | "eos" => "stop".into(),
        "length" | "max_tokens" | "model_length" => "length".into(),
        other => other.into(),
    }
}

/// A known model with its list prices in USD per million tokens.
pub fn model(id: &str, input_usd_per_mtok: f64, output_usd_per_mtok: f64) -> ModelInfo {
    ModelInfo {
        id: id.into(),
        input_usd_per_mtok,
        output_usd_per_mtok,
    }
}

/// A permanent error for a 2xx body that lacks what the vendor documents.
pub fn malformed(vendor: &str, what: &str) -> PluginError {
    PluginError::Permanent(format!("{vendor} answered 2xx without {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_uses_the_default_model_and_one_token() {
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: None,
        };
        let v = validate(&ctx, Some(" "), "small", |_, r| {
            assert_eq!((r.model.as_str(), r.max_tokens), ("small", Some(1)));
            Ok(CompletionResponse {
                model: r.model,
                content: "OK".into(),
                prompt_tokens: 4,
                completion_tokens: 1,
                finish_reason: "length".into(),
            })
        })
        .unwrap();
        assert_eq!(
            (v.model.as_str(), v.echo.as_str(), v.prompt_tokens),
            ("small", "OK", 4)
        );
        let e = validate(&ctx, None, "", |_, _| unreachable!()).unwrap_err();
        assert!(matches!(e, PluginError::InvalidInput(_)));
    }

    #[test]
    fn splits_system_messages_and_normalises_finish_reasons() {
        let m = |role, c: &str| ChatMessage {
            role,
            content: c.into(),
        };
        let msgs = [
            m(Role::System, "a"),
            m(Role::User, "u"),
            m(Role::System, "b"),
        ];
        let (system, turns) = split_system(&msgs);
        assert_eq!(system.as_deref(), Some("a\n\nb"));
        assert_eq!(turns.len(), 1);
        assert_eq!(finish_reason("MAX_TOKENS"), "length");
        assert_eq!(finish_reason("end_turn"), "stop");
        assert_eq!(finish_reason("SAFETY"), "safety");
        assert_eq!(tokens(&serde_json::json!(-3)), 0);
    }
}
