//! The rules reply classifier: headers, DSN structure and multilingual phrase
//! lists, no model. It is always available (no AI key needed) and the first-party
//! WebAssembly `reply-classifier` plugin wraps exactly [`classify`].
//!
//! Decision order: bounce (daemon sender, bounce subject, DSN wording, a
//! delivery-status report) and complaint reports (as `unsubscribe`); an
//! unsubscribe request; out of office (auto-reply headers with out-of-office
//! wording or subject; auto-replies that are not out-of-office, such as ticket
//! acknowledgements, are `other`); then timing ("not now"), pushback
//! (objection), referral or confusion (other), interest; else `other`.

use crate::coded::{Coded, phrase};
use crate::util::{self, fold};
use crate::{autoreply, families, lexicon, mta, phrases};

/// What the classifier sees of a reply: the same fields the `reply-classifier` WIT
/// world passes, so the host and the plugin classify alike.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The reply's top-level headers, decoded (as in [`crate::Parsed::headers`]).
    pub headers: &'a [(String, String)],
    /// The reply's subject.
    pub subject: &'a str,
    /// The new text of the reply ([`crate::Parsed::body_text`]).
    pub text: &'a str,
    /// The subject of the step the reply answers, when known (context for models;
    /// the rules only use it to ignore the sender's own subject line).
    pub original_subject: Option<&'a str>,
}

/// One of the seven labels with a confidence, so the worker can apply the label's
/// effect and show how sure the classifier was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// One of [`LABELS`].
    pub label: &'static str,
    /// 0.0-1.0; fixed per rule (these are rules, not probabilities). 1.0 is
    /// reserved for manual overrides.
    pub confidence: f64,
}

/// The model name recorded with each classification, saying it is the rules
/// classifier (and which revision of the rules), so stored labels can be traced.
pub const MODEL: &str = "rules-v1";

/// The seven classifications of spec/1, so callers can validate labels.
pub const LABELS: [&str; 7] = [
    "interested",
    "not_now",
    "objection",
    "ooo",
    "unsubscribe",
    "bounce",
    "other",
];

fn verdict(label: &'static str, confidence: f64) -> Verdict {
    Verdict { label, confidence }
}

/// Classifies a reply into one of the seven labels; pure and deterministic, so a
/// reclassification gives the same answer for the same input.
pub fn classify(input: &Input<'_>) -> Verdict {
    let headers = input.headers;
    let from = util::header(headers, "From").unwrap_or("");
    let content_type = util::header(headers, "Content-Type")
        .unwrap_or("")
        .to_ascii_lowercase();
    let text = util::truncate(input.text, 64 * 1024);

    if content_type.contains("feedback-report") {
        return verdict("unsubscribe", 0.95);
    }
    let sig = mta::signals(from, input.subject, text, headers);
    if content_type.contains("delivery-status") || sig.is_bounce() {
        return verdict(
            "bounce",
            if sig.strong > 0 || sig.daemon {
                0.95
            } else {
                0.85
            },
        );
    }

    let t = fold(text);
    // A reply with no text of its own is judged by its subject, unless the subject
    // is just ours with a prefix.
    let own_subject = input
        .original_subject
        .is_some_and(|o| crate::normalise_subject(o) == crate::normalise_subject(input.subject));
    let t = if util::has_words(&t) || own_subject {
        t
    } else {
        fold(input.subject)
    };

    let coded = Coded::from_folded(&t);
    if phrases::unsubscribe_request(&t, &coded) {
        return verdict("unsubscribe", 0.9);
    }
    let auto = autoreply::auto_header(headers);
    if phrases::out_of_office(&coded) || autoreply::ooo_subject(input.subject) {
        return verdict("ooo", if auto { 0.95 } else { 0.8 });
    }
    if auto {
        // An automatic answer naming a date or an absence word is out of office;
        // others (ticket receipts, "mailbox not monitored") are not a person's reply.
        let away = crate::dates::return_date(&t, None).is_some()
            || phrase!(r"\b(until|till|return|returning|bis|jusqu|hasta|fino|tot|até)\b")
                .is_match(&coded);
        return if away {
            verdict("ooo", 0.7)
        } else {
            verdict("other", 0.6)
        };
    }
    scored(&coded)
}

/// Bytes of a reply's text the phrase families read.
const FAMILY_BYTES: usize = 2048;

/// Timing, pushback, referral and interest, each scored 2 per strong and 1 per
/// weak phrase; the highest score wins, ties in that order; nothing → `other`.
fn scored(t: &Coded) -> Verdict {
    // The families (stems with gaps) cost more per byte than the fixed lists: they
    // read the opening of the reply, where its answer is.
    let head = t.head(FAMILY_BYTES);
    let without_negations = lexicon::negated_interest().replace_all(t, " ");
    let scores: [(&'static str, usize); 4] = [
        (
            "not_now",
            2 * lexicon::not_now_strong().count(t)
                + 2 * families::not_now_count(&head)
                + lexicon::not_now_weak().count(t),
        ),
        (
            "objection",
            2 * lexicon::objection_strong().count(t)
                + 2 * families::objection_count(&head)
                // "not interested" is a refusal, whatever else the reply says
                + 2 * lexicon::negated_interest().count(&head)
                + lexicon::objection_weak().count(t),
        ),
        (
            "other",
            2 * lexicon::referral_strong().count(t) + 2 * families::referral().count(&head),
        ),
        (
            "interested",
            2 * lexicon::interested_strong().count(&without_negations)
                + 2 * families::interested().count(&without_negations.head(FAMILY_BYTES))
                + lexicon::interested_weak().count(&without_negations),
        ),
    ];
    let mut best = ("other", 0usize);
    let mut runner_up = 0usize;
    for (label, score) in scores {
        if score > best.1 {
            runner_up = best.1;
            best = (label, score);
        } else if score > runner_up {
            runner_up = score;
        }
    }
    match best {
        (_, 0) => verdict("other", 0.4),
        // A lone weak hint ("sure", "ok") is only worth a guess.
        (label, 1) => verdict(label, 0.5),
        (label, score) if score >= runner_up + 2 => verdict(label, 0.8),
        (label, _) => verdict(label, 0.6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(subject: &str, text: &str) -> &'static str {
        classify(&Input {
            headers: &[],
            subject,
            text,
            original_subject: None,
        })
        .label
    }

    #[test]
    fn basic_labels() {
        assert_eq!(
            run("Re: Hi", "Sounds great, can we set up a call Tuesday?"),
            "interested"
        );
        assert_eq!(run("Re: Hi", "Not now, try me again next year."), "not_now");
        assert_eq!(
            run("Re: Hi", "Not interested, we already use a competitor."),
            "objection"
        );
        assert_eq!(
            run("Re: Hi", "Please remove me from your list."),
            "unsubscribe"
        );
        assert_eq!(
            run("Out of Office: Hi", "I am out of the office until Monday."),
            "ooo"
        );
        assert_eq!(run("Re: Hi", "I'm not the right person for this."), "other");
        assert_eq!(run("Re: Hi", ""), "other");
        assert_eq!(MODEL, "rules-v1");
    }

    #[test]
    fn bounce_from_headers() {
        let headers = vec![(
            "From".to_string(),
            "Mail Delivery System <MAILER-DAEMON@mx.example.org>".to_string(),
        )];
        let v = classify(&Input {
            headers: &headers,
            subject: "Undelivered Mail Returned to Sender",
            text: "I'm sorry to have to inform you that your message could not be delivered.",
            original_subject: None,
        });
        assert_eq!(v.label, "bounce");
        assert!(v.confidence > 0.9);
    }
}
