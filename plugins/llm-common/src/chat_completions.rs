//! The chat-completion shape that OpenAI defined and that Groq, Mistral and
//! self-hosted servers (vLLM, Ollama, LM Studio, ...) also speak:
//! `POST .../chat/completions` with bearer auth, `messages` with system
//! messages inline, `choices[0].message.content` and `usage.prompt_tokens` /
//! `usage.completion_tokens` in the answer.

use crate::{VendorErrors, finish_reason, malformed, send_json, tokens};
use outreach_plugin_sdk::prelude::*;
use serde_json::{Value, json};

/// How one vendor spells the parts that differ.
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    pub errors: VendorErrors,
    /// OpenAI and Groq document `max_completion_tokens` (with `max_tokens`
    /// deprecated); Mistral and most self-hosted servers know `max_tokens`.
    pub max_tokens_field: &'static str,
}

fn role(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// The request body. Optional parameters are omitted when unset so the
/// vendor's own defaults apply.
pub fn body(req: &CompletionRequest, dialect: &Dialect) -> Value {
    let messages: Vec<Value> = req
        .messages
        .iter()
        .map(|m| json!({"role": role(m.role), "content": m.content}))
        .collect();
    let mut body = json!({"model": req.model, "messages": messages});
    if let Some(n) = req.max_tokens {
        body[dialect.max_tokens_field] = json!(n);
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    if !req.stop.is_empty() {
        body["stop"] = json!(req.stop);
    }
    if req.json_mode {
        body["response_format"] = json!({"type": "json_object"});
    }
    body
}

/// Reads a 2xx answer. A body without `choices[0].message` is permanent: it
/// is not a completion, whatever the status said.
pub fn parse(
    v: &Value,
    req: &CompletionRequest,
    vendor: &str,
) -> Result<CompletionResponse, PluginError> {
    let choice = &v["choices"][0];
    let message = &choice["message"];
    if !message.is_object() {
        return Err(malformed(vendor, "choices[0].message"));
    }
    // A refusal comes with a null content and the reason in `refusal`.
    let content = message["content"]
        .as_str()
        .or_else(|| message["refusal"].as_str())
        .unwrap_or_default();
    Ok(CompletionResponse {
        model: v["model"]
            .as_str()
            .filter(|m| !m.is_empty())
            .unwrap_or(&req.model)
            .into(),
        content: content.into(),
        prompt_tokens: tokens(&v["usage"]["prompt_tokens"]),
        completion_tokens: tokens(&v["usage"]["completion_tokens"]),
        finish_reason: finish_reason(choice["finish_reason"].as_str().unwrap_or_default()),
    })
}

/// Runs one completion against `url` (the full chat-completions URL).
pub fn complete(
    url: &str,
    ctx: &VendorContext,
    req: &CompletionRequest,
    dialect: &Dialect,
) -> Result<CompletionResponse, PluginError> {
    let v = send_json(
        Request::post(url)
            .bearer(&ctx.api_key)
            .json(&body(req, dialect)),
        ctx,
        &dialect.errors,
    )?;
    parse(&v, req, dialect.errors.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: Dialect = Dialect {
        errors: VendorErrors {
            name: "X",
            extra_auth_statuses: &[],
        },
        max_tokens_field: "max_tokens",
    };

    fn request() -> CompletionRequest {
        CompletionRequest {
            model: "m".into(),
            messages: vec![
                ChatMessage {
                    role: Role::System,
                    content: "be brief".into(),
                },
                ChatMessage {
                    role: Role::User,
                    content: "hi".into(),
                },
            ],
            max_tokens: Some(5),
            temperature: Some(0.5),
            stop: vec!["END".into()],
            json_mode: true,
        }
    }

    #[test]
    fn body_carries_every_parameter() {
        let b = body(&request(), &D);
        assert_eq!(
            b["messages"][0],
            json!({"role": "system", "content": "be brief"})
        );
        assert_eq!(
            (b["max_tokens"].as_u64(), b["temperature"].as_f64()),
            (Some(5), Some(0.5))
        );
        assert_eq!(b["stop"], json!(["END"]));
        assert_eq!(b["response_format"]["type"], "json_object");
        let mut bare = request();
        (bare.max_tokens, bare.temperature, bare.stop, bare.json_mode) =
            (None, None, vec![], false);
        let b = body(&bare, &D);
        assert!(
            b.get("max_tokens").is_none()
                && b.get("stop").is_none()
                && b.get("response_format").is_none()
        );
    }

    #[test]
    fn parse_requires_a_message() {
        let ok: Value = serde_json::from_str(
            r#"{"model":"m-1","choices":[{"message":{"content":null,"refusal":"no"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#,
        )
        .unwrap();
        let r = parse(&ok, &request(), "X").unwrap();
        assert_eq!(
            (r.model.as_str(), r.content.as_str(), r.prompt_tokens),
            ("m-1", "no", 3)
        );
        let e = parse(&json!({"choices": []}), &request(), "X").unwrap_err();
        assert!(matches!(e, PluginError::Permanent(_)));
    }
}
