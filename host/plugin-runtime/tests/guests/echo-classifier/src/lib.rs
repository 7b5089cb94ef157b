//! Test fixture (`reply-classifier`): returns whatever the host's AI answers,
//! unchecked, so the runtime's own verdict checks and the `ai` import's
//! limits can be tested.
//!
//! The reply's subject says how many completions to ask for (`calls:N`,
//! default 1); the last answer's content is `label|confidence|model`.

use outreach_plugin_sdk::prelude::*;

pub struct Echo;

impl ReplyClassifier for Echo {
    fn metadata() -> ClassifierMetadata {
        ClassifierMetadata {
            name: "Echo".into(),
            model: "echo-v0".into(),
            description: "Test fixture: echoes the AI's answer as the verdict.".into(),
            uses_ai: true,
        }
    }

    fn classify(input: &ReplyInput) -> Result<ReplyVerdict, PluginError> {
        let calls: usize = input
            .subject
            .strip_prefix("calls:")
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(1);
        let request = CompletionRequest {
            model: String::new(),
            messages: vec![ChatMessage {
                role: Role::User,
                content: input.text.clone(),
            }],
            max_tokens: Some(10),
            temperature: Some(0.0),
            stop: vec![],
            json_mode: false,
        };
        let mut answer = String::new();
        for _ in 0..calls {
            answer = ai::complete(&request)?.content;
        }
        let mut parts = answer.splitn(3, '|');
        let label = parts.next().unwrap_or_default().to_string();
        let confidence = parts
            .next()
            .and_then(|c| c.parse::<f64>().ok())
            .unwrap_or(0.5);
        let model = parts.next().unwrap_or_default().to_string();
        Ok(ReplyVerdict {
            label,
            confidence,
            model,
        })
    }
}

outreach_plugin_sdk::export_reply_classifier!(Echo);
