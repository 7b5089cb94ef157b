//! `llm-provider` for any self-hosted endpoint speaking the common
//! chat-completion shape (`POST {endpoint}/v1/chat/completions`). The
//! endpoint is the operator's `endpoint_url`, which the host passes as the
//! call's base URL and allows for that call only. There is no default
//! validation model: the operator's `validation_model` is required.

use llm_common::VendorErrors;
use llm_common::chat_completions::{self, Dialect};
use outreach_plugin_sdk::prelude::*;

pub struct Compatible;

const DIALECT: Dialect = Dialect {
    errors: VendorErrors {
        name: "The compatible endpoint",
        extra_auth_statuses: &[],
    },
    // The older field: every compatible server knows it, not all know the
    // newer `max_completion_tokens`.
    max_tokens_field: "max_tokens",
};

/// The chat-completions URL of an endpoint given with or without its `/v1`
/// suffix, since operators paste both forms.
fn completions_url(endpoint: &str) -> String {
    let base = endpoint.trim_end_matches('/');
    let base = base.strip_suffix("/v1").unwrap_or(base);
    format!("{base}/v1/chat/completions")
}

impl LlmProvider for Compatible {
    fn metadata() -> LlmMetadata {
        LlmMetadata {
            identifier: "openai_compatible".into(),
            display_name: "OpenAI-compatible endpoint".into(),
            models: vec![],
            default_validation_model: String::new(),
            requires_endpoint_url: true,
            fallback_rank: 7,
        }
    }

    fn validate_key(
        ctx: &VendorContext,
        model: Option<&str>,
    ) -> Result<LlmKeyValidation, PluginError> {
        if model.is_none_or(|m| m.trim().is_empty()) {
            return Err(PluginError::InvalidInput(
                "validation_model is required for the compatible kind".into(),
            ));
        }
        llm_common::validate(ctx, model, "", Self::complete)
    }

    fn complete(
        ctx: &VendorContext,
        request: CompletionRequest,
    ) -> Result<CompletionResponse, PluginError> {
        let endpoint = ctx
            .base_url
            .as_deref()
            .filter(|u| !u.trim().is_empty())
            .ok_or_else(|| {
                PluginError::InvalidInput("endpoint_url is required for the compatible kind".into())
            })?;
        chat_completions::complete(&completions_url(endpoint), ctx, &request, &DIALECT)
    }
}

outreach_plugin_sdk::export_llm_provider!(Compatible);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn sends_the_chat_completion_shape() {
        let _m = testing::mock_http(|req| {
            assert_eq!(req.url, "http://llm.test/v1/chat/completions");
            let body: Value = serde_json::from_slice(req.body.as_ref().unwrap()).unwrap();
            assert_eq!(body["messages"][0]["role"], "user");
            assert_eq!(body["max_tokens"], 1);
            Ok(testing::json_response(
                200,
                r#"{"model":"m","choices":[{"message":{"content":"OK"},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}"#,
            ))
        });
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: Some("http://llm.test/v1/".into()),
        };
        let v = Compatible::validate_key(&ctx, Some("m")).unwrap();
        assert_eq!((v.echo.as_str(), v.prompt_tokens), ("OK", 5));
    }

    #[test]
    fn needs_an_endpoint_and_a_validation_model() {
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: None,
        };
        assert!(matches!(
            Compatible::validate_key(&ctx, Some("m")),
            Err(PluginError::InvalidInput(_))
        ));
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: Some("http://llm.test".into()),
        };
        assert!(matches!(
            Compatible::validate_key(&ctx, None),
            Err(PluginError::InvalidInput(_))
        ));
        assert_eq!(
            completions_url("http://h:8000"),
            "http://h:8000/v1/chat/completions"
        );
    }
}
