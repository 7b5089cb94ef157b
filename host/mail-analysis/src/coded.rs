//! Phrase matching without Unicode tables.
//!
//! The phrase lists ([`crate::lexicon`], [`crate::phrases`],
//! [`crate::families`]) are large alternations with word boundaries, gaps
//! (`.{0,40}`) and word classes. Compiled as Unicode regexes they took about
//! 180 ms to build (every `.` and `\w` is a UTF-8 automaton), and a Unicode
//! `\b` sent every non-English reply to the regex engine's slowest matcher.
//! The reply classifier runs in a fresh WebAssembly instance for each batch
//! of replies, so it paid the build on every batch.
//!
//! Instead, the text is *coded*: lowercased and folded as before, then every
//! non-ASCII character is written in ASCII, and the patterns are coded the
//! same way and compiled as byte patterns without Unicode. Folded text holds
//! no ASCII capital, so capitals are free to stand for other characters:
//!
//! - a letter or digit from U+00A0 to U+0329 (Latin-1, Latin Extended-A and
//!   most of B: every accented letter of the seven languages) becomes two
//!   capitals of its own, so "é" and "e" stay different words ("sí" is not
//!   "si") and both capitals are word characters, as the letter was;
//! - any other letter or digit becomes `ZZ` (no pattern names one);
//! - anything else that is not ASCII (dashes, symbols, emoji) becomes the
//!   control character `\x1A`, which is not a word character either.
//!
//! So an ASCII `\b` on coded text falls exactly where a Unicode `\b` falls on
//! the folded text, and every automaton is a small byte automaton.

use std::ops::Range;

use regex_automata::meta;
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::util::syntax;

use crate::util::fold;

/// First code point written as two capitals of its own.
const FIRST: u32 = 0xA0;
/// How many code points get their own pair: 25 first letters (`Z` is kept
/// for everything else) by 26 second ones.
const SPAN: u32 = 25 * 26;
/// What a non-ASCII character that is not a letter or digit becomes.
const OTHER: char = '\x1A';

/// Text prepared for [`Phrase`] patterns: folded ([`fold`]) and coded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Coded(String);

impl Coded {
    /// Folds and codes `text`.
    pub(crate) fn new(text: &str) -> Coded {
        Coded::from_folded(&fold(text))
    }

    /// Codes text that [`fold`] has already folded.
    pub(crate) fn from_folded(folded: &str) -> Coded {
        let mut out = String::with_capacity(folded.len() + 8);
        for c in folded.chars() {
            push_char(&mut out, c);
        }
        Coded(out)
    }

    /// The first `max` bytes (at most), where the phrase families look.
    pub(crate) fn head(&self, max: usize) -> Coded {
        Coded(self.0[..self.0.len().min(max)].to_owned())
    }

    /// The part of the text at `range` (a match of a [`Phrase`]).
    pub(crate) fn part(&self, range: Range<usize>) -> Coded {
        Coded(self.0[range].to_owned())
    }

    #[cfg(test)]
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

fn push_char(out: &mut String, c: char) {
    if c.is_ascii() {
        out.push(c);
    } else if c.is_alphanumeric() {
        let (first, second) = pair(c);
        out.push(first);
        out.push(second);
    } else {
        out.push(OTHER);
    }
}

/// The two capitals a non-ASCII letter or digit is written as.
fn pair(c: char) -> (char, char) {
    let i = u32::from(c).wrapping_sub(FIRST);
    if i < SPAN {
        (
            char::from(b'A' + (i / 26) as u8),
            char::from(b'A' + (i % 26) as u8),
        )
    } else {
        ('Z', 'Z')
    }
}

/// Codes a pattern the way [`Coded`] codes text. A non-ASCII letter becomes
/// its pair in a group (so a `?` after it still applies to the whole
/// letter); a class naming one (`[ií]`) becomes an alternation. Escapes are
/// ASCII in these patterns and pass through.
pub(crate) fn code_pattern(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 64);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                out.extend(chars.next());
            }
            '[' => code_class(&mut chars, &mut out),
            c if c.is_ascii() => out.push(c),
            c => push_pattern_char(&mut out, c),
        }
    }
    out
}

fn push_pattern_char(out: &mut String, c: char) {
    if c.is_alphanumeric() {
        let (first, second) = pair(c);
        out.push_str("(?:");
        out.push(first);
        out.push(second);
        out.push(')');
    } else {
        out.push_str("\\x1A");
    }
}

/// Codes a class whose `[` has been read, up to and with its `]`.
fn code_class(chars: &mut std::str::Chars<'_>, out: &mut String) {
    let mut ascii = String::new();
    let mut wide = Vec::new();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                ascii.push(c);
                ascii.extend(chars.next());
            }
            ']' => break,
            c if c.is_ascii() => ascii.push(c),
            c => wide.push(c),
        }
    }
    if wide.is_empty() {
        out.push('[');
        out.push_str(&ascii);
        out.push(']');
        return;
    }
    assert!(
        !ascii.starts_with('^') && !ascii.contains('-'),
        "a negated class or a range with a non-ASCII letter cannot be coded: [{ascii}{}]",
        wide.iter().collect::<String>()
    );
    out.push_str("(?:");
    if !ascii.is_empty() {
        out.push('[');
        out.push_str(&ascii);
        out.push_str("]|");
    }
    for (i, c) in wide.into_iter().enumerate() {
        if i > 0 {
            out.push('|');
        }
        push_pattern_char(out, c);
    }
    out.push(')');
}

/// A compiled phrase pattern, matched against [`Coded`] text.
#[derive(Debug)]
pub(crate) struct Phrase(meta::Regex);

impl Phrase {
    /// Compiles `pattern`, written as for folded text, for coded text. The
    /// patterns are constants, so a failure is a bug the tests catch.
    ///
    /// No Unicode (the text is ASCII), and no capture groups: the phrase
    /// lists only ask where a match is, and groups made most of the states.
    pub(crate) fn new(pattern: &str) -> Phrase {
        let coded = code_pattern(pattern);
        let regex = meta::Builder::new()
            .syntax(syntax::Config::new().unicode(false).utf8(false))
            .configure(
                meta::Config::new()
                    .which_captures(WhichCaptures::Implicit)
                    .utf8_empty(false)
                    .onepass(false)
                    .backtrack(false),
            )
            .build(&coded)
            .unwrap_or_else(|e| panic!("phrase pattern {pattern:?}: {e}"));
        Phrase(regex)
    }

    pub(crate) fn is_match(&self, t: &Coded) -> bool {
        self.0.is_match(t.0.as_bytes())
    }

    /// How many matches, none overlapping.
    pub(crate) fn count(&self, t: &Coded) -> usize {
        self.0.find_iter(t.0.as_bytes()).count()
    }

    /// Where the matches are, none overlapping.
    pub(crate) fn spans<'t>(&'t self, t: &'t Coded) -> impl Iterator<Item = Range<usize>> + 't {
        self.0.find_iter(t.0.as_bytes()).map(|m| m.range())
    }

    /// The text with every match replaced by `with`.
    pub(crate) fn replace_all(&self, t: &Coded, with: &str) -> Coded {
        let mut out = String::with_capacity(t.0.len());
        let mut last = 0;
        for m in self.spans(t) {
            out.push_str(&t.0[last..m.start]);
            out.push_str(with);
            last = m.end;
        }
        out.push_str(&t.0[last..]);
        Coded(out)
    }
}

/// Compiles a phrase pattern once, on first use.
macro_rules! phrase {
    ($re:expr $(,)?) => {{
        static RE: std::sync::LazyLock<crate::coded::Phrase> =
            std::sync::LazyLock::new(|| crate::coded::Phrase::new($re));
        &*RE
    }};
}
pub(crate) use phrase;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coded_text_keeps_accents_apart_and_words_whole() {
        let t = Coded::new("Sí, MÁS Información — ¿Büro?");
        assert!(t.as_str().is_ascii());
        assert!(Phrase::new(r"\bsí\b").is_match(&t));
        assert!(!Phrase::new(r"\bsi\b").is_match(&t));
        assert!(Phrase::new(r"\bmás información\b").is_match(&t));
        assert!(Phrase::new(r"\bbüro\b").is_match(&t));
        // "ás" inside "más" is not a word of its own.
        assert!(!Phrase::new(r"\bás\b").is_match(&t));
        assert!(Phrase::new(r"informaci[óo]n").is_match(&t));
        assert!(Phrase::new(r"intéressée?s?").is_match(&Coded::new("intéressé")));
        assert!(!Phrase::new(r"\bx\b").is_match(&Coded::new("дx")));
        assert_eq!(
            Phrase::new(r"\bno\b")
                .replace_all(&Coded::new("No — no."), "_")
                .as_str(),
            "_ \x1A _."
        );
    }
}
