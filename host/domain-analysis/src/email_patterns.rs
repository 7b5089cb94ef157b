//! The email finder's guesses: a person's likely addresses at a company,
//! from the address patterns the company's own pages show and, after them,
//! the patterns most companies use.
//!
//! A published personal address (`anna.schmidt@acme.de`) shows its
//! pattern by its shape: two name parts joined by `.`, `_` or `-`, a
//! single initial before a separator, and so on. Role addresses (info@,
//! sales@...) say nothing about people and are skipped.

use serde::{Deserialize, Serialize};

/// Patterns in the order companies use them most (surveys of B2B address
/// formats agree on the first four), as templates over `{first}`,
/// `{last}`, `{f}` and `{l}` (initials).
pub const COMMON_PATTERNS: &[&str] = &[
    "{first}.{last}",
    "{first}",
    "{f}{last}",
    "{first}{last}",
    "{f}.{last}",
    "{first}_{last}",
    "{last}",
    "{first}{l}",
    "{last}.{first}",
    "{first}-{last}",
    "{last}{f}",
];

/// Local parts that name a role, not a person.
const ROLE_WORDS: &[&str] = &[
    "info",
    "contact",
    "kontakt",
    "hello",
    "hallo",
    "hi",
    "sales",
    "vertrieb",
    "office",
    "buero",
    "mail",
    "team",
    "support",
    "help",
    "service",
    "admin",
    "webmaster",
    "postmaster",
    "hostmaster",
    "abuse",
    "privacy",
    "datenschutz",
    "legal",
    "press",
    "presse",
    "media",
    "marketing",
    "jobs",
    "careers",
    "karriere",
    "hr",
    "billing",
    "accounts",
    "invoice",
    "rechnung",
    "noreply",
    "no-reply",
    "newsletter",
    "orders",
    "shop",
    "booking",
    "reservations",
    "enquiries",
    "inquiries",
    "bewerbung",
    "empfang",
    "reception",
    "general",
    "feedback",
    "security",
    "dpo",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub email: String,
    /// The template, such as `{first}.{last}`.
    pub pattern: String,
    /// `observed` (the company's pages show this pattern) or `common`.
    pub source: String,
    /// 0.0-1.0 before verification: how likely the guess is.
    pub score: f64,
}

/// A name part as it appears in addresses: lower case ASCII, umlauts
/// spelled out (`Müller` to `mueller`), other accents dropped, spaces and
/// apostrophes removed, hyphens kept.
pub fn name_part(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().to_lowercase().chars() {
        match c {
            'a'..='z' | '0'..='9' | '-' => out.push(c),
            'ä' | 'æ' => out.push_str("ae"),
            'ö' | 'ø' | 'œ' => out.push_str("oe"),
            'ü' => out.push_str("ue"),
            'ß' => out.push_str("ss"),
            'à' | 'á' | 'â' | 'ã' | 'å' | 'ą' => out.push('a'),
            'ç' | 'ć' | 'č' => out.push('c'),
            'è' | 'é' | 'ê' | 'ë' | 'ę' | 'ě' => out.push('e'),
            'ì' | 'í' | 'î' | 'ï' => out.push('i'),
            'ñ' | 'ń' | 'ň' => out.push('n'),
            'ò' | 'ó' | 'ô' | 'õ' => out.push('o'),
            'ù' | 'ú' | 'û' | 'ů' => out.push('u'),
            'ý' | 'ÿ' => out.push('y'),
            'ł' => out.push('l'),
            'ś' | 'š' => out.push('s'),
            'ź' | 'ż' | 'ž' => out.push('z'),
            'ř' => out.push('r'),
            'ť' => out.push('t'),
            'ď' => out.push('d'),
            _ => {}
        }
    }
    out.trim_matches('-').to_owned()
}

/// The pattern a published address shows, when it shows one.
pub fn pattern_of(local: &str) -> Option<&'static str> {
    let local = local.to_ascii_lowercase();
    if ROLE_WORDS.contains(&local.as_str()) || local.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    for (separator, two, initial_first) in [
        ('.', "{first}.{last}", "{f}.{last}"),
        ('_', "{first}_{last}", "{f}.{last}"),
        ('-', "{first}-{last}", "{f}.{last}"),
    ] {
        if let Some((a, b)) = local.split_once(separator) {
            if a.is_empty() || b.is_empty() || b.contains(separator) {
                return None;
            }
            if ROLE_WORDS.contains(&a) || ROLE_WORDS.contains(&b) {
                return None;
            }
            return Some(if a.len() == 1 && separator == '.' {
                initial_first
            } else {
                two
            });
        }
    }
    // One word: a first name, or an initial and a surname. Names are
    // rarely over 8 letters; `jsmith` reads as `{f}{last}` only when it is
    // too long for a plain first name.
    if local.len() > 8 {
        Some("{f}{last}")
    } else {
        Some("{first}")
    }
}

/// Candidate addresses for a person at `domain`, best first: the observed
/// patterns (most often seen first), then the common ones.
pub fn candidates(first: &str, last: &str, domain: &str, seen: &[String]) -> Vec<Candidate> {
    let (first, last) = (name_part(first), name_part(last));
    if first.is_empty() && last.is_empty() {
        return Vec::new();
    }
    let mut observed: Vec<(&'static str, usize)> = Vec::new();
    for address in seen {
        let Some((local, host)) = address.rsplit_once('@') else {
            continue;
        };
        if !host.eq_ignore_ascii_case(domain) {
            continue;
        }
        if let Some(pattern) = pattern_of(local) {
            match observed.iter_mut().find(|(p, _)| *p == pattern) {
                Some((_, count)) => *count += 1,
                None => observed.push((pattern, 1)),
            }
        }
    }
    observed.sort_by_key(|o| std::cmp::Reverse(o.1));
    let total: usize = observed.iter().map(|(_, n)| n).sum();

    let mut out: Vec<Candidate> = Vec::new();
    let mut push = |pattern: &str, source: &str, score: f64| {
        let Some(local) = fill(pattern, &first, &last) else {
            return;
        };
        let email = format!("{local}@{domain}");
        if out.iter().any(|c| c.email == email) {
            return;
        }
        let score = (score * 100.0).round() / 100.0;
        out.push(Candidate {
            email,
            pattern: pattern.to_owned(),
            source: source.to_owned(),
            score,
        });
    };
    for (pattern, count) in &observed {
        // Seen patterns start at 0.6 and rise with their share.
        push(
            pattern,
            "observed",
            0.6 + 0.35 * (*count as f64 / total as f64),
        );
    }
    for (rank, pattern) in COMMON_PATTERNS.iter().enumerate() {
        // The most common pattern is right for about a third of companies,
        // and each later one for fewer.
        let base = if observed.is_empty() { 0.35 } else { 0.2 };
        push(pattern, "common", base / (1.0 + rank as f64 * 0.5));
    }
    out
}

/// `pattern` filled with the name parts; `None` when it needs a part that
/// is empty.
fn fill(pattern: &str, first: &str, last: &str) -> Option<String> {
    let initial = |s: &str| s.chars().next().map(String::from);
    let mut local = pattern.to_owned();
    for (token, value) in [
        ("{first}", Some(first.to_owned())),
        ("{last}", Some(last.to_owned())),
        ("{f}", initial(first)),
        ("{l}", initial(last)),
    ] {
        if local.contains(token) {
            let value = value.filter(|v| !v.is_empty())?;
            local = local.replace(token, &value);
        }
    }
    Some(local)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_spelled_as_addresses_spell_them() {
        assert_eq!(name_part(" Jürgen "), "juergen");
        assert_eq!(name_part("Groß-Müller"), "gross-mueller");
        assert_eq!(name_part("O'Brien"), "obrien");
        assert_eq!(name_part("van der Berg"), "vanderberg");
        assert_eq!(name_part("José"), "jose");
        assert_eq!(name_part("Łukasz"), "lukasz");
    }

    #[test]
    fn published_addresses_show_their_pattern() {
        assert_eq!(pattern_of("anna.schmidt"), Some("{first}.{last}"));
        assert_eq!(pattern_of("a.schmidt"), Some("{f}.{last}"));
        assert_eq!(pattern_of("anna_schmidt"), Some("{first}_{last}"));
        assert_eq!(pattern_of("anna"), Some("{first}"));
        assert_eq!(pattern_of("aschmidtova"), Some("{f}{last}"));
        assert_eq!(pattern_of("info"), None);
        assert_eq!(pattern_of("sales.de"), None);
        assert_eq!(pattern_of("user123"), None);
    }

    #[test]
    fn observed_patterns_come_first() {
        let seen = vec![
            "info@acme.de".to_owned(),
            "j.weber@acme.de".to_owned(),
            "k.lang@acme.de".to_owned(),
            "someone@other.example".to_owned(),
        ];
        let found = candidates("Anna", "Schmidt", "acme.de", &seen);
        assert_eq!(found[0].email, "a.schmidt@acme.de");
        assert_eq!(found[0].source, "observed");
        assert!((found[0].score - 0.95).abs() < 1e-9);
        assert_eq!(found[1].email, "anna.schmidt@acme.de");
        assert_eq!(found[1].source, "common");
        // Every guess once.
        let mut emails: Vec<&str> = found.iter().map(|c| c.email.as_str()).collect();
        emails.sort();
        emails.dedup();
        assert_eq!(emails.len(), found.len());
        assert!(found.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn without_a_last_name_only_first_name_patterns_remain() {
        let found = candidates("Anna", "", "acme.de", &[]);
        let emails: Vec<&str> = found.iter().map(|c| c.email.as_str()).collect();
        assert_eq!(emails, ["anna@acme.de"]);
        assert!(candidates("", "", "acme.de", &[]).is_empty());
    }
}
