//! [`track`]: the sender's per-message rewrite. Links go through the click
//! redirect, an open pixel and an unsubscribe footer are appended.
//!
//! It runs once per message on the send path, so it streams: `lol_html`
//! tokenises the body once and rewrites `href` attributes in place, with no
//! DOM built (a 2 KB body takes tens of microseconds; see the throughput
//! test below). Only absolute `http`/`https` URLs are tracked; `mailto:`,
//! `tel:`, fragments and relative links stay as written. Each tracked
//! anchor gets its own index, so a URL written twice has two indexes and
//! `links` lists it twice.
//!
//! The stored URL is the href as a browser reads it: entities decoded (the
//! WHATWG attribute rules, over html5ever's table of named references),
//! then parsed and serialised by the WHATWG URL parser (`url`), so the
//! redirect sends the recipient exactly where the original link would have.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::LazyLock;

use lol_html::html_content::{ContentType, DocumentEnd, Element};
use lol_html::{
    DocumentContentHandlers, ElementContentHandlers, HtmlRewriter, Selector, Settings, end_tag,
};
use markup5ever::data::{C1_REPLACEMENTS, NAMED_ENTITIES};
use outreach_ssrf::Url;

use super::token::{Token, TrackingKey};

/// Which kinds of tracking a message gets (the sequence's `track_opens`,
/// `track_clicks` and `enable_unsubscribe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackingOptions {
    pub opens: bool,
    pub clicks: bool,
    pub unsubscribe: bool,
}

/// The rewritten body and what the sender stores and sends with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracked {
    pub body_html: String,
    /// The original URLs in link-index order (`sequence_messages.links`).
    pub links: Vec<String>,
    /// For the `List-Unsubscribe` header (with `List-Unsubscribe-Post:
    /// List-Unsubscribe=One-Click`) and the plain-text part.
    pub unsubscribe_url: Option<String>,
}

static LINKS: LazyLock<Selector> = LazyLock::new(|| "a[href]".parse().expect("selector"));
static BODY: LazyLock<Selector> = LazyLock::new(|| "body".parse().expect("selector"));

/// Rewrites `body_html` of message `message_row_id` for tracking. `key`
/// comes from `TrackingKey::new(&state.secrets)`, `base_url` is the
/// configuration's `public_base_url`.
pub fn track(
    key: &TrackingKey,
    base_url: &str,
    message_row_id: i64,
    body_html: &str,
    opts: TrackingOptions,
) -> Tracked {
    let base = base_url.trim_end_matches('/');
    let unsubscribe_url = opts.unsubscribe.then(|| {
        let token = key.sign(Token::Unsubscribe {
            message: message_row_id,
        });
        format!("{base}/t/u/{token}")
    });
    // Attribute text: the base is the operator's, so it is escaped once.
    let base_attr = escape_attribute(base);
    let mut tail = String::new();
    if let Some(url) = &unsubscribe_url {
        tail.push_str(&footer(&escape_attribute(url)));
    }
    if opts.opens {
        let token = key.sign(Token::Open {
            message: message_row_id,
        });
        tail.push_str(&pixel(&format!("{base_attr}/t/o/{token}")));
    }
    if !opts.clicks && tail.is_empty() {
        return Tracked {
            body_html: body_html.to_owned(),
            links: Vec::new(),
            unsubscribe_url,
        };
    }
    match rewrite(
        key,
        &base_attr,
        message_row_id,
        body_html,
        opts.clicks,
        &tail,
    ) {
        Ok((body_html, links)) => Tracked {
            body_html,
            links,
            unsubscribe_url,
        },
        Err(e) => {
            // lol_html in non-strict mode has no parse errors; this is
            // defensive. The message still goes out, its links untracked.
            tracing::warn!(message = message_row_id, error = %e, "tracking rewrite failed; links left as written");
            Tracked {
                body_html: format!("{body_html}{tail}"),
                links: Vec::new(),
                unsubscribe_url,
            }
        }
    }
}

/// One pass of the rewriter: links replaced when `clicks`, `tail` placed
/// before the first `</body>`, or at the end when there is none.
fn rewrite(
    key: &TrackingKey,
    base_attr: &str,
    message: i64,
    body_html: &str,
    clicks: bool,
    tail: &str,
) -> Result<(String, Vec<String>), lol_html::errors::RewritingError> {
    let links: RefCell<Vec<String>> = RefCell::new(Vec::new());
    let placed = Rc::new(Cell::new(false));
    // Non-strict: markup that would be ambiguous to a streaming parser (a
    // rare misnested form) is rewritten on a best guess instead of failing
    // the message.
    let mut settings = Settings::new().with_strict(false);
    if clicks {
        settings = settings.append_element_content_handler((
            Cow::Borrowed(&*LINKS),
            ElementContentHandlers::default().element(|el: &mut Element<'_, '_>| {
                let Some(url) = el.get_attribute("href").and_then(|h| trackable(&h)) else {
                    return Ok(());
                };
                let mut links = links.borrow_mut();
                let link = u32::try_from(links.len())?;
                let token = key.sign(Token::Click { message, link });
                el.set_attribute("href", &format!("{base_attr}/t/c/{token}"))?;
                links.push(url);
                Ok(())
            }),
        ));
    }
    if !tail.is_empty() {
        let (body_tail, body_placed) = (tail.to_owned(), placed.clone());
        settings = settings
            .append_element_content_handler((
                Cow::Borrowed(&*BODY),
                ElementContentHandlers::default().element(move |el: &mut Element<'_, '_>| {
                    let (tail, placed) = (body_tail.clone(), body_placed.clone());
                    el.on_end_tag(end_tag!(move |end| {
                        if !placed.replace(true) {
                            end.before(&tail, ContentType::Html);
                        }
                        Ok(())
                    }))
                }),
            ))
            .append_document_content_handler(DocumentContentHandlers::default().end(
                |end: &mut DocumentEnd<'_>| {
                    if !placed.replace(true) {
                        end.append(tail, ContentType::Html);
                    }
                    Ok(())
                },
            ));
    }
    let mut out = Vec::with_capacity(body_html.len() + tail.len() + 256);
    let mut rewriter = HtmlRewriter::new(settings, |chunk: &[u8]| out.extend_from_slice(chunk));
    rewriter.write(body_html.as_bytes())?;
    rewriter.end()?;
    let html = String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok((html, links.into_inner()))
}

/// The URL a browser would follow for `href`, when it is one we track:
/// absolute http(s) with a host.
fn trackable(href: &str) -> Option<String> {
    let url = Url::parse(&decode_attribute(href)).ok()?;
    (matches!(url.scheme(), "http" | "https") && url.host().is_some()).then(|| url.into())
}

fn pixel(src: &str) -> String {
    format!(
        "<img src=\"{src}\" width=\"1\" height=\"1\" alt=\"\" \
         style=\"display:block;width:1px;height:1px;border:0;margin:0;padding:0\">"
    )
}

fn footer(href: &str) -> String {
    format!(
        "<p style=\"margin:24px 0 0;font-size:12px;line-height:1.4;color:#888888\">\
         <a href=\"{href}\" style=\"color:#888888;text-decoration:underline\">Unsubscribe</a></p>"
    )
}

fn escape_attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Decodes character references in an attribute value the way the HTML
/// tokenizer does: numeric references always; named ones by longest match,
/// except that a match without `;` followed by `=` or an alphanumeric stays
/// literal (so `?a=1&copy=2` keeps its `&copy`).
pub(crate) fn decode_attribute(raw: &str) -> Cow<'_, str> {
    if !raw.contains('&') {
        return Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match reference(&rest[1..]) {
            Some((chars, used)) => {
                out.extend(chars.into_iter().flatten());
                rest = &rest[1 + used..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The characters of the reference at the start of `s` (just after `&`) and
/// how many bytes of `s` it used; None when `&` is literal.
fn reference(s: &str) -> Option<([Option<char>; 2], usize)> {
    if let Some(num) = s.strip_prefix('#') {
        let (hex, digits) = match num.strip_prefix(['x', 'X']) {
            Some(d) => (true, d),
            None => (false, num),
        };
        let radix = if hex { 16 } else { 10 };
        let len = digits
            .bytes()
            .take_while(|b| (*b as char).is_digit(radix))
            .count();
        if len == 0 {
            return None;
        }
        // Saturates: anything past U+10FFFF is replaced below anyway.
        let value = digits[..len].chars().fold(0u32, |n, c| {
            n.saturating_mul(radix)
                .saturating_add(c.to_digit(radix).unwrap_or(0))
        });
        let mut used = 1 + usize::from(hex) + len;
        if digits[len..].starts_with(';') {
            used += 1;
        }
        let c = match value {
            0 | 0xD800..=0xDFFF | 0x11_0000.. => '\u{FFFD}',
            0x80..=0x9F => C1_REPLACEMENTS[(value - 0x80) as usize]
                .unwrap_or(char::from_u32(value).unwrap_or('\u{FFFD}')),
            v => char::from_u32(v).unwrap_or('\u{FFFD}'),
        };
        return Some(([Some(c), None], used));
    }
    // Longest named match: the table holds every prefix of every name, so
    // the first prefix it lacks ends the search.
    let mut best: Option<(usize, (u32, u32))> = None;
    for (i, b) in s.bytes().enumerate() {
        if !(b.is_ascii_alphanumeric() || b == b';') {
            break;
        }
        match NAMED_ENTITIES.get(&s[..=i]) {
            None => break,
            Some(&(0, _)) => {}
            Some(&cps) => best = Some((i + 1, cps)),
        }
        if b == b';' {
            break;
        }
    }
    let (used, (first, second)) = best?;
    let next = s[used..].bytes().next();
    if !s[..used].ends_with(';') && next.is_some_and(|b| b == b'=' || b.is_ascii_alphanumeric()) {
        return None;
    }
    let second = (second != 0).then(|| char::from_u32(second)).flatten();
    Some(([char::from_u32(first), second], used))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: TrackingOptions = TrackingOptions {
        opens: true,
        clicks: true,
        unsubscribe: true,
    };

    fn key() -> TrackingKey {
        TrackingKey::from_bytes(&[3; 32])
    }

    #[test]
    fn links_are_rewritten_in_order_and_others_left_alone() {
        let k = key();
        let body = r##"<p>Hi <a href="https://acme.io/pricing?a=1&amp;b=2">pricing</a>,
            <a href="mailto:x@acme.io">mail</a> <a href="tel:+1">call</a> <a href="#top">top</a>
            <a href="/relative">rel</a> <a>none</a>
            <A HREF=" HTTP://Acme.io/Docs ">docs</A> <a href='https://acme.io/pricing?a=1&amp;b=2'>again</a></p>"##;
        let t = track(&k, "https://t.example.com/", 77, body, ALL);
        assert_eq!(
            t.links,
            [
                "https://acme.io/pricing?a=1&b=2",
                "http://acme.io/Docs",
                "https://acme.io/pricing?a=1&b=2"
            ]
        );
        for (i, _) in t.links.iter().enumerate() {
            let token = k.sign(Token::Click {
                message: 77,
                link: i as u32,
            });
            assert!(
                t.body_html
                    .contains(&format!("https://t.example.com/t/c/{token}")),
                "{}",
                t.body_html
            );
        }
        for kept in [
            "href=\"mailto:x@acme.io\"",
            "href=\"tel:+1\"",
            "href=\"#top\"",
            "href=\"/relative\"",
            "<a>none</a>",
            ">pricing</a>",
        ] {
            assert!(t.body_html.contains(kept), "{kept}: {}", t.body_html);
        }
        assert!(!t.body_html.contains("acme.io/pricing"));
        let unsubscribe = t.unsubscribe_url.clone().unwrap();
        assert_eq!(
            unsubscribe,
            format!(
                "https://t.example.com/t/u/{}",
                k.sign(Token::Unsubscribe { message: 77 })
            )
        );
        // Footer then pixel, at the end of a fragment; neither is tracked.
        let open = format!(
            "https://t.example.com/t/o/{}",
            k.sign(Token::Open { message: 77 })
        );
        let footer_at = t.body_html.find(&unsubscribe).unwrap();
        let pixel_at = t.body_html.find(&open).unwrap();
        assert!(footer_at < pixel_at && t.body_html.ends_with('>'));
    }

    #[test]
    fn the_tail_goes_before_the_body_end_tag_once() {
        let body = "<html><body><p>x</p></body></html><body></body>";
        let t = track(
            &key(),
            "http://h",
            1,
            body,
            TrackingOptions {
                opens: true,
                clicks: false,
                unsubscribe: false,
            },
        );
        assert_eq!(t.body_html.matches("/t/o/").count(), 1);
        assert!(
            t.body_html
                .starts_with("<html><body><p>x</p><img src=\"http://h/t/o/"),
            "{}",
            t.body_html
        );
        assert!(t.body_html.ends_with("></body></html><body></body>"));
    }

    #[test]
    fn nothing_asked_changes_nothing() {
        let body = "<a href=\"https://a.io\">a</a>";
        let t = track(
            &key(),
            "http://h",
            1,
            body,
            TrackingOptions {
                opens: false,
                clicks: false,
                unsubscribe: false,
            },
        );
        assert_eq!(
            t,
            Tracked {
                body_html: body.into(),
                links: vec![],
                unsubscribe_url: None
            }
        );
        // Clicks off: links stay even with the pixel on.
        let t = track(
            &key(),
            "http://h",
            1,
            body,
            TrackingOptions {
                opens: true,
                clicks: false,
                unsubscribe: false,
            },
        );
        assert!(t.body_html.starts_with(body) && t.links.is_empty());
    }

    #[test]
    fn hostile_markup_does_not_break_the_rewrite() {
        for body in [
            "<a href=\"https://a.io\"",
            "<a href=https://a.io/x>unquoted",
            "<<a href=\"https://a.io\">>",
            "<!-- <a href=\"https://hidden.io\"> --><a href=\"https://a.io\">",
            "<script>var s='<a href=\"https://js.io\">';</script><a href=\"https://a.io\">",
            "<select><xmp><a href=\"https://a.io\"></xmp></select>",
            "\u{0}<a href=\"https://a.io/é\">ü</a>",
        ] {
            let t = track(&key(), "http://h", 9, body, ALL);
            assert!(t.links.len() <= 1, "{body}: {:?}", t.links);
            assert!(
                !t.links
                    .iter()
                    .any(|l| l.contains("hidden") || l.contains("js.io"))
            );
            assert!(t.body_html.contains("/t/o/"), "{body}");
        }
    }

    #[test]
    fn attribute_references_decode_like_a_browser() {
        for (raw, want) in [
            ("a&amp;b", "a&b"),
            ("a&amp", "a&"),
            ("?x=1&copy=2", "?x=1&copy=2"),
            ("?x=1&copy;=2", "?x=1\u{a9}=2"),
            ("&notit;", "&notit;"),
            ("&not;it", "\u{ac}it"),
            ("&#38;&#x26;&#X26", "&&&"),
            ("&#0;&#x110000;&#xD800;", "\u{FFFD}\u{FFFD}\u{FFFD}"),
            ("&#128;", "\u{20ac}"),
            ("&#;&#x;&unknown;&", "&#;&#x;&unknown;&"),
            ("&NotEqualTilde;", "\u{2242}\u{338}"),
            ("plain", "plain"),
        ] {
            assert_eq!(decode_attribute(raw), want, "{raw}");
        }
    }

    /// The send path's budget is 10,000 messages a second on one core for
    /// ~2 KB bodies (100 µs each). This runs in the test profile, where
    /// dependencies (lol_html, HMAC) are optimised and this crate is not;
    /// the floor is set well below the measured rate so that a loaded CI
    /// machine does not fail it, and the rate is printed for the record.
    #[test]
    fn tracking_a_2kb_body_is_fast() {
        let mut body = String::from("<html><body>");
        for i in 0..12 {
            body.push_str(&format!(
                "<p>Paragraph {i} about <b>things</b> with a \
                 <a href=\"https://www.acme.io/page/{i}?utm_source=mail&amp;id={i}\">link</a>, \
                 some more words to reach the size of a real cold email.</p>\n"
            ));
        }
        body.push_str("</body></html>");
        assert!((1800..2600).contains(&body.len()), "{}", body.len());
        let k = key();
        let runs = 3000;
        let started = std::time::Instant::now();
        for m in 0..runs {
            let t = track(&k, "https://t.acme.io", m, &body, ALL);
            assert_eq!(t.links.len(), 12);
        }
        let per_second = runs as f64 / started.elapsed().as_secs_f64();
        println!(
            "track: {per_second:.0} messages/s for {} byte bodies",
            body.len()
        );
        // A guard against a quadratic rewrite, not a benchmark (those are
        // in tests/bench): ten times below the usual figure, so a loaded CI
        // machine does not fail it.
        assert!(per_second > 300.0, "{per_second:.0} messages/s");
    }
}
