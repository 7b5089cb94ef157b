//! The vendors with an API shape of their own (Anthropic Messages, Gemini
//! generateContent, Cohere v2 chat): what each adapter must send, and what
//! each vendor answers for every scenario the tests drive.

use crate::common::{Answer, json};
use crate::vendors::{Vendor, with_headers};
use serde_json::json;

pub const ANTHROPIC: Vendor = Vendor {
    plugin: "llm-anthropic",
    identifier: "anthropic",
    rank: 2,
    host: "https://api.anthropic.com",
    default_model: "claude-haiku-4-5",
    auth: &["x-api-key: good-key", "anthropic-version: 2023-06-01"],
    path: |_| "/v1/messages".into(),
    max_tokens: "/max_tokens",
    success: |m| {
        format!(
            r#"{{"id":"msg_1","type":"message","role":"assistant","model":"{m}","content":[{{"type":"text","text":"Hello"}}],"stop_reason":"end_turn","stop_sequence":null,"usage":{{"input_tokens":11,"output_tokens":3}}}}"#
        )
    },
    bad_key: || {
        json(
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        )
    },
    rate_limited: || {
        let a = json(
            429,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}"#,
        );
        with_headers(a, &[("retry-after", "7")])
    },
    // 529 is Anthropic's documented "overloaded" status.
    server_error: || {
        json(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
    },
    unknown_model: || {
        json(
            404,
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: nope"}}"#,
        )
    },
    error_200: || {
        json(
            200,
            r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
        )
    },
    check_body: |b| {
        assert_eq!(
            b["system"]
                .as_str()
                .map(|s| s.starts_with("You write short emails.")),
            Some(true),
            "{b}"
        );
        assert_eq!(
            b["messages"].as_array().map(Vec::len),
            Some(3),
            "system stays out of messages: {b}"
        );
        assert_eq!(
            b["messages"][1],
            json!({"role": "assistant", "content": "Hi?"})
        );
        assert_eq!(
            (b["max_tokens"].as_u64(), &b["stop_sequences"]),
            (Some(20), &json!(["END"]))
        );
        assert_eq!(b["temperature"].as_f64(), Some(0.5));
    },
};

fn google_error(status: u16, code: &str, message: &str, details: &str) -> Answer {
    json(
        status,
        &format!(
            r#"{{"error":{{"code":{status},"message":"{message}","status":"{code}","details":[{details}]}}}}"#
        ),
    )
}

pub const GEMINI: Vendor = Vendor {
    plugin: "llm-gemini",
    identifier: "gemini",
    rank: 3,
    host: "https://generativelanguage.googleapis.com",
    default_model: "gemini-2.5-flash-lite",
    auth: &["x-goog-api-key: good-key"],
    path: |m| format!("/v1beta/models/{m}:generateContent"),
    max_tokens: "/generationConfig/maxOutputTokens",
    success: |m| {
        format!(
            r#"{{"candidates":[{{"content":{{"role":"model","parts":[{{"text":"Hello"}}]}},"finishReason":"STOP","index":0}}],"usageMetadata":{{"promptTokenCount":11,"candidatesTokenCount":3,"totalTokenCount":14}},"modelVersion":"{m}"}}"#
        )
    },
    // Google answers a bad key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
    bad_key: || {
        google_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            r#"{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}"#,
        )
    },
    // Google puts the retry hint in the error details, not in a header.
    rate_limited: || {
        google_error(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota.",
            r#"{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}"#,
        )
    },
    server_error: || {
        google_error(
            503,
            "UNAVAILABLE",
            "The model is overloaded. Please try again later.",
            "",
        )
    },
    unknown_model: || {
        google_error(
            404,
            "NOT_FOUND",
            "models/nope is not found for API version v1beta",
            "",
        )
    },
    error_200: || json(200, r#"{"promptFeedback":{"blockReason":"OTHER"}}"#),
    check_body: |b| {
        assert_eq!(
            b["systemInstruction"]["parts"][0]["text"], "You write short emails.",
            "{b}"
        );
        let roles: Vec<&str> = b["contents"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["role"].as_str())
            .collect();
        assert_eq!(roles, ["user", "model", "user"]);
        assert_eq!(b["contents"][0]["parts"][0]["text"], "Say hello");
        let g = &b["generationConfig"];
        assert_eq!(
            (g["maxOutputTokens"].as_u64(), g["temperature"].as_f64()),
            (Some(20), Some(0.5))
        );
        assert_eq!(
            (&g["stopSequences"], &g["responseMimeType"]),
            (&json!(["END"]), &json!("application/json"))
        );
    },
};

pub const COHERE: Vendor = Vendor {
    plugin: "llm-cohere",
    identifier: "cohere",
    rank: 5,
    host: "https://api.cohere.com",
    default_model: "command-r-08-2024",
    auth: &["authorization: bearer good-key"],
    path: |_| "/v2/chat".into(),
    max_tokens: "/max_tokens",
    // Cohere answers do not name the model; billed units are the counts.
    success: |_| {
        r#"{"id":"c1","finish_reason":"COMPLETE","message":{"role":"assistant","content":[{"type":"text","text":"Hello"}]},"usage":{"billed_units":{"input_tokens":11,"output_tokens":3},"tokens":{"input_tokens":80,"output_tokens":3}}}"#.into()
    },
    bad_key: || json(401, r#"{"id":"e1","message":"invalid api token"}"#),
    rate_limited: || {
        with_headers(
            json(
                429,
                r#"{"id":"e2","message":"You are using a Trial key, which is limited"}"#,
            ),
            &[("retry-after", "7")],
        )
    },
    server_error: || {
        json(
            500,
            r#"{"id":"e3","message":"internal server error, this has been reported to our developers"}"#,
        )
    },
    unknown_model: || {
        json(
            404,
            r#"{"id":"e4","message":"model 'nope' not found, make sure the correct model ID was used"}"#,
        )
    },
    error_200: || {
        json(
            200,
            r#"{"id":"c2","finish_reason":"ERROR","message":{"role":"assistant","content":[]}}"#,
        )
    },
    check_body: |b| {
        assert_eq!(
            b["messages"][0],
            json!({"role": "system", "content": "You write short emails."}),
            "{b}"
        );
        assert_eq!(
            (b["max_tokens"].as_u64(), &b["stop_sequences"]),
            (Some(20), &json!(["END"]))
        );
        assert_eq!(
            (b["temperature"].as_f64(), b["stream"].as_bool()),
            (Some(0.5), Some(false))
        );
        assert_eq!(b["response_format"], json!({"type": "json_object"}));
    },
};
