//! `llm-provider` for the Google Generative Language API (Gemini):
//! `POST https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent`
//! with the key in `x-goog-api-key`. The model is part of the path, the system
//! prompt is `systemInstruction`, and assistant turns have the role `model`.

use llm_common::{VendorErrors, finish_reason, malformed, model, send_json, split_system, tokens};
use outreach_plugin_sdk::http::encode;
use outreach_plugin_sdk::prelude::*;
use serde_json::{Map, Value, json};

pub struct Gemini;

const DEFAULT_BASE: &str = "https://generativelanguage.googleapis.com";
const VALIDATION_MODEL: &str = "gemini-2.5-flash-lite";
const ERRORS: VendorErrors = VendorErrors {
    name: "Gemini",
    extra_auth_statuses: &[],
};

/// The path segment of a model, accepting the `models/` resource prefix that
/// Google's own model listing returns.
fn model_path(model: &str) -> Result<String, PluginError> {
    let id = model.trim().trim_start_matches("models/");
    if id.is_empty() {
        return Err(PluginError::InvalidInput(
            "a Gemini model name is required".into(),
        ));
    }
    Ok(encode(id))
}

fn body(req: &CompletionRequest) -> Result<Value, PluginError> {
    let (system, turns) = split_system(&req.messages);
    if turns.is_empty() {
        return Err(PluginError::InvalidInput(
            "Gemini needs at least one user or assistant message".into(),
        ));
    }
    let contents: Vec<Value> = turns
        .iter()
        .map(|m| json!({"role": if m.role == Role::Assistant { "model" } else { "user" }, "parts": [{"text": m.content}]}))
        .collect();
    let mut body = json!({"contents": contents});
    if let Some(s) = system {
        body["systemInstruction"] = json!({"parts": [{"text": s}]});
    }
    let mut config = Map::new();
    if let Some(n) = req.max_tokens {
        config.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(t) = req.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if !req.stop.is_empty() {
        config.insert("stopSequences".into(), json!(req.stop));
    }
    if req.json_mode {
        config.insert("responseMimeType".into(), json!("application/json"));
    }
    if !config.is_empty() {
        body["generationConfig"] = Value::Object(config);
    }
    Ok(body)
}

fn parse(v: &Value, req: &CompletionRequest) -> Result<CompletionResponse, PluginError> {
    let Some(candidate) = v["candidates"].as_array().and_then(|c| c.first()) else {
        // A prompt refused by the safety filters comes back as 200 with no
        // candidates; the same prompt will be refused again.
        return Err(match v["promptFeedback"]["blockReason"].as_str() {
            Some(reason) => PluginError::Permanent(format!("Gemini blocked the prompt: {reason}")),
            None => malformed("Gemini", "candidates"),
        });
    };
    // A thinking model that spends its whole budget thinking answers with no
    // parts at all; that is an empty completion, not a malformed one.
    let content: String = candidate["content"]["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p["thought"] != true)
                .filter_map(|p| p["text"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let u = &v["usageMetadata"];
    Ok(CompletionResponse {
        model: v["modelVersion"]
            .as_str()
            .filter(|m| !m.is_empty())
            .unwrap_or(&req.model)
            .into(),
        content,
        prompt_tokens: tokens(&u["promptTokenCount"]),
        // Thinking tokens are billed as output tokens.
        completion_tokens: tokens(&u["candidatesTokenCount"])
            .saturating_add(tokens(&u["thoughtsTokenCount"])),
        finish_reason: finish_reason(candidate["finishReason"].as_str().unwrap_or_default()),
    })
}

impl LlmProvider for Gemini {
    fn metadata() -> LlmMetadata {
        LlmMetadata {
            identifier: "gemini".into(),
            display_name: "Google Gemini".into(),
            models: vec![
                model("gemini-2.5-flash-lite", 0.10, 0.40),
                model("gemini-2.5-flash", 0.30, 2.50),
                model("gemini-2.5-pro", 1.25, 10.00),
            ],
            default_validation_model: VALIDATION_MODEL.into(),
            requires_endpoint_url: false,
            fallback_rank: 3,
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
        let url = format!(
            "{}/v1beta/models/{}:generateContent",
            base_url(ctx, DEFAULT_BASE),
            model_path(&request.model)?
        );
        let req = Request::post(&url)
            .header("x-goog-api-key", &ctx.api_key)
            .json(&body(&request)?);
        parse(&send_json(req, ctx, &ERRORS)?, &request)
    }
}

outreach_plugin_sdk::export_llm_provider!(Gemini);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_contents_system_instruction_and_generation_config() {
        let mut req = llm_common::validation_request("models/gemini-2.5-flash");
        req.messages.insert(
            0,
            ChatMessage {
                role: Role::System,
                content: "be brief".into(),
            },
        );
        req.messages.push(ChatMessage {
            role: Role::Assistant,
            content: "OK".into(),
        });
        (req.json_mode, req.temperature) = (true, Some(0.25));
        let b = body(&req).unwrap();
        assert_eq!(b["systemInstruction"]["parts"][0]["text"], "be brief");
        assert_eq!(b["contents"][1]["role"], "model");
        assert_eq!(b["generationConfig"]["maxOutputTokens"], 1);
        assert_eq!(
            b["generationConfig"]["responseMimeType"],
            "application/json"
        );
        assert_eq!(model_path(&req.model).unwrap(), "gemini-2.5-flash");
    }

    #[test]
    fn reads_candidates_usage_and_blocked_prompts() {
        let v: Value = serde_json::from_str(
            r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"thinking","thought":true},{"text":"OK"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":6,"candidatesTokenCount":1,"thoughtsTokenCount":4},"modelVersion":"gemini-2.5-flash"}"#,
        )
        .unwrap();
        let r = parse(&v, &llm_common::validation_request("x")).unwrap();
        assert_eq!(
            (
                r.content.as_str(),
                r.prompt_tokens,
                r.completion_tokens,
                r.finish_reason.as_str()
            ),
            ("OK", 6, 5, "length")
        );
        let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}});
        assert!(matches!(
            parse(&blocked, &llm_common::validation_request("x")),
            Err(PluginError::Permanent(_))
        ));
    }

    #[test]
    fn an_invalid_key_400_is_an_auth_error() {
        let _m = testing::mock_http(|req| {
            assert_eq!(
                req.url,
                "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash-lite:generateContent"
            );
            Ok(testing::json_response(
                400,
                r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}"#,
            ))
        });
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: None,
        };
        assert!(matches!(
            Gemini::validate_key(&ctx, None),
            Err(PluginError::Auth(_))
        ));
    }
}
