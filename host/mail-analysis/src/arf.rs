//! Feedback-loop complaints: ARF (RFC 5965, `multipart/report;
//! report-type=feedback-report` with a `message/feedback-report` part) and
//! Microsoft's JMRP format (the original attached with `X-HmXmrOriginalRecipient`).

use mail_parser::PartType;

use crate::mime::{View, content_type, part_text};
use crate::util;
use crate::{Inspection, Kind, Parsed};

pub(crate) fn detect(view: &View<'_>, parsed: &Parsed) -> Option<Inspection> {
    let report = view.find_part(&["message/feedback-report"]);
    let declared = view.report_type().as_deref() == Some("feedback-report");
    let original = view.original_headers();
    let jmrp = util::header(&original, "X-HmXmrOriginalRecipient");
    if report.is_none() && !declared && jmrp.is_none() {
        return None;
    }
    let mut found = Inspection::of_kind(Kind::Complaint);
    let mut feedback_type = String::new();
    if let Some(part) = report {
        let body = part_text(part);
        for line in body.lines() {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            match name.trim().to_ascii_lowercase().as_str() {
                "original-rcpt-to" | "removal-recipient" => {
                    if let Some(a) = util::clean_address(value) {
                        util::push_unique(&mut found.recipients, a);
                    }
                }
                "feedback-type" if feedback_type.is_empty() => {
                    feedback_type = value.trim().to_ascii_lowercase()
                }
                _ => {}
            }
        }
    }
    if found.recipients.is_empty()
        && let Some(a) = jmrp.and_then(util::clean_address)
    {
        found.recipients.push(a);
    }
    if found.recipients.is_empty() {
        // The complained-about message's To, when it names a real address.
        let to = util::header(&original, "To")
            .map(crate::mta::addresses_in)
            .unwrap_or_default();
        let ours: Vec<String> = util::header(&original, "From")
            .map(crate::mta::addresses_in)
            .unwrap_or_default();
        for a in to
            .into_iter()
            .filter(|a| !ours.contains(a) && !parsed.to.contains(a))
        {
            util::push_unique(&mut found.recipients, a);
        }
    }
    if found.recipients.is_empty() {
        // Some reports paste the original inline instead of attaching it.
        for part in view.parts() {
            if matches!(part.body, PartType::Text(_))
                && content_type(part) == "text/rfc822-headers"
                && let Some(to) = part_text(part).lines().find_map(|l| l.strip_prefix("To:"))
            {
                found.recipients.extend(crate::mta::addresses_in(to));
            }
        }
    }
    // JMRP reports carry no feedback type; they are always junk-button complaints.
    found.reason = Some(if feedback_type.is_empty() && jmrp.is_some() {
        "abuse"
    } else {
        feedback_reason(&feedback_type)
    });
    Some(found)
}

/// The ARF feedback type as a reason (`abuse`, `fraud`, `virus`, `auth_failure`,
/// `not_spam`, `opt_out`, else `other`).
pub(crate) fn feedback_reason(feedback_type: &str) -> &'static str {
    match feedback_type.trim().to_ascii_lowercase().as_str() {
        "abuse" => "abuse",
        "fraud" => "fraud",
        "virus" => "virus",
        "auth-failure" => "auth_failure",
        "not-spam" => "not_spam",
        "opt-out" | "opt-out-list" => "opt_out",
        _ => "other",
    }
}
