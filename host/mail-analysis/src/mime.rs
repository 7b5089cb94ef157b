//! The one place the MIME parser is called, with the work caps applied, and a
//! read-only view of the top-level parts for the report detectors.

use std::borrow::Cow;

use mail_parser::{
    HeaderName, HeaderValue, Message, MessageParser, MessagePart, MimeHeaders, PartType,
};

use crate::{MAX_NESTING, MAX_RAW_BYTES, MAX_TEXT_BYTES, html, util};

/// Parses with the caps: the raw input is cut at [`MAX_RAW_BYTES`] and before the
/// `message/*` level that would exceed [`MAX_NESTING`].
pub(crate) fn parse_message(raw: &[u8]) -> Option<Message<'_>> {
    let raw = skip_mbox_line(&raw[..raw.len().min(MAX_RAW_BYTES)]);
    let raw = &raw[..nesting_cut(raw)];
    parser().parse(raw)
}

/// Parses the header block of an embedded message (a `text/rfc822-headers` part
/// or an inline copy) with the same header decoding.
pub(crate) fn parse_headers(raw: &[u8]) -> Option<Message<'_>> {
    let raw = &raw[..raw.len().min(MAX_TEXT_BYTES)];
    parser().parse_headers(raw)
}

/// Drops a leading mbox `From ` separator line, which is not a header; messages
/// taken from mbox files and some Maildir tools start with one.
fn skip_mbox_line(raw: &[u8]) -> &[u8] {
    if raw.starts_with(b"From ")
        && let Some(nl) = raw.iter().position(|b| *b == b'\n')
    {
        return &raw[nl + 1..];
    }
    raw
}

fn parser() -> MessageParser {
    MessageParser::new()
        .with_mime_headers()
        .with_date_headers()
        .with_address_headers()
        .with_message_ids()
        .header_text(HeaderName::Subject)
        .header_text(HeaderName::Comments)
        .header_raw(HeaderName::Received)
        .header_raw(HeaderName::ReturnPath)
        .header_raw(HeaderName::MimeVersion)
        .default_header_text()
}

/// Where to cut `raw` so that at most [`MAX_NESTING`] parts can open a nested
/// message: each `message/rfc822`, `message/global` or `multipart/digest` mention
/// counts (siblings too, which only costs content past an absurd number of them).
fn nesting_cut(raw: &[u8]) -> usize {
    let mut seen = 0;
    for (i, _) in raw.iter().enumerate().filter(|(_, b)| **b == b'/') {
        let before =
            |word: &[u8]| i >= word.len() && raw[i - word.len()..i].eq_ignore_ascii_case(word);
        let after = |word: &[u8]| {
            raw.get(i + 1..i + 1 + word.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(word))
        };
        let nests = (before(b"message") && (after(b"rfc822") || after(b"global")))
            || (before(b"multipart") && after(b"digest"));
        if nests {
            seen += 1;
            if seen > MAX_NESTING {
                return raw[..i].iter().rposition(|b| *b == b'\n').unwrap_or(0);
            }
        }
    }
    raw.len()
}

/// `type/subtype` of a part, lowercased; `text/plain` when absent (RFC 2045 default).
pub(crate) fn content_type(part: &MessagePart<'_>) -> String {
    match part.content_type() {
        Some(ct) => {
            let sub = ct.subtype().unwrap_or("");
            format!("{}/{}", ct.ctype(), sub).to_ascii_lowercase()
        }
        None => "text/plain".to_string(),
    }
}

/// A content-type parameter of a part, lowercased.
pub(crate) fn content_param(part: &MessagePart<'_>, name: &str) -> Option<String> {
    part.content_type()
        .and_then(|ct| ct.attribute(name))
        .map(|v| v.trim().to_ascii_lowercase())
}

/// The decoded bytes of a leaf part as text (lossy UTF-8 for binary parts such as
/// `message/delivery-status`), capped at [`MAX_TEXT_BYTES`].
pub(crate) fn part_text<'a>(part: &'a MessagePart<'a>) -> Cow<'a, str> {
    let text: Cow<'a, str> = match &part.body {
        PartType::Text(t) => Cow::Borrowed(t.as_ref()),
        PartType::Html(h) => Cow::Owned(html::to_text(h)),
        PartType::Binary(b) | PartType::InlineBinary(b) => String::from_utf8_lossy(b.as_ref()),
        PartType::Message(m) => String::from_utf8_lossy(m.raw_message.as_ref()),
        PartType::Multipart(_) => Cow::Borrowed(""),
    };
    match text {
        Cow::Borrowed(t) => Cow::Borrowed(util::truncate(t, MAX_TEXT_BYTES)),
        Cow::Owned(t) => Cow::Owned(util::truncate(&t, MAX_TEXT_BYTES).to_string()),
    }
}

/// Unfolded, decoded `(name, value)` pairs of a header list, at most `max`.
pub(crate) fn header_pairs(
    msg_raw: &[u8],
    headers: &[mail_parser::Header<'_>],
    max: usize,
) -> Vec<(String, String)> {
    headers
        .iter()
        .take(max)
        .map(|h| {
            let value = match h.value() {
                HeaderValue::Text(t) => unfold(t),
                HeaderValue::Address(a) => a
                    .iter()
                    .map(|addr| match (addr.name(), addr.address()) {
                        (Some(n), Some(e)) => format!("{n} <{e}>"),
                        (None, Some(e)) => e.to_string(),
                        (Some(n), None) => n.to_string(),
                        (None, None) => String::new(),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                _ => {
                    let start = (h.offset_start() as usize).min(msg_raw.len());
                    let end = (h.offset_end() as usize).clamp(start, msg_raw.len());
                    unfold(&String::from_utf8_lossy(&msg_raw[start..end]))
                }
            };
            (
                h.name().to_string(),
                util::truncate(&value, 16 * 1024).to_string(),
            )
        })
        .collect()
}

fn unfold(s: &str) -> String {
    s.split(['\r', '\n'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The parts that hold the message's readable text: the parser's text bodies, or,
/// when broken MIME (a boundary that never occurs, an unindented `boundary=`)
/// left none, the text-like parts it filed as attachments.
pub(crate) fn text_part_ids(msg: &Message<'_>) -> Vec<u32> {
    if !msg.text_body.is_empty() {
        return msg.text_body.clone();
    }
    msg.parts
        .iter()
        .enumerate()
        .filter(|(_, p)| match &p.body {
            PartType::Text(_) | PartType::Html(_) => true,
            PartType::Binary(_) | PartType::InlineBinary(_) => {
                let ct = content_type(p);
                ct.starts_with("text/") || ct.starts_with("multipart/")
            }
            _ => false,
        })
        .map(|(i, _)| i as u32)
        .collect()
}

/// The parsed message plus the raw bytes, for the report detectors.
pub(crate) struct View<'a> {
    pub(crate) msg: Option<Message<'a>>,
}

impl<'a> View<'a> {
    pub(crate) fn new(raw: &'a [u8]) -> Self {
        View {
            msg: parse_message(raw),
        }
    }

    /// The top-level parts (nested messages count as one part each).
    pub(crate) fn parts(&self) -> &[MessagePart<'a>] {
        self.msg.as_ref().map(|m| m.parts.as_slice()).unwrap_or(&[])
    }

    /// The `report-type` parameter when the message is `multipart/report`.
    pub(crate) fn report_type(&self) -> Option<String> {
        let root = self.parts().first()?;
        (content_type(root) == "multipart/report")
            .then(|| content_param(root, "report-type").unwrap_or_default())
    }

    /// Whether the message is a read receipt (RFC 8098), which is neither a reply
    /// nor a bounce.
    pub(crate) fn is_disposition_notification(&self) -> bool {
        self.report_type().as_deref() == Some("disposition-notification")
            || self
                .parts()
                .iter()
                .any(|p| content_type(p) == "message/disposition-notification")
    }

    /// The first top-level part whose content type is one of `types`.
    pub(crate) fn find_part(&self, types: &[&str]) -> Option<&MessagePart<'a>> {
        self.parts()
            .iter()
            .find(|p| types.contains(&content_type(p).as_str()))
    }

    /// The human-readable text of the message: the inline text bodies of the top
    /// level, HTML turned into text, capped at [`MAX_TEXT_BYTES`].
    pub(crate) fn text(&self) -> String {
        let Some(msg) = &self.msg else {
            return String::new();
        };
        let ids = text_part_ids(msg);
        let mut out = String::new();
        for id in ids {
            if let Some(part) = msg.parts.get(id as usize) {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&part_text(part));
                if out.len() >= MAX_TEXT_BYTES {
                    break;
                }
            }
        }
        util::truncate(&out, MAX_TEXT_BYTES).to_string()
    }

    /// Headers of the embedded original message: a `message/rfc822` (or `/global`)
    /// part, or a `text/rfc822-headers` part, or an attached text part that is
    /// itself a header block.
    pub(crate) fn original_headers(&self) -> Vec<(String, String)> {
        for part in self.parts() {
            match (&part.body, content_type(part).as_str()) {
                (PartType::Message(m), _) => {
                    let raw = m.raw_message.as_ref();
                    if let Some(first) = m.parts.first() {
                        return header_pairs(raw, &first.headers, 200);
                    }
                }
                (
                    _,
                    "text/rfc822-headers"
                    | "message/rfc822-headers"
                    | "message/rfc822"
                    | "message/global-headers",
                ) => {
                    let text = part_text(part);
                    if let Some(h) = parse_headers(text.as_bytes())
                        && let Some(first) = h.parts.first()
                    {
                        return header_pairs(text.as_bytes(), &first.headers, 200);
                    }
                }
                _ => {}
            }
        }
        Vec::new()
    }

    /// Text of every top-level attachment-like part that is not the readable body,
    /// for reports that hide their details in an attached text file.
    pub(crate) fn attached_texts(&self) -> Vec<Cow<'_, str>> {
        let Some(msg) = &self.msg else {
            return Vec::new();
        };
        msg.parts
            .iter()
            .enumerate()
            .filter(|(i, p)| {
                !msg.text_body.contains(&(*i as u32))
                    && matches!(p.body, PartType::Text(_) | PartType::Binary(_))
            })
            .map(|(_, p)| part_text(p))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_cut() {
        let mut raw = String::from("Subject: x\r\nContent-Type: message/rfc822\r\n\r\n");
        for _ in 0..100 {
            raw.push_str("Subject: y\r\nContent-Type: message/rfc822\r\n\r\n");
        }
        let cut = nesting_cut(raw.as_bytes());
        assert!(cut < raw.len());
        assert_eq!(raw[..cut].matches("message/rfc822").count(), MAX_NESTING);
    }
}
