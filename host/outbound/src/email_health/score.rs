//! The checks of email health and their penalties. The score starts at 100
//! and each check takes off up to its cap; the total is clamped to 0-100.
//!
//! | Check | Penalty |
//! |---|---|
//! | Spam-trigger phrases ([`SPAM_PHRASES`]) | 5 per distinct phrase, at most 30 |
//! | All-caps ratio of letters (subject and text) | over 30 %: 10; over 50 %: 15 |
//! | Exclamation marks | any in the subject: 5; more than 3 in the body: 5, more than 6: 10 |
//! | Links | more than 3: 5 per extra link, at most 15; over 5 links per 100 words: 10 |
//! | Images | no text besides images: 20; fewer than 50 words per image: 10 |
//! | Subject length | empty: 20; under 10 or over 60 characters: 5 |
//! | Unsubscribe | 3 or more links and no unsubscribe link or text: 10 |

use scraper::{Html, Selector};
use serde::Serialize;
use utoipa::ToSchema;

/// Phrases spam filters weigh, matched case-insensitively on word
/// boundaries in the subject and the body text. Drawn from the public
/// SpamAssassin rule descriptions and common deliverability checklists.
pub const SPAM_PHRASES: [&str; 40] = [
    "100% free",
    "act now",
    "additional income",
    "all natural",
    "apply now",
    "as seen on",
    "buy now",
    "call now",
    "cash bonus",
    "click here",
    "click below",
    "congratulations",
    "double your",
    "earn money",
    "extra cash",
    "free gift",
    "free money",
    "free trial",
    "get paid",
    "guaranteed",
    "incredible deal",
    "limited time",
    "lowest price",
    "make money",
    "miracle",
    "no catch",
    "no cost",
    "no obligation",
    "once in a lifetime",
    "order now",
    "risk-free",
    "risk free",
    "special promotion",
    "this is not spam",
    "urgent",
    "winner",
    "you have been selected",
    "100% satisfied",
    "fast cash",
    "$$$",
];

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct EmailHealth {
    /// 0-100; higher is healthier.
    pub score: u32,
    pub parts: HealthParts,
    /// What lowered the score, with what to do about it.
    pub findings: Vec<HealthFinding>,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct HealthParts {
    pub spam_triggers: SpamTriggerCheck,
    pub caps: CapsRatio,
    pub exclamation_marks: ExclamationCheck,
    pub links: LinkCheck,
    pub images: ImageCheck,
    pub subject_length: SubjectLengthCheck,
    pub unsubscribe: UnsubscribeCheck,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct SpamTriggerCheck {
    pub found: Vec<String>,
    pub penalty: u32,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct CapsRatio {
    /// Upper-case letters over all letters, 0-1, two decimals.
    pub ratio: f64,
    pub penalty: u32,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct ExclamationCheck {
    pub in_subject: u32,
    pub in_body: u32,
    pub penalty: u32,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct LinkCheck {
    pub count: u32,
    /// LinkCheck per 100 words of text, one decimal.
    pub per_100_words: f64,
    pub penalty: u32,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct ImageCheck {
    pub count: u32,
    pub words: u32,
    pub penalty: u32,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct SubjectLengthCheck {
    pub characters: u32,
    pub penalty: u32,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct UnsubscribeCheck {
    pub present: bool,
    pub penalty: u32,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct HealthFinding {
    /// The part: spam_triggers, caps, exclamation_marks, links, images,
    /// subject_length, unsubscribe.
    pub check: String,
    pub penalty: u32,
    pub message: String,
    pub suggestion: String,
}

/// The words of a text (runs of letters, digits, apostrophes).
fn word_count(text: &str) -> u32 {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .count() as u32
}

/// Whether `phrase` occurs in `text` (both lowercase) with no letter or
/// digit right before or after it.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
    text.match_indices(phrase).any(|(i, _)| {
        edge(text[..i].chars().next_back()) && edge(text[i + phrase.len()..].chars().next())
    })
}

/// Scores a subject and HTML body.
pub fn assess(subject: &str, body_html: &str) -> EmailHealth {
    let doc = Html::parse_fragment(body_html);
    let sel = |s: &str| Selector::parse(s).expect("static selector");
    let text: String = doc
        .root_element()
        .descendants()
        .filter_map(|n| n.value().as_text().map(|t| t.to_string()))
        .filter(|t| !t.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let links: Vec<String> = doc
        .select(&sel("a[href]"))
        .map(|a| {
            let href = a.value().attr("href").unwrap_or("");
            format!("{href} {}", a.text().collect::<String>()).to_lowercase()
        })
        .collect();
    let image_count = doc.select(&sel("img")).count() as u32;
    let words = word_count(&text);
    let mut findings = Vec::new();
    let mut finding = |check: &str, penalty: u32, message: String, suggestion: &str| {
        if penalty > 0 {
            findings.push(HealthFinding {
                check: check.to_owned(),
                penalty,
                message,
                suggestion: suggestion.to_owned(),
            });
        }
        penalty
    };

    let haystack = format!("{} {}", subject.to_lowercase(), text.to_lowercase());
    let found: Vec<String> = SPAM_PHRASES
        .iter()
        .filter(|p| contains_phrase(&haystack, p))
        .map(|p| p.to_string())
        .collect();
    let penalty = (found.len() as u32 * 5).min(30);
    let spam_penalty = finding(
        "spam_triggers",
        penalty,
        format!("Spam-trigger phrases: {}", found.join(", ")),
        "Rephrase these in plain, specific language.",
    );

    let letters: Vec<char> = subject
        .chars()
        .chain(text.chars())
        .filter(|c| c.is_alphabetic())
        .collect();
    let upper = letters.iter().filter(|c| c.is_uppercase()).count();
    let ratio = if letters.is_empty() {
        0.0
    } else {
        upper as f64 / letters.len() as f64
    };
    let penalty = if ratio > 0.5 {
        15
    } else if ratio > 0.3 {
        10
    } else {
        0
    };
    let caps_penalty = finding(
        "caps",
        penalty,
        format!("{:.0} % of letters are capitals", ratio * 100.0),
        "Write in sentence case; capitals read as shouting and trip filters.",
    );

    let in_subject = subject.matches('!').count() as u32;
    let in_body = text.matches('!').count() as u32;
    let penalty = if in_subject > 0 { 5 } else { 0 }
        + if in_body > 6 {
            10
        } else if in_body > 3 {
            5
        } else {
            0
        };
    let excl_penalty = finding(
        "exclamation_marks",
        penalty,
        format!("{in_subject} exclamation mark(s) in the subject, {in_body} in the body"),
        "Drop exclamation marks from the subject and keep the body to one or two.",
    );

    let link_count = links.len() as u32;
    let per_100 = if words == 0 {
        link_count as f64 * 100.0
    } else {
        link_count as f64 * 100.0 / words as f64
    };
    let per_100 = (per_100 * 10.0).round() / 10.0;
    let penalty = (link_count.saturating_sub(3) * 5).min(15)
        + if link_count > 0 && per_100 > 5.0 {
            10
        } else {
            0
        };
    let links_penalty = finding(
        "links",
        penalty,
        format!("{link_count} link(s), {per_100} per 100 words"),
        "Keep cold emails to one or two links, surrounded by text.",
    );

    let penalty = if image_count > 0 && words == 0 {
        20
    } else if image_count > 0 && words / image_count < 50 {
        10
    } else {
        0
    };
    let images_penalty = finding(
        "images",
        penalty,
        format!("{image_count} image(s) for {words} words"),
        "Add text: at least 50 words per image, and never an image-only email.",
    );

    let characters = subject.trim().chars().count() as u32;
    let penalty = match characters {
        0 => 20,
        1..=9 => 5,
        10..=60 => 0,
        _ => 5,
    };
    let subject_penalty = finding(
        "subject_length",
        penalty,
        format!("The subject has {characters} characters"),
        "Use a subject of 10-60 characters.",
    );

    let present = links.iter().any(|l| l.contains("unsubscribe"))
        || haystack.contains("unsubscribe")
        || body_html.contains("{{unsubscribe");
    let penalty = if link_count >= 3 && !present { 10 } else { 0 };
    let unsub_penalty = finding(
        "unsubscribe",
        penalty,
        "Several links and no way to unsubscribe".to_owned(),
        "Add an unsubscribe link (or enable_unsubscribe on the sequence).",
    );

    let total = spam_penalty
        + caps_penalty
        + excl_penalty
        + links_penalty
        + images_penalty
        + subject_penalty
        + unsub_penalty;
    EmailHealth {
        score: 100u32.saturating_sub(total),
        parts: HealthParts {
            spam_triggers: SpamTriggerCheck {
                found,
                penalty: spam_penalty,
            },
            caps: CapsRatio {
                ratio: (ratio * 100.0).round() / 100.0,
                penalty: caps_penalty,
            },
            exclamation_marks: ExclamationCheck {
                in_subject,
                in_body,
                penalty: excl_penalty,
            },
            links: LinkCheck {
                count: link_count,
                per_100_words: per_100,
                penalty: links_penalty,
            },
            images: ImageCheck {
                count: image_count,
                words,
                penalty: images_penalty,
            },
            subject_length: SubjectLengthCheck {
                characters,
                penalty: subject_penalty,
            },
            unsubscribe: UnsubscribeCheck {
                present,
                penalty: unsub_penalty,
            },
        },
        findings,
    }
}
