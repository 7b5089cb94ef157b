//! Builds [`Parsed`] from the MIME parser's message.

use mail_parser::{HeaderValue, Message, PartType};

use crate::{MAX_HEADERS, MAX_TEXT_BYTES, Parsed, html, mime, quote, util};

pub(crate) fn parse(raw: &[u8]) -> Parsed {
    let Some(msg) = mime::parse_message(raw) else {
        return Parsed::default();
    };
    let headers = msg
        .parts
        .first()
        .map(|root| mime::header_pairs(msg.raw_message.as_ref(), &root.headers, MAX_HEADERS))
        .unwrap_or_default();

    let (from_email, from_name) = match msg.from().and_then(|a| a.first()) {
        Some(addr) => (
            addr.address()
                .map(|a| a.trim().to_lowercase())
                .filter(|a| !a.is_empty()),
            addr.name()
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty()),
        ),
        None => (None, None),
    };
    let to = msg
        .to()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.address())
                .map(|x| x.trim().to_lowercase())
                .collect()
        })
        .unwrap_or_default();

    let (full_text, new_text) = texts(&msg);
    Parsed {
        message_id: msg.message_id().map(strip_id).filter(|s| !s.is_empty()),
        in_reply_to: ids(msg.in_reply_to()).into_iter().next(),
        references: ids(msg.references()),
        from_email,
        from_name,
        to,
        subject: msg
            .subject()
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        date_ms: msg
            .date()
            .filter(|d| d.is_valid())
            .map(|d| d.to_timestamp().saturating_mul(1000)),
        headers,
        body_text: quote::trim(&new_text),
        full_text,
    }
}

fn strip_id(s: &str) -> String {
    s.trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim()
        .to_string()
}

fn ids(value: &HeaderValue<'_>) -> Vec<String> {
    let list: Vec<String> = match value {
        HeaderValue::Text(t) => t.split_whitespace().map(strip_id).collect(),
        HeaderValue::TextList(l) => l.iter().map(|t| strip_id(t)).collect(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for id in list.into_iter().filter(|s| !s.is_empty()) {
        util::push_unique(&mut out, id);
    }
    out
}

/// The whole text (text/plain bodies preferred by the parser's body selection, HTML
/// converted otherwise) and the same with HTML-marked quotations cut, both capped.
fn texts(msg: &Message<'_>) -> (String, String) {
    let mut full = String::new();
    let mut new = String::new();
    for id in mime::text_part_ids(msg) {
        let Some(part) = msg.parts.get(id as usize) else {
            continue;
        };
        let (whole, fresh) = match &part.body {
            PartType::Html(h) => (html::to_text(h), html::to_text(html::strip_quoted(h))),
            _ => {
                let t = mime::part_text(part).replace("\r\n", "\n");
                (t.clone(), t)
            }
        };
        for (out, add) in [(&mut full, whole), (&mut new, fresh)] {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&add);
        }
        if full.len() >= MAX_TEXT_BYTES {
            break;
        }
    }
    let full = util::truncate(full.trim(), MAX_TEXT_BYTES).to_string();
    let new = util::truncate(new.trim(), MAX_TEXT_BYTES).to_string();
    (full, new)
}
