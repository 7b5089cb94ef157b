//! One pass over the page's tokens that collects everything the extractors
//! read: head metadata, JSON-LD blocks, links with their text, forms, media,
//! and the visible text.
//!
//! The page goes through html5ever's tokenizer only, with no tree: the
//! extractors need start tags, end tags and text in document order, which
//! the tokens give directly. A DOM was built only to be walked once in that
//! order and, because the tree builder walks its stack of open elements on
//! most tags, a page nested 100,000 deep cost minutes; a tokenizer keeps no
//! stack, so no nesting cap is needed. What the tree builder would do and
//! the extractors notice is done here: raw-text elements switch the
//! tokenizer's state as the tree builder does, a paragraph ends where the
//! parser would close it, nested forms are ignored, and HTML tags break out
//! of unclosed SVG or MathML.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

use super::limits::cap_bytes;

/// Links kept per page; a page with more is a sitemap or an attack.
pub(crate) const MAX_LINKS: usize = 1_000;
/// Visible text kept per page, for email and phone scanning.
pub(crate) const MAX_TEXT_BYTES: usize = 1024 * 1024;
/// JSON-LD blocks kept per page, and the size of each.
const MAX_JSON_LD: usize = 20;
const MAX_JSON_LD_BYTES: usize = 1024 * 1024;
const MAX_FORMS: usize = 50;
const MAX_MEDIA: usize = 100;
const MAX_CF_EMAILS: usize = 50;
const MAX_ANCHOR_TEXT: usize = 200;
const MAX_PARAGRAPH: usize = 4_000;
/// Script sources and meta tags kept per page, for technology detection.
const MAX_SCRIPT_SRCS: usize = 200;
const MAX_METAS: usize = 200;
/// Inline script text kept per page, all scripts together.
const MAX_SCRIPT_BYTES: usize = 1024 * 1024;

/// A link: `<a>` or `<area>`.
#[derive(Debug, Default)]
pub(crate) struct Anchor {
    pub href: String,
    pub text: String,
}

#[derive(Debug, Default)]
pub(crate) struct Form {
    /// A site search (role, action or class says so).
    pub search: bool,
    /// Inputs a visitor fills in, other than a search box.
    pub fields: usize,
    pub has_email: bool,
    /// Attribute values and text inside the form, for its purpose.
    pub wording: String,
}

#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub lang: Option<String>,
    pub title: Option<String>,
    pub base_href: Option<String>,
    pub description: Option<String>,
    pub og_site_name: Option<String>,
    pub og_description: Option<String>,
    pub og_locale: Option<String>,
    pub json_ld: Vec<String>,
    pub anchors: Vec<Anchor>,
    /// An RSS or Atom feed is announced.
    pub has_feed: bool,
    pub forms: Vec<Form>,
    pub has_password: bool,
    pub has_video: bool,
    /// `src` of iframes, embeds and objects.
    pub media: Vec<String>,
    /// Cloudflare-protected addresses: the hex of `data-cfemail` or of an
    /// `/cdn-cgi/l/email-protection#` link.
    pub cf_emails: Vec<String>,
    /// Visible text; block elements are separated by newlines.
    pub text: String,
    /// The first paragraph of at least 60 characters outside navigation,
    /// footers and forms, whitespace collapsed.
    pub first_paragraph: Option<String>,
    /// What technology fingerprints read beside the HTML.
    pub assets: PageAssets,
}

/// The parts of a page that technology fingerprints match besides its
/// HTML: `<script src>`, inline scripts and `<meta>` tags.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PageAssets {
    pub script_srcs: Vec<String>,
    /// Inline scripts' text, at most 1 MB together.
    pub scripts: Vec<String>,
    /// `(name or property, lower case; content)`.
    pub metas: Vec<(String, String)>,
}

/// Elements whose text a visitor does not read.
///
/// `head` is not among them: without a tree, an unclosed `<head>` would hide
/// the whole page, and what a head holds is tags and raw text anyway.
fn is_hidden(name: &str) -> bool {
    matches!(
        name,
        "script" | "style" | "noscript" | "template" | "svg" | "math" | "select" | "textarea"
    )
}

/// Elements that end a line of text.
fn is_block(name: &str) -> bool {
    is_heading(name)
        || matches!(
            name,
            "address"
                | "article"
                | "aside"
                | "blockquote"
                | "br"
                | "dd"
                | "div"
                | "dl"
                | "dt"
                | "fieldset"
                | "figcaption"
                | "figure"
                | "footer"
                | "form"
                | "header"
                | "hr"
                | "li"
                | "main"
                | "nav"
                | "ol"
                | "p"
                | "pre"
                | "section"
                | "table"
                | "td"
                | "th"
                | "tr"
                | "ul"
                | "button"
                | "label"
        )
}

/// Tokenizes the page once and returns what it saw.
pub(crate) fn scan(html: &str) -> Scan {
    let tokenizer = Tokenizer::new(
        Sink(RefCell::new(Collector::default())),
        TokenizerOpts::default(),
    );
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    // The sink never asks the tokenizer to pause for a script, so one feed
    // reads the whole input.
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    let mut collector = tokenizer.sink.0.into_inner();
    collector.end_paragraph();
    collector.scan
}

/// Elements whose content the tokenizer reads as text up to their end tag,
/// and how (the tree builder's switch, with scripting enabled).
fn raw_kind(name: &str) -> Option<TokenSinkResult<()>> {
    Some(match name {
        "title" | "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
        "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
            TokenSinkResult::RawData(RawKind::Rawtext)
        }
        "script" => TokenSinkResult::RawData(RawKind::ScriptData),
        "plaintext" => TokenSinkResult::Plaintext,
        _ => return None,
    })
}

fn is_heading(name: &str) -> bool {
    matches!(name, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

/// Start tags that close an open paragraph (the HTML standard's list): the
/// blocks other than table cells, rows and inline controls, and a few more.
fn closes_paragraph(name: &str) -> bool {
    (is_block(name) && !matches!(name, "br" | "td" | "th" | "tr" | "button" | "label"))
        || matches!(
            name,
            "center"
                | "details"
                | "dialog"
                | "dir"
                | "hgroup"
                | "menu"
                | "summary"
                | "plaintext"
                | "xmp"
                | "listing"
        )
}

/// HTML start tags that end unclosed SVG or MathML content (the standard's
/// "breakout" list, without `font`'s attribute test).
fn breaks_out_of_foreign(name: &str) -> bool {
    is_heading(name)
        || matches!(
            name,
            "b" | "big"
                | "blockquote"
                | "body"
                | "br"
                | "center"
                | "code"
                | "dd"
                | "div"
                | "dl"
                | "dt"
                | "em"
                | "embed"
                | "head"
                | "hr"
                | "i"
                | "img"
                | "li"
                | "listing"
                | "menu"
                | "meta"
                | "nobr"
                | "ol"
                | "p"
                | "pre"
                | "ruby"
                | "s"
                | "small"
                | "span"
                | "strong"
                | "strike"
                | "sub"
                | "sup"
                | "table"
                | "tt"
                | "u"
                | "ul"
                | "var"
        )
}

/// Hands the tokens to the collector. The tokenizer takes its sink by
/// shared reference, hence the cell.
struct Sink(RefCell<Collector>);

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut collector = self.0.borrow_mut();
        match token {
            Token::TagToken(tag) => match tag.kind {
                TagKind::StartTag => return collector.start_tag(&Element(&tag)),
                TagKind::EndTag => collector.end_tag(&tag.name),
            },
            Token::CharacterTokens(text) => collector.text(&text),
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// A start tag, read like an element.
struct Element<'a>(&'a Tag);

impl Element<'_> {
    fn name(&self) -> &str {
        &self.0.name
    }

    fn attr(&self, name: &str) -> Option<&str> {
        let attr = self.0.attrs.iter().find(|a| &*a.name.local == name)?;
        Some(&attr.value)
    }
}

#[derive(Default)]
struct Collector {
    scan: Scan,
    hidden: usize,
    /// Inside `nav` or `footer`.
    chrome: usize,
    foreign: usize,
    in_title: bool,
    json_ld: Option<String>,
    /// Inside an inline `<script>` other than JSON-LD.
    script: Option<String>,
    anchor: Option<usize>,
    form: Option<usize>,
    paragraph: Option<String>,
}

impl Collector {
    fn start_tag(&mut self, e: &Element) -> TokenSinkResult<()> {
        let name = e.name();
        if self.foreign > 0 && breaks_out_of_foreign(name) {
            self.hidden = self.hidden.saturating_sub(self.foreign);
            self.foreign = 0;
        }
        let in_html = self.foreign == 0;
        if in_html && closes_paragraph(name) {
            self.end_paragraph();
        }
        self.open_element(e);
        if !in_html || name == "svg" || name == "math" {
            // In SVG and MathML `<x/>` closes itself, and nothing is raw text.
            if e.0.self_closing {
                self.end_tag(name);
            }
            return TokenSinkResult::Continue;
        }
        raw_kind(name).unwrap_or(TokenSinkResult::Continue)
    }

    fn open_element(&mut self, e: &Element) {
        let name = e.name();
        if let Some(hex) = e.attr("data-cfemail")
            && self.scan.cf_emails.len() < MAX_CF_EMAILS
        {
            self.scan.cf_emails.push(hex.to_owned());
        }
        match name {
            "html" if self.scan.lang.is_none() => {
                self.scan.lang = e.attr("lang").map(str::to_owned)
            }
            "title" if self.foreign == 0 && self.scan.title.is_none() => self.in_title = true,
            "base" if self.scan.base_href.is_none() => {
                self.scan.base_href = e.attr("href").map(str::to_owned)
            }
            "meta" => self.meta(e),
            "link" => {
                let rel = e.attr("rel").unwrap_or_default().to_ascii_lowercase();
                let kind = e.attr("type").unwrap_or_default().to_ascii_lowercase();
                if rel.split_whitespace().any(|r| r == "alternate")
                    && (kind.contains("rss") || kind.contains("atom"))
                {
                    self.scan.has_feed = true;
                }
            }
            "script" => {
                let kind = e.attr("type").unwrap_or_default().to_ascii_lowercase();
                let assets = &mut self.scan.assets;
                if kind.contains("ld+json") {
                    if self.scan.json_ld.len() < MAX_JSON_LD {
                        self.json_ld = Some(String::new());
                    }
                } else if let Some(src) = e.attr("src") {
                    if assets.script_srcs.len() < MAX_SCRIPT_SRCS {
                        assets.script_srcs.push(cap_bytes(src, 2_000).to_owned());
                    }
                } else {
                    self.script = Some(String::new());
                }
            }
            "a" | "area" => self.anchor(e),
            "form" => self.form(e),
            "input" | "textarea" | "select" => self.field(e),
            "video" => self.scan.has_video = true,
            "iframe" | "embed" | "object" | "frame" => {
                let src = e.attr("src").or_else(|| e.attr("data"));
                if let Some(src) = src
                    && self.scan.media.len() < MAX_MEDIA
                {
                    self.scan.media.push(src.to_owned());
                }
            }
            "p" if self.scan.first_paragraph.is_none()
                && self.paragraph.is_none()
                && self.chrome == 0
                && self.form.is_none() =>
            {
                self.paragraph = Some(String::new())
            }
            "nav" | "footer" => self.chrome += 1,
            _ => {}
        }
        if name == "svg" || name == "math" {
            self.foreign += 1;
        }
        if is_hidden(name) {
            self.hidden += 1;
        }
        if is_block(name) {
            self.push_text("\n");
        }
    }

    fn end_tag(&mut self, name: &str) {
        if !matches!(name, "br" | "button" | "label") && is_block(name) {
            // The block that held an unclosed paragraph ends it.
            self.end_paragraph();
        }
        match name {
            "title" => self.in_title = false,
            "script" => {
                if let Some(script) = self.script.take() {
                    let assets = &mut self.scan.assets;
                    let used: usize = assets.scripts.iter().map(String::len).sum();
                    let kept = cap_bytes(&script, MAX_SCRIPT_BYTES.saturating_sub(used));
                    if !kept.is_empty() {
                        assets.scripts.push(kept.to_owned());
                    }
                }
                if let Some(block) = self.json_ld.take()
                    && block.len() < MAX_JSON_LD_BYTES
                {
                    self.scan.json_ld.push(block);
                }
            }
            "a" => self.anchor = None,
            "form" => self.form = None,
            "nav" | "footer" => self.chrome = self.chrome.saturating_sub(1),
            _ => {}
        }
        if name == "svg" || name == "math" {
            self.foreign = self.foreign.saturating_sub(1);
        }
        if is_hidden(name) {
            self.hidden = self.hidden.saturating_sub(1);
        }
        if is_block(name) {
            self.push_text("\n");
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(block) = &mut self.json_ld {
            // One byte over the cap marks the block as too large.
            push_capped(block, text, MAX_JSON_LD_BYTES + 1);
            return;
        }
        if let Some(script) = &mut self.script {
            push_capped(script, text, MAX_SCRIPT_BYTES);
            return;
        }
        if self.in_title {
            let title = self.scan.title.get_or_insert_with(String::new);
            push_capped(title, text, 1_000);
            return;
        }
        if self.hidden > 0 {
            return;
        }
        if let Some(index) = self.anchor
            && let Some(anchor) = self.scan.anchors.get_mut(index)
        {
            push_capped(&mut anchor.text, text, MAX_ANCHOR_TEXT);
        }
        if let Some(index) = self.form
            && let Some(form) = self.scan.forms.get_mut(index)
        {
            push_capped(&mut form.wording, text, 1_000);
        }
        if let Some(paragraph) = &mut self.paragraph {
            push_capped(paragraph, text, MAX_PARAGRAPH);
        }
        self.push_text(text);
    }

    fn push_text(&mut self, text: &str) {
        let room = MAX_TEXT_BYTES.saturating_sub(self.scan.text.len());
        if room == 0 {
            return;
        }
        // No-break spaces separate words like spaces do.
        let text = cap_bytes(text, room);
        self.scan
            .text
            .extend(text.chars().map(|c| if c == '\u{a0}' { ' ' } else { c }));
    }

    fn end_paragraph(&mut self) {
        if let Some(paragraph) = self.paragraph.take() {
            let collapsed = collapse_whitespace(&paragraph);
            // Cookie banners come first on many pages and say nothing about
            // the company.
            let is_banner = collapsed.to_lowercase().contains("cookie");
            if collapsed.chars().count() >= 60 && !is_banner {
                self.scan.first_paragraph = Some(collapsed);
            }
        }
    }

    fn meta(&mut self, e: &Element) {
        let key = e
            .attr("property")
            .or_else(|| e.attr("name"))
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let Some(content) = e.attr("content").map(str::trim).filter(|c| !c.is_empty()) else {
            return;
        };
        if !key.is_empty() && self.scan.assets.metas.len() < MAX_METAS {
            let kept = (
                cap_bytes(&key, 200).to_owned(),
                cap_bytes(content, 2_000).to_owned(),
            );
            self.scan.assets.metas.push(kept);
        }
        let slot = match key.as_str() {
            "description" => &mut self.scan.description,
            "og:site_name" => &mut self.scan.og_site_name,
            "og:description" => &mut self.scan.og_description,
            "og:locale" => &mut self.scan.og_locale,
            _ => return,
        };
        if slot.is_none() {
            *slot = Some(cap_bytes(content, 4_000).to_owned());
        }
    }

    fn anchor(&mut self, e: &Element) {
        let Some(href) = e.attr("href") else {
            return;
        };
        if let Some((_, hex)) = href.split_once("/cdn-cgi/l/email-protection#")
            && self.scan.cf_emails.len() < MAX_CF_EMAILS
        {
            self.scan.cf_emails.push(hex.to_owned());
        }
        if self.scan.anchors.len() >= MAX_LINKS {
            return;
        }
        self.scan.anchors.push(Anchor {
            href: cap_bytes(href, 2_000).to_owned(),
            text: e.attr("aria-label").map(str::to_owned).unwrap_or_default(),
        });
        if e.name() == "a" {
            self.anchor = Some(self.scan.anchors.len() - 1);
        }
    }

    fn form(&mut self, e: &Element) {
        // The parser ignores a form inside a form.
        if self.form.is_some() || self.scan.forms.len() >= MAX_FORMS {
            return;
        }
        let mut wording = String::new();
        for attr in ["id", "class", "name", "action", "role", "aria-label"] {
            if let Some(value) = e.attr(attr) {
                push_capped(&mut wording, value, 1_000);
                wording.push(' ');
            }
        }
        let lowered = wording.to_lowercase();
        self.scan.forms.push(Form {
            search: lowered.contains("search") || e.attr("role") == Some("search"),
            wording,
            ..Form::default()
        });
        self.form = Some(self.scan.forms.len() - 1);
    }

    fn field(&mut self, e: &Element) {
        let kind = e.attr("type").unwrap_or("text").to_ascii_lowercase();
        if kind == "password" {
            self.scan.has_password = true;
        }
        let Some(form) = self.form.and_then(|index| self.scan.forms.get_mut(index)) else {
            return;
        };
        for attr in ["name", "id", "placeholder", "value", "aria-label"] {
            if let Some(value) = e.attr(attr) {
                push_capped(&mut form.wording, value, 1_000);
                form.wording.push(' ');
            }
        }
        let name = e.attr("name").unwrap_or_default().to_ascii_lowercase();
        let is_search_box = matches!(name.as_str(), "q" | "s" | "query" | "search" | "keyword");
        let is_filled_in = !matches!(
            kind.as_str(),
            "hidden" | "submit" | "button" | "reset" | "image" | "search"
        );
        if is_filled_in && !is_search_box {
            form.fields += 1;
        }
        if kind == "email" || (e.name() == "input" && name.contains("email")) {
            form.has_email = true;
        }
    }
}

fn push_capped(buffer: &mut String, text: &str, max: usize) {
    let room = max.saturating_sub(buffer.len());
    buffer.push_str(cap_bytes(text, room));
}

/// Runs of whitespace become one space; ends are trimmed.
pub(crate) fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
