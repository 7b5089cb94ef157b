//! Phone numbers: `tel:` links, JSON-LD, and numbers in the text, each
//! parsed and validated with libphonenumber's metadata (the `phonenumber`
//! crate) and written E.164.
//!
//! A number without `+` needs a region to be read: the company's country
//! from JSON-LD, else its country-code TLD; without one only international
//! numbers are kept. Numbers in the text are kept when they start with `+`
//! or follow a phone label ("Tel.", "Telefon", "phone"...), and not a fax
//! label: dates, VAT numbers and postcodes look like numbers too.

use std::sync::LazyLock;

use phonenumber::Mode;
use phonenumber::country::Id;
use regex::Regex;

use super::url::percent_decode;
use super::{Phone, PhoneSource};

/// Numbers kept per page.
pub(crate) const MAX_PHONES: usize = 20;
/// Candidates parsed per page: parsing is the expensive step.
const MAX_ATTEMPTS: usize = 60;

/// A run of digits with the usual separators, 7 to 24 characters.
/// The word boundary is ASCII (`(?-u:\b)`): a Unicode `\b` sends the
/// regex crate to its slowest matcher on any page with a non-ASCII
/// character, which made this scan half of a page's extraction time.
static CANDIDATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\+|(?-u:\b))[0-9(][0-9 ()./\-]{5,22}[0-9]").expect("static pattern")
});

pub(crate) struct Phones {
    region: Option<Id>,
    found: Vec<Phone>,
    attempts: usize,
}

impl Phones {
    pub fn new(region: Option<Id>) -> Phones {
        Phones {
            region,
            found: Vec::new(),
            attempts: 0,
        }
    }

    pub fn into_vec(self) -> Vec<Phone> {
        self.found
    }

    /// Adds `candidate` when it parses as a valid number.
    pub fn add(&mut self, candidate: &str, source: PhoneSource) {
        if self.found.len() >= MAX_PHONES || self.attempts >= MAX_ATTEMPTS {
            return;
        }
        self.attempts += 1;
        let Some(e164) = parse(candidate, self.region) else {
            return;
        };
        if !self.found.iter().any(|p| p.e164 == e164) {
            self.found.push(Phone { e164, source });
        }
    }

    /// A `tel:` link, with RFC 3966 parameters (`;ext=`) dropped.
    pub fn add_tel(&mut self, href: &str) {
        let href = href.trim();
        let Some(number) = href.get(..4).filter(|p| p.eq_ignore_ascii_case("tel:")) else {
            return;
        };
        let rest = &href[number.len()..];
        let number = percent_decode(rest.split(';').next().unwrap_or_default());
        self.add(&number, PhoneSource::TelLink);
    }

    /// Numbers in visible text.
    pub fn add_text(&mut self, text: &str) {
        for found in CANDIDATE.find_iter(text) {
            if self.found.len() >= MAX_PHONES || self.attempts >= MAX_ATTEMPTS {
                return;
            }
            let candidate = found.as_str();
            let digits = candidate.bytes().filter(u8::is_ascii_digit).count();
            if !(7..=15).contains(&digits) {
                continue;
            }
            if candidate.starts_with('+') || follows_phone_label(&text[..found.start()]) {
                self.add(candidate, PhoneSource::Text);
            }
        }
    }
}

/// Whether the end of `before` (the same line, the last 30 characters)
/// names a phone line rather than a fax.
fn follows_phone_label(before: &str) -> bool {
    const LABELS: &[&str] = &[
        "tel", "tél", "phone", "fon", "call", "mobil", "hotline", "ruf", "numéro", "número",
        "numero", "t:", "t.", "p:", "m:",
    ];
    let line = before.rsplit('\n').next().unwrap_or(before);
    let tail: String = line
        .chars()
        .rev()
        .take(30)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<String>()
        .to_lowercase();
    let label = LABELS.iter().filter_map(|l| tail.rfind(l)).max();
    let fax = tail.rfind("fax");
    match (label, fax) {
        (Some(label), Some(fax)) => label > fax,
        (Some(_), None) => true,
        _ => false,
    }
}

/// E.164 of a valid number, read in `region` when it has no `+`.
pub(crate) fn parse(candidate: &str, region: Option<Id>) -> Option<String> {
    let candidate = candidate.trim();
    // libphonenumber reads input of any length; real numbers are short.
    if candidate.is_empty() || candidate.len() > 40 {
        return None;
    }
    let international = candidate.starts_with('+') || candidate.starts_with("00");
    if !international && region.is_none() {
        return None;
    }
    let number = phonenumber::parse(region, candidate).ok()?;
    phonenumber::is_valid(&number).then(|| number.format().mode(Mode::E164).to_string())
}
