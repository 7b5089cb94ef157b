//! `llm-provider` for Groq's OpenAI-compatible chat API
//! (`POST https://api.groq.com/openai/v1/chat/completions`, bearer key).

use llm_common::chat_completions::{self, Dialect};
use llm_common::{VendorErrors, model};
use outreach_plugin_sdk::prelude::*;

pub struct Groq;

/// Groq serves its OpenAI-compatible API under `/openai`; an override
/// replaces this whole prefix, as a stub or proxy would.
const DEFAULT_BASE: &str = "https://api.groq.com/openai";
const VALIDATION_MODEL: &str = "llama-3.1-8b-instant";

const DIALECT: Dialect = Dialect {
    errors: VendorErrors {
        name: "Groq",
        extra_auth_statuses: &[],
    },
    // Groq documents `max_tokens` as deprecated in favour of this field.
    max_tokens_field: "max_completion_tokens",
};

impl LlmProvider for Groq {
    fn metadata() -> LlmMetadata {
        LlmMetadata {
            identifier: "groq".into(),
            display_name: "Groq".into(),
            models: vec![
                model("llama-3.1-8b-instant", 0.05, 0.08),
                model("llama-3.3-70b-versatile", 0.59, 0.79),
                model("openai/gpt-oss-20b", 0.075, 0.30),
                model("openai/gpt-oss-120b", 0.15, 0.60),
            ],
            default_validation_model: VALIDATION_MODEL.into(),
            requires_endpoint_url: false,
            fallback_rank: 6,
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
        let url = format!("{}/v1/chat/completions", base_url(ctx, DEFAULT_BASE));
        chat_completions::complete(&url, ctx, &request, &DIALECT)
    }
}

outreach_plugin_sdk::export_llm_provider!(Groq);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_the_openai_compatible_path_and_reads_usage() {
        let _m = testing::mock_http(|req| {
            assert_eq!(req.url, "https://api.groq.com/openai/v1/chat/completions");
            Ok(testing::json_response(
                200,
                r#"{"model":"llama-3.1-8b-instant","choices":[{"message":{"content":"OK"},"finish_reason":"length"}],"usage":{"prompt_tokens":40,"completion_tokens":1,"total_time":0.01}}"#,
            ))
        });
        let ctx = VendorContext {
            api_key: "gsk_test".into(),
            base_url: None,
        };
        let v = Groq::validate_key(&ctx, None).unwrap();
        assert_eq!(
            (v.model.as_str(), v.prompt_tokens, v.completion_tokens),
            ("llama-3.1-8b-instant", 40, 1)
        );
    }

    #[test]
    fn unknown_model_is_invalid_input() {
        let _m = testing::mock_http(|_| {
            Ok(testing::json_response(
                404,
                r#"{"error":{"message":"The model `x` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#,
            ))
        });
        let ctx = VendorContext {
            api_key: "gsk_test".into(),
            base_url: None,
        };
        let e = Groq::validate_key(&ctx, Some("x")).unwrap_err();
        assert!(
            matches!(&e, PluginError::InvalidInput(m) if m.contains("model_not_found")),
            "{e:?}"
        );
    }
}
