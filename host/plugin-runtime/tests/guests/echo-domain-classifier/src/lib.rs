//! Test fixture (`domain-classifier`): returns whatever the host's AI
//! answers, unchecked, so the runtime's own verdict checks can be tested
//! with any output a plugin might give.
//!
//! The answer's content is `industry|sub-industry|business type|confidence|model`;
//! an empty industry or sub-industry is none, a confidence that does not
//! parse (`NaN` does) is 0.5.

use outreach_plugin_sdk::prelude::*;

pub struct Echo;

impl DomainClassifier for Echo {
    fn metadata() -> ClassifierMetadata {
        ClassifierMetadata {
            name: "Echo".into(),
            model: "echo-domain-v0".into(),
            description: "Test fixture: echoes the AI's answer as the verdict.".into(),
            uses_ai: true,
        }
    }

    fn classify(input: &DomainInput) -> Result<DomainVerdict, PluginError> {
        let request = CompletionRequest {
            model: String::new(),
            messages: vec![ChatMessage {
                role: Role::User,
                // The host caps the text; the test reads back what arrived.
                content: format!("{}|{}", input.domain, input.text.len()),
            }],
            max_tokens: Some(10),
            temperature: Some(0.0),
            stop: vec![],
            json_mode: false,
        };
        let answer = ai::complete(&request)?.content;
        let mut parts = answer.splitn(5, '|').map(str::to_string);
        let mut next = || parts.next().unwrap_or_default();
        let some = |s: String| (!s.is_empty()).then_some(s);
        let industry = some(next());
        let sub_industry = some(next());
        let business_type = next();
        let confidence = next().parse::<f64>().unwrap_or(0.5);
        let model = next();
        Ok(DomainVerdict {
            industry,
            sub_industry,
            business_type,
            confidence,
            model,
        })
    }
}

outreach_plugin_sdk::export_domain_classifier!(Echo);
