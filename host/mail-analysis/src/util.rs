//! Small helpers shared by the detectors.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Compiles a regex once, on first use; the patterns are constants, so a failure
/// is a bug caught by the tests, never input-dependent.
macro_rules! regex {
    ($re:expr $(,)?) => {{
        static RE: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| regex::Regex::new($re).expect("valid regex"));
        &*RE
    }};
}
pub(crate) use regex;

/// Compiles a family pattern once, with each word boundary `\b` written as an
/// ASCII boundary or a non-word character (`(?:(?-u:\b)|^|\W)` before a word,
/// `(?:(?-u:\b)|\W|$)` after one). The regex engine's fast automaton cannot
/// evaluate a Unicode `\b` on non-ASCII text and falls back to a far slower one
/// (about 100 times slower here); these it can, and they still find the edges
/// of words that begin or end with a non-ASCII letter ("été", "più").
macro_rules! wregex {
    ($re:expr $(,)?) => {{
        static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(&crate::util::boundaries($re)).expect("valid regex")
        });
        &*RE
    }};
}

/// Rewrites `\b` as described at [`wregex!`]: leading when a word, a group or a
/// class follows, trailing otherwise.
pub(crate) fn boundaries(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 64);
    let mut rest = pattern;
    while let Some(i) = rest.find("\\b") {
        // An escaped backslash before it ("\\\\b") is a literal, not a boundary.
        let escaped = rest[..i].ends_with('\\');
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        if escaped {
            out.push_str("\\b");
        } else if after
            .starts_with(|c: char| c.is_alphanumeric() || c == '(' || c == '[' || c == '\\')
        {
            out.push_str("(?:(?-u:\\b)|^|\\W)");
        } else {
            out.push_str("(?:(?-u:\\b)|\\W|$)");
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

pub(crate) use wregex;

/// Runs `f`, turning a panic (a bug in us or in the MIME parser on hostile bytes)
/// into `None`, so one bad message never stops the poller. On targets built with
/// `panic = "abort"` (WASM) this is a plain call.
pub(crate) fn guard<T>(f: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(f)).ok()
}

/// The longest prefix of `s` not over `max` bytes that ends on a char boundary.
pub(crate) fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Whether the text holds anything a person could have written (a letter, digit or
/// emoji), as opposed to whitespace and punctuation only.
pub(crate) fn has_words(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_alphanumeric() || (c as u32) >= 0x1F300 && (c as u32) <= 0x1FAFF)
}

/// Normalises something that should be a single mail address: strips `<>`,
/// quotes, a `rfc822;` type prefix and trailing punctuation, lowercases, and checks
/// it looks like `local@domain.tld`.
pub(crate) fn clean_address(raw: &str) -> Option<String> {
    let mut s = raw.trim();
    if let Some((kind, rest)) = s.split_once(';')
        && (kind.trim().eq_ignore_ascii_case("rfc822") || !kind.contains('@'))
    {
        s = rest.trim();
    }
    if let (Some(start), Some(end)) = (s.find('<'), s.rfind('>'))
        && start < end
    {
        s = &s[start + 1..end];
    }
    let s = s.trim_matches(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '<' | '>' | '(' | ')' | '[' | ']' | ',' | ';' | ':' | '.'
            )
    });
    let s = s.strip_prefix("mailto:").unwrap_or(s);
    valid_address(s).then(|| s.to_ascii_lowercase())
}

/// A plain syntactic check, strict enough to reject prose and header junk.
pub(crate) fn valid_address(s: &str) -> bool {
    if s.len() > 254 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    if local.is_empty()
        || local.len() > 64
        || local.contains(['<', '>', '(', ')', ',', ';', ':', '"', '[', ']', '@'])
    {
        return false;
    }
    let labels: Vec<&str> = domain.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars().all(|c| c.is_alphanumeric() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

/// Pushes `addr` unless already present, keeping first-seen order.
pub(crate) fn push_unique(list: &mut Vec<String>, addr: String) {
    if !list.contains(&addr) {
        list.push(addr);
    }
}

/// The value of the first header called `name` (case-insensitive).
pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Lowercases and folds runs of whitespace into one space, so phrase patterns
/// match across line breaks.
pub(crate) fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
        } else {
            if space {
                out.push(' ');
                space = false;
            }
            // Typographic apostrophes are as common as ASCII ones in replies.
            let c = if c == '\u{2019}' || c == '\u{2018}' {
                '\''
            } else {
                c
            };
            if c.is_ascii() {
                out.push(c.to_ascii_lowercase());
            } else {
                out.extend(c.to_lowercase());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(
            clean_address("rfc822; <Bob@Example.COM>").as_deref(),
            Some("bob@example.com")
        );
        assert_eq!(clean_address("'jo@x.org'.").as_deref(), Some("jo@x.org"));
        assert_eq!(clean_address("kijitora"), None);
        assert_eq!(clean_address("a@localhost"), None);
        assert_eq!(clean_address("hello world@x.org"), None);
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("abc", 10), "abc");
    }

    #[test]
    fn folding() {
        assert_eq!(fold("  Don\u{2019}t\n\n EMAIL  me "), "don't email me");
    }
}
