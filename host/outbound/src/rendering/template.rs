//! Parsing a template into literal text and `{{...}}` tokens.
//!
//! The parser never fails: anything that is not a well-formed token stays
//! literal text, because a customer's template must always render, and an
//! odd brace in their copy is text, not a syntax error.

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'a> {
    /// Template text, copied to the output as written.
    Literal(&'a str),
    /// `{{name}}` or `{{name|fallback}}`.
    Token(Token<'a>),
    /// `{{ai_write: instruction}}`.
    AiWrite {
        /// The whole token as written, kept for when it stays literal.
        raw: &'a str,
        /// The instruction, trimmed; may be empty (which never resolves).
        instruction: &'a str,
    },
}

/// A value token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token<'a> {
    /// The whole token as written, braces included, kept for when it stays
    /// literal.
    pub raw: &'a str,
    /// The name as written, trimmed (metadata keys are first matched
    /// exactly, so the original case is kept here).
    pub name: &'a str,
    /// The text after the first `|`, trimmed; `Some("")` for `{{name|}}`,
    /// which renders nothing when there is no value.
    pub fallback: Option<&'a str>,
}

impl Token<'_> {
    /// The canonical name: lower-cased, as lookups of built-in and
    /// enrichment tokens and the preview's token lists use it.
    pub fn key(&self) -> String {
        self.name.to_lowercase()
    }
}

/// The name that introduces an AI-written passage.
pub const AI_WRITE: &str = "ai_write";

/// Splits `template` into segments. Rules, in order:
///
/// - A token runs from `{{` to the first `}}` after it. With no `}}` later,
///   the rest of the template is literal (an unclosed `{{`).
/// - When another `{{` comes before that `}}`, the earlier opening is
///   literal and parsing resumes at the later one, so in `{{a {{b}} c}}`
///   only `{{b}}` is a token, and `{{{name}}}` is the token `{{name}}` in
///   literal braces.
/// - The inside is trimmed. Empty (`{{ }}`) is literal text, not a token.
/// - `ai_write` (any case) followed by `:` is an AI token; everything after
///   the colon, `|` included, is its instruction.
/// - Otherwise the name is what precedes the first `|` and the fallback
///   what follows it, each trimmed; an empty name (`{{|x}}`) is literal.
pub fn parse(template: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut literal_start = 0;
    let mut pos = 0;
    while let Some(found) = template[pos..].find("{{") {
        let open = pos + found;
        let inner_start = open + 2;
        let Some(close_rel) = template[inner_start..].find("}}") else {
            break;
        };
        let close = inner_start + close_rel;
        // A later opening before this closing: this one is literal text.
        if let Some(reopen) = template[open + 1..close].rfind("{{") {
            pos = open + 1 + reopen;
            continue;
        }
        let end = close + 2;
        if let Some(segment) = token(&template[open..end], &template[inner_start..close]) {
            if literal_start < open {
                out.push(Segment::Literal(&template[literal_start..open]));
            }
            out.push(segment);
            literal_start = end;
        }
        pos = end;
    }
    if literal_start < template.len() {
        out.push(Segment::Literal(&template[literal_start..]));
    }
    out
}

/// Reads the inside of `{{...}}`; `None` when it is no token.
fn token<'a>(raw: &'a str, inner: &'a str) -> Option<Segment<'a>> {
    let inner = inner.trim();
    if let Some((head, rest)) = inner.split_once(':')
        && head.trim().eq_ignore_ascii_case(AI_WRITE)
    {
        return Some(Segment::AiWrite {
            raw,
            instruction: rest.trim(),
        });
    }
    let (name, fallback) = match inner.split_once('|') {
        Some((name, fallback)) => (name.trim(), Some(fallback.trim())),
        None => (inner, None),
    };
    (!name.is_empty()).then_some(Segment::Token(Token {
        raw,
        name,
        fallback,
    }))
}

#[cfg(test)]
mod unit {
    use super::Segment::{AiWrite, Literal};
    use super::*;

    fn tok<'a>(raw: &'a str, name: &'a str, fallback: Option<&'a str>) -> Segment<'a> {
        Segment::Token(Token {
            raw,
            name,
            fallback,
        })
    }

    #[test]
    fn plain_tokens_and_literals() {
        assert_eq!(
            parse("Hi {{first_name}}, from {{ company }}!"),
            vec![
                Literal("Hi "),
                tok("{{first_name}}", "first_name", None),
                Literal(", from "),
                tok("{{ company }}", "company", None),
                Literal("!"),
            ]
        );
        assert_eq!(parse(""), vec![]);
        assert_eq!(parse("no tokens"), vec![Literal("no tokens")]);
        assert_eq!(
            parse("{{a}}{{b}}"),
            vec![tok("{{a}}", "a", None), tok("{{b}}", "b", None)]
        );
    }

    #[test]
    fn fallbacks_are_trimmed_and_may_be_empty() {
        assert_eq!(
            parse("{{ first_name | there }}"),
            vec![tok("{{ first_name | there }}", "first_name", Some("there"))]
        );
        assert_eq!(
            parse("{{first_name|}}"),
            vec![tok("{{first_name|}}", "first_name", Some(""))]
        );
        // Only the first bar splits; the rest belongs to the fallback.
        assert_eq!(parse("{{x|a|b}}"), vec![tok("{{x|a|b}}", "x", Some("a|b"))]);
        assert_eq!(
            parse("{{First_Name|Friend of Acme}}")[0],
            tok(
                "{{First_Name|Friend of Acme}}",
                "First_Name",
                Some("Friend of Acme")
            )
        );
    }

    #[test]
    fn unclosed_and_empty_openings_stay_literal() {
        assert_eq!(
            parse("Hi {{first_name, bye"),
            vec![Literal("Hi {{first_name, bye")]
        );
        assert_eq!(
            parse("{{a}} then {{b"),
            vec![tok("{{a}}", "a", None), Literal(" then {{b")]
        );
        assert_eq!(parse("{{ }} and {{}}"), vec![Literal("{{ }} and {{}}")]);
        assert_eq!(parse("{{|x}}"), vec![Literal("{{|x}}")]);
        assert_eq!(parse("a }} b {"), vec![Literal("a }} b {")]);
    }

    #[test]
    fn nested_braces_take_the_innermost_token() {
        assert_eq!(
            parse("{{a {{b}} c}}"),
            vec![Literal("{{a "), tok("{{b}}", "b", None), Literal(" c}}")]
        );
        assert_eq!(
            parse("{{{first_name}}}"),
            vec![
                Literal("{"),
                tok("{{first_name}}", "first_name", None),
                Literal("}"),
            ]
        );
        assert_eq!(
            parse("{{{{x}}"),
            vec![Literal("{{"), tok("{{x}}", "x", None)]
        );
    }

    #[test]
    fn ai_write_tokens_keep_their_whole_instruction() {
        assert_eq!(
            parse("{{ai_write: one line on their hiring | be brief}}"),
            vec![AiWrite {
                raw: "{{ai_write: one line on their hiring | be brief}}",
                instruction: "one line on their hiring | be brief",
            }]
        );
        assert_eq!(
            parse("{{ AI_Write :compliment}}"),
            vec![AiWrite {
                raw: "{{ AI_Write :compliment}}",
                instruction: "compliment",
            }]
        );
        assert_eq!(
            parse("{{ai_write:}}"),
            vec![AiWrite {
                raw: "{{ai_write:}}",
                instruction: "",
            }]
        );
        // Without the colon it is an ordinary (metadata) name.
        assert_eq!(
            parse("{{ai_write}}"),
            vec![tok("{{ai_write}}", "ai_write", None)]
        );
    }

    #[test]
    fn multibyte_text_around_tokens() {
        assert_eq!(
            parse("Grüße {{name}} – ✓{{"),
            vec![
                Literal("Grüße "),
                tok("{{name}}", "name", None),
                Literal(" – ✓{{"),
            ]
        );
    }
}
