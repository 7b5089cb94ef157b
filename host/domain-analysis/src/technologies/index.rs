//! The compiled matchers: one [`TextIndex`] per text field (HTML, inline
//! scripts, script sources, URL) and one [`KeyedIndex`] per keyed field
//! (headers, meta, cookies, DNS).

use std::collections::HashMap;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::{RegexSet, RegexSetBuilder};

use super::Field;
use super::literal::required_literals;
use super::pattern::Pattern;

/// A pattern that matched.
#[derive(Debug)]
pub(crate) struct Found {
    pub technology: usize,
    pub field: Field,
    /// The pattern's index in its field's index.
    pub pattern: usize,
    pub confidence: u8,
    pub version: String,
}

/// Runs pattern `index` of a field over `haystack`.
fn try_pattern(
    patterns: &[(usize, Pattern)],
    field: Field,
    index: usize,
    haystack: &str,
    found: &mut Vec<Found>,
) {
    let (technology, pattern) = &patterns[index];
    if let Some(version) = pattern.matches(haystack) {
        let (technology, confidence) = (*technology, pattern.confidence);
        found.push(Found {
            technology,
            field,
            pattern: index,
            confidence,
            version,
        });
    }
}

/// The patterns of one text field behind an Aho-Corasick prefilter.
#[derive(Default)]
pub(crate) struct TextIndex {
    patterns: Vec<(usize, Pattern)>,
    /// Every pattern's required literals; a hit on literal `i` makes
    /// pattern `owners[i]` a candidate.
    prefilter: Option<AhoCorasick>,
    owners: Vec<usize>,
    /// Patterns without a usable literal, run through `set`.
    unfiltered: Vec<usize>,
    set: OnceLock<Option<RegexSet>>,
}

impl TextIndex {
    pub fn push(&mut self, technology: usize, pattern: Pattern) {
        self.patterns.push((technology, pattern));
    }

    /// Builds the prefilter once every pattern is in.
    pub fn build(&mut self) {
        let mut literals = Vec::new();
        for (index, (_, pattern)) in self.patterns.iter().enumerate() {
            match required_literals(&pattern.source) {
                Some(required) => {
                    for literal in required {
                        literals.push(literal);
                        self.owners.push(index);
                    }
                }
                None => self.unfiltered.push(index),
            }
        }
        self.prefilter = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&literals)
            .ok();
        if self.prefilter.is_none() {
            // Unreachable with the bundled data; stay correct regardless.
            self.unfiltered = (0..self.patterns.len()).collect();
            self.owners.clear();
        }
    }

    /// `(patterns, patterns without a literal)`, for the benchmark's report.
    pub fn sizes(&self) -> (usize, usize) {
        (self.patterns.len(), self.unfiltered.len())
    }

    /// The patterns without a literal, for tuning the prefilter.
    pub fn unfiltered_sources(&self) -> Vec<&str> {
        self.unfiltered
            .iter()
            .map(|i| self.patterns[*i].1.source.as_str())
            .collect()
    }

    fn set(&self) -> Option<&RegexSet> {
        self.set
            .get_or_init(|| {
                let sources = self.unfiltered.iter().map(|i| &self.patterns[*i].1.source);
                RegexSetBuilder::new(sources)
                    .case_insensitive(true)
                    .size_limit(64 << 20)
                    .build()
                    .ok()
            })
            .as_ref()
    }

    /// Indexes of the patterns that may match `haystack`, in order.
    fn candidates(&self, haystack: &str) -> Vec<usize> {
        let mut candidates = vec![false; self.patterns.len()];
        if let Some(prefilter) = &self.prefilter {
            for hit in prefilter.find_overlapping_iter(haystack) {
                candidates[self.owners[hit.pattern().as_usize()]] = true;
            }
        }
        match self.set() {
            Some(set) => {
                for matched in set.matches(haystack).iter() {
                    candidates[self.unfiltered[matched]] = true;
                }
            }
            // A set too large to compile: run those patterns one by one.
            None => {
                for index in &self.unfiltered {
                    candidates[*index] = true;
                }
            }
        }
        candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| **c)
            .map(|(i, _)| i)
            .collect()
    }

    pub fn matches(&self, field: Field, haystack: &str, found: &mut Vec<Found>) {
        if self.patterns.is_empty() {
            return;
        }
        for index in self.candidates(haystack) {
            try_pattern(&self.patterns, field, index, haystack, found);
        }
    }

    /// Every pattern run on its own: the reference the prefilter is
    /// checked and benchmarked against.
    pub fn matches_naively(&self, field: Field, haystack: &str, found: &mut Vec<Found>) {
        for index in 0..self.patterns.len() {
            try_pattern(&self.patterns, field, index, haystack, found);
        }
    }
}

/// Patterns looked up by a name (header, meta name, cookie, DNS record
/// type), lower case; a name ending in `*` matches by prefix.
#[derive(Default)]
pub(crate) struct KeyedIndex {
    exact: HashMap<String, Vec<usize>>,
    prefixes: Vec<(String, usize)>,
    patterns: Vec<(usize, Pattern)>,
}

impl KeyedIndex {
    pub fn push(&mut self, key: &str, technology: usize, pattern: Pattern) {
        let key = key.trim().to_ascii_lowercase();
        let index = self.patterns.len();
        self.patterns.push((technology, pattern));
        match key.strip_suffix('*') {
            Some(prefix) if !prefix.is_empty() => self.prefixes.push((prefix.to_owned(), index)),
            _ => self.exact.entry(key).or_default().push(index),
        }
    }

    pub fn matches(&self, field: Field, key: &str, value: &str, found: &mut Vec<Found>) {
        let key = key.trim().to_ascii_lowercase();
        let exact = self.exact.get(&key).into_iter().flatten().copied();
        let prefixed = self
            .prefixes
            .iter()
            .filter(|(p, _)| key.starts_with(p))
            .map(|(_, i)| *i);
        for index in exact.chain(prefixed) {
            try_pattern(&self.patterns, field, index, value, found);
        }
    }
}
