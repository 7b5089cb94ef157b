//! One Wappalyzer pattern: `regex\;version:\1\;confidence:50`.
//!
//! The regular expression is JavaScript's, matched case-insensitively. The
//! Rust `regex` crate accepts nearly all of them once JavaScript's reading
//! of escapes is restored ([`from_javascript`]: `\a` is the letter `a`
//! there, the bell character here). Look-aheads at the top level
//! (`\.acquire\.io/(?!cobrowse)`) are emulated: the regex runs with an
//! empty marker group in their place and the look-ahead is checked where
//! the marker matched. The few patterns that need look-behind, a nested
//! look-ahead or back-references are skipped and counted
//! ([`super::Fingerprints::skipped_patterns`]). Matching is linear in the
//! input, so Wappalyzer's rewriting of `+` and `*` into bounded repetitions
//! (a guard against JavaScript's backtracking) is not needed.
//!
//! Each regex is compiled the first time the prefilter says it may match,
//! so start-up costs only the parse of the data, and a page pays only for
//! the patterns whose literals it contains.

use std::sync::OnceLock;

use regex::{Captures, Regex, RegexBuilder};

/// Compiled programs above this size are refused (a pattern that large is
/// a mistake in the data, not a fingerprint).
const MAX_REGEX_SIZE: usize = 1 << 20;

/// Match positions tried for a pattern with look-aheads before giving up
/// on a haystack (each try is one search and one anchored check).
const MAX_LOOKAHEAD_TRIES: usize = 64;

#[derive(Debug)]
pub(crate) struct Pattern {
    /// The regular expression the `regex` crate runs: as written, without
    /// the tags, escapes read as JavaScript reads them and top-level
    /// look-aheads replaced by marker groups.
    pub source: String,
    /// `version:` template: `\1`, or `\1?yes:no`.
    pub version: Option<String>,
    /// 0-100, default 100.
    pub confidence: u8,
    /// Top-level look-aheads, checked where marker group `lookahead_N`
    /// matched.
    lookaheads: Vec<Lookahead>,
    regex: OnceLock<Option<Regex>>,
}

#[derive(Debug)]
struct Lookahead {
    negative: bool,
    /// `^(?:...)`, run on the rest of the haystack.
    source: String,
    regex: OnceLock<Option<Regex>>,
}

fn compile(source: &str) -> Option<Regex> {
    RegexBuilder::new(source)
        .case_insensitive(true)
        .size_limit(MAX_REGEX_SIZE)
        .build()
        .ok()
}

fn valid(source: &str) -> bool {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(true)
        .build()
        .parse(source)
        .is_ok()
}

impl Pattern {
    /// Splits the tags off `raw`; `None` when its regex is not one the
    /// `regex` crate can run.
    pub fn parse(raw: &str) -> Option<Pattern> {
        let mut parts = raw.split("\\;");
        let written = parts.next().unwrap_or_default();
        let mut version = None;
        let mut confidence = 100;
        for tag in parts {
            match tag.split_once(':') {
                Some(("version", v)) if !v.is_empty() => version = Some(v.to_owned()),
                Some(("confidence", c)) => {
                    confidence = c.trim().parse::<u8>().unwrap_or(100).min(100)
                }
                _ => {}
            }
        }
        let (source, lookaheads) = split_lookaheads(&from_javascript(written))?;
        // Marker groups would renumber the groups a version refers to.
        if !lookaheads.is_empty() && version.is_some() {
            return None;
        }
        // Validate now (a parse is cheap) so bad patterns are counted at
        // load; the compiled programs are built on first use.
        if !valid(&source) || !lookaheads.iter().all(|l| valid(&l.source)) {
            return None;
        }
        Some(Pattern {
            source,
            version,
            confidence,
            lookaheads,
            regex: OnceLock::new(),
        })
    }

    /// The compiled regex; `None` if it is over the size limit.
    pub fn regex(&self) -> Option<&Regex> {
        self.regex.get_or_init(|| compile(&self.source)).as_ref()
    }

    /// Matches `haystack`; `Some(version)` when it matches, the version
    /// empty when the pattern has none or the match carries none.
    pub fn matches(&self, haystack: &str) -> Option<String> {
        let regex = self.regex()?;
        if !self.lookaheads.is_empty() {
            return self.matches_with_lookaheads(regex, haystack);
        }
        let Some(template) = &self.version else {
            return regex.is_match(haystack).then(String::new);
        };
        let captures = regex.captures(haystack)?;
        let groups: Vec<&str> = (0..captures.len())
            .map(|i| captures.get(i).map_or("", |m| m.as_str()))
            .collect();
        Some(resolve_version(template, &groups))
    }

    /// Tries the match starting at each position in turn (up to
    /// [`MAX_LOOKAHEAD_TRIES`]) until one whose look-aheads hold. Like
    /// JavaScript it tries every start; unlike it, not every way of
    /// matching from one start, which none of the data's patterns needs.
    fn matches_with_lookaheads(&self, regex: &Regex, haystack: &str) -> Option<String> {
        let mut at = 0;
        for _ in 0..MAX_LOOKAHEAD_TRIES {
            let captures = regex.captures_at(haystack, at)?;
            if self.lookaheads_hold(&captures, haystack) {
                return Some(String::new());
            }
            let start = captures.get(0)?.start();
            at = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
            if at > haystack.len() {
                return None;
            }
        }
        None
    }

    fn lookaheads_hold(&self, captures: &Captures<'_>, haystack: &str) -> bool {
        self.lookaheads
            .iter()
            .enumerate()
            .all(|(index, lookahead)| {
                // A marker in an alternative that did not match asks nothing.
                let Some(marker) = captures.name(&format!("lookahead_{index}")) else {
                    return true;
                };
                let Some(regex) = lookahead.regex.get_or_init(|| compile(&lookahead.source)) else {
                    return false;
                };
                regex.is_match(&haystack[marker.start()..]) != lookahead.negative
            })
    }
}

/// Escapes as JavaScript reads them (without the `u` flag): a backslash
/// before a letter that JavaScript gives no meaning (`\a`, `\z`, `\p`...)
/// or before `<` and `>` stands for the character itself, where the
/// `regex` crate reads a bell, an anchor, a Unicode class or a word
/// boundary. Other escapes pass through.
pub(crate) fn from_javascript(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(next @ ('<' | '>')) => out.push(next),
            Some(next) if next.is_ascii_alphabetic() && !"dDwWsSbBfnrtvcxuk".contains(next) => {
                out.push(next)
            }
            Some(next) if !next.is_ascii() => out.push(next),
            Some(next) => {
                out.push('\\');
                out.push(next);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Replaces each top-level `(?=...)` and `(?!...)` by a marker group
/// `(?P<lookahead_N>)`; `None` for look-behind, nested or repeated
/// look-aheads.
fn split_lookaheads(source: &str) -> Option<(String, Vec<Lookahead>)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut lookaheads = Vec::new();
    let (mut depth, mut in_class, mut i) = (0usize, false, 0);
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            out.extend(chars.get(i..(i + 2).min(chars.len()))?);
            i += 2;
            continue;
        }
        if in_class {
            in_class = c != ']';
        } else if c == '[' {
            in_class = true;
        } else if c == '(' {
            let opening: String = chars[i..(i + 4).min(chars.len())].iter().collect();
            if opening.starts_with("(?<=") || opening.starts_with("(?<!") {
                return None;
            }
            if opening.starts_with("(?=") || opening.starts_with("(?!") {
                let end = closing_paren(&chars, i)?;
                let repeated = matches!(chars.get(end + 1), Some('?' | '*' | '+' | '{'));
                if depth > 0 || repeated {
                    return None;
                }
                let inner: String = chars[i + 3..end].iter().collect();
                out.push_str(&format!("(?P<lookahead_{}>)", lookaheads.len()));
                lookaheads.push(Lookahead {
                    negative: chars[i + 2] == '!',
                    source: format!("^(?:{inner})"),
                    regex: OnceLock::new(),
                });
                i = end + 1;
                continue;
            }
            depth += 1;
        } else if c == ')' {
            depth = depth.saturating_sub(1);
        }
        out.push(c);
        i += 1;
    }
    Some((out, lookaheads))
}

/// The index of the `)` closing the group opened at `open`.
fn closing_paren(chars: &[char], open: usize) -> Option<usize> {
    let (mut depth, mut in_class, mut i) = (0usize, false, open);
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            ']' if in_class => in_class = false,
            _ if in_class => {}
            '[' => in_class = true,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Fills a version template from the capture groups as Wappalyzer does:
/// `\N?yes:no` becomes `yes` when group N matched and `no` otherwise, then
/// every `\N` becomes group N. Versions longer than 20 characters are
/// noise (a whole minified bundle) and dropped.
pub(crate) fn resolve_version(template: &str, groups: &[&str]) -> String {
    let mut resolved = template.to_owned();
    for (index, group) in groups.iter().enumerate() {
        let marker = format!("\\{index}?");
        if let Some(at) = resolved.find(&marker) {
            let rest = &resolved[at + marker.len()..];
            if let Some((yes, no)) = rest.split_once(':') {
                let chosen = if group.is_empty() { no } else { yes };
                resolved = format!("{}{}", &resolved[..at], chosen);
            }
        }
        resolved = resolved.trim().replace(&format!("\\{index}"), group);
    }
    let resolved = resolved.trim();
    if resolved.len() > 20 {
        String::new()
    } else {
        resolved.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_split_off() {
        let p = Pattern::parse(r"^WordPress(?: ([\d.]+))?\;version:\1\;confidence:50").unwrap();
        assert_eq!(p.source, r"^WordPress(?: ([\d.]+))?");
        assert_eq!(p.version.as_deref(), Some(r"\1"));
        assert_eq!(p.confidence, 50);
        assert_eq!(p.matches("wordpress 6.4.2").as_deref(), Some("6.4.2"));
        assert_eq!(p.matches("WordPress").as_deref(), Some(""));
        assert_eq!(p.matches("Joomla"), None);
    }

    #[test]
    fn ternary_versions_follow_the_group() {
        assert_eq!(resolve_version(r"\1?next:", &["x", "y"]), "next");
        assert_eq!(resolve_version(r"\1?next:legacy", &["x", ""]), "legacy");
        assert_eq!(resolve_version(r"\1.\2", &["x", "3", "1"]), "3.1");
        assert_eq!(resolve_version(r"\1", &["x", &"9".repeat(40)]), "");
    }

    #[test]
    fn top_level_lookaheads_are_checked_where_they_stand() {
        let p = Pattern::parse(r"\.acquire\.io/(?!cobrowse)").unwrap();
        assert!(p.matches("https://cdn.acquire.io/widget.js").is_some());
        assert!(p.matches("https://cdn.acquire.io/cobrowse.js").is_none());
        let p = Pattern::parse(r"/sites/(?!.*(default|all)).*/(?:files|themes|modules)/").unwrap();
        assert!(p.matches("/sites/acme/files/x.js").is_some());
        assert!(p.matches("/sites/default/files/x.js").is_none());
        // Every start is tried: the second `/sites/` has no `default` after it.
        assert!(p.matches("/x/sites/default/y/sites/acme/files/").is_some());
        assert!(p.matches("/sites/acme/sites/default/files/").is_none());
        let p = Pattern::parse(r"(?!angular\.io)\bangular.{0,32}\.js").unwrap();
        assert!(p.matches("/js/angular.min.js").is_some());
        assert!(p.matches("https://angular.io/x.js").is_none());
        let p = Pattern::parse(r"leaflet.{0,32}\.js(?!.+shopify)").unwrap();
        assert!(p.matches("/leaflet/leaflet.js").is_some());
        assert!(p.matches("/leaflet.js?shop=x.myshopify.com").is_none());
        // A marker in an alternative that did not match asks nothing.
        let p = Pattern::parse(r"a(?=b)|c").unwrap();
        assert!(p.matches("ab").is_some() && p.matches("c").is_some() && p.matches("ax").is_none());
        // The prefilter and the regex sets run the source with its markers.
        assert!(!p.source.contains("(?="));
    }

    #[test]
    fn escapes_mean_what_they_mean_in_javascript() {
        // `\a` is `a` in JavaScript, a bell for the regex crate.
        let p = Pattern::parse(r"openpay\.com.\au").unwrap();
        assert!(p.matches("https://www.openpay.com.au/x.js").is_some());
        assert_eq!(from_javascript(r"\<div\>\z\d\\a\/"), r"<div>z\d\\a\/");
    }

    #[test]
    fn patterns_rust_cannot_run_are_refused() {
        assert!(Pattern::parse(r"(?<!-)UPS\b").is_none());
        assert!(Pattern::parse(r"a(?:b(?!c))").is_none());
        assert!(Pattern::parse(r"x(?!y)?").is_none());
        assert!(Pattern::parse(r"v(?!x)(\d)\;version:\1").is_none());
        assert!(Pattern::parse(r"(a)\1").is_none());
        // JavaScript's superfluous escape of `/` is accepted.
        assert!(
            Pattern::parse(r"\/wp-content\/")
                .unwrap()
                .matches("/wp-content/x")
                .is_some()
        );
    }
}
