//! `llm-provider` for any self-hosted endpoint speaking the common
//! chat-completion shape (`POST {endpoint}/v1/chat/completions`). The
//! endpoint is the operator's `endpoint_url`, which the host passes as the
//! call's base URL and allows for that call only.

use outreach_plugin_sdk::prelude::*;
use serde_json::{Value, json};

pub struct Compatible;

fn role(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

impl LlmProvider for Compatible {
    fn metadata() -> LlmMetadata {
        LlmMetadata {
            identifier: "llm_compatible".into(),
            display_name: "OpenAI-compatible endpoint".into(),
            models: vec![],
            default_validation_model: String::new(),
            requires_endpoint_url: true,
            fallback_rank: 7,
        }
    }

    fn validate_key(ctx: &VendorContext, model: Option<&str>) -> Result<LlmKeyValidation, PluginError> {
        let model = model
            .filter(|m| !m.is_empty())
            .ok_or_else(|| PluginError::InvalidInput("validation_model is required for the compatible kind".into()))?;
        let r = Self::complete(
            ctx,
            CompletionRequest {
                model: model.into(),
                messages: vec![ChatMessage { role: Role::User, content: "Reply with OK".into() }],
                max_tokens: Some(1),
                temperature: Some(0.0),
                stop: vec![],
                json_mode: false,
            },
        )?;
        Ok(LlmKeyValidation {
            model: r.model,
            prompt_tokens: r.prompt_tokens,
            completion_tokens: r.completion_tokens,
            echo: r.content,
        })
    }

    fn complete(ctx: &VendorContext, request: CompletionRequest) -> Result<CompletionResponse, PluginError> {
        let base = ctx
            .base_url
            .as_deref()
            .ok_or_else(|| PluginError::InvalidInput("endpoint_url is required for the compatible kind".into()))?;
        let messages: Vec<Value> =
            request.messages.iter().map(|m| json!({"role": role(m.role), "content": m.content})).collect();
        let mut body = json!({"model": request.model, "messages": messages});
        if let Some(n) = request.max_tokens {
            body["max_tokens"] = json!(n);
        }
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        if !request.stop.is_empty() {
            body["stop"] = json!(request.stop);
        }
        if request.json_mode {
            body["response_format"] = json!({"type": "json_object"});
        }
        let v: Value = Request::post(&format!("{}/v1/chat/completions", base.trim_end_matches('/')))
            .bearer(&ctx.api_key)
            .json(&body)
            .send()?
            .check()?
            .json()?;
        let choice = &v["choices"][0];
        Ok(CompletionResponse {
            model: v["model"].as_str().unwrap_or(&request.model).into(),
            content: choice["message"]["content"].as_str().unwrap_or_default().into(),
            prompt_tokens: v["usage"]["prompt_tokens"].as_u64().unwrap_or(0) as u32,
            completion_tokens: v["usage"]["completion_tokens"].as_u64().unwrap_or(0) as u32,
            finish_reason: choice["finish_reason"].as_str().unwrap_or("stop").into(),
        })
    }
}

outreach_plugin_sdk::export_llm_provider!(Compatible);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_the_chat_completion_shape() {
        let _m = testing::mock_http(|req| {
            let body: Value = serde_json::from_slice(req.body.as_ref().unwrap()).unwrap();
            assert_eq!(body["messages"][0]["role"], "user");
            assert_eq!(body["max_tokens"], 1);
            Ok(testing::json_response(
                200,
                r#"{"model":"m","choices":[{"message":{"content":"OK"},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}"#,
            ))
        });
        let ctx = VendorContext { api_key: "k".into(), base_url: Some("http://llm.test".into()) };
        let v = Compatible::validate_key(&ctx, Some("m")).unwrap();
        assert_eq!((v.echo.as_str(), v.prompt_tokens), ("OK", 5));
    }
}
