//! The literals a pattern cannot match without.
//!
//! For the prefilter, each pattern is reduced to a few strings of which any
//! match must contain at least one (`/wp-(?:content|includes)/` needs
//! `/wp-`; `jquery(?:\.min)?\.js` needs `jquery`). One Aho-Corasick pass
//! over a page finds every such string, and only the patterns whose
//! strings appear are run. A pattern with no usable literal (too short,
//! or a bare class such as `\d+`) is run on every page, in a regex set.

use regex_syntax::hir::{Hir, HirKind};

/// Shorter literals appear on nearly every page and filter nothing.
const MIN_LITERAL: usize = 3;
/// More alternatives than this and the pattern is cheaper run directly.
const MAX_ALTERNATIVES: usize = 16;

/// Literals of which every match of `pattern` contains one, lower case;
/// `None` when there are none worth filtering on.
pub(crate) fn required_literals(pattern: &str) -> Option<Vec<String>> {
    // Parsed case-sensitively so literals stay literals; the prefilter
    // itself ignores ASCII case, as the regex does.
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let literals = required(&hir)?;
    let usable = literals
        .iter()
        .all(|l| l.len() >= MIN_LITERAL && l.is_ascii());
    usable.then(|| {
        literals
            .into_iter()
            .map(|l| String::from_utf8_lossy(&l).to_ascii_lowercase())
            .collect()
    })
}

/// The best set of alternatives `hir` requires, as raw bytes.
fn required(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Literal(literal) => Some(vec![literal.0.to_vec()]),
        HirKind::Capture(capture) => required(&capture.sub),
        HirKind::Repetition(repetition) if repetition.min >= 1 => required(&repetition.sub),
        HirKind::Concat(children) => {
            let mut best: Option<Vec<Vec<u8>>> = None;
            let mut consider = |candidate: Vec<Vec<u8>>| {
                if best.as_ref().is_none_or(|b| score(&candidate) > score(b)) {
                    best = Some(candidate);
                }
            };
            // Adjacent literal children join into one longer literal.
            let mut run: Vec<u8> = Vec::new();
            for child in children {
                if let HirKind::Literal(literal) = child.kind() {
                    run.extend_from_slice(&literal.0);
                    continue;
                }
                if !run.is_empty() {
                    consider(vec![std::mem::take(&mut run)]);
                }
                if let Some(inner) = required(child) {
                    consider(inner);
                }
            }
            if !run.is_empty() {
                consider(vec![run]);
            }
            best
        }
        HirKind::Alternation(branches) => {
            let mut all = Vec::new();
            for branch in branches {
                all.extend(required(branch)?);
                if all.len() > MAX_ALTERNATIVES {
                    return None;
                }
            }
            Some(all)
        }
        _ => None,
    }
}

/// Markup every page is full of: a literal made of these filters nothing
/// (`<link rel="stylesheet"` is on every page, `boldgrid` on few).
const COMMON_IN_HTML: &[&str] = &[
    "<script",
    "<link",
    "<meta",
    "<html",
    "<div",
    "<span",
    "<img",
    "<iframe",
    "<input",
    "<form",
    "<body",
    "<a ",
    "<!--",
    "stylesheet",
    "text/javascript",
    "javascript",
    "class=",
    "href=",
    "src=",
    "rel=",
    "id=",
    "name=",
    "content=",
    "type=",
    "data-",
    "https://",
    "http://",
    "www.",
    ".min.js",
    ".min.css",
    ".js",
    ".css",
    "/js/",
    "/css/",
    "script",
    "link",
    "class",
];

/// How selective a literal is: its length once common markup is taken
/// out, with the whole length breaking ties.
fn rarity(literal: &[u8]) -> (usize, usize) {
    let mut rest = String::from_utf8_lossy(literal).to_ascii_lowercase();
    for common in COMMON_IN_HTML {
        rest = rest.replace(common, "");
    }
    let rare = rest
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .count();
    (rare.min(MIN_LITERAL * 4), literal.len())
}

/// A set is as selective as its least selective member.
fn score(alternatives: &[Vec<u8>]) -> ((usize, usize), std::cmp::Reverse<usize>) {
    let weakest = alternatives
        .iter()
        .map(|a| rarity(a))
        .min()
        .unwrap_or((0, 0));
    (weakest, std::cmp::Reverse(alternatives.len()))
}

#[cfg(test)]
mod tests {
    use super::required_literals;

    fn literals(p: &str) -> Option<Vec<String>> {
        required_literals(p)
    }

    #[test]
    fn literals_are_found_inside_groups_and_repetitions() {
        // The longer pair filters better than `/wp-`.
        assert_eq!(
            literals(r"/wp-(?:content|includes)/"),
            Some(vec!["content".into(), "includes".into()])
        );
        assert_eq!(literals(r"/wp-(?:c|i)/"), Some(vec!["/wp-".into()]));
        assert_eq!(
            literals(r"(?:content|includes)/"),
            Some(vec!["content".into(), "includes".into()])
        );
        assert_eq!(
            literals(r"jQuery(?:\.min)?\.js"),
            Some(vec!["jquery".into()])
        );
        assert_eq!(literals(r"^Shopify$"), Some(vec!["shopify".into()]));
        assert_eq!(
            literals(r"(?:googletagmanager)+"),
            Some(vec!["googletagmanager".into()])
        );
    }

    #[test]
    fn patterns_without_a_usable_literal_are_run_directly() {
        assert_eq!(literals(r"\d+"), None);
        assert_eq!(literals(r"ab"), None);
        assert_eq!(literals(r"(?:foo|b)"), None);
        assert_eq!(literals(""), None);
        assert_eq!(literals(r"(?:wordpress)?x"), None);
    }
}
