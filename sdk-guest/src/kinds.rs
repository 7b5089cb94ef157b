//! One trait per plugin kind. Implement it on a unit struct and export it
//! with the matching `export_*!` macro at the crate root of a `cdylib`.

use crate::types::*;

/// An LLM provider adapter (`llm-provider` world).
///
/// # Example
///
/// ```
/// use outreach_plugin_sdk::prelude::*;
/// use serde_json::json;
///
/// pub struct Chat;
///
/// impl LlmProvider for Chat {
///     fn metadata() -> LlmMetadata {
///         LlmMetadata {
///             identifier: "chat-compatible".into(),
///             display_name: "Chat-completion compatible".into(),
///             models: vec![ModelInfo { id: "small".into(), input_usd_per_mtok: 0.1, output_usd_per_mtok: 0.4 }],
///             default_validation_model: "small".into(),
///             requires_endpoint_url: true,
///             fallback_rank: 7,
///         }
///     }
///
///     fn validate_key(ctx: &VendorContext, model: Option<&str>) -> Result<LlmKeyValidation, PluginError> {
///         let request = CompletionRequest {
///             model: model.unwrap_or("small").into(),
///             messages: vec![ChatMessage { role: Role::User, content: "ping".into() }],
///             max_tokens: Some(1),
///             temperature: None,
///             stop: vec![],
///             json_mode: false,
///         };
///         let r = Self::complete(ctx, request)?;
///         Ok(LlmKeyValidation { model: r.model, prompt_tokens: r.prompt_tokens, completion_tokens: r.completion_tokens, echo: r.content })
///     }
///
///     fn complete(ctx: &VendorContext, request: CompletionRequest) -> Result<CompletionResponse, PluginError> {
///         let base = ctx.base_url.as_deref().ok_or_else(|| PluginError::InvalidInput("endpoint_url is required".into()))?;
///         let messages: Vec<_> = request.messages.iter().map(|m| json!({
///             "role": match m.role { Role::System => "system", Role::User => "user", Role::Assistant => "assistant" },
///             "content": m.content,
///         })).collect();
///         let body: serde_json::Value = Request::post(&format!("{}/v1/chat/completions", base.trim_end_matches('/')))
///             .bearer(&ctx.api_key)
///             .json(&json!({ "model": request.model, "messages": messages, "max_tokens": request.max_tokens }))
///             .send()?
///             .check()?
///             .json()?;
///         Ok(CompletionResponse {
///             model: body["model"].as_str().unwrap_or(&request.model).into(),
///             content: body["choices"][0]["message"]["content"].as_str().unwrap_or_default().into(),
///             prompt_tokens: body["usage"]["prompt_tokens"].as_u64().unwrap_or(0) as u32,
///             completion_tokens: body["usage"]["completion_tokens"].as_u64().unwrap_or(0) as u32,
///             finish_reason: body["choices"][0]["finish_reason"].as_str().unwrap_or("stop").into(),
///         })
///     }
/// }
/// // outreach_plugin_sdk::export_llm_provider!(Chat);
///
/// let _m = testing::mock_http(|_| Ok(testing::json_response(200,
///     r#"{"model":"small","choices":[{"message":{"content":"pong"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#)));
/// let ctx = VendorContext { api_key: "k".into(), base_url: Some("http://llm.test".into()) };
/// assert_eq!(Chat::validate_key(&ctx, None).unwrap().echo, "pong");
/// ```
pub trait LlmProvider {
    /// Identifier, models with prices, default validation model, fallback rank.
    fn metadata() -> LlmMetadata;
    /// Validates a key with a 1-token completion (or a vendor health check).
    fn validate_key(
        ctx: &VendorContext,
        model: Option<&str>,
    ) -> Result<LlmKeyValidation, PluginError>;
    /// Runs one chat completion.
    fn complete(
        ctx: &VendorContext,
        request: CompletionRequest,
    ) -> Result<CompletionResponse, PluginError>;
}

/// An email verification vendor adapter (`email-verifier` world). See the
/// crate-level documentation for a complete example.
pub trait EmailVerifier {
    /// Identifier, list rate per verification, fallback rank.
    fn metadata() -> VendorMetadata;
    /// Validates a key against the vendor's credits endpoint.
    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError>;
    /// Verifies one address and normalises the answer.
    fn verify(ctx: &VendorContext, email: &str) -> Result<VerificationResult, PluginError>;
}

/// A company enrichment vendor adapter (`contact-enricher` world).
///
/// # Example
///
/// ```
/// use outreach_plugin_sdk::prelude::*;
///
/// pub struct Firmo;
///
/// impl ContactEnricher for Firmo {
///     fn metadata() -> VendorMetadata {
///         VendorMetadata { identifier: "firmo".into(), display_name: "Firmo".into(), list_rate_usd: 0.01, fallback_rank: 2 }
///     }
///     fn validate_key(_ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
///         Ok(KeyValidation { credits_remaining: None })
///     }
///     fn enrich(ctx: &VendorContext, domain: &str) -> Result<EnrichmentResult, PluginError> {
///         let url = format!("{}/companies/{domain}", base_url(ctx, "https://api.firmo.example"));
///         let resp = Request::get(&url).header("x-api-key", &ctx.api_key).send()?.check()?;
///         let v: serde_json::Value = resp.json()?;
///         Ok(EnrichmentResult {
///             domain: domain.into(),
///             provider: "firmo".into(),
///             name: v["name"].as_str().map(Into::into),
///             legal_name: None, description: None,
///             founded_year: v["founded"].as_i64().map(|y| y as i32),
///             employee_count: v["employees"].as_i64(),
///             employee_range: None, annual_revenue_usd: None, total_funding_usd: None,
///             latest_funding_stage: None, industry: v["industry"].as_str().map(Into::into),
///             subindustry: None, hq_country: None, hq_city: None, linkedin_url: None, twitter_handle: None,
///             technologies: vec![],
///             raw: resp.text(),
///         })
///     }
/// }
/// // outreach_plugin_sdk::export_contact_enricher!(Firmo);
///
/// let _m = testing::mock_http(|_| Ok(testing::json_response(200, r#"{"name":"Acme","employees":120}"#)));
/// let ctx = VendorContext { api_key: "k".into(), base_url: None };
/// assert_eq!(Firmo::enrich(&ctx, "acme.com").unwrap().employee_count, Some(120));
/// ```
pub trait ContactEnricher {
    /// Identifier, list rate per lookup, fallback rank.
    fn metadata() -> VendorMetadata;
    /// Validates a key (credits endpoint when the vendor has one).
    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError>;
    /// Enriches one normalised domain.
    fn enrich(ctx: &VendorContext, domain: &str) -> Result<EnrichmentResult, PluginError>;
}

/// A workflow action type (`workflow-action` world).
///
/// # Example
///
/// ```
/// use outreach_plugin_sdk::prelude::*;
/// use serde_json::{json, Value};
///
/// pub struct TakeFirst;
///
/// impl WorkflowAction for TakeFirst {
///     fn describe() -> ActionDescriptor {
///         ActionDescriptor {
///             type_name: "take_first".into(),
///             display_name: "Take first N".into(),
///             description: "Keeps the first N items.".into(),
///             config_schema: to_json(&json!({
///                 "type": "object", "required": ["n"],
///                 "properties": { "n": { "type": "integer", "minimum": 0 } }
///             })),
///         }
///     }
///     fn execute(config: &str, items: Vec<String>) -> Result<ActionOutput, PluginError> {
///         let config: Value = from_json("config", config)?;
///         let n = config["n"].as_u64().unwrap_or(0) as usize;
///         Ok(ActionOutput { items: items.into_iter().take(n).collect(), previous_result: None })
///     }
/// }
/// // outreach_plugin_sdk::export_workflow_action!(TakeFirst);
///
/// let out = TakeFirst::execute(r#"{"n":1}"#, vec!["{}".into(), "{}".into()]).unwrap();
/// assert_eq!(out.items.len(), 1);
/// ```
pub trait WorkflowAction {
    /// Type name, display name and JSON Schema of the config.
    fn describe() -> ActionDescriptor;
    /// Transforms the working items; `config` and each item are JSON text.
    fn execute(config: &str, items: Vec<String>) -> Result<ActionOutput, PluginError>;
}

/// A marketplace template pack (`template-pack` world). Packs are pure data.
///
/// # Example
///
/// ```
/// use outreach_plugin_sdk::prelude::*;
///
/// pub struct Pack;
///
/// impl TemplatePack for Pack {
///     fn metadata() -> PackMetadata {
///         PackMetadata { id: "demo".into(), name: "Demo".into(), author: "me".into(), description: "".into() }
///     }
///     fn templates() -> Vec<Template> {
///         vec![Template {
///             id: "saas_new_domain_enrich".into(),
///             name: "Enrich new SaaS domains".into(),
///             description: "Enrich every new domain and add it to a list.".into(),
///             tag: TemplateTag::Beginner,
///             trigger_type: "new_domain".into(),
///             trigger_config: "{}".into(),
///             actions: r#"[{"type":"enrich","config":{"fields":["dns","tech_stack"]}}]"#.into(),
///             conditions: "[]".into(),
///             price_cents: Some(0),
///             industries: vec!["Software".into()],
///         }]
///     }
/// }
/// // outreach_plugin_sdk::export_template_pack!(Pack);
/// assert_eq!(Pack::templates().len(), 1);
/// ```
pub trait TemplatePack {
    /// Pack identity.
    fn metadata() -> PackMetadata;
    /// The templates of the pack.
    fn templates() -> Vec<Template>;
}

/// A [`Template`] from its definition as JSON values (serialised here to
/// the JSON text the WIT record carries): what every pack writes once per
/// template. `price_cents` `None` takes the tag's default price.
#[allow(clippy::too_many_arguments)]
pub fn template(
    id: &str,
    name: &str,
    description: &str,
    tag: TemplateTag,
    trigger_type: &str,
    trigger_config: serde_json::Value,
    conditions: serde_json::Value,
    actions: serde_json::Value,
    price_cents: Option<u32>,
    industries: &[&str],
) -> Template {
    Template {
        id: id.into(),
        name: name.into(),
        description: description.into(),
        tag,
        trigger_type: trigger_type.into(),
        trigger_config: crate::json::to_json(&trigger_config),
        actions: crate::json::to_json(&actions),
        conditions: crate::json::to_json(&conditions),
        price_cents,
        industries: industries.iter().map(|s| s.to_string()).collect(),
    }
}

/// A reply classifier (`reply-classifier` world): labels an inbound reply to
/// a sequence step as one of [`REPLY_LABELS`] with a confidence.
///
/// Classifiers get no network. One that needs a model calls
/// [`crate::ai::complete`], which the host runs on the calling account's AI
/// keys; such a classifier says `uses_ai: true` in its metadata.
///
/// # Example
///
/// ```
/// use outreach_plugin_sdk::prelude::*;
///
/// pub struct Polite;
///
/// impl ReplyClassifier for Polite {
///     fn metadata() -> ClassifierMetadata {
///         ClassifierMetadata {
///             name: "Polite".into(),
///             model: "polite-v1".into(),
///             description: "Says interested when the reply thanks us.".into(),
///             uses_ai: false,
///         }
///     }
///     fn classify(input: &ReplyInput) -> Result<ReplyVerdict, PluginError> {
///         let thanks = input.text.to_lowercase().contains("thank");
///         Ok(ReplyVerdict {
///             label: if thanks { "interested" } else { "other" }.into(),
///             confidence: if thanks { 0.6 } else { 0.3 },
///             model: "polite-v1".into(),
///         })
///     }
/// }
/// // outreach_plugin_sdk::export_reply_classifier!(Polite);
///
/// let input = ReplyInput {
///     headers: vec![],
///     subject: "Re: Hello".into(),
///     text: "Thank you, tell me more".into(),
///     original_subject: Some("Hello".into()),
/// };
/// assert_eq!(Polite::classify(&input).unwrap().label, "interested");
/// ```
pub trait ReplyClassifier {
    /// Name, model (or rules revision), description, and whether it uses AI.
    fn metadata() -> ClassifierMetadata;
    /// Labels one reply. The host refuses a label outside [`REPLY_LABELS`]
    /// and clamps the confidence to 0.0-1.0.
    fn classify(input: &ReplyInput) -> Result<ReplyVerdict, PluginError>;
}

/// The seven reply labels a [`ReplyClassifier`] may answer.
pub const REPLY_LABELS: [&str; 7] = [
    "interested",
    "not_now",
    "objection",
    "ooo",
    "unsubscribe",
    "bounce",
    "other",
];

/// A domain classifier (`domain-classifier` world): names a company's
/// industry, sub-industry and business type from what the enrichment
/// pipeline read on its site.
///
/// The host refuses an industry outside its taxonomy (the industries and
/// sub-industries of `outreach-domain-analysis`), a sub-industry of another
/// industry and a business type outside [`BUSINESS_TYPES`]. Like reply
/// classifiers, domain classifiers get no network: one that needs a model
/// calls [`crate::ai::complete`] and says `uses_ai: true` in its metadata.
///
/// # Example
///
/// ```
/// use outreach_plugin_sdk::prelude::*;
///
/// pub struct Shops;
///
/// impl DomainClassifier for Shops {
///     fn metadata() -> ClassifierMetadata {
///         ClassifierMetadata {
///             name: "Shops".into(),
///             model: "shops-v1".into(),
///             description: "Says retail when the site runs a shop system.".into(),
///             uses_ai: false,
///         }
///     }
///     fn classify(input: &DomainInput) -> Result<DomainVerdict, PluginError> {
///         let shop = input.technologies.iter().any(|(_, cats)| cats.iter().any(|c| c == "Ecommerce"));
///         Ok(DomainVerdict {
///             industry: shop.then(|| "Retail".into()),
///             sub_industry: None,
///             business_type: if shop { "B2C" } else { "unknown" }.into(),
///             confidence: if shop { 0.6 } else { 0.0 },
///             model: "shops-v1".into(),
///         })
///     }
/// }
/// // outreach_plugin_sdk::export_domain_classifier!(Shops);
///
/// let input = DomainInput {
///     domain: "shoes.example".into(),
///     company_name: None,
///     title: None,
///     summary: None,
///     text: String::new(),
///     technologies: vec![("Shopify".into(), vec!["Ecommerce".into()])],
///     sells_subscriptions: false,
/// };
/// assert_eq!(Shops::classify(&input).unwrap().business_type, "B2C");
/// ```
pub trait DomainClassifier {
    /// Name, model (or rules revision), description, and whether it uses AI.
    fn metadata() -> ClassifierMetadata;
    /// Classifies one company domain. The host refuses values outside the
    /// taxonomy and [`BUSINESS_TYPES`], and clamps the confidence to 0.0-1.0.
    fn classify(input: &DomainInput) -> Result<DomainVerdict, PluginError>;
}

/// The seven business types a [`DomainClassifier`] may answer (spec/2).
pub const BUSINESS_TYPES: [&str; 7] = [
    "B2B",
    "B2C",
    "B2B2C",
    "marketplace",
    "non-profit",
    "government",
    "unknown",
];
