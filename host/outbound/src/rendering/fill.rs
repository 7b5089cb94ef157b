//! Substituting values into parsed segments, for the subject (a header's
//! plain text) or the body (HTML). Pure: the values and the AI passages are
//! resolved beforehand, so escaping and the token lists are unit-tested
//! here.

use std::collections::HashMap;

use super::template::{AI_WRITE, Segment};
use super::values::Sources;

/// Where the text goes, which decides how substituted values are made safe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A header: no escaping, but control characters (CR and LF above all)
    /// in a value become one space, so a value cannot start a new header.
    Subject,
    /// HTML: values are escaped; the template's own markup is kept.
    Html,
}

/// The distinct token names replaced in the output and those left literal,
/// in order of first appearance (subject first, then body).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub used: Vec<String>,
    pub missing: Vec<String>,
}

impl Tally {
    fn note(list: &mut Vec<String>, name: String) {
        if !list.contains(&name) {
            list.push(name);
        }
    }
}

/// Renders `segments` for `target`. `written` maps an `ai_write`
/// instruction to the passage the model wrote; instructions not in it stay
/// literal.
pub fn fill(
    segments: &[Segment<'_>],
    sources: &Sources<'_>,
    written: &HashMap<String, String>,
    target: Target,
    tally: &mut Tally,
) -> String {
    let mut out = String::new();
    for segment in segments {
        match segment {
            Segment::Literal(text) => out.push_str(text),
            Segment::Token(token) => {
                let key = token.key();
                match (sources.lookup(token.name), token.fallback) {
                    (Some(value), _) => {
                        out.push_str(&safe(&value, target));
                        Tally::note(&mut tally.used, key);
                    }
                    // The fallback is template text, written by the
                    // template's author like the markup around it, so the
                    // body keeps it as written; the subject still gets it on
                    // one line.
                    (None, Some(fallback)) => {
                        match target {
                            Target::Html => out.push_str(fallback),
                            Target::Subject => out.push_str(&one_line(fallback)),
                        }
                        Tally::note(&mut tally.used, key);
                    }
                    (None, None) => {
                        out.push_str(token.raw);
                        Tally::note(&mut tally.missing, key);
                    }
                }
            }
            Segment::AiWrite { raw, instruction } => match written.get(*instruction) {
                Some(passage) => {
                    out.push_str(&safe(passage, target));
                    Tally::note(&mut tally.used, AI_WRITE.to_owned());
                }
                None => {
                    out.push_str(raw);
                    Tally::note(&mut tally.missing, AI_WRITE.to_owned());
                }
            },
        }
    }
    out
}

fn safe(value: &str, target: Target) -> String {
    match target {
        Target::Html => escape_html(value),
        Target::Subject => one_line(value),
    }
}

pub use outreach_core::http::page::escape_html;

/// Replaces each run of control characters (CR, LF, tab, the other C0 and
/// C1 controls) with one space: a header value must stay on its line.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for c in s.chars() {
        if c.is_control() {
            if !in_run {
                out.push(' ');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

#[cfg(test)]
mod unit {
    use super::*;
    use crate::rendering::template::parse;
    use serde_json::{Map, Value, json};

    fn render(template: &str, metadata: Value, target: Target) -> (String, Tally) {
        let metadata: Map<String, Value> = metadata.as_object().unwrap().clone();
        let sources = Sources {
            email: "ann@acme.com",
            domain: "acme.com",
            metadata: &metadata,
            enrichment: None,
        };
        let written = HashMap::from([("say hi".to_owned(), "Hi <there> & \"you\"\r\n".to_owned())]);
        let mut tally = Tally::default();
        let out = fill(&parse(template), &sources, &written, target, &mut tally);
        (out, tally)
    }

    #[test]
    fn hostile_values_are_escaped_in_html_but_markup_is_kept() {
        let (html, tally) = render(
            r#"<p title="{{t}}">Hi {{first_name}}</p>"#,
            json!({"first_name": "<script>alert('x')</script>", "t": "\" onmouseover=\"evil()"}),
            Target::Html,
        );
        assert_eq!(
            html,
            "<p title=\"&quot; onmouseover=&quot;evil()\">Hi &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</p>"
        );
        assert_eq!(tally.used, ["t", "first_name"]);
    }

    #[test]
    fn values_are_never_parsed_again() {
        let (html, tally) = render(
            "{{a}} {{b}}",
            json!({"a": "{{b}}", "b": "{{ai_write: leak}}"}),
            Target::Html,
        );
        assert_eq!(html, "{{b}} {{ai_write: leak}}");
        assert_eq!(tally.missing, Vec::<String>::new());
    }

    #[test]
    fn subject_values_lose_line_breaks() {
        let (subject, _) = render(
            "Re: {{company}} {{ai_write: say hi}}",
            json!({"company": "Acme\r\nBcc: victim@example.com\t\u{85}x"}),
            Target::Subject,
        );
        assert_eq!(
            subject,
            "Re: Acme Bcc: victim@example.com x Hi <there> & \"you\" "
        );
        assert!(!subject.contains(['\r', '\n']));
    }

    #[test]
    fn fallbacks_literals_and_the_token_lists() {
        let (html, tally) = render(
            "{{First_Name|there}}, {{nickname|}}! {{first_name}} {{Missing}} {{missing}} {{ai_write: say hi}} {{ai_write: other}}",
            json!({}),
            Target::Html,
        );
        assert_eq!(
            html,
            "there, ! {{first_name}} {{Missing}} {{missing}} Hi &lt;there&gt; &amp; &quot;you&quot;\r\n {{ai_write: other}}"
        );
        assert_eq!(tally.used, ["first_name", "nickname", "ai_write"]);
        assert_eq!(tally.missing, ["first_name", "missing", "ai_write"]);
        // Fallbacks are template text in HTML; on one line in the subject.
        let (html, _) = render("{{x|<b>you</b>}}", json!({}), Target::Html);
        assert_eq!(html, "<b>you</b>");
        let (subject, _) = render("{{x|a\tb}}", json!({}), Target::Subject);
        assert_eq!(subject, "a b");
    }
}
