//! What a pool message says and how it is marked: the sending mailbox's
//! persona, the text (from the `warmup_pool_generator` action on the
//! account's AI key, else from the phrase bank), the per-message token and
//! the MIME message.
//!
//! Every message carries its token twice: in the marker header
//! `X-Outreach-Warmup` and on a `ref:` line at the end of the body, so a
//! recipient whose server strips unknown headers still recognises it. A
//! token is `wu-` and 20 hex digits; only tokens of messages this server
//! sent count (the store is asked), so mail that merely looks like one is
//! never taken for pool mail.

use std::sync::LazyLock;
use std::time::SystemTime;

use lettre::Message;
use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Mailbox, Mailboxes};
use rand::Rng;
use regex::bytes::Regex;
use sha2::{Digest, Sha256};

use super::phrases::*;
use outreach_core::state::AppState;
use outreach_plugin_runtime::{ChatMessage, CompletionRequest, Role};
use outreach_vendors::{Actor, VendorsExt};

/// The vendor ledger's action type of pool messages (spec/3).
pub const ACTION_TYPE: &str = "warmup_pool_generator";

/// The marker header; its value is the message's token.
pub const MARKER_HEADER: &str = "X-Outreach-Warmup";

static TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bwu-[0-9a-f]{20}\b").expect("token pattern"));

/// The writing persona of a mailbox (spec/3's `persona`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persona {
    pub name: String,
    pub tone: String,
    pub industry_context: String,
}

/// A stable number of `text`, for choices that must not change between
/// calls (a persona) or between servers (whether a message is answered).
pub fn stable_hash(text: &str) -> u64 {
    let digest = Sha256::digest(text.as_bytes());
    u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"))
}

/// A number in 0.0-1.0 stable for `token` and `what`.
pub fn chance(token: &str, what: &str) -> f64 {
    (stable_hash(&format!("{what}:{token}")) >> 11) as f64 / (1u64 << 53) as f64
}

/// The persona of a mailbox: its display name's first word (else the
/// address's local part, else a name of the bank), and a tone and an
/// industry chosen by its address.
pub fn persona(email: &str, display_name: Option<&str>) -> Persona {
    let h = stable_hash(email);
    let from_display = display_name
        .and_then(|n| n.split_whitespace().next())
        .filter(|n| n.chars().all(char::is_alphabetic));
    let from_local = email
        .split('@')
        .next()
        .and_then(|l| l.split(['.', '_', '-', '+']).next())
        .filter(|l| l.len() >= 2 && l.chars().all(|c| c.is_ascii_alphabetic()))
        .map(capitalised);
    let name = from_display
        .map(str::to_owned)
        .or(from_local)
        .unwrap_or_else(|| FIRST_NAMES[(h % FIRST_NAMES.len() as u64) as usize].to_owned());
    Persona {
        name,
        tone: TONES[((h >> 16) % TONES.len() as u64) as usize].to_owned(),
        industry_context: INDUSTRIES[((h >> 32) % INDUSTRIES.len() as u64) as usize].to_owned(),
    }
}

fn capitalised(word: &str) -> String {
    let mut c = word.chars();
    match c.next() {
        Some(first) => first
            .to_uppercase()
            .chain(c.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

/// A fresh message token.
pub fn new_token() -> String {
    format!("wu-{}", &uuid::Uuid::new_v4().simple().to_string()[..20])
}

/// The tokens in a raw message (header or body), in order of appearance.
pub fn tokens_in(raw: &[u8]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for m in TOKEN.find_iter(raw) {
        let t = String::from_utf8_lossy(m.as_bytes()).into_owned();
        if !found.contains(&t) {
            found.push(t);
        }
    }
    found
}

/// The message a reply answers.
#[derive(Debug, Clone)]
pub struct Parent {
    pub subject: String,
    pub body: String,
    pub from_name: String,
    pub sent_at: i64,
}

/// A written message, before it is marked and sent.
#[derive(Debug, Clone)]
pub struct Draft {
    pub subject: String,
    /// The text without the `ref:` line.
    pub body: String,
    /// `ai` or `phrase_bank`.
    pub source: &'static str,
    pub ai_tokens: i64,
    pub ai_cost_usd: f64,
}

impl Draft {
    /// The hash the store keeps unique per pool day.
    pub fn text_hash(&self) -> String {
        hex::encode(Sha256::digest(format!("{}\n{}", self.subject, self.body)))
    }
}

fn pick<'a>(rng: &mut impl Rng, list: &[&'a str]) -> &'a str {
    list[rng.random_range(0..list.len())]
}

fn fill(template: &str, topic: &str, persona: &Persona, name: &str) -> String {
    template
        .replace("{Topic}", &capitalised_first(topic))
        .replace("{topic}", topic)
        .replace("{industry}", &persona.industry_context)
        .replace("{name}", name)
}

fn capitalised_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A message from the phrase bank: a new thread about a topic, or a reply
/// to `parent` quoting it.
pub fn from_bank(
    rng: &mut impl Rng,
    persona: &Persona,
    recipient_name: &str,
    parent: Option<&Parent>,
) -> Draft {
    let topic = pick(rng, TOPICS);
    let f = |t: &str| fill(t, topic, persona, recipient_name);
    let greeting = f(pick(rng, GREETINGS));
    let (subject, middle) = match parent {
        None => (
            f(pick(rng, SUBJECT_FORMS)),
            format!(
                "{} {} {}",
                f(pick(rng, OPENERS)),
                f(pick(rng, MIDDLES)),
                f(pick(rng, QUESTIONS))
            ),
        ),
        Some(p) => (
            reply_subject(&p.subject),
            format!(
                "{} {} {}",
                f(pick(rng, REPLY_OPENERS)),
                f(pick(rng, REPLY_BODIES)),
                f(pick(rng, QUESTIONS))
            ),
        ),
    };
    let body = format!(
        "{greeting}\n\n{middle}\n\n{}\n\n{}\n{}",
        f(pick(rng, CLOSINGS)),
        pick(rng, SIGNOFFS),
        persona.name
    );
    Draft {
        subject,
        body,
        source: "phrase_bank",
        ai_tokens: 0,
        ai_cost_usd: 0.0,
    }
}

fn reply_subject(subject: &str) -> String {
    if subject.to_ascii_lowercase().starts_with("re:") {
        subject.to_owned()
    } else {
        format!("Re: {subject}")
    }
}

/// A message written by the sending account's AI keys, or `None` when it
/// has none or they all failed (the caller falls back to the bank).
pub async fn from_ai(
    state: &AppState,
    actor: &Actor,
    persona: &Persona,
    recipient_name: &str,
    parent: Option<&Parent>,
) -> Option<Draft> {
    let task = match parent {
        None => format!(
            "Write a new email to {recipient_name}, a colleague, about an everyday work topic \
             in {} of your choosing.",
            persona.industry_context
        ),
        Some(p) => format!(
            "Reply to this email from {}:\nSubject: {}\n\n{}",
            p.from_name, p.subject, p.body
        ),
    };
    let request = CompletionRequest {
        model: String::new(),
        messages: vec![
            ChatMessage {
                role: Role::System,
                content: format!(
                    "You are {}, who works in {} and writes in a {} tone. You write short, \
                     natural emails between colleagues: 40 to 120 words, plain text, no links, \
                     no promotional language, no placeholders. Answer with the first line \
                     'Subject: <subject>', an empty line, then the body signed {}.",
                    persona.name, persona.industry_context, persona.tone, persona.name
                ),
            },
            ChatMessage {
                role: Role::User,
                content: task,
            },
        ],
        max_tokens: Some(400),
        temperature: Some(0.9),
        stop: vec![],
        json_mode: false,
    };
    let answer = match state.vendors().complete(actor, ACTION_TYPE, request).await {
        Ok(a) => a,
        Err(e) => {
            tracing::debug!(error = %e, "writing a pool message with AI failed; using the phrase bank");
            return None;
        }
    };
    let (subject, body) = read_answer(&answer.completion.content)?;
    Some(Draft {
        subject: match parent {
            Some(p) => reply_subject(&p.subject),
            None => subject,
        },
        body,
        source: "ai",
        ai_tokens: i64::from(answer.completion.prompt_tokens + answer.completion.completion_tokens),
        ai_cost_usd: answer.cost_estimate_usd,
    })
}

/// Reads `Subject: ...`, an empty line and the body; tokens of ours in the
/// answer are removed so a model cannot make a message look like another.
fn read_answer(content: &str) -> Option<(String, String)> {
    let content = content.trim().replace("\r\n", "\n");
    let (first, rest) = content.split_once('\n')?;
    let subject = first
        .trim()
        .strip_prefix("Subject:")
        .or_else(|| first.trim().strip_prefix("subject:"))?
        .trim();
    let body = TOKEN.replace_all(rest.trim().as_bytes(), &b""[..]);
    let body = String::from_utf8_lossy(&body).trim().to_owned();
    let subject: String = subject
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    (!subject.is_empty() && !body.is_empty()).then(|| (subject, body.chars().take(4000).collect()))
}

/// The addresses and thread headers of one message.
pub struct Envelope<'a> {
    pub from_email: &'a str,
    pub from_name: &'a str,
    pub to_email: &'a str,
    pub to_name: &'a str,
    pub message_id: &'a str,
    /// The Message-IDs of the thread so far, oldest first (empty for a new
    /// thread); the last is the one answered.
    pub references: &'a [String],
}

/// The body as sent: the text, the quoted parent of a reply, and the
/// `ref:` line with the token.
pub fn body_as_sent(draft: &Draft, token: &str, parent: Option<&Parent>) -> String {
    let mut body = draft.body.clone();
    body.push_str(&format!("\n\nref: {token}\n"));
    if let Some(p) = parent {
        let date = chrono::DateTime::from_timestamp_millis(p.sent_at)
            .unwrap_or_default()
            .format("%a, %-d %b %Y at %H:%M");
        body.push_str(&format!("\nOn {date}, {} wrote:\n", p.from_name));
        for line in p.body.lines() {
            body.push_str(&format!("> {line}\n"));
        }
    }
    body
}

/// The MIME message: plain text, the marker header, threaded by
/// `In-Reply-To` and `References` when it answers.
pub fn compose(
    e: &Envelope<'_>,
    subject: &str,
    body: String,
    token: &str,
) -> Result<Message, String> {
    let from = Mailbox::new(
        Some(e.from_name.to_owned()),
        e.from_email
            .parse()
            .map_err(|err| format!("from address {:?}: {err}", e.from_email))?,
    );
    let to = Mailbox::new(
        Some(e.to_name.to_owned()),
        e.to_email
            .parse()
            .map_err(|err| format!("recipient address {:?}: {err}", e.to_email))?,
    );
    let mut builder = Message::builder()
        .from(from)
        .mailbox(lettre::message::header::To::from(Mailboxes::from(to)))
        .subject(subject)
        .date(SystemTime::now())
        .message_id(Some(format!("<{}>", e.message_id)))
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str(MARKER_HEADER),
            token.to_owned(),
        ));
    if let Some(last) = e.references.last() {
        builder = builder.in_reply_to(format!("<{last}>")).references(
            e.references
                .iter()
                .map(|r| format!("<{r}>"))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    builder
        .header(ContentType::TEXT_PLAIN)
        .body(body)
        .map_err(|err| format!("composing the message failed: {err}"))
}

#[cfg(test)]
mod unit {
    use super::*;
    use rand::SeedableRng;
    use std::collections::HashSet;

    #[test]
    fn personas_are_stable_and_named_from_the_mailbox() {
        let a = persona("jane.doe@acme.test", None);
        assert_eq!(a, persona("jane.doe@acme.test", None));
        assert_eq!(a.name, "Jane");
        assert_eq!(persona("x1@acme.test", Some("Priya Patel")).name, "Priya");
        assert!(FIRST_NAMES.contains(&persona("42@acme.test", None).name.as_str()));
        assert!(
            TONES.contains(&a.tone.as_str()) && INDUSTRIES.contains(&a.industry_context.as_str())
        );
    }

    #[test]
    fn tokens_are_found_in_headers_and_bodies_only_in_their_shape() {
        let t = new_token();
        assert_eq!(t.len(), 23);
        let raw = format!(
            "X-Outreach-Warmup: {t}\r\n\r\nHello\r\nref: {t}\r\nwu-123 wu-{}",
            "g".repeat(20)
        );
        assert_eq!(tokens_in(raw.as_bytes()), vec![t]);
    }

    #[test]
    fn a_pool_day_of_bank_messages_rarely_repeats_a_text() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let p = persona("sam@acme.test", None);
        let mut seen = HashSet::new();
        let mut repeats = 0;
        for _ in 0..40_000 {
            if !seen.insert(from_bank(&mut rng, &p, "Alex", None).text_hash()) {
                repeats += 1;
            }
        }
        // The store's unique index turns each repeat into a second draw.
        assert!(repeats < 40, "{repeats} repeats in 40,000");
    }

    #[test]
    fn ai_answers_are_read_and_cleaned() {
        let (s, b) = read_answer(
            "Subject: Lunch plans\n\nHi Alex,\nref: wu-0123456789abcdef0123 see you.\nSam",
        )
        .unwrap();
        assert_eq!(s, "Lunch plans");
        assert!(!b.contains("wu-"), "{b}");
        assert!(read_answer("no subject line\n\nbody").is_none());
    }

    #[test]
    fn replies_thread_and_quote_their_parent() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let p = persona("sam@acme.test", None);
        let parent = Parent {
            subject: "About the webinar".into(),
            body: "Hi Sam,\n\nQuick one.".into(),
            from_name: "Alex".into(),
            sent_at: 1_795_262_400_000,
        };
        let d = from_bank(&mut rng, &p, "Alex", Some(&parent));
        assert_eq!(d.subject, "Re: About the webinar");
        let body = body_as_sent(&d, "wu-0123456789abcdef0123", Some(&parent));
        assert!(body.contains("ref: wu-0123456789abcdef0123\n\nOn Sat, 21 Nov 2026 at 12:00, Alex wrote:\n> Hi Sam,"), "{body}");
        let refs = vec!["a@x".to_owned(), "b@x".to_owned()];
        let m = compose(
            &Envelope {
                from_email: "sam@acme.test",
                from_name: "Sam",
                to_email: "alex@b.test",
                to_name: "Alex",
                message_id: "c@x",
                references: &refs,
            },
            &d.subject,
            body,
            "wu-0123456789abcdef0123",
        )
        .unwrap();
        let text = String::from_utf8(m.formatted()).unwrap();
        assert!(text.contains("In-Reply-To: <b@x>"), "{text}");
        assert!(text.contains("References: <a@x> <b@x>"), "{text}");
        assert!(
            text.contains("X-Outreach-Warmup: wu-0123456789abcdef0123"),
            "{text}"
        );
    }
}
