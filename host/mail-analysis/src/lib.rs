//! Parses raw inbound email and tells what it is: a human reply, a bounce (DSN), a
//! complaint (ARF) or an auto-reply, plus the rules reply classifier.
//!
//! The crate is pure (no I/O, no clock, no async) so that the IMAP poller, the
//! `outreach mail inspect` command and the WebAssembly rules-classifier plugin all
//! see exactly the same verdict for the same bytes; it builds for `wasm32-wasip2`.
//!
//! Work is capped on hostile input: only the first [`MAX_RAW_BYTES`] of a message are
//! parsed, only the first [`MAX_TEXT_BYTES`] of its text are analysed, at most
//! [`MAX_HEADERS`] top-level headers are kept, and `message/rfc822` nesting deeper than
//! [`MAX_NESTING`] is cut off. [`parse`] and [`inspect`] never panic.

#![warn(missing_docs)]

mod arf;
mod autoreply;
mod coded;
mod dates;
mod dsn;
mod evidence;
mod families;
mod html;
mod json_notice;
mod lexicon;
mod mime;
mod mta;
mod parse;
pub mod phrases;
mod quote;
mod reason;
pub mod rules;
mod subject;
mod util;

use serde::Serialize;

pub use subject::{normalise_subject, strip_subject_prefixes, thread_id};

/// Bytes of a raw message that are handed to the MIME parser; a 20 MB attachment
/// must not cost 20 MB of decoding on every poll, and the text we need comes first.
pub const MAX_RAW_BYTES: usize = 8 * 1024 * 1024;
/// Bytes of decoded text that are analysed, so that phrase and pattern scans stay
/// linear and small however large the body is.
pub const MAX_TEXT_BYTES: usize = 1024 * 1024;
/// Top-level headers kept in [`Parsed::headers`], so a header bomb cannot blow up
/// what the poller stores.
pub const MAX_HEADERS: usize = 1000;
/// Nested `message/*` and multipart levels the MIME parser is shown; deeper input is
/// cut, so a crafted message cannot exhaust the stack while it is walked or dropped.
pub const MAX_NESTING: usize = 32;

/// One inbound message as the IMAP poller sees it, so that matching, threading,
/// storage and classification all work from the same decoded fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Parsed {
    /// `Message-ID` without angle brackets, so replies to this message can be matched.
    pub message_id: Option<String>,
    /// `In-Reply-To` without angle brackets, the first key for matching a reply to a sent message.
    pub in_reply_to: Option<String>,
    /// `References` without angle brackets, the fallback keys when `In-Reply-To` is missing or foreign.
    pub references: Vec<String>,
    /// Lowercased `From` address, the contact the reply is attributed to and half of the thread key.
    pub from_email: Option<String>,
    /// `From` display name, shown on the reply.
    pub from_name: Option<String>,
    /// Lowercased `To` addresses, to find which send account (mailbox) the reply reached.
    pub to: Vec<String>,
    /// Decoded `Subject` (empty when absent), the other half of the thread key.
    pub subject: String,
    /// `Date` header as Unix milliseconds, the reference point for relative return dates.
    pub date_ms: Option<i64>,
    /// All top-level headers, decoded and unfolded, in order, so classifiers and
    /// authentication checks see every header without reparsing (capped at [`MAX_HEADERS`]).
    pub headers: Vec<(String, String)>,
    /// The new text only, with quoted history and signature trimmed, because that is
    /// what the sender actually wrote and what classification must look at.
    pub body_text: String,
    /// The whole text part (text/plain preferred, else HTML turned into text), kept so
    /// nothing the sender wrote is lost when trimming is wrong.
    pub full_text: String,
}

/// Parses raw RFC 5322 bytes into a [`Parsed`], so the poller, the CLI and the tests
/// share one decoding of headers, charsets and transfer encodings.
///
/// Never panics; unparsable input gives a mostly empty `Parsed`.
pub fn parse(raw: &[u8]) -> Parsed {
    util::guard(|| parse::parse(raw)).unwrap_or_default()
}

/// What an inbound message is, because each kind has a different effect on the
/// enrollment (bounce, complaint, auto-reply or a real reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A delivery status notification: the address failed (hard) or is failing (soft).
    Bounce,
    /// A feedback-loop (ARF) spam complaint: the contact must be suppressed.
    Complaint,
    /// An automatic answer (out of office, RFC 3834 responder): the sequence goes on.
    AutoReply,
    /// Human text: a real reply.
    Reply,
    /// Nothing a person wrote: empty or undecodable, only quoted text, read
    /// receipts, delivery success notices.
    Other,
}

/// Whether a bounce is final, because a hard bounce suppresses the address at once
/// while a soft one is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BounceType {
    /// Permanent failure (5.x.x / 5xx), except a full mailbox.
    Hard,
    /// Temporary failure (4.x.x / 4xx, `Action: delayed`, mailbox full / over quota).
    Soft,
}

/// The verdict on one message, in the shape `outreach mail inspect --json` prints,
/// so operators and the inbox worker read the same fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inspection {
    /// What the message is.
    pub kind: Kind,
    /// Hard or soft, for bounces only, so the worker knows whether to suppress now.
    pub bounce_type: Option<BounceType>,
    /// Failed addresses (bounces) or complained-about addresses (complaints),
    /// lowercased and deduplicated, so the right enrollment and suppression are hit.
    pub recipients: Vec<String>,
    /// The enhanced status code (RFC 3463, like `5.1.1`) when the report gives one,
    /// kept for operators who need the exact cause.
    pub status: Option<String>,
    /// A short category of the failure, so reports can group bounces without parsing
    /// free text. One of: `user_unknown` (no such mailbox), `mailbox_disabled`
    /// (mailbox exists but is suspended or inactive), `mailbox_full` (over quota),
    /// `host_unknown` (domain or MX does not exist), `spam_blocked` (rejected as spam
    /// or for the sender's reputation or a block list), `policy` (rejected by a
    /// policy: authentication, DMARC, content, security), `message_too_large`,
    /// `expired` (the MTA gave up retrying), `network` (connection or routing
    /// problems, mail loops), `relay_denied` (relaying not permitted), `other` (a
    /// bounce with no recognisable cause), or, for complaints, `abuse`, `fraud`,
    /// `virus`, `auth_failure`, `not_spam`, `opt_out` (the ARF feedback type, `other`
    /// when absent). `None` for replies and auto-replies.
    pub reason: Option<&'static str>,
    /// For auto-replies, the "back on" date the text names (00:00 UTC of that day,
    /// Unix milliseconds), so the next step can be delayed past it; `None` otherwise.
    pub return_date_ms: Option<i64>,
}

impl Inspection {
    fn of_kind(kind: Kind) -> Self {
        Inspection {
            kind,
            bounce_type: None,
            recipients: Vec::new(),
            status: None,
            reason: None,
            return_date_ms: None,
        }
    }
}

/// Tells what a message is (bounce, complaint, auto-reply, reply or other) from its
/// raw bytes and its [`parse`] result, so every effect in the inbox worker starts
/// from one verdict. `raw` is needed because report parts (DSN, ARF) are not part of
/// [`Parsed`].
///
/// Order of checks: complaint (ARF), bounce (sending services' JSON
/// notifications, then RFC 3464 structure however spelled, including DSN fields
/// in a text part, then plain-text notices by sender role, machine markers, SMTP
/// replies next to foreign addresses and wording), auto-reply (RFC 3834 and
/// vendor headers, then out-of-office subjects and phrasings), then reply if any
/// human text is left, else other. A DSN is a bounce even when it carries
/// `Auto-Submitted`; a human "Re:"/"Fwd:", list mail, a moderation hold or a
/// quarantine digest is not. Never panics.
pub fn inspect(raw: &[u8], parsed: &Parsed) -> Inspection {
    util::guard(|| inspect_inner(raw, parsed)).unwrap_or_else(|| Inspection::of_kind(Kind::Other))
}

fn inspect_inner(raw: &[u8], parsed: &Parsed) -> Inspection {
    let view = mime::View::new(raw);
    if let Some(found) = arf::detect(&view, parsed) {
        return found;
    }
    if let Some(found) = dsn::detect(&view, parsed) {
        return found;
    }
    if let Some(found) = mta::detect(&view, parsed) {
        return found;
    }
    if view.is_disposition_notification() {
        return Inspection::of_kind(Kind::Other);
    }
    if autoreply::is_auto_reply(&parsed.headers, &parsed.subject, &parsed.body_text) {
        let mut found = Inspection::of_kind(Kind::AutoReply);
        // The subject counts too ("Away until May 5"); the quoted cold email must not.
        let own = if parsed.body_text.is_empty() {
            &parsed.full_text
        } else {
            &parsed.body_text
        };
        let text = format!("{}\n{}", parsed.subject, own);
        found.return_date_ms = dates::return_date(&text, parsed.date_ms);
        return found;
    }
    // Only new text counts: a reply that merely quotes our email says nothing.
    if util::has_words(&parsed.body_text) {
        Inspection::of_kind(Kind::Reply)
    } else {
        Inspection::of_kind(Kind::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inspection_serialises_in_the_cli_shape() {
        let mut i = Inspection::of_kind(Kind::AutoReply);
        i.return_date_ms = Some(1);
        assert_eq!(
            serde_json::to_string(&i).unwrap(),
            r#"{"kind":"auto_reply","bounce_type":null,"recipients":[],"status":null,"reason":null,"return_date_ms":1}"#
        );
        let b = Inspection {
            kind: Kind::Bounce,
            bounce_type: Some(BounceType::Hard),
            recipients: vec!["a@b.org".into()],
            status: Some("5.1.1".into()),
            reason: Some("user_unknown"),
            return_date_ms: None,
        };
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            r#"{"kind":"bounce","bounce_type":"hard","recipients":["a@b.org"],"status":"5.1.1","reason":"user_unknown","return_date_ms":null}"#
        );
    }
}
