//! `llm-provider` for OpenAI's Chat Completions API
//! (`POST https://api.openai.com/v1/chat/completions`, bearer key).

use llm_common::chat_completions::{self, Dialect};
use llm_common::{VendorErrors, model};
use outreach_plugin_sdk::prelude::*;

pub struct OpenAi;

const DEFAULT_BASE: &str = "https://api.openai.com";
const VALIDATION_MODEL: &str = "gpt-4o-mini";

const DIALECT: Dialect = Dialect {
    errors: VendorErrors {
        name: "OpenAI",
        extra_auth_statuses: &[],
    },
    // `max_tokens` is deprecated and refused by the o-series models.
    max_tokens_field: "max_completion_tokens",
};

impl LlmProvider for OpenAi {
    fn metadata() -> LlmMetadata {
        LlmMetadata {
            identifier: "openai".into(),
            display_name: "OpenAI".into(),
            models: vec![
                model("gpt-4o-mini", 0.15, 0.60),
                model("gpt-4o", 2.50, 10.00),
                model("gpt-4.1-nano", 0.10, 0.40),
                model("gpt-4.1-mini", 0.40, 1.60),
                model("gpt-4.1", 2.00, 8.00),
                model("o4-mini", 1.10, 4.40),
            ],
            default_validation_model: VALIDATION_MODEL.into(),
            requires_endpoint_url: false,
            fallback_rank: 1,
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

outreach_plugin_sdk::export_llm_provider!(OpenAi);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn validates_on_the_default_model_with_one_completion_token() {
        let _m = testing::mock_http(|req| {
            assert_eq!(req.url, "https://api.openai.com/v1/chat/completions");
            assert!(
                req.headers
                    .contains(&("authorization".into(), "Bearer sk-test".into()))
            );
            let body: Value =
                serde_json::from_slice(req.body.as_deref().unwrap_or_default()).unwrap();
            assert_eq!(
                (
                    body["model"].as_str(),
                    body["max_completion_tokens"].as_u64()
                ),
                (Some("gpt-4o-mini"), Some(1))
            );
            Ok(testing::json_response(
                200,
                r#"{"model":"gpt-4o-mini-2024-07-18","choices":[{"message":{"role":"assistant","content":"OK"},"finish_reason":"length"}],"usage":{"prompt_tokens":10,"completion_tokens":1}}"#,
            ))
        });
        let ctx = VendorContext {
            api_key: "sk-test".into(),
            base_url: None,
        };
        let v = OpenAi::validate_key(&ctx, None).unwrap();
        assert_eq!(
            (
                v.model.as_str(),
                v.echo.as_str(),
                v.prompt_tokens,
                v.completion_tokens
            ),
            ("gpt-4o-mini-2024-07-18", "OK", 10, 1)
        );
    }

    #[test]
    fn maps_quota_errors_to_rate_limited() {
        let _m = testing::mock_http(|_| {
            let mut r = testing::json_response(
                429,
                r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
            );
            r.headers
                .push(("x-ratelimit-remaining-requests".into(), "0".into()));
            r.headers
                .push(("x-ratelimit-reset-requests".into(), "1m30s".into()));
            Ok(r)
        });
        let ctx = VendorContext {
            api_key: "sk-test".into(),
            base_url: Some("http://stub.test/".into()),
        };
        let e = OpenAi::validate_key(&ctx, Some("gpt-4o")).unwrap_err();
        assert!(
            matches!(
                e,
                PluginError::RateLimited(RateLimit {
                    retry_after_ms: Some(90_000),
                    ..
                })
            ),
            "{e:?}"
        );
    }
}
