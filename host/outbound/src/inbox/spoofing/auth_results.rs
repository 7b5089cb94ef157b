//! `Authentication-Results` (RFC 8601) as a receiving server writes it.

use super::*;

/// One result: `method=result` and its properties (`header.d=...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ResInfo {
    pub(super) method: String,
    pub(super) result: String,
    pub(super) props: Vec<(String, String)>,
}

impl ResInfo {
    pub(super) fn prop(&self, name: &str) -> Option<&str> {
        self.props
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct AuthResults {
    /// Lower case, no trailing dot; `None` when the header starts with a
    /// result instead (Microsoft 365).
    pub(super) authserv_id: Option<String>,
    pub(super) results: Vec<ResInfo>,
}

impl AuthResults {
    pub(super) fn property(&self, method: &str, name: &str) -> Option<&str> {
        self.results
            .iter()
            .filter(|r| r.method == method)
            .find_map(|r| r.prop(name))
    }
}

/// Reads `authserv-id [version]; method=result [reason=...] [ptype.prop=value]...;
/// ...`, comments and quoting understood, white space around `=` allowed.
pub(super) fn parse_auth_results(value: &[u8]) -> AuthResults {
    let text = String::from_utf8_lossy(&value[..value.len().min(MAX_HEADER_VALUE)]);
    let mut found = AuthResults::default();
    for (index, part) in auth_results_parts(&text).into_iter().enumerate() {
        let Some(first) = part.first() else { continue };
        if index == 0 && !first.contains('=') {
            found.authserv_id = Some(normalize_id(first));
            continue;
        }
        let Some((method, result)) = first.split_once('=') else {
            continue;
        };
        let method = method
            .split('/')
            .next()
            .unwrap_or(method)
            .to_ascii_lowercase();
        let props = part[1..]
            .iter()
            .filter_map(|token| token.split_once('='))
            .filter(|(key, _)| key.contains('.'))
            .map(|(key, value)| (key.to_ascii_lowercase(), value.to_string()))
            .collect();
        found.results.push(ResInfo {
            method,
            result: result_word(result),
            props,
        });
    }
    found
}

/// A result as written, lower case (`hardfail` read as `fail`); anything
/// that is not a short word is a syntax error: `permerror`.
pub(super) fn result_word(text: &str) -> String {
    let word = text.to_ascii_lowercase();
    if word == "hardfail" {
        return "fail".into();
    }
    let clean = !word.is_empty()
        && word.len() <= 20
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if clean { word } else { "permerror".into() }
}

/// The header split at `;` into parts, each part into tokens: comments
/// dropped, quotes removed, `a = b` joined to `a=b`.
pub(super) fn auth_results_parts(text: &str) -> Vec<Vec<String>> {
    let mut parts = Vec::new();
    let mut tokens: Vec<String> = Vec::new();
    let mut token = String::new();
    let mut depth = 0usize;
    let mut quoted = false;
    let mut escaped = false;
    let mut joining = false;
    let flush = |token: &mut String, tokens: &mut Vec<String>, joining: &mut bool| {
        if token.is_empty() {
            return;
        }
        let open = token.ends_with('=');
        match tokens.last_mut() {
            Some(last) if *joining || token.starts_with('=') => {
                last.push_str(token);
                token.clear();
            }
            _ => tokens.push(std::mem::take(token)),
        }
        *joining = open;
    };
    for c in text.chars() {
        if escaped {
            escaped = false;
            if depth == 0 {
                token.push(c);
            }
            continue;
        }
        if c == '\\' && (quoted || depth > 0) {
            escaped = true;
            continue;
        }
        if quoted {
            if c == '"' {
                quoted = false;
            } else {
                token.push(c);
            }
            continue;
        }
        if depth > 0 {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '(' => depth = 1,
            ';' => {
                flush(&mut token, &mut tokens, &mut joining);
                parts.push(std::mem::take(&mut tokens));
                joining = false;
            }
            c if c.is_whitespace() => flush(&mut token, &mut tokens, &mut joining),
            c => token.push(c),
        }
    }
    flush(&mut token, &mut tokens, &mut joining);
    parts.push(tokens);
    parts
}
