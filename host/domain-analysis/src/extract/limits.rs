//! What the HTML parser is given: at most [`MAX_HTML_BYTES`], and no deeper
//! than [`MAX_NESTING_DEPTH`].
//!
//! The depth cap exists because html5ever, like the HTML standard it
//! follows, walks its stack of open elements on most start and end tags
//! ("has a `p` element in button scope"): a page of 100,000 nested `<div>`s
//! costs 5·10⁹ steps and took close to two minutes. Browsers cap the depth
//! too (WebKit at 512). We pre-scan the markup with a small tokenizer that
//! follows the same stack in a deliberately pessimistic way and cut the
//! document where it would first exceed the cap; what follows is lost, which
//! only happens on hostile or broken pages (real pages nest 20 to 60 deep).
//!
//! The model over-estimates the parser's stack, never under-estimates it by
//! more than a small factor:
//! - void elements, raw-text elements (`script`, `style`...) and elements
//!   the parser closes implicitly (`p`, `li`, `td`...) are not counted, as
//!   they cannot nest without a counted element between them;
//! - an end tag pops up to the nearest open element of its name, or is
//!   ignored;
//! - a formatting element (`b`, `a`, `font`...) closed implicitly by an
//!   ancestor's end tag stays counted: the parser "reconstructs" it at the
//!   next text, so it reopens. It is forgotten when its own end tag comes, at
//!   the end of the table cell (or other marker) it was opened in, or by the
//!   parser's "Noah's Ark" rule (three identical ones at most).

/// The most HTML read from one page. Larger pages are cut at a character
/// boundary: the head and the top of the body hold what we extract.
pub const MAX_HTML_BYTES: usize = 2 * 1024 * 1024;

/// The deepest element nesting handed to the parser (see the module
/// documentation).
pub const MAX_NESTING_DEPTH: usize = 256;

/// Cuts `s` to at most `max` bytes at a character boundary.
pub(crate) fn cap_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Elements without content.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen", "basefont", "bgsound", "frame",
];

/// Elements whose content is text up to their end tag.
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// Elements the parser closes when a sibling starts, so they do not nest
/// directly.
const IMPLICITLY_CLOSED: &[&str] = &[
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot", "rb",
    "rt", "rtc", "rp", "caption", "colgroup",
];

/// Elements whose end clears the formatting elements opened inside them.
const MARKERS: &[&str] = &[
    "td", "th", "caption", "applet", "object", "marquee", "template",
];

const FORMATTING: &[&str] = &[
    "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u",
];

/// A formatting element the parser will reopen, or the start of a marker.
enum Pending<'a> {
    Marker,
    /// The element's name and its raw attributes, the identity "Noah's Ark"
    /// compares.
    Formatting(&'a str, &'a str),
}

/// The tokenizer's view of the open elements.
struct Model<'a> {
    /// Open elements: name and raw attributes.
    open: Vec<(&'a str, &'a str)>,
    pending: Vec<Pending<'a>>,
    /// How many entries of `pending` are formatting elements (not markers).
    reopened: usize,
    /// Open `svg`/`math` elements: inside them `<x/>` closes itself.
    foreign: usize,
}

impl<'a> Model<'a> {
    fn depth(&self) -> usize {
        self.open.len() + self.reopened
    }

    fn start(&mut self, name: &'a str, attrs: &'a str, self_closing: bool) {
        if MARKERS.contains(&name) {
            self.pending.push(Pending::Marker);
        }
        let counted = !(VOID.contains(&name)
            || IMPLICITLY_CLOSED.contains(&name)
            || (self_closing && self.foreign > 0));
        if counted {
            if name == "svg" || name == "math" {
                self.foreign += 1;
            }
            self.open.push((name, attrs));
        }
    }

    fn end(&mut self, name: &'a str) {
        if MARKERS.contains(&name) {
            // Everything pending since the marker is dropped with it.
            if let Some(at) = self
                .pending
                .iter()
                .rposition(|p| matches!(p, Pending::Marker))
            {
                // Only formatting entries follow the last marker.
                self.reopened -= self.pending.len() - at - 1;
                self.pending.truncate(at);
            }
        }
        let Some(at) = self.open.iter().rposition(|(open, _)| *open == name) else {
            // An end tag of a formatting element that was closed implicitly
            // removes it from the parser's list. The search is bounded (the
            // list may hold many markers); not finding an entry only keeps
            // it counted, the safe side.
            let window = self.pending.len().saturating_sub(2 * MAX_NESTING_DEPTH);
            if let Some(at) = self.pending[window..]
                .iter()
                .rposition(|p| matches!(p, Pending::Formatting(n, _) if *n == name))
            {
                self.pending.remove(window + at);
                self.reopened -= 1;
            }
            return;
        };
        let popped: Vec<_> = self.open.drain(at..).collect();
        for (index, (popped_name, attrs)) in popped.into_iter().enumerate() {
            if popped_name == "svg" || popped_name == "math" {
                self.foreign = self.foreign.saturating_sub(1);
            }
            if index > 0 && FORMATTING.contains(&popped_name) {
                self.remember(popped_name, attrs);
            }
        }
    }

    /// Keeps a formatting element closed implicitly, as the parser's list of
    /// active formatting elements does, with its limit of three identical
    /// entries after the last marker.
    fn remember(&mut self, name: &'a str, attrs: &'a str) {
        let since_marker = self
            .pending
            .iter()
            .rposition(|p| matches!(p, Pending::Marker))
            .map_or(0, |at| at + 1);
        let same: Vec<usize> = (since_marker..self.pending.len())
            .filter(|&i| matches!(self.pending[i], Pending::Formatting(n, a) if n == name && a == attrs))
            .collect();
        if same.len() >= 3 {
            self.pending.remove(same[0]);
            self.reopened -= 1;
        }
        self.pending.push(Pending::Formatting(name, attrs));
        self.reopened += 1;
    }
}

/// Cuts `html` before the first tag that would nest deeper than
/// `max_depth`. Returns the input unchanged when it never does. Linear in
/// the input (each tag costs at most `max_depth` steps).
pub(crate) fn cap_nesting(html: &str, max_depth: usize) -> &str {
    let bytes = html.as_bytes();
    let mut model = Model {
        open: Vec::new(),
        pending: Vec::new(),
        reopened: 0,
        foreign: 0,
    };
    let mut i = 0;
    while let Some(offset) = find_byte(&bytes[i..], b'<') {
        let start = i + offset;
        let rest = &html[start..];
        if rest.starts_with("<!--") {
            i = find(bytes, start + 4, b"-->").map_or(bytes.len(), |end| end + 3);
        } else if rest.starts_with("<!") || rest.starts_with("<?") {
            i = find_byte(&bytes[start..], b'>').map_or(bytes.len(), |end| start + end + 1);
        } else if let Some(tag) = read_tag(html, start) {
            i = tag.end;
            if tag.closing {
                model.end(tag.name);
                continue;
            }
            model.start(tag.name, tag.attrs, tag.self_closing);
            if model.depth() > max_depth {
                return &html[..start];
            }
            if tag.name == "plaintext" {
                break;
            }
            if RAW_TEXT.contains(&tag.name) {
                i = skip_raw_text(html, i, tag.name);
            }
        } else {
            i = start + 1;
        }
        if i >= bytes.len() {
            break;
        }
    }
    html
}

struct Tag<'a> {
    name: &'a str,
    attrs: &'a str,
    closing: bool,
    self_closing: bool,
    /// The byte after the tag's `>`.
    end: usize,
}

/// Reads the tag at `start` (a `<`), if one begins there. Names are
/// compared in lower case: the scan keeps only names made of ASCII letters
/// and digits that are already lower case, and treats others as unknown
/// elements, which are counted like any other.
fn read_tag(html: &str, start: usize) -> Option<Tag<'_>> {
    let bytes = html.as_bytes();
    let mut i = start + 1;
    let closing = bytes.get(i) == Some(&b'/');
    if closing {
        i += 1;
    }
    if !bytes.get(i).is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let name_start = i;
    while bytes
        .get(i)
        .is_some_and(|b| !b.is_ascii_whitespace() && *b != b'/' && *b != b'>')
    {
        i += 1;
    }
    let name = &html[name_start..i];
    let attrs_start = i;
    // Find the closing `>`, skipping quoted attribute values.
    let mut quote = None;
    while let Some(&b) = bytes.get(i) {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'>' => break,
            None => {}
        }
        i += 1;
    }
    let attrs = &html[attrs_start..i.min(html.len())];
    let self_closing = attrs.trim_end().ends_with('/');
    Some(Tag {
        name: lower_name(name),
        attrs,
        closing,
        self_closing,
        end: (i + 1).min(html.len()),
    })
}

/// Tag names as the table lookups expect them, without allocating: a
/// name with upper-case letters is mapped to the known name it spells, or
/// to a fixed unknown name (counted like any other element, the
/// pessimistic side).
fn lower_name(name: &str) -> &str {
    const OTHERS: &[&str] = &[
        "div",
        "span",
        "table",
        "svg",
        "math",
        "ul",
        "ol",
        "dl",
        "form",
        "center",
        "plaintext",
        "html",
        "head",
        "body",
    ];
    if !name.bytes().any(|b| b.is_ascii_uppercase()) {
        return name;
    }
    [
        VOID,
        RAW_TEXT,
        IMPLICITLY_CLOSED,
        MARKERS,
        FORMATTING,
        OTHERS,
    ]
    .into_iter()
    .flatten()
    .find(|known| known.eq_ignore_ascii_case(name))
    .copied()
    .unwrap_or("x-mixed-case")
}

/// The index after the end tag closing a raw-text element opened before
/// `from`.
fn skip_raw_text(html: &str, from: usize, name: &str) -> usize {
    let bytes = html.as_bytes();
    let mut i = from;
    while let Some(at) = find(bytes, i, b"</") {
        let after = at + 2;
        let candidate = bytes.get(after..after + name.len());
        if candidate.is_some_and(|c| c.eq_ignore_ascii_case(name.as_bytes())) {
            return at;
        }
        i = after;
    }
    bytes.len()
}

fn find_byte(haystack: &[u8], needle: u8) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

fn find(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|at| from + at)
}
