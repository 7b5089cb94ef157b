//! Bounce and complaint notifications that cloud sending services send as a JSON
//! document by email: Amazon SES through SNS (`notificationType`, with the payload
//! often a JSON string escaped inside the SNS envelope's `Message`, and long lines
//! folded with a trailing `!`), SES event publishing (`eventType`), and the event
//! objects of other services (Postmark `RecordType`/`Type`, SendGrid and Mailgun
//! `event`, SparkPost `type`, Mandrill `event`...).
//!
//! The principle: the message *is* a JSON document (its text starts with `{` or
//! `[{`, or a
//! part is `application/json`) whose event field names a bounce or a failure and
//! which names the recipient in an address field. Prose quoting a JSON snippet is
//! not such a document.

use crate::mime::{View, content_type, part_text};
use crate::util::{self, regex};
use crate::{BounceType, Inspection, Kind, reason};

/// The JSON document the message consists of, unescaped one level (so an SNS
/// envelope's escaped `Message` reads like the payload) and unfolded.
fn document(view: &View<'_>) -> Option<String> {
    let text = view.text();
    let mut candidates: Vec<String> = vec![text];
    for part in view.parts() {
        if content_type(part).ends_with("/json") {
            candidates.push(part_text(part).into_owned());
        }
    }
    // SES through SNS is recognised by its field name wherever the JSON starts.
    let doc = match candidates
        .iter()
        // An object, or an array of event objects (Mandrill posts a batch).
        .position(|t| t.trim_start().starts_with('{') || t.trim_start().starts_with("[{"))
    {
        Some(i) => candidates.swap_remove(i),
        None if candidates[0].contains("notificationType")
            || candidates[0].contains("\"eventType\"") =>
        {
            candidates.swap_remove(0)
        }
        None => return None,
    };
    let head = util::truncate(&doc, 64 * 1024);
    // SNS email folds long lines with a trailing '!'; JSON strings never end a line.
    let unfolded = regex!(r"!\r?\n[ \t]?").replace_all(head, "");
    Some(unfolded.replace("\\\"", "\"").replace("\\/", "/"))
}

/// A bounce, complaint or delivery notification in JSON, or `None`.
pub(crate) fn detect(view: &View<'_>) -> Option<Inspection> {
    let doc = document(view)?;
    let event = regex!(
        r#"(?i)"(?:notificationType|eventType|RecordType|event|type|Type)"\s*:\s*"(bounce|bounced|hard_?bounce|soft_?bounce|hardbounce|softbounce|failed|failure|dropped|complaint|spamreport|spam_complaint|delivery)""#
    )
    .captures_iter(&doc)
    .map(|c| c[1].to_ascii_lowercase())
    .next()?;
    let kind = match event.as_str() {
        "delivery" => return Some(Inspection::of_kind(Kind::Other)),
        "complaint" | "spamreport" | "spam_complaint" => Kind::Complaint,
        _ => Kind::Bounce,
    };
    let mut found = Inspection::of_kind(kind);
    // Recipients: the SES lists, else the recipient-named fields of an event.
    let list = regex!(r#""(?:bouncedRecipients|complainedRecipients)"\s*:\s*\[([^\]]*)\]"#)
        .captures(&doc)
        .map(|c| c[1].to_string());
    let scope = list.as_deref().unwrap_or(&doc);
    for c in
        regex!(r#"(?i)"(?:emailAddress|email|Email|recipient|rcpt_to|rcpt|to)"\s*:\s*"([^"]+)""#)
            .captures_iter(scope)
    {
        if let Some(a) = util::clean_address(&c[1]) {
            util::push_unique(&mut found.recipients, a);
        }
    }
    if found.recipients.is_empty() {
        // A failure event that names no recipient is not one we can act on.
        return None;
    }
    if kind == Kind::Complaint {
        let feedback = regex!(r#""complaintFeedbackType"\s*:\s*"([^"]+)""#)
            .captures(&doc)
            .map(|c| c[1].to_string());
        found.reason = Some(crate::arf::feedback_reason(
            feedback.as_deref().unwrap_or(""),
        ));
        return Some(found);
    }
    let status = regex!(r#""(?:status|enhanced_?code)"\s*:\s*"([245]\.\d{1,3}\.\d{1,3})""#)
        .captures(scope)
        .map(|c| c[1].to_string());
    let diagnostic = regex!(
        r#"(?i)"(?:diagnosticCode|Details|diag|raw_reason|reason|bounce_description|description|message|error)"\s*:\s*"([^"]*)""#
    )
    .captures_iter(&doc)
    .map(|c| c[1].to_string())
    .collect::<Vec<_>>()
    .join(" ");
    let status = status.or_else(|| reason::status_code(&diagnostic));
    let transient = regex!(
        r#"(?i)"(?:bounceType|Type|severity)"\s*:\s*"(Transient|SoftBounce|soft_bounce|temporary)"|"event"\s*:\s*"soft_?bounce""#
    )
    .is_match(&doc);
    let why = reason::reason(status.as_deref(), &diagnostic);
    found.bounce_type = Some(if transient {
        BounceType::Soft
    } else {
        reason::bounce_type(false, status.as_deref(), why, &diagnostic)
    });
    found.status = status;
    found.reason = Some(why);
    Some(found)
}
