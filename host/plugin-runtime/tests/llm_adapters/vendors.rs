//! The vendor table of the adapter tests, and the vendors speaking the
//! chat-completion shape (OpenAI, Mistral, Groq, the compatible kind): what
//! each adapter must send, and what each vendor answers for every scenario
//! the tests drive.

use crate::common::{Answer, json};
use outreach_plugin_runtime::{ChatMessage, CompletionRequest, Role};
use serde_json::{Value, json};

/// One vendor: its identity, what its requests must look like, and its
/// documented answers.
#[derive(Clone, Copy)]
pub struct Vendor {
    pub plugin: &'static str,
    pub identifier: &'static str,
    pub rank: u32,
    pub host: &'static str,
    pub default_model: &'static str,
    /// Lower-cased header lines every request must carry for key `good-key`.
    pub auth: &'static [&'static str],
    pub path: fn(&str) -> String,
    /// JSON pointer of the max-tokens field in the request body.
    pub max_tokens: &'static str,
    /// Success answer for a model: content "Hello", 11 prompt and 3
    /// completion tokens, a normal stop.
    pub success: fn(&str) -> String,
    pub bad_key: fn() -> Answer,
    pub rate_limited: fn() -> Answer,
    pub server_error: fn() -> Answer,
    pub unknown_model: fn() -> Answer,
    pub error_200: fn() -> Answer,
    /// Checks the body of the full-shape completion request.
    pub check_body: fn(&Value),
}

pub fn with_headers(mut a: Answer, headers: &[(&str, &str)]) -> Answer {
    a.1.extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    a
}

fn chat_path(_: &str) -> String {
    "/v1/chat/completions".into()
}

fn openai_success(m: &str) -> String {
    format!(
        r#"{{"id":"chatcmpl-1","object":"chat.completion","model":"{m}","choices":[{{"index":0,"message":{{"role":"assistant","content":"Hello"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":11,"completion_tokens":3,"total_tokens":14}}}}"#
    )
}

fn openai_error(status: u16, kind: &str, code: &str, message: &str) -> Answer {
    json(
        status,
        &format!(
            r#"{{"error":{{"message":"{message}","type":"{kind}","param":null,"code":"{code}"}}}}"#
        ),
    )
}

fn openai_200_error() -> Answer {
    json(
        200,
        r#"{"error":{"message":"upstream gateway failed","type":"server_error"}}"#,
    )
}

/// The full request: system prompt, a multi-turn conversation and every
/// optional parameter.
pub fn full_request(model: &str) -> CompletionRequest {
    let m = |role, content: &str| ChatMessage {
        role,
        content: content.into(),
    };
    CompletionRequest {
        model: model.into(),
        messages: vec![
            m(Role::System, "You write short emails."),
            m(Role::User, "Say hello"),
            m(Role::Assistant, "Hi?"),
            m(Role::User, "Again"),
        ],
        max_tokens: Some(20),
        temperature: Some(0.5),
        stop: vec!["END".into()],
        json_mode: true,
    }
}

/// The body shape shared by the OpenAI-style vendors (system inline).
fn check_chat_body(b: &Value, max_tokens_field: &str) {
    assert_eq!(
        b["messages"][0],
        json!({"role": "system", "content": "You write short emails."}),
        "{b}"
    );
    assert_eq!(b["messages"][2]["role"], "assistant");
    assert_eq!(b[max_tokens_field], 20, "{b}");
    assert_eq!(
        (b["temperature"].as_f64(), &b["stop"]),
        (Some(0.5), &json!(["END"]))
    );
    assert_eq!(b["response_format"], json!({"type": "json_object"}));
}

pub const OPENAI: Vendor = Vendor {
    plugin: "llm-openai",
    identifier: "openai",
    rank: 1,
    host: "https://api.openai.com",
    default_model: "gpt-4o-mini",
    auth: &["authorization: bearer good-key"],
    path: chat_path,
    max_tokens: "/max_completion_tokens",
    success: openai_success,
    // OpenAI echoes the rejected key; the adapter must redact it.
    bad_key: || {
        openai_error(
            401,
            "invalid_request_error",
            "invalid_api_key",
            "Incorrect API key provided: bad-key.",
        )
    },
    // OpenAI documents the x-ratelimit-* headers rather than Retry-After.
    rate_limited: || {
        let a = openai_error(
            429,
            "requests",
            "rate_limit_exceeded",
            "Rate limit reached for requests",
        );
        with_headers(
            a,
            &[
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", "7s"),
            ],
        )
    },
    server_error: || {
        openai_error(
            500,
            "server_error",
            "",
            "The server had an error while processing your request.",
        )
    },
    unknown_model: || {
        openai_error(
            404,
            "invalid_request_error",
            "model_not_found",
            "The model `nope` does not exist",
        )
    },
    error_200: openai_200_error,
    check_body: |b| check_chat_body(b, "max_completion_tokens"),
};

pub const MISTRAL: Vendor = Vendor {
    plugin: "llm-mistral",
    identifier: "mistral",
    rank: 4,
    host: "https://api.mistral.ai",
    default_model: "mistral-small-latest",
    auth: &["authorization: bearer good-key"],
    path: chat_path,
    max_tokens: "/max_tokens",
    success: openai_success,
    bad_key: || json(401, r#"{"message":"Unauthorized","request_id":"r1"}"#),
    rate_limited: || {
        with_headers(
            json(429, r#"{"message":"Requests rate limit exceeded"}"#),
            &[("retry-after", "7")],
        )
    },
    server_error: || json(502, r#"{"message":"Bad gateway"}"#),
    // Mistral refuses an unknown model with 400 invalid_model.
    unknown_model: || {
        json(
            400,
            r#"{"object":"error","message":"Invalid model: nope","type":"invalid_model","param":null,"code":"1500"}"#,
        )
    },
    error_200: openai_200_error,
    check_body: |b| check_chat_body(b, "max_tokens"),
};

pub const GROQ: Vendor = Vendor {
    plugin: "llm-groq",
    identifier: "groq",
    rank: 6,
    host: "https://api.groq.com",
    default_model: "llama-3.1-8b-instant",
    auth: &["authorization: bearer good-key"],
    path: chat_path,
    max_tokens: "/max_completion_tokens",
    success: openai_success,
    bad_key: || {
        openai_error(
            401,
            "invalid_request_error",
            "invalid_api_key",
            "Invalid API Key",
        )
    },
    rate_limited: || {
        let a = openai_error(
            429,
            "tokens",
            "rate_limit_exceeded",
            "Rate limit reached for model",
        );
        with_headers(
            a,
            &[("retry-after", "7"), ("x-ratelimit-reset-tokens", "1m0s")],
        )
    },
    server_error: || {
        openai_error(
            503,
            "internal_server_error",
            "service_unavailable",
            "Service Unavailable",
        )
    },
    unknown_model: || {
        openai_error(
            404,
            "invalid_request_error",
            "model_not_found",
            "The model `nope` does not exist",
        )
    },
    error_200: openai_200_error,
    check_body: |b| check_chat_body(b, "max_completion_tokens"),
};

pub const COMPATIBLE: Vendor = Vendor {
    plugin: "llm-compatible",
    identifier: "openai_compatible",
    rank: 7,
    host: "",
    default_model: "",
    auth: &["authorization: bearer good-key"],
    path: chat_path,
    max_tokens: "/max_tokens",
    success: openai_success,
    bad_key: || json(401, r#"{"error":"invalid key"}"#),
    rate_limited: || {
        with_headers(
            json(429, r#"{"error":{"message":"slow down"}}"#),
            &[("retry-after", "7")],
        )
    },
    server_error: || json(500, "upstream exploded"),
    unknown_model: || json(404, r#"{"error":{"message":"model 'nope' not found"}}"#),
    error_200: openai_200_error,
    check_body: |b| check_chat_body(b, "max_tokens"),
};
