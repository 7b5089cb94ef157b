//! The plain-text alternative of an HTML body.
//!
//! The HTML is parsed with html5ever (through `scraper`), as a browser or a
//! mail client would, so broken or hostile markup yields the text a reader
//! would see rather than whatever a pattern match happens to leave. The
//! tree is walked iteratively (open and close edges), so deeply nested
//! markup cannot exhaust the stack.
//!
//! Rules: scripts, styles, the head and similar invisible elements are
//! dropped; paragraphs, headings, lists, tables, quotes and `pre` are set
//! apart by a blank line, other blocks (`div`, `li`, `tr`...) and `<br>`
//! start a new line; list items start with `- `; table cells are separated
//! by a space; a link reads `text (url)`, or just its text when that is the
//! address already or the target is a fragment or script; images show their
//! `alt` text; whitespace runs collapse to one space except inside `pre`;
//! there is at most one blank line in a row and none at either end.

use ego_tree::iter::Edge;
use scraper::{Html, Node};

/// Elements whose content is never shown.
const HIDDEN: [&str; 10] = [
    "script", "style", "head", "title", "template", "noscript", "iframe", "object", "svg", "math",
];

/// Blocks set apart by a blank line.
const PARAGRAPHS: [&str; 13] = [
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "dl",
    "table",
    "blockquote",
    "pre",
];

/// Blocks that start on a new line.
const LINES: [&str; 19] = [
    "div",
    "li",
    "tr",
    "hr",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "aside",
    "main",
    "address",
    "center",
    "dd",
    "dt",
    "figure",
    "figcaption",
    "form",
    "caption",
];

/// Derives the plain-text alternative of `html`.
pub fn html_to_text(html: &str) -> String {
    let doc = Html::parse_document(html);
    let mut w = Writer::default();
    // How many hidden elements enclose the current node.
    let mut hidden = 0usize;
    let mut pre = 0usize;
    // Open links: where their text starts in the output, and their target.
    let mut links: Vec<(usize, String)> = Vec::new();
    for edge in doc.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Text(t) if hidden == 0 => w.text(t, pre > 0),
                Node::Element(e) => {
                    let name = e.name();
                    if hidden > 0 || HIDDEN.contains(&name) {
                        hidden += 1;
                        continue;
                    }
                    match name {
                        "br" => w.line_break(),
                        "td" | "th" => w.space = true,
                        "img" => {
                            if let Some(alt) = e.attr("alt") {
                                w.text(alt, false);
                            }
                        }
                        "a" => links.push((w.out.len(), e.attr("href").unwrap_or("").to_owned())),
                        "pre" => pre += 1,
                        _ => {}
                    }
                    w.block(name);
                    if name == "li" {
                        w.text("- ", true);
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                let Node::Element(e) = node.value() else {
                    continue;
                };
                if hidden > 0 {
                    hidden -= 1;
                    continue;
                }
                let name = e.name();
                match name {
                    "a" => {
                        if let Some((start, href)) = links.pop() {
                            w.link_target(start, &href);
                        }
                    }
                    "pre" => pre = pre.saturating_sub(1),
                    _ => {}
                }
                w.block(name);
            }
        }
    }
    w.out
}

/// The output with the breaks and space owed before the next visible text,
/// so that breaks never stack up at the ends or between empty blocks.
#[derive(Default)]
struct Writer {
    out: String,
    /// Line breaks owed before the next text (at most 2: one blank line).
    breaks: usize,
    /// A space owed before the next text.
    space: bool,
}

impl Writer {
    fn block(&mut self, name: &str) {
        if PARAGRAPHS.contains(&name) {
            self.breaks = self.breaks.max(2);
        } else if LINES.contains(&name) {
            self.breaks = self.breaks.max(1);
        }
    }

    /// `<br>` adds to what is owed, so two in a row leave a blank line.
    fn line_break(&mut self) {
        self.breaks = (self.breaks + 1).min(2);
    }

    fn flush(&mut self) {
        if self.out.is_empty() {
            self.breaks = 0;
            self.space = false;
        } else if self.breaks > 0 {
            self.out.extend(std::iter::repeat_n('\n', self.breaks));
            self.breaks = 0;
            self.space = false;
        } else if self.space {
            // A list marker already ends in a space.
            if !self.out.ends_with(' ') {
                self.out.push(' ');
            }
            self.space = false;
        }
    }

    fn text(&mut self, text: &str, preformatted: bool) {
        if preformatted {
            if !text.is_empty() {
                self.flush();
                self.out.push_str(text);
            }
            return;
        }
        for c in text.chars() {
            if c.is_whitespace() {
                self.space = true;
            } else {
                self.flush();
                self.out.push(c);
            }
        }
    }

    /// Closes a link whose text began at `start`: adds ` (url)` unless the
    /// text says the address already; a link without text shows the
    /// address alone.
    fn link_target(&mut self, start: usize, href: &str) {
        let href = href.trim();
        let lower = href.to_ascii_lowercase();
        if href.is_empty() || href.starts_with('#') || lower.starts_with("javascript:") {
            return;
        }
        let text = self.out.get(start..).unwrap_or("").trim();
        let bare = |s: &str| {
            let s = s.trim_end_matches('/');
            let s = s.split_once("://").map_or(s, |(_, rest)| rest);
            s.strip_prefix("mailto:").unwrap_or(s).to_ascii_lowercase()
        };
        if text.is_empty() {
            self.text(href, false);
        } else if bare(text) != bare(href) {
            self.space = true;
            self.text(&format!("({href})"), false);
        }
    }
}

#[cfg(test)]
mod unit {
    use super::html_to_text as t;

    #[test]
    fn blocks_become_line_breaks() {
        assert_eq!(
            t("<p>Hi Ann,</p><p>One <b>idea</b>.<br>Two.</p><div>Bo</div><div>Acme</div>"),
            "Hi Ann,\n\nOne idea.\nTwo.\n\nBo\nAcme"
        );
        assert_eq!(
            t("<h1>Title</h1>text<br><br>after"),
            "Title\n\ntext\n\nafter"
        );
        assert_eq!(
            t("<ul><li>one</li><li> two</li></ul>end"),
            "- one\n- two\n\nend"
        );
        assert_eq!(
            t("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>"),
            "a b\nc"
        );
        assert_eq!(t("<p></p><div></div><p>x</p><p></p>"), "x");
    }

    #[test]
    fn links_show_their_address() {
        assert_eq!(
            t(r#"<p>See <a href="https://acme.com/x">our page</a>.</p>"#),
            "See our page (https://acme.com/x)."
        );
        assert_eq!(
            t(r#"<a href="https://acme.com/">acme.com</a> <a href="mailto:a@b.co">a@b.co</a>"#),
            "acme.com a@b.co"
        );
        assert_eq!(
            t(
                r##"<a href="#top">top</a> <a href="javascript:alert(1)">x</a> <a href="https://t.co/1"><img src="p.png"></a>"##
            ),
            "top x https://t.co/1"
        );
        assert_eq!(
            t(r#"<a href="https://acme.com"><img alt="Acme logo"></a>"#),
            "Acme logo (https://acme.com)"
        );
    }

    #[test]
    fn invisible_content_is_dropped() {
        let html = "<html><head><title>T</title><style>p{color:red}</style></head>\
                    <body><script>alert('x')</script><p>Visible</p><!-- note --><noscript>n</noscript></body></html>";
        assert_eq!(t(html), "Visible");
        // An unclosed script swallows the rest, as it would in a browser.
        assert_eq!(t("<p>a</p><script>b"), "a");
    }

    #[test]
    fn whitespace_collapses_except_in_pre() {
        assert_eq!(t("  Hello \n\t  world  &nbsp; !  "), "Hello world !");
        assert_eq!(
            t("<p>code:</p><pre>a  b\n  c</pre><p>end</p>"),
            "code:\n\na  b\n  c\n\nend"
        );
    }

    #[test]
    fn entities_and_broken_markup() {
        assert_eq!(
            t("Tom &amp; Jerry &lt;3 <b>bold <i>both</b> it</i>"),
            "Tom & Jerry <3 bold both it"
        );
        assert_eq!(t("text only"), "text only");
        assert_eq!(t(""), "");
        let deep = "<div>".repeat(5_000) + "deep" + &"</div>".repeat(5_000);
        assert_eq!(t(&deep), "deep");
    }
}
