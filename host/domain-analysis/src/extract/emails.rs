//! Email addresses a page publishes: `mailto:` links, Cloudflare's
//! protected addresses, JSON-LD, and the visible text with its common
//! obfuscations undone.
//!
//! Scanning stays linear on hostile text: the obfuscation patterns have
//! only bounded repetitions (so each regex search ends a bounded distance
//! after where its match starts), and addresses are then found by
//! splitting the text into tokens, not by a regex.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::cap_bytes;
use super::url::percent_decode;
use super::{Email, EmailSource};
use crate::domain::normalise;

/// Addresses kept per page.
pub(crate) const MAX_EMAILS: usize = 50;

/// `info [at] acme [dot] com`, `info(at)acme.com`, `info {at} acme`,
/// `info <at> acme` (from `&lt;at&gt;`), `info (ät) firma (punkt) de`.
///
/// The patterns start at the bracket, which keeps the regex engine's
/// prefilter on four rare bytes; the blanks around are dropped by
/// [`undo_brackets`].
static BRACKETED_AT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)[\[({<][ \t]{0,3}(?:at|ät|@)[ \t]{0,3}[\])}>]").expect("static pattern")
});
static BRACKETED_DOT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)[\[({<][ \t]{0,3}(?:dot|punkt|point|punto|ponto|punt)[ \t]{0,3}[\])}>]")
        .expect("static pattern")
});
/// Blanks dropped on each side of a bracketed `at` or `dot`.
const BRACKET_BLANKS: usize = 3;
/// `name AT domain DOT com`: bare words, both needed so prose such as
/// "meet us at the fair" is left alone.
static BARE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"([A-Za-z0-9][A-Za-z0-9._%+-]{0,63})[ \t]{1,3}(?:at|AT|At)[ \t]{1,3}([A-Za-z0-9][A-Za-z0-9-]{0,62}(?:[ \t]{1,3}(?:dot|DOT|Dot)[ \t]{1,3}[A-Za-z0-9][A-Za-z0-9-]{0,62}){1,4})",
    )
    .expect("static pattern")
});
/// The ` at ` that `BARE` needs, and how far its match reaches on either
/// side: a local part of 64 after up to 3 blanks; a domain of up to five
/// labels of 63, with ` dot ` of up to 9 between them.
static BARE_AT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[ \t](?:at|AT|At)[ \t]").expect("static pattern"));
const BARE_BEFORE_AT: usize = 64 + 3;
const BARE_AFTER_AT: usize = 3 + 5 * 63 + 4 * 9;

static BARE_DOT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[ \t]{1,3}(?:dot|DOT|Dot)[ \t]{1,3}").expect("static pattern"));

/// Collects the page's addresses in the order found, deduplicated.
pub(crate) struct Emails {
    found: Vec<Email>,
}

impl Emails {
    pub fn new() -> Emails {
        Emails { found: Vec::new() }
    }

    pub fn into_vec(self) -> Vec<Email> {
        self.found
    }

    /// Adds `candidate` when it is a plausible address.
    pub fn add(&mut self, candidate: &str, source: EmailSource) {
        if self.found.len() >= MAX_EMAILS {
            return;
        }
        let Some(address) = validate(candidate) else {
            return;
        };
        if !self.found.iter().any(|e| e.address == address) {
            self.found.push(Email { address, source });
        }
    }

    /// A `mailto:` link: percent-decoded, query dropped, several
    /// comma-separated recipients allowed.
    pub fn add_mailto(&mut self, href: &str) {
        let Some(rest) = strip_prefix_ignore_case(href.trim(), "mailto:") else {
            return;
        };
        let recipients = rest.split('?').next().unwrap_or_default();
        for recipient in percent_decode(recipients).split([',', ';']) {
            self.add(recipient, EmailSource::Mailto);
        }
    }

    /// A Cloudflare-protected address: hex bytes, the first the XOR key of
    /// the others.
    pub fn add_cloudflare(&mut self, hex: &str) {
        let bytes: Option<Vec<u8>> = hex
            .as_bytes()
            .chunks(2)
            .map(|pair| {
                let pair = std::str::from_utf8(pair).ok()?;
                u8::from_str_radix(pair, 16).ok()
            })
            .collect();
        let Some((key, encoded)) = bytes.as_deref().and_then(|b| b.split_first()) else {
            return;
        };
        let decoded: Vec<u8> = encoded.iter().map(|b| b ^ key).collect();
        if let Ok(address) = String::from_utf8(decoded) {
            let address = address.split('?').next().unwrap_or_default();
            self.add(&percent_decode(address), EmailSource::Cloudflare);
        }
    }

    /// Addresses in visible text, plain or obfuscated.
    pub fn add_text(&mut self, text: &str) {
        self.add_tokens(text, EmailSource::Text);
        let bracketed = undo_brackets(text, &BRACKETED_AT, "@");
        let bracketed = undo_brackets(&bracketed, &BRACKETED_DOT, ".");
        if bracketed != text {
            self.add_tokens(&bracketed, EmailSource::Obfuscated);
        }
        // `BARE` begins with a character class, so the regex engine would
        // try it at every position of the text; it runs instead around each
        // ` at ` (found with a literal prefilter), in a window as wide as
        // its longest match, and keeps the match that uses that ` at `.
        for at in BARE_AT.find_iter(text) {
            let start = cap_bytes(text, at.start().saturating_sub(BARE_BEFORE_AT)).len();
            let end = cap_bytes(text, at.end().saturating_add(BARE_AFTER_AT)).len();
            for caps in BARE.captures_iter(&text[start..end]) {
                let (Some(whole), Some(local), Some(domain)) =
                    (caps.get(0), caps.get(1), caps.get(2))
                else {
                    continue;
                };
                if start + whole.start() > at.start() || start + whole.end() <= at.start() {
                    continue;
                }
                let domain = BARE_DOT.replace_all(domain.as_str(), ".");
                self.add(
                    &format!("{}@{domain}", local.as_str()),
                    EmailSource::Obfuscated,
                );
            }
        }
    }

    /// Splits text at characters no address holds and keeps the tokens with
    /// exactly one `@`.
    ///
    /// Only the tokens around an `@` are looked at (memchr finds them), and
    /// each character is visited at most twice, so long texts stay cheap.
    fn add_tokens(&mut self, text: &str, source: EmailSource) {
        // Letters outside ASCII stay in the token so that `müller@firma.de`
        // is refused whole rather than read as `ller@firma.de`.
        let is_address_char =
            |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-' | '@');
        let mut read_to = 0;
        for (at, _) in text.match_indices('@') {
            if at < read_to {
                continue; // part of the token just read
            }
            // The previous token ended at a character that is not part of
            // an address, so this walk back stops before reaching it.
            let start = text[..at]
                .char_indices()
                .rev()
                .take_while(|&(_, c)| is_address_char(c))
                .last()
                .map_or(at, |(i, _)| i);
            let end = text[at + 1..]
                .char_indices()
                .find(|&(_, c)| !is_address_char(c))
                .map_or(text.len(), |(i, _)| at + 1 + i);
            read_to = end;
            let token = &text[start..end];
            if token.len() <= 254 && token.bytes().filter(|&b| b == b'@').count() == 1 {
                let token = token.trim_matches(|c| matches!(c, '.' | '-' | '_' | '%' | '+'));
                self.add(token, source);
            }
        }
    }
}

/// The address in lower case when it is plausible: one `@`, a local part of
/// the usual characters, a domain that normalises (a known public suffix, or
/// the `.test`/`.example` names the end-to-end tests use), and none of the
/// noise pages are full of: retina image names (`logo@2x.png` has no valid
/// TLD), placeholders (`you@example.com`), error-tracker DSNs, no-reply
/// senders.
pub(crate) fn validate(candidate: &str) -> Option<String> {
    let address = candidate.trim().to_ascii_lowercase();
    if address.len() > 254 {
        return None;
    }
    let (local, domain) = address.split_once('@')?;
    let local_ok = (1..=64).contains(&local.len())
        && local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~.-".contains(&b))
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..");
    if !local_ok || domain.contains(['/', ':', '[']) {
        return None;
    }
    let registrable = normalise(domain).ok()?;
    if is_noise(local, domain, &registrable) {
        return None;
    }
    Some(address)
}

fn is_noise(local: &str, domain: &str, registrable: &str) -> bool {
    const PLACEHOLDER_DOMAINS: &[&str] = &[
        "example.com",
        "example.org",
        "example.net",
        "domain.com",
        "yourdomain.com",
        "your-domain.com",
        "yoursite.com",
        "yourcompany.com",
        "company.com",
        "email.com",
        "mysite.com",
        "website.com",
        "test.com",
        "sentry.io",
        "wixpress.com",
        "sentry-next.wixpress.com",
    ];
    const NO_REPLY: &[&str] = &[
        "noreply",
        "no-reply",
        "no_reply",
        "donotreply",
        "do-not-reply",
        "mailer-daemon",
    ];
    const FILE_EXTENSIONS: &[&str] = &[
        "png", "jpg", "jpeg", "gif", "svg", "webp", "avif", "ico", "bmp", "css", "js", "mp4",
        "webm", "pdf", "woff", "woff2",
    ];
    let tld = domain.rsplit('.').next().unwrap_or(domain);
    // Error-tracker DSNs and tracking ids put long hex keys before the `@`.
    let is_hex_key = local.len() >= 24 && local.bytes().all(|b| b.is_ascii_hexdigit());
    PLACEHOLDER_DOMAINS.contains(&registrable)
        || domain.ends_with(".sentry.io")
        || NO_REPLY.contains(&local)
        || FILE_EXTENSIONS.contains(&tld)
        || is_hex_key
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Role addresses in order of preference for `website_email`: the ones a
/// company reads for new business first.
const ROLES: &[&str] = &[
    "info",
    "contact",
    "hello",
    "sales",
    "office",
    "kontakt",
    "contacto",
    "contatto",
    "mail",
    "team",
    "hi",
    "hallo",
    "hola",
    "bonjour",
    "enquiries",
    "inquiries",
    "enquiry",
    "inquiry",
    "business",
    "welcome",
    "post",
    "general",
    "service",
    "support",
    "help",
    "kundenservice",
    "customerservice",
];

/// Addresses that are real but the wrong door for outreach: chosen only
/// when nothing else is published.
const DOORS_OF_LAST_RESORT: &[&str] = &[
    "privacy",
    "datenschutz",
    "dsb",
    "gdpr",
    "dpo",
    "legal",
    "abuse",
    "postmaster",
    "hostmaster",
    "webmaster",
    "jobs",
    "careers",
    "karriere",
    "bewerbung",
    "recruiting",
    "hr",
    "press",
    "presse",
    "media",
    "billing",
    "invoice",
    "rechnung",
    "accounting",
    "unsubscribe",
];

/// Rank of a local part for `website_email`, lower is better: role
/// addresses in [`ROLES`] order, then personal addresses, then the doors of
/// last resort.
pub(crate) fn role_rank(local: &str) -> usize {
    if let Some(index) = ROLES.iter().position(|r| *r == local) {
        return index;
    }
    if DOORS_OF_LAST_RESORT.contains(&local) {
        return 200;
    }
    100
}

/// Free mail providers: a small business's address there is still its own.
pub(crate) fn is_free_mail(domain: &str) -> bool {
    const FREE: &[&str] = &[
        "gmail.com",
        "googlemail.com",
        "outlook.com",
        "hotmail.com",
        "live.com",
        "msn.com",
        "yahoo.com",
        "icloud.com",
        "me.com",
        "aol.com",
        "proton.me",
        "protonmail.com",
        "gmx.de",
        "gmx.net",
        "gmx.at",
        "web.de",
        "t-online.de",
        "freenet.de",
        "orange.fr",
        "free.fr",
        "laposte.net",
        "libero.it",
        "virgilio.it",
        "yandex.ru",
        "mail.ru",
        "zoho.com",
    ];
    FREE.contains(&domain)
}

/// Replaces each match of `pattern` with `with`, together with up to
/// [`BRACKET_BLANKS`] spaces or tabs on either side of it.
fn undo_brackets<'t>(text: &'t str, pattern: &Regex, with: &str) -> Cow<'t, str> {
    let is_blank = |b: &u8| matches!(b, b' ' | b'\t');
    let mut out = String::new();
    let mut copied_to = 0;
    for found in pattern.find_iter(text) {
        // A match starts at a bracket, so blanks skipped after the previous
        // one never reach into it.
        let before = &text.as_bytes()[copied_to..found.start()];
        let blanks = before
            .iter()
            .rev()
            .take(BRACKET_BLANKS)
            .take_while(|b| is_blank(b))
            .count();
        out.push_str(&text[copied_to..found.start() - blanks]);
        out.push_str(with);
        let after = &text.as_bytes()[found.end()..];
        copied_to = found.end()
            + after
                .iter()
                .take(BRACKET_BLANKS)
                .take_while(|b| is_blank(b))
                .count();
    }
    if copied_to == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied_to..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(String, EmailSource)> {
        let mut emails = Emails::new();
        emails.add_text(text);
        emails
            .into_vec()
            .into_iter()
            .map(|e| (e.address, e.source))
            .collect()
    }

    #[test]
    fn plain_addresses_are_whole_tokens_with_one_at() {
        let text = "Write to sales@acme.de, not müller@acme.de or a@b@acme.de; \
                    see logo@2x.png. Support: help@acme.de.";
        let addresses: Vec<String> = found(text).into_iter().map(|(a, _)| a).collect();
        assert_eq!(addresses, ["sales@acme.de", "help@acme.de"]);
    }

    #[test]
    fn spelled_out_addresses_are_read_wherever_they_stand() {
        // Prose with "at" before and after, an address far into the text and
        // one right at its start.
        let filler = "We meet customers at trade fairs and at home. ".repeat(40);
        let text = format!(
            "Bracketed: info [at] acme (dot) de, kontakt (ät)acme{{punkt}} de and x(at)y. \
             office AT acme DOT co DOT uk is one. {filler} Or write to jane.doe at acme dot de today."
        );
        let found = found(&text);
        assert!(
            found.contains(&("office@acme.co.uk".to_owned(), EmailSource::Obfuscated)),
            "{found:?}"
        );
        assert!(
            found.contains(&("jane.doe@acme.de".to_owned(), EmailSource::Obfuscated)),
            "{found:?}"
        );
        for bracketed in ["info@acme.de", "kontakt@acme.de"] {
            assert!(
                found.contains(&(bracketed.to_owned(), EmailSource::Obfuscated)),
                "{found:?}"
            );
        }
        assert_eq!(found.len(), 4, "{found:?}");
    }
}
