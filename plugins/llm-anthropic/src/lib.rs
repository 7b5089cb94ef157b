//! `llm-provider` for Anthropic's Messages API
//! (`POST https://api.anthropic.com/v1/messages`, `x-api-key` and
//! `anthropic-version: 2023-06-01`). The system prompt travels apart from the
//! messages, and `max_tokens` is mandatory.

use llm_common::{
    JSON_INSTRUCTION, VendorErrors, finish_reason, malformed, model, send_json, split_system,
    tokens,
};
use outreach_plugin_sdk::prelude::*;
use serde_json::{Value, json};

pub struct Anthropic;

const DEFAULT_BASE: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";
const VALIDATION_MODEL: &str = "claude-haiku-4-5";
/// The API refuses a request without `max_tokens`; callers that leave it
/// unset get a budget large enough for an email-sized answer.
const DEFAULT_MAX_TOKENS: u32 = 1024;
const ERRORS: VendorErrors = VendorErrors {
    name: "Anthropic",
    extra_auth_statuses: &[],
};

fn body(req: &CompletionRequest) -> Result<Value, PluginError> {
    let (system, turns) = split_system(&req.messages);
    if turns.is_empty() {
        return Err(PluginError::InvalidInput(
            "Anthropic needs at least one user or assistant message".into(),
        ));
    }
    let messages: Vec<Value> = turns
        .iter()
        .map(|m| json!({"role": if m.role == Role::Assistant { "assistant" } else { "user" }, "content": m.content}))
        .collect();
    let mut body = json!({
        "model": req.model,
        "max_tokens": req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
    });
    // The Messages API has no JSON-mode switch, so json_mode becomes an
    // instruction in the system prompt.
    let system = match (system, req.json_mode) {
        (Some(s), true) => Some(format!("{s}\n\n{JSON_INSTRUCTION}")),
        (None, true) => Some(JSON_INSTRUCTION.to_string()),
        (s, false) => s,
    };
    if let Some(s) = system {
        body["system"] = json!(s);
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    if !req.stop.is_empty() {
        body["stop_sequences"] = json!(req.stop);
    }
    Ok(body)
}

fn parse(v: &Value, req: &CompletionRequest) -> Result<CompletionResponse, PluginError> {
    let blocks = v["content"]
        .as_array()
        .ok_or_else(|| malformed("Anthropic", "a content array"))?;
    let content: String = blocks
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    let u = &v["usage"];
    // Cached prompt tokens are reported apart from input_tokens but are
    // still prompt tokens the key paid for.
    let prompt = [
        &u["input_tokens"],
        &u["cache_creation_input_tokens"],
        &u["cache_read_input_tokens"],
    ]
    .map(tokens);
    Ok(CompletionResponse {
        model: v["model"]
            .as_str()
            .filter(|m| !m.is_empty())
            .unwrap_or(&req.model)
            .into(),
        content,
        prompt_tokens: prompt.iter().fold(0u32, |a, b| a.saturating_add(*b)),
        completion_tokens: tokens(&u["output_tokens"]),
        finish_reason: finish_reason(v["stop_reason"].as_str().unwrap_or_default()),
    })
}

impl LlmProvider for Anthropic {
    fn metadata() -> LlmMetadata {
        LlmMetadata {
            identifier: "anthropic".into(),
            display_name: "Anthropic".into(),
            models: vec![
                model("claude-haiku-4-5", 1.00, 5.00),
                model("claude-sonnet-4-5", 3.00, 15.00),
                model("claude-opus-4-5", 5.00, 25.00),
                model("claude-sonnet-4-0", 3.00, 15.00),
                model("claude-opus-4-1", 15.00, 75.00),
            ],
            default_validation_model: VALIDATION_MODEL.into(),
            requires_endpoint_url: false,
            fallback_rank: 2,
        }
    }

    fn validate_key(
        ctx: &VendorContext,
        model: Option<&str>,
    ) -> Result<LlmKeyValidation, PluginError> {
        llm_common::validate(ctx, model, VALIDATION_MODEL, Self::complete)
    }

    fn complete(
        ctx: &VendorContext,
        request: CompletionRequest,
    ) -> Result<CompletionResponse, PluginError> {
        let url = format!("{}/v1/messages", base_url(ctx, DEFAULT_BASE));
        let req = Request::post(&url)
            .header("x-api-key", &ctx.api_key)
            .header("anthropic-version", API_VERSION)
            .json(&body(&request)?);
        parse(&send_json(req, ctx, &ERRORS)?, &request)
    }
}

outreach_plugin_sdk::export_llm_provider!(Anthropic);

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: Role, content: &str) -> ChatMessage {
        ChatMessage {
            role,
            content: content.into(),
        }
    }

    #[test]
    fn moves_system_messages_out_and_defaults_max_tokens() {
        let mut req = llm_common::validation_request("m");
        req.messages.insert(0, msg(Role::System, "be brief"));
        (req.max_tokens, req.json_mode, req.stop) = (None, true, vec!["END".into()]);
        let b = body(&req).unwrap();
        assert_eq!(b["system"], format!("be brief\n\n{JSON_INSTRUCTION}"));
        assert_eq!(
            b["messages"],
            json!([{"role": "user", "content": "Reply with OK"}])
        );
        assert_eq!(
            (b["max_tokens"].as_u64(), b["stop_sequences"][0].as_str()),
            (Some(1024), Some("END"))
        );
        req.messages = vec![msg(Role::System, "only a system prompt")];
        assert!(matches!(body(&req), Err(PluginError::InvalidInput(_))));
    }

    #[test]
    fn reads_text_blocks_usage_and_overload() {
        let v: Value = serde_json::from_str(
            r#"{"type":"message","model":"claude-haiku-4-5-20251001","content":[{"type":"text","text":"O"},{"type":"text","text":"K"}],"stop_reason":"max_tokens","usage":{"input_tokens":9,"cache_read_input_tokens":2,"output_tokens":1}}"#,
        )
        .unwrap();
        let r = parse(&v, &llm_common::validation_request("m")).unwrap();
        assert_eq!(
            (
                r.content.as_str(),
                r.prompt_tokens,
                r.completion_tokens,
                r.finish_reason.as_str()
            ),
            ("OK", 11, 1, "length")
        );
        let _m = testing::mock_http(|req| {
            assert!(
                req.headers
                    .contains(&("anthropic-version".into(), API_VERSION.into()))
            );
            Ok(testing::json_response(
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ))
        });
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: None,
        };
        let e = Anthropic::validate_key(&ctx, None).unwrap_err();
        assert!(
            matches!(&e, PluginError::Transient(m) if m.contains("overloaded_error")),
            "{e:?}"
        );
    }
}
