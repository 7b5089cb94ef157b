//! The writer's rules: the fields and enums of spec/1, the prompt, and
//! turning the model's answer into `{subject, body_html}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use outreach_core::error::{ApiError, ApiResult};
use outreach_plugin_runtime::{ChatMessage, CompletionRequest, Role};

pub const PURPOSES: [&str; 5] = [
    "cold_outreach",
    "follow_up",
    "re_engagement",
    "partnership",
    "event_invite",
];
pub const TONES: [&str; 4] = ["professional", "casual", "friendly", "urgent"];
pub const LENGTHS: [&str; 3] = ["short", "medium", "long"];
pub const CTA_TYPES: [&str; 4] = ["schedule_call", "reply", "visit_link", "sign_up"];

/// Longest free-text field accepted.
const MAX_TEXT: usize = 2000;

/// The vendor ledger's action type for writer calls.
pub const ACTION_TYPE: &str = "sequence_ai_writer";

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WriterRequest {
    /// cold_outreach, follow_up, re_engagement, partnership, event_invite.
    pub purpose: String,
    /// The sender's brand, for the opener and signature.
    pub company_name: Option<String>,
    /// The recipient's industry.
    pub industry: Option<String>,
    /// A one-line pitch.
    pub product_description: Option<String>,
    /// professional (default), casual, friendly, urgent.
    pub tone: Option<String>,
    /// short, medium (default), long.
    pub length: Option<String>,
    /// Default true.
    pub include_cta: Option<bool>,
    /// schedule_call, reply, visit_link, sign_up.
    pub cta_type: Option<String>,
    /// Appended verbatim to the prompt.
    pub additional_context: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct AiDraft {
    pub subject: String,
    pub body_html: String,
    /// Prompt and completion tokens together.
    pub tokens_used: u32,
    pub model: String,
}

fn one_of(
    field: &str,
    value: Option<&str>,
    allowed: &[&str],
    default: &'static str,
) -> ApiResult<String> {
    let value = value.unwrap_or(default);
    outreach_core::http::extract::one_of(field, value, allowed)?;
    Ok(value.to_owned())
}

fn text(field: &str, value: &Option<String>) -> ApiResult<Option<String>> {
    match value.as_deref().map(str::trim) {
        Some(v) if v.chars().count() > MAX_TEXT => Err(ApiError::bad_request(format!(
            "{field} must be at most {MAX_TEXT} characters"
        ))),
        Some("") | None => Ok(None),
        Some(v) => Ok(Some(v.to_owned())),
    }
}

/// Checks the request and builds the completion request.
pub fn prompt(req: &WriterRequest) -> ApiResult<CompletionRequest> {
    let purpose = one_of("purpose", Some(req.purpose.as_str()), &PURPOSES, "")?;
    let tone = one_of("tone", req.tone.as_deref(), &TONES, "professional")?;
    let length = one_of("length", req.length.as_deref(), &LENGTHS, "medium")?;
    let cta_type = match &req.cta_type {
        Some(c) => Some(one_of("cta_type", Some(c.as_str()), &CTA_TYPES, "")?),
        None => None,
    };
    let company = text("company_name", &req.company_name)?;
    let industry = text("industry", &req.industry)?;
    let product = text("product_description", &req.product_description)?;
    let context = text("additional_context", &req.additional_context)?;
    let words = match length.as_str() {
        "short" => "50-80",
        "long" => "150-220",
        _ => "90-140",
    };
    let mut lines = vec![
        format!("Write a {} B2B email, purpose: {}.", tone, purpose.replace('_', " ")),
        format!("Body length: {words} words."),
        "Address the recipient as {{first_name}}, their company as {{company}} and its website as {{domain}}; \
         write these tokens literally, with the double braces, and never invent names."
            .to_owned(),
    ];
    if let Some(c) = company {
        lines.push(format!(
            "The sender's company is {c}; use it in the opener and the signature."
        ));
    }
    if let Some(i) = industry {
        lines.push(format!("The recipient works in {i}."));
    }
    if let Some(p) = product {
        lines.push(format!("What we offer, in one line: {p}"));
    }
    match (req.include_cta.unwrap_or(true), cta_type) {
        (true, Some(c)) => lines.push(format!(
            "End with one call to action: {}.",
            c.replace('_', " ")
        )),
        (true, None) => lines.push("End with one clear call to action.".to_owned()),
        (false, _) => lines.push("Do not include a call to action.".to_owned()),
    }
    lines.push(
        "Answer with JSON only: {\"subject\": \"...\", \"body_html\": \"...\"}, the body as simple HTML \
         paragraphs (<p>, <br>, <a>), no images, no scripts, a subject under 60 characters."
            .to_owned(),
    );
    if let Some(c) = context {
        lines.push(c);
    }
    Ok(CompletionRequest {
        model: String::new(),
        messages: vec![
            ChatMessage {
                role: Role::System,
                content: "You write concise, personal sales emails that do not read as spam."
                    .to_owned(),
            },
            ChatMessage {
                role: Role::User,
                content: lines.join("\n"),
            },
        ],
        max_tokens: Some(1200),
        temperature: Some(0.7),
        stop: vec![],
        json_mode: true,
    })
}

/// Reads `{subject, body_html}` from the model's answer: the JSON object in
/// it (models wrap JSON in code fences or prose), or else a `Subject:`
/// first line with the rest as the body. `None` when neither is there.
pub fn read_answer(content: &str) -> Option<(String, String)> {
    let from_json = content
        .find('{')
        .zip(content.rfind('}'))
        .and_then(|(a, b)| {
            let v: Value = serde_json::from_str(content.get(a..=b)?).ok()?;
            let subject = v["subject"].as_str()?.trim().to_owned();
            let body = v["body_html"]
                .as_str()
                .or_else(|| v["body"].as_str())?
                .trim()
                .to_owned();
            Some((subject, body))
        });
    if let Some(found) = from_json.filter(|(s, b)| !s.is_empty() && !b.is_empty()) {
        return Some(found);
    }
    let (first, rest) = content.trim().split_once('\n')?;
    let subject = first.trim().strip_prefix("Subject:")?.trim().to_owned();
    let body: String = rest
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| format!("<p>{}</p>", p.replace('\n', "<br>")))
        .collect();
    (!subject.is_empty() && !body.is_empty()).then_some((subject, body))
}
