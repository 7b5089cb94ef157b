//! `llm-provider` for Cohere's v2 Chat API (`POST https://api.cohere.com/v2/chat`,
//! bearer key). Answers carry text blocks in `message.content` and billed
//! token counts in `usage.billed_units`; they do not name the model.

use llm_common::{VendorErrors, finish_reason, malformed, model, send_json, tokens};
use outreach_plugin_sdk::prelude::*;
use serde_json::{Value, json};

pub struct Cohere;

const DEFAULT_BASE: &str = "https://api.cohere.com";
const VALIDATION_MODEL: &str = "command-r-08-2024";
/// Cohere documents 498 "invalid token" besides 401 for a rejected key.
const ERRORS: VendorErrors = VendorErrors {
    name: "Cohere",
    extra_auth_statuses: &[498],
};

fn role(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn body(req: &CompletionRequest) -> Value {
    let messages: Vec<Value> = req
        .messages
        .iter()
        .map(|m| json!({"role": role(m.role), "content": m.content}))
        .collect();
    let mut body = json!({"model": req.model, "messages": messages, "stream": false});
    if let Some(n) = req.max_tokens {
        body["max_tokens"] = json!(n);
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    if !req.stop.is_empty() {
        body["stop_sequences"] = json!(req.stop);
    }
    if req.json_mode {
        body["response_format"] = json!({"type": "json_object"});
    }
    body
}

fn parse(v: &Value, req: &CompletionRequest) -> Result<CompletionResponse, PluginError> {
    let message = &v["message"];
    if !message.is_object() {
        return Err(malformed("Cohere", "message"));
    }
    let reason = v["finish_reason"].as_str().unwrap_or_default();
    // Cohere reports a failed or timed-out generation with a 200 and one of
    // these finish reasons; neither is a completion.
    match reason {
        "ERROR" => {
            return Err(PluginError::Permanent(
                "Cohere ended the generation with ERROR".into(),
            ));
        }
        "TIMEOUT" => {
            return Err(PluginError::Transient(
                "Cohere ended the generation with TIMEOUT".into(),
            ));
        }
        _ => {}
    }
    let content: String = match &message["content"] {
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    };
    // Billed units are what the key pays for; `tokens` also counts Cohere's
    // own prompt template and is only a fallback.
    let u = &v["usage"];
    let count = |field: &str| {
        let billed = &u["billed_units"][field];
        tokens(if billed.is_null() {
            &u["tokens"][field]
        } else {
            billed
        })
    };
    Ok(CompletionResponse {
        model: req.model.clone(),
        content,
        prompt_tokens: count("input_tokens"),
        completion_tokens: count("output_tokens"),
        finish_reason: finish_reason(reason),
    })
}

impl LlmProvider for Cohere {
    fn metadata() -> LlmMetadata {
        LlmMetadata {
            identifier: "cohere".into(),
            display_name: "Cohere".into(),
            models: vec![
                model("command-r-08-2024", 0.15, 0.60),
                model("command-r7b-12-2024", 0.0375, 0.15),
                model("command-r-plus-08-2024", 2.50, 10.00),
                model("command-a-03-2025", 2.50, 10.00),
            ],
            default_validation_model: VALIDATION_MODEL.into(),
            requires_endpoint_url: false,
            fallback_rank: 5,
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
        let url = format!("{}/v2/chat", base_url(ctx, DEFAULT_BASE));
        let req = Request::post(&url)
            .bearer(&ctx.api_key)
            .json(&body(&request));
        parse(&send_json(req, ctx, &ERRORS)?, &request)
    }
}

outreach_plugin_sdk::export_llm_provider!(Cohere);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_stop_sequences_and_json_format() {
        let mut req = llm_common::validation_request("command-r-08-2024");
        (req.stop, req.json_mode) = (vec!["END".into()], true);
        let b = body(&req);
        assert_eq!(
            (b["stop_sequences"][0].as_str(), b["stream"].as_bool()),
            (Some("END"), Some(false))
        );
        assert_eq!(b["response_format"]["type"], "json_object");
    }

    #[test]
    fn reads_billed_units_and_classifies_498() {
        let v: Value = serde_json::from_str(
            r#"{"id":"x","finish_reason":"MAX_TOKENS","message":{"role":"assistant","content":[{"type":"text","text":"OK"}]},"usage":{"billed_units":{"input_tokens":3,"output_tokens":1},"tokens":{"input_tokens":70,"output_tokens":1}}}"#,
        )
        .unwrap();
        let r = parse(&v, &llm_common::validation_request("command-r-08-2024")).unwrap();
        assert_eq!(
            (
                r.content.as_str(),
                r.prompt_tokens,
                r.finish_reason.as_str()
            ),
            ("OK", 3, "length")
        );
        let failed = json!({"finish_reason": "ERROR", "message": {"content": []}});
        assert!(matches!(
            parse(&failed, &llm_common::validation_request("m")),
            Err(PluginError::Permanent(_))
        ));
        let _m = testing::mock_http(|_| {
            Ok(testing::json_response(
                498,
                r#"{"message":"invalid api token"}"#,
            ))
        });
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: None,
        };
        assert!(matches!(
            Cohere::validate_key(&ctx, None),
            Err(PluginError::Auth(_))
        ));
    }
}
