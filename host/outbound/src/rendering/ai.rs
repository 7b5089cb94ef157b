//! `{{ai_write: instruction}}`: one completion per distinct instruction on
//! the account's AI keys (the `Vendors` chain, action type
//! `sequence_ai_write`), in the style of the AI writer (`ai_writer/draft.rs`).
//!
//! Rendering never fails because of AI: no key, every vendor failing or an
//! empty answer leaves the token literal, and the preview lists it as
//! missing. That is logged, since a sequence sending literal `{{ai_write}}`
//! text is worth an operator's attention.

use std::collections::HashMap;

use outreach_core::error::ApiError;
use outreach_core::state::AppState;
use outreach_plugin_runtime::{ChatMessage, CompletionRequest, Role};
use outreach_vendors::vendor_keys::service::NO_AI_KEY;
use outreach_vendors::{Actor, VendorsExt};

/// The vendor ledger's action type for `{{ai_write}}` passages (usage
/// reports show them apart from the AI writer's `sequence_ai_writer`).
pub const ACTION_TYPE: &str = "sequence_ai_write";

/// Most distinct instructions completed per render (subject and body
/// together); later ones stay literal. Each is a paid call on the
/// customer's key for every email sent, so a template cannot multiply that
/// cost without bound.
pub const MAX_AI_WRITES: usize = 5;

/// Longest instruction sent, in characters; longer ones stay literal, for
/// the same reason.
pub const MAX_INSTRUCTION_CHARS: usize = 1000;

/// What the model is told about the recipient, each only when known.
#[derive(Debug, Clone, Default)]
pub struct Recipient {
    pub first_name: Option<String>,
    pub company: Option<String>,
    pub domain: Option<String>,
}

/// The completion request for one instruction.
pub fn prompt(instruction: &str, recipient: &Recipient) -> CompletionRequest {
    let known: Vec<String> = [
        ("first name", &recipient.first_name),
        ("company", &recipient.company),
        ("company website", &recipient.domain),
    ]
    .into_iter()
    .filter_map(|(label, v)| v.as_ref().map(|v| format!("{label}: {v}")))
    .collect();
    let about = if known.is_empty() {
        "Nothing is known about the recipient.".to_owned()
    } else {
        format!("The recipient: {}.", known.join("; "))
    };
    CompletionRequest {
        model: String::new(),
        messages: vec![
            ChatMessage {
                role: Role::System,
                content: "You write one short passage of a personal B2B sales email. Answer with \
                          the passage only: plain text, no HTML or markdown, no quotes around it, \
                          no greeting or sign-off unless asked, and never invent facts about the \
                          recipient."
                    .to_owned(),
            },
            ChatMessage {
                role: Role::User,
                content: format!("{about}\nWrite: {instruction}"),
            },
        ],
        max_tokens: Some(300),
        temperature: Some(0.7),
        stop: vec![],
        json_mode: false,
    }
}

/// The passage in a model's answer: trimmed, without a code fence or
/// quotes wrapped around the whole of it. `None` when nothing is left.
pub fn read_answer(content: &str) -> Option<String> {
    let mut s = content.trim();
    if let Some(inner) = s.strip_prefix("```").and_then(|r| r.strip_suffix("```")) {
        // A fence may name a language on its first line.
        s = inner.split_once('\n').map_or(inner, |(first, rest)| {
            if first.trim().chars().all(|c| c.is_ascii_alphanumeric()) {
                rest
            } else {
                inner
            }
        });
        s = s.trim();
    }
    for (open, close) in [('"', '"'), ('\u{201c}', '\u{201d}'), ('\'', '\'')] {
        if let Some(inner) = s.strip_prefix(open).and_then(|r| r.strip_suffix(close))
            && !inner.contains(close)
        {
            s = inner.trim();
        }
    }
    (!s.is_empty()).then(|| s.to_owned())
}

/// Completes each instruction concurrently and returns the passages that
/// came back, keyed by instruction. Failures are logged and left out.
pub async fn write_all(
    state: &AppState,
    actor: &Actor,
    instructions: Vec<String>,
    recipient: &Recipient,
) -> HashMap<String, String> {
    let mut tasks = tokio::task::JoinSet::new();
    for instruction in instructions {
        let request = prompt(&instruction, recipient);
        let (state, actor) = (state.clone(), actor.clone());
        tasks.spawn(async move {
            let answer = state.vendors().complete(&actor, ACTION_TYPE, request).await;
            (instruction, answer)
        });
    }
    let mut written = HashMap::new();
    while let Some(joined) = tasks.join_next().await {
        let Ok((instruction, answer)) = joined else {
            continue;
        };
        match answer {
            Ok(done) => match read_answer(&done.completion.content) {
                Some(passage) => {
                    written.insert(instruction, passage);
                }
                None => tracing::warn!(
                    account_id = actor.account_id,
                    provider = %done.provider,
                    "ai_write answer was empty; token left literal"
                ),
            },
            Err(ApiError::BadRequest(m)) if m == NO_AI_KEY => tracing::debug!(
                account_id = actor.account_id,
                "no AI key for ai_write; token left literal"
            ),
            Err(e) => tracing::warn!(
                account_id = actor.account_id,
                error = %e,
                "ai_write failed on every AI key; token left literal"
            ),
        }
    }
    written
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn prompt_names_only_what_is_known() {
        let r = Recipient {
            first_name: Some("Ann".into()),
            company: None,
            domain: Some("acme.com".into()),
        };
        let req = prompt("one line on their hiring", &r);
        let user = &req.messages[1].content;
        assert_eq!(
            user,
            "The recipient: first name: Ann; company website: acme.com.\nWrite: one line on their hiring"
        );
        assert!(!req.json_mode && req.model.is_empty());
        let none = prompt("x", &Recipient::default());
        assert!(none.messages[1].content.starts_with("Nothing is known"));
    }

    #[test]
    fn answers_lose_fences_and_quotes() {
        assert_eq!(
            read_answer("  Loved your post.  ").as_deref(),
            Some("Loved your post.")
        );
        assert_eq!(read_answer("\"Loved it.\"").as_deref(), Some("Loved it."));
        assert_eq!(
            read_answer("\u{201c}Loved it.\u{201d}").as_deref(),
            Some("Loved it.")
        );
        assert_eq!(
            read_answer("```text\nLoved it.\n```").as_deref(),
            Some("Loved it.")
        );
        assert_eq!(read_answer("```Loved it.```").as_deref(), Some("Loved it."));
        // Quotes inside the passage are the model's words, kept.
        assert_eq!(
            read_answer("\"Fast\" is their motto, and \"fun\"").as_deref(),
            Some("\"Fast\" is their motto, and \"fun\"")
        );
        assert_eq!(read_answer(" \"\" "), None);
        assert_eq!(read_answer("   "), None);
    }
}
