//! RFC 3464 delivery status notifications (`multipart/report;
//! report-type=delivery-status` with a `message/delivery-status` part), and the
//! JSON bounce notifications Amazon SES sends through SNS.

use crate::mime::{View, part_text};
use crate::util::{self, regex};
use crate::{BounceType, Inspection, Kind, Parsed, mta, reason};

/// One per-recipient block of a DSN.
#[derive(Debug, Default, Clone)]
pub(crate) struct Record {
    pub(crate) recipient: Option<String>,
    pub(crate) action: Option<String>,
    pub(crate) status: Option<String>,
    pub(crate) diagnostic: String,
}

impl Record {
    fn failed(&self) -> bool {
        match self.action.as_deref() {
            // Anything but a success ("expired", "failure", "undeliverable"... occur).
            Some("") => self
                .status
                .as_deref()
                .is_some_and(|s| s.starts_with('4') || s.starts_with('5')),
            // A 4/5 status outweighs a success-sounding action (a contradiction
            // some MTAs write); otherwise anything but a success is a failure.
            Some(a) => {
                !(a.starts_with("deliver") || a.starts_with("relay") || a.starts_with("expand"))
                    || self
                        .status
                        .as_deref()
                        .is_some_and(|s| s.starts_with('4') || s.starts_with('5'))
            }
            // No Action field: the status class decides.
            None => self
                .status
                .as_deref()
                .is_some_and(|s| s.starts_with('4') || s.starts_with('5')),
        }
    }

    fn delayed(&self) -> bool {
        self.action
            .as_deref()
            .is_some_and(|a| a.starts_with("delay"))
    }
}

/// Parses the fields of a `message/delivery-status` body into per-recipient records.
/// Blocks are separated by blank lines; within a block a repeated field starts a
/// new record (some MTAs omit the blank lines). Folded lines and junk are tolerated.
pub(crate) fn parse_fields(body: &str) -> Vec<Record> {
    let mut records: Vec<Record> = Vec::new();
    let mut current = Record::default();
    let mut seen: Vec<String> = Vec::new();
    let mut last: Option<String> = None;
    let flush = |current: &mut Record, seen: &mut Vec<String>, records: &mut Vec<Record>| {
        if current.recipient.is_some() || current.action.is_some() || current.status.is_some() {
            records.push(std::mem::take(current));
        } else {
            *current = Record::default();
        }
        seen.clear();
    };
    for line in body.lines() {
        if line.trim().is_empty() {
            flush(&mut current, &mut seen, &mut records);
            last = None;
            continue;
        }
        if line.starts_with([' ', '\t']) {
            // A folded continuation: only the diagnostic is worth extending.
            if last.as_deref() == Some("diagnostic-code") {
                current.diagnostic.push(' ');
                current.diagnostic.push_str(line.trim());
            }
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim();
        if name.is_empty() || name.len() > 40 || name.contains(' ') {
            continue;
        }
        let key = match name.as_str() {
            "x-postfix-diagnostic" => "diagnostic-code".to_string(),
            _ => name.clone(),
        };
        if matches!(
            key.as_str(),
            "final-recipient" | "original-recipient" | "action" | "status"
        ) && seen.contains(&key)
        {
            flush(&mut current, &mut seen, &mut records);
        }
        seen.push(key.clone());
        last = Some(key.clone());
        match key.as_str() {
            "final-recipient" | "original-recipient" | "x-actual-recipient" => {
                if let Some(addr) = util::clean_address(value) {
                    // Final-Recipient wins over Original-Recipient: it is where delivery failed.
                    if key == "final-recipient" || current.recipient.is_none() {
                        current.recipient = Some(addr);
                    }
                }
            }
            "action" => current.action = Some(value.to_ascii_lowercase()),
            "status" => {
                current.status = reason::status_code(value).or_else(|| {
                    let v = value.split_whitespace().next().unwrap_or("");
                    regex!(r"^[245]\.\d{1,3}\.\d{1,3}$")
                        .is_match(v)
                        .then(|| v.to_string())
                })
            }
            "diagnostic-code" => {
                if !current.diagnostic.is_empty() {
                    current.diagnostic.push(' ');
                }
                current
                    .diagnostic
                    .push_str(value.split_once(';').map_or(value, |(_, v)| v).trim());
            }
            _ => {}
        }
    }
    flush(&mut current, &mut seen, &mut records);
    records
}

/// The verdict for a bounce, whichever format told it (the DSN part here, a
/// plain-text notice in `mta`).
pub(crate) fn bounce(
    bounce_type: BounceType,
    recipients: Vec<String>,
    status: Option<String>,
    why: &'static str,
) -> Inspection {
    Inspection {
        kind: Kind::Bounce,
        bounce_type: Some(bounce_type),
        recipients,
        status,
        reason: Some(why),
        return_date_ms: None,
    }
}

pub(crate) fn detect(view: &View<'_>, parsed: &Parsed) -> Option<Inspection> {
    if let Some(found) = crate::json_notice::detect(view) {
        return Some(found);
    }
    // The delivery-status part, however it is spelled (`message/delivery-status`,
    // `message/global-delivery-status`, `text/delivery-status`,
    // `message/x-delivery-status`, `…/delivery_status`...).
    let part = view.parts().iter().find(|p| {
        let ct = crate::mime::content_type(p);
        ct.contains("delivery-status") || ct.contains("delivery_status")
    });
    // A `multipart/report` is a DSN unless it declares (or holds) another report:
    // sendmail variants leave `report-type` out or misspell it (TLS and other
    // reports declare their own types).
    let is_report = view.report_type().is_some_and(|t| {
        (t.is_empty() || t.contains("deliver") || t.contains("status") || t.contains("dsn"))
            && !view.is_disposition_notification()
    });
    let mut records = part
        .map(|p| parse_fields(&part_text(p)))
        .unwrap_or_default();
    if part.is_none() {
        // Delivery-status fields written into a text part (appliances, sendmail
        // variants): a `Final-Recipient` with a failed `Action` or a 4/5 `Status`.
        if !is_report && mta::human_or_list(parsed) {
            return None;
        }
        records = text_records(view);
        if !is_report && !records.iter().any(|r| r.failed() && r.recipient.is_some()) {
            return None;
        }
    }
    let failed: Vec<&Record> = records.iter().filter(|r| r.failed()).collect();
    if failed.is_empty() {
        // A report that only says delivered/relayed/expanded is a success notice;
        // one with no usable fields is left to the text detector.
        let success = records
            .iter()
            .any(|r| r.action.is_some() || r.status.as_deref().is_some_and(|s| s.starts_with('2')));
        if success {
            return Some(Inspection::of_kind(Kind::Other));
        }
        return mta::detect_as_report(view, parsed);
    }
    let text = view.text();
    let mut recipients = Vec::new();
    for r in &failed {
        if let Some(a) = &r.recipient {
            util::push_unique(&mut recipients, a.clone());
        }
    }
    if recipients.is_empty() {
        // Some MTAs leave the recipient out of the fields but name it in the text.
        recipients = mta::recipients_from_text(&text, parsed, view);
    }
    // The worst record decides: a permanent failure over a delay.
    let main = failed
        .iter()
        .find(|r| !r.delayed() && !r.status.as_deref().is_some_and(|s| s.starts_with('4')))
        .unwrap_or(&failed[0]);
    let status = main
        .status
        .clone()
        .filter(|s| !s.ends_with(".0.0") || reason::status_code(&main.diagnostic).is_none())
        .or_else(|| reason::status_code(&main.diagnostic))
        .or_else(|| main.status.clone());
    let detail = if main.diagnostic.is_empty() {
        mta::notice(&text).to_string()
    } else {
        main.diagnostic.clone()
    };
    let why = reason::reason(status.as_deref(), &detail);
    let delayed = failed.iter().all(|r| r.delayed());
    let bounce_type = reason::bounce_type(delayed, status.as_deref(), why, &detail);
    Some(bounce(bounce_type, recipients, status, why))
}

/// DSN records found in the top-level text parts (not in an attached message).
fn text_records(view: &View<'_>) -> Vec<Record> {
    let mut out = Vec::new();
    for p in view.parts() {
        let ct = crate::mime::content_type(p);
        if !ct.starts_with("text/") || ct.contains("rfc822") {
            continue;
        }
        if !matches!(
            p.body,
            mail_parser::PartType::Text(_) | mail_parser::PartType::Binary(_)
        ) {
            continue;
        }
        let text = part_text(p);
        let Some(start) =
            regex!(r"(?im)^[ \t]*(final-recipient|reporting-mta|original-recipient)[ \t]*:")
                .find(&text)
                .map(|m| m.start())
        else {
            continue;
        };
        // Some reports indent the fields; a field line is a field wherever it starts.
        let fields = regex!(
            r"(?im)^[ \t]+((final|original)-recipient|action|status|diagnostic-code|reporting-mta|remote-mta|x-actual-recipient|last-attempt-date)[ \t]*:"
        )
        .replace_all(&text[start..], "$1:");
        if !regex!(r"(?im)^final-recipient[ \t]*:").is_match(&fields) {
            continue;
        }
        out.extend(parse_fields(&fields));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_blocks_with_and_without_blank_lines() {
        let body = "Reporting-MTA: dns; mx.example.org\r\nArrival-Date: today\r\n\r\n\
                    Original-Recipient: rfc822;Alice@Example.org\r\nFinal-Recipient: rfc822; alice@example.org\r\n\
                    Action: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550 5.1.1 <alice@example.org>:\r\n  User unknown\r\n\
                    Final-Recipient: rfc822; bob@example.org\r\nAction: delayed\r\nStatus: 4.4.1\r\n";
        let r = parse_fields(body);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].recipient.as_deref(), Some("alice@example.org"));
        assert_eq!(r[0].status.as_deref(), Some("5.1.1"));
        assert_eq!(
            r[0].diagnostic,
            "550 5.1.1 <alice@example.org>: User unknown"
        );
        assert!(r[1].delayed());
        assert_eq!(r[1].recipient.as_deref(), Some("bob@example.org"));
    }

    #[test]
    fn a_failure_status_outweighs_a_success_action() {
        let r = parse_fields("Final-Recipient: rfc822; a@b.org\nAction: relayed\nStatus: 5.1.1\n");
        assert!(r[0].failed());
        let r =
            parse_fields("Final-Recipient: rfc822; a@b.org\nAction: delivered\nStatus: 2.0.0\n");
        assert!(!r[0].failed());
    }
}
