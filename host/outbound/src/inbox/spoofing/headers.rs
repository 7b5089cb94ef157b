//! The header fields the check reads, and the addresses and domains in them.

use super::*;

/// The header fields the check reads, in message order (topmost first).
#[derive(Debug, Default)]
pub(super) struct Scan<'a> {
    pub(super) received: Vec<&'a [u8]>,
    pub(super) auth_results: Vec<&'a [u8]>,
    pub(super) return_path: Option<&'a [u8]>,
    pub(super) from: Option<&'a [u8]>,
}

/// One pass over the header section: a field starts on a line that does
/// not begin with white space and has a colon, continues over the lines
/// that do, and the section ends at the first empty line. Lines that are
/// neither are skipped. Linear in the header size.
pub(super) fn scan_headers(raw: &[u8]) -> Scan<'_> {
    let mut scan = Scan::default();
    let mut fields: Vec<(&[u8], usize, usize)> = Vec::new();
    let mut pos = 0;
    let mut current: Option<(&[u8], usize, usize)> = None;
    while pos < raw.len() {
        let end = raw[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(raw.len(), |i| pos + i + 1);
        let line = &raw[pos..end];
        let content = line
            .strip_suffix(b"\n")
            .map_or(line, |l| l.strip_suffix(b"\r").unwrap_or(l));
        if content.is_empty() {
            break;
        }
        if matches!(content[0], b' ' | b'\t') {
            if let Some(field) = &mut current {
                field.2 = end;
            }
        } else {
            if let Some(field) = current.take() {
                fields.push(field);
            }
            if let Some(colon) = content.iter().position(|&b| b == b':') {
                current = Some((content[..colon].trim_ascii(), pos + colon + 1, end));
            }
        }
        pos = end;
    }
    if let Some(field) = current.take() {
        fields.push(field);
    }
    for (name, start, end) in fields {
        let value = &raw[start..end.min(start + MAX_HEADER_VALUE)];
        if name.eq_ignore_ascii_case(b"Received") {
            if scan.received.len() < MAX_RECEIVED_EXAMINED {
                scan.received.push(value);
            }
        } else if name.eq_ignore_ascii_case(b"Authentication-Results") {
            if scan.auth_results.len() < MAX_AUTH_RESULTS_EXAMINED {
                scan.auth_results.push(value);
            }
        } else if name.eq_ignore_ascii_case(b"Return-Path") {
            scan.return_path.get_or_insert(value);
        } else if name.eq_ignore_ascii_case(b"From") {
            scan.from.get_or_insert(value);
        }
    }
    scan
}

/// The From domain: mail-auth's parse of the From header (its first
/// address), else the text after the last `@` of the raw header.
pub(super) fn author_domain(
    message: Option<&AuthenticatedMessage<'_>>,
    raw_from: Option<&[u8]>,
) -> Option<String> {
    from_address(message, raw_from)
        .and_then(|address| address.rsplit_once('@').and_then(|(_, d)| mail_domain(d)))
}

pub(super) fn from_address(
    message: Option<&AuthenticatedMessage<'_>>,
    raw_from: Option<&[u8]>,
) -> Option<String> {
    if let Some(first) = message.and_then(|m| m.from.first()) {
        return Some(first.clone());
    }
    let text = String::from_utf8_lossy(raw_from?);
    let address = match (text.rfind('<'), text.rfind('>')) {
        (Some(open), Some(close)) if open < close => text[open + 1..close].trim().to_string(),
        _ => text.trim().to_string(),
    };
    address.contains('@').then(|| address.to_lowercase())
}

/// The Return-Path address: empty for the null sender `<>`, `None` when
/// the header holds no address.
pub(super) fn return_path(value: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(value);
    let text = text.trim();
    let inner = match (text.find('<'), text.rfind('>')) {
        (Some(open), Some(close)) if open < close => text[open + 1..close].trim(),
        _ => text,
    };
    if inner.is_empty() {
        return Some(String::new());
    }
    let (local, domain) = inner.rsplit_once('@')?;
    let domain = mail_domain(domain)?;
    // A source route (@a,@b:user@domain) keeps only the mailbox.
    let local = local.rsplit_once(':').map_or(local, |(_, l)| l);
    Some(format!("{local}@{domain}"))
}

/// A mail domain as written in an address, lower case, without a trailing
/// dot; `None` when it cannot be one.
pub(super) fn mail_domain(text: &str) -> Option<String> {
    let domain = text
        .trim()
        .trim_matches(|c| c == '>' || c == '"' || c == '\'')
        .trim_end_matches('.')
        .to_lowercase();
    let valid = !domain.is_empty()
        && domain.len() <= 253
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.contains("..")
        && !domain
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "@[]()<>,;:\\\"".contains(c));
    valid.then_some(domain)
}

/// A host name as found in a `Received` header: ASCII labels of letters,
/// digits, `-` and `_`, at least two, the last alphabetic (or an IDNA
/// label); lower case, no trailing dot.
pub(super) fn domain_name(text: &str) -> Option<String> {
    let name = text
        .trim_matches(|c: char| "()[]<>,;:\"'".contains(c))
        .trim_end_matches('.')
        .to_ascii_lowercase();
    if name.len() < 3 || name.len() > 253 || !name.is_ascii() || name == "unknown" {
        return None;
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() < 2 {
        return None;
    }
    let label_ok = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let tld = labels[labels.len() - 1];
    let tld_ok =
        (tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic())) || tld.starts_with("xn--");
    (labels.iter().all(label_ok) && tld_ok).then_some(name)
}
