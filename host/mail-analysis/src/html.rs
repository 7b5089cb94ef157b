//! HTML to text, simply: enough to classify a reply and show it, not a renderer.
//! Block elements become line breaks so the line-based quote trimming still works.

/// Elements whose start or end is a line break.
const BLOCK: &[&str] = &[
    "p",
    "div",
    "br",
    "tr",
    "li",
    "ul",
    "ol",
    "table",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "hr",
    "pre",
    "section",
    "article",
    "header",
    "footer",
    "dd",
    "dt",
    "center",
    "address",
];
/// Elements whose content is never text.
const SKIP: &[&str] = &[
    "head", "style", "script", "title", "template", "xml", "noscript",
];

/// Converts HTML to plain text: tags dropped, block elements as line breaks,
/// `<head>`/`<style>`/`<script>` content and comments removed, entities decoded,
/// blank-line runs collapsed.
pub(crate) fn to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    let mut skip_until: Option<&'static str> = None;
    while let Some(lt) = rest.find('<') {
        if skip_until.is_none() {
            push_text(&mut out, &rest[..lt]);
        }
        rest = &rest[lt..];
        if rest.starts_with("<!--") {
            rest = rest.find("-->").map_or("", |e| &rest[e + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else {
            rest = "";
            break;
        };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if let Some(skip) = skip_until {
            if closing && name == skip {
                skip_until = None;
            }
            continue;
        }
        if !closing
            && !tag.ends_with('/')
            && let Some(s) = SKIP.iter().find(|s| **s == name)
        {
            skip_until = Some(s);
            continue;
        }
        if BLOCK.contains(&name.as_str()) && !out.ends_with('\n') {
            out.push('\n');
        } else if matches!(name.as_str(), "td" | "th") && !out.ends_with([' ', '\n']) {
            out.push(' ');
        }
    }
    if skip_until.is_none() {
        push_text(&mut out, rest);
    }
    tidy(&out)
}

/// Cuts an HTML reply before the quoted history the common clients mark up (Gmail,
/// Outlook, Apple Mail, Thunderbird, Yahoo), so the new text is what remains.
pub(crate) fn strip_quoted(html: &str) -> &str {
    const MARKERS: &[&str] = &[
        "class=\"gmail_quote",
        "class=\"gmail_attr",
        "id=\"divrplyfwdmsg",
        "id=\"appendonsend",
        "id=\"mail-editor-reference-message-container",
        "class=\"yahoo_quoted",
        "class=\"moz-cite-prefix",
        "type=\"cite",
        "<blockquote",
        "border-top:solid #e1e1e1",
        "border-top: solid #e1e1e1",
        "border-top:solid #b5c4df",
    ];
    let lower = html.to_ascii_lowercase();
    let cut = MARKERS.iter().filter_map(|m| lower.find(m)).min();
    match cut {
        // Cut at the start of the tag that carries the marker.
        Some(pos) => {
            let start = lower[..pos].rfind('<').unwrap_or(pos);
            &html[..start]
        }
        None => html,
    }
}

fn push_text(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        push_ws(out, &rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
            .map(|e| e + 1);
        match end
            .filter(|e| rest[*e..].starts_with(';'))
            .and_then(|e| entity(&rest[1..e]).map(|c| (e, c)))
        {
            Some((e, c)) => {
                if c == '\u{a0}' {
                    out.push(' ');
                } else {
                    out.push(c);
                }
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    push_ws(out, rest);
}

/// Pushes text with HTML whitespace rules: any whitespace run is one space.
fn push_ws(out: &mut String, text: &str) {
    for c in text.chars() {
        if c.is_whitespace() {
            if !out.ends_with([' ', '\n']) && !out.is_empty() {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
}

fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code).filter(|c| !c.is_control() || *c == '\n');
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        "rsquo" | "lsquo" => '\'',
        "rdquo" | "ldquo" => '"',
        "ndash" => '\u{2013}',
        "mdash" => '\u{2014}',
        "hellip" => '\u{2026}',
        "copy" => '\u{a9}',
        "euro" => '\u{20ac}',
        "laquo" => '\u{ab}',
        "raquo" => '\u{bb}',
        "auml" => 'ä',
        "ouml" => 'ö',
        "uuml" => 'ü',
        "Auml" => 'Ä',
        "Ouml" => 'Ö',
        "Uuml" => 'Ü',
        "szlig" => 'ß',
        "eacute" => 'é',
        "egrave" => 'è',
        "ecirc" => 'ê',
        "agrave" => 'à',
        "aacute" => 'á',
        "acirc" => 'â',
        "atilde" => 'ã',
        "ccedil" => 'ç',
        "iacute" => 'í',
        "oacute" => 'ó',
        "ocirc" => 'ô',
        "otilde" => 'õ',
        "uacute" => 'ú',
        "ugrave" => 'ù',
        "ntilde" => 'ñ',
        "Eacute" => 'É',
        "iquest" => '¿',
        "iexcl" => '¡',
        _ => return None,
    })
}

/// Trims each line and collapses runs of blank lines to one.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_blocks_entities_and_skips_head() {
        let html = "<html><head><style>p{color:red}</style><title>T</title></head><body>\
                    <div>Hello&nbsp;Anna,</div><div><br></div><p>Caf&eacute; &amp; more &#8212; ok&#x21;</p>\
                    <!-- hidden --><script>alert(1)</script><ul><li>one</li><li>two</li></ul></body></html>";
        assert_eq!(
            to_text(html),
            "Hello Anna,\nCafé & more \u{2014} ok!\none\ntwo"
        );
    }

    #[test]
    fn strips_gmail_and_outlook_history() {
        let gmail = "<div>Yes please</div><div class=\"gmail_quote\"><div>On Mon wrote:</div><blockquote>old</blockquote></div>";
        assert_eq!(to_text(strip_quoted(gmail)), "Yes please");
        let outlook = "<p>Sure</p><div id=\"divRplyFwdMsg\"><b>From:</b> me</div>";
        assert_eq!(to_text(strip_quoted(outlook)), "Sure");
    }

    #[test]
    fn survives_broken_markup() {
        assert_eq!(to_text("a < b and <b"), "a");
        assert_eq!(
            to_text("x &unknown; &#99999999; y"),
            "x &unknown; &#99999999; y"
        );
        assert_eq!(to_text("<!-- never closed"), "");
    }
}
