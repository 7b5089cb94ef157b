//! Finding tracked keywords in a domain's summary: one Aho-Corasick
//! automaton over every account's keywords, so a summary is read once
//! whatever their number.
//!
//! Matching is case-insensitive (Unicode lower case) on whole words: a
//! keyword whose first or last character is a letter or digit matches only
//! where the text's neighbouring character is not one. Runs of white space
//! count as one space on both sides, so "cloud security" finds
//! "Cloud\n  Security".

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// Characters of context an excerpt keeps on each side of the match.
const CONTEXT: usize = 80;

/// A keyword as stored for matching: lower case, single spaces.
pub fn normalise(keyword: &str) -> String {
    keyword
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// One account's tracked keyword.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracked {
    pub id: i64,
    pub account_id: i64,
    /// As the account wrote it.
    pub keyword: String,
}

/// Every tracked keyword, compiled.
#[derive(Debug)]
pub struct Automaton {
    ac: Option<AhoCorasick>,
    /// The accounts' keywords behind each distinct normalised pattern.
    owners: Vec<Vec<Tracked>>,
    /// Whether each pattern starts and ends with a word character.
    edges: Vec<(bool, bool)>,
}

/// A keyword found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The pattern's index (see [`Automaton::owners`]).
    pub pattern: usize,
    /// Where the first whole-word occurrence is in the original text (byte
    /// offsets).
    pub start: usize,
    pub end: usize,
}

impl Found {
    /// The original text around the match. Built on demand: most matches
    /// of a re-enrichment were there before and need none.
    pub fn excerpt(&self, text: &str) -> String {
        excerpt(text, self.start, self.end)
    }
}

/// `text` lower-cased with white space runs as one space, and for each byte
/// of it (and one past the end) the byte offset in `text` it came from.
struct Folded {
    text: String,
    origin: Vec<usize>,
}

fn fold(text: &str) -> Folded {
    let mut folded = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len() + 1);
    let mut in_space = false;
    for (at, c) in text.char_indices() {
        if c.is_whitespace() {
            if !in_space {
                folded.push(' ');
                origin.push(at);
            }
            in_space = true;
            continue;
        }
        in_space = false;
        for lower in c.to_lowercase() {
            let before = folded.len();
            folded.push(lower);
            origin.extend(std::iter::repeat_n(at, folded.len() - before));
        }
    }
    origin.push(text.len());
    Folded {
        text: folded,
        origin,
    }
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(char::is_alphanumeric)
}

impl Automaton {
    /// Compiles `keywords` (any order; repeats of one normalised keyword
    /// across accounts share a pattern).
    pub fn new(keywords: Vec<Tracked>) -> anyhow::Result<Automaton> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut patterns: Vec<String> = Vec::new();
        let mut owners: Vec<Vec<Tracked>> = Vec::new();
        for k in keywords {
            let pattern = normalise(&k.keyword);
            if pattern.is_empty() {
                continue;
            }
            let i = *index.entry(pattern.clone()).or_insert_with(|| {
                patterns.push(pattern);
                owners.push(Vec::new());
                owners.len() - 1
            });
            owners[i].push(k);
        }
        let edges = patterns
            .iter()
            .map(|p| (is_word(p.chars().next()), is_word(p.chars().next_back())))
            .collect();
        let ac = if patterns.is_empty() {
            None
        } else {
            Some(
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::Standard)
                    .build(&patterns)?,
            )
        };
        Ok(Automaton { ac, owners, edges })
    }

    /// The accounts' keywords behind pattern `i`.
    pub fn owners(&self, i: usize) -> &[Tracked] {
        &self.owners[i]
    }

    pub fn is_empty(&self) -> bool {
        self.ac.is_none()
    }

    /// The patterns found in `text` as whole words, each once (its first
    /// occurrence), in pattern order.
    pub fn find(&self, text: &str) -> Vec<Found> {
        let Some(ac) = &self.ac else {
            return Vec::new();
        };
        let folded = fold(text);
        let mut found: Vec<Found> = Vec::new();
        for m in ac.find_overlapping_iter(&folded.text) {
            let pattern = m.pattern().as_usize();
            let (starts_word, ends_word) = self.edges[pattern];
            let before = folded.text[..m.start()].chars().next_back();
            let after = folded.text[m.end()..].chars().next();
            if (starts_word && is_word(before)) || (ends_word && is_word(after)) {
                continue;
            }
            found.push(Found {
                pattern,
                start: folded.origin[m.start()],
                end: folded.origin[m.end()],
            });
        }
        // Matches arrive in text order and the sort is stable, so the
        // first occurrence of each pattern is the one kept.
        found.sort_by_key(|f| f.pattern);
        found.dedup_by_key(|f| f.pattern);
        found
    }
}

/// `text[start..end]` with up to [`CONTEXT`] characters on each side, white
/// space collapsed, an ellipsis where it was cut.
fn excerpt(text: &str, start: usize, end: usize) -> String {
    let before: Vec<char> = text[..start].chars().rev().take(CONTEXT + 1).collect();
    let after: Vec<char> = text[end..].chars().take(CONTEXT + 1).collect();
    let mut out = String::new();
    if before.len() > CONTEXT {
        out.push('…');
    }
    out.extend(before.iter().take(CONTEXT).rev());
    out.push_str(&text[start..end]);
    out.extend(after.iter().take(CONTEXT));
    if after.len() > CONTEXT {
        out.push('…');
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod unit {
    use super::*;

    fn tracked(id: i64, keyword: &str) -> Tracked {
        Tracked {
            id,
            account_id: 1,
            keyword: keyword.into(),
        }
    }

    fn found(a: &Automaton, text: &str) -> Vec<String> {
        a.find(text)
            .iter()
            .flat_map(|f| a.owners(f.pattern).iter().map(|t| t.keyword.clone()))
            .collect()
    }

    #[test]
    fn whole_words_in_any_case_and_spacing() {
        let a = Automaton::new(vec![
            tracked(1, "Cloud Security"),
            tracked(2, "cloud"),
            tracked(3, "AI"),
            tracked(4, "c++"),
            tracked(5, "  "),
        ])
        .unwrap();
        assert_eq!(
            found(&a, "We sell CLOUD\n   security to banks."),
            vec!["Cloud Security", "cloud"]
        );
        // "cloudy" and "said" hold the keywords but not as words.
        assert!(found(&a, "A cloudy day, she said.").is_empty());
        assert_eq!(found(&a, "Tools for C++ and AI."), vec!["AI", "c++"]);
        assert_eq!(found(&a, "Ünïcode ai-first"), vec!["AI"]);
    }

    #[test]
    fn an_excerpt_keeps_the_original_text_around_the_match() {
        let a = Automaton::new(vec![tracked(1, "straße")]).unwrap();
        let text = format!(
            "{} Die STRASSE? Nein: die Straße nach Berlin.",
            "x".repeat(200)
        );
        let f = a.find(&text);
        assert_eq!(f.len(), 1);
        let excerpt = f[0].excerpt(&text);
        assert!(excerpt.starts_with('…'), "{excerpt}");
        assert!(excerpt.ends_with("die Straße nach Berlin."), "{excerpt}");
    }

    #[test]
    fn keywords_of_several_accounts_share_one_pattern() {
        let mut other = tracked(2, "FINTECH");
        other.account_id = 2;
        let a = Automaton::new(vec![tracked(1, "fintech"), other]).unwrap();
        let f = a.find("A fintech startup");
        assert_eq!(f.len(), 1);
        assert_eq!(a.owners(f[0].pattern).len(), 2);
        assert!(Automaton::new(vec![]).unwrap().find("anything").is_empty());
    }
}
