//! `llm-provider` for Mistral's chat completion API
//! (`POST https://api.mistral.ai/v1/chat/completions`, bearer key).

use llm_common::chat_completions::{self, Dialect};
use llm_common::{VendorErrors, model};
use outreach_plugin_sdk::prelude::*;

pub struct Mistral;

const DEFAULT_BASE: &str = "https://api.mistral.ai";
const VALIDATION_MODEL: &str = "mistral-small-latest";

const DIALECT: Dialect = Dialect {
    errors: VendorErrors {
        name: "Mistral",
        extra_auth_statuses: &[],
    },
    max_tokens_field: "max_tokens",
};

impl LlmProvider for Mistral {
    fn metadata() -> LlmMetadata {
        LlmMetadata {
            identifier: "mistral".into(),
            display_name: "Mistral AI".into(),
            models: vec![
                model("mistral-small-latest", 0.10, 0.30),
                model("mistral-medium-latest", 0.40, 2.00),
                model("mistral-large-latest", 2.00, 6.00),
                model("ministral-8b-latest", 0.10, 0.10),
                model("open-mistral-nemo", 0.15, 0.15),
            ],
            default_validation_model: VALIDATION_MODEL.into(),
            requires_endpoint_url: false,
            fallback_rank: 4,
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

outreach_plugin_sdk::export_llm_provider!(Mistral);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn sends_max_tokens_and_json_mode() {
        let _m = testing::mock_http(|req| {
            assert_eq!(req.url, "https://api.mistral.ai/v1/chat/completions");
            let body: Value =
                serde_json::from_slice(req.body.as_deref().unwrap_or_default()).unwrap();
            assert_eq!(body["max_tokens"], 20);
            assert_eq!(body["response_format"]["type"], "json_object");
            Ok(testing::json_response(
                200,
                r#"{"object":"chat.completion","model":"mistral-small-latest","choices":[{"index":0,"message":{"role":"assistant","content":"{}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}"#,
            ))
        });
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: None,
        };
        let mut req = llm_common::validation_request("mistral-small-latest");
        (req.max_tokens, req.json_mode) = (Some(20), true);
        let r = Mistral::complete(&ctx, req).unwrap();
        assert_eq!(
            (
                r.content.as_str(),
                r.prompt_tokens,
                r.completion_tokens,
                r.finish_reason.as_str()
            ),
            ("{}", 12, 2, "stop")
        );
    }

    #[test]
    fn invalid_model_400_is_invalid_input() {
        let _m = testing::mock_http(|_| {
            Ok(testing::json_response(
                400,
                r#"{"object":"error","message":"Invalid model: nope","type":"invalid_model","param":null,"code":"1500"}"#,
            ))
        });
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: None,
        };
        let e = Mistral::validate_key(&ctx, Some("nope")).unwrap_err();
        assert!(
            matches!(&e, PluginError::InvalidInput(m) if m.contains("Invalid model")),
            "{e:?}"
        );
    }
}
