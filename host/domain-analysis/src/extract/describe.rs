//! How the page names and describes the company: the name from a `<title>`,
//! the summary, the language.

use super::jsonld::compact;
use super::limits::cap_bytes;
use super::scan::collapse_whitespace;

/// The longest summary kept, in bytes, cut at a word boundary.
pub const MAX_SUMMARY_BYTES: usize = 500;

/// Separators sites put between a page's title and the brand, longest
/// first so ` - ` is not read as `-`.
const SEPARATORS: &[&str] = &[
    " | ", " - ", " – ", " — ", " · ", " • ", " :: ", " » ", " / ", ": ", "|",
];

/// Title parts that name the page, not the company.
const GENERIC: &[&str] = &[
    "home",
    "homepage",
    "home page",
    "start",
    "startseite",
    "accueil",
    "inicio",
    "página inicial",
    "pagina iniziale",
    "welcome",
    "willkommen",
    "bienvenue",
    "bienvenido",
    "benvenuto",
    "official site",
    "official website",
    "offizielle website",
    "site officiel",
    "main page",
];

/// Greetings sites put before their name in a title.
const GREETINGS: &[&str] = &[
    "welcome to ",
    "willkommen bei ",
    "willkommen auf ",
    "bienvenue chez ",
    "bienvenue sur ",
    "bienvenido a ",
    "benvenuti su ",
    "benvenuto in ",
    "welkom bij ",
];

/// The brand part of a `<title>`: the part that resembles the domain's
/// first label; else, generic parts ("Home") dropped, the shorter of the
/// first and last parts (titles read "Page | Brand" or "Brand – tagline").
pub(crate) fn name_from_title(title: &str, site: Option<&str>) -> Option<String> {
    let title = collapse_whitespace(title);
    let mut parts: Vec<&str> = vec![title.as_str()];
    for separator in SEPARATORS {
        parts = parts
            .iter()
            .flat_map(|part| part.split(separator))
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .collect();
    }
    let parts: Vec<String> = parts.iter().map(|part| strip_greeting(part)).collect();
    let label = site
        .and_then(|s| s.split('.').next())
        .map(compact)
        .unwrap_or_default();
    let resembles = |part: &String| {
        let part = compact(part);
        label.len() >= 3 && part.len() >= 3 && (part.contains(&label) || label.contains(&part))
    };
    let chosen = match parts.iter().find(|part| resembles(part)) {
        Some(part) => part.clone(),
        None => {
            let specific: Vec<&String> = parts
                .iter()
                .filter(|part| !GENERIC.contains(&part.to_lowercase().as_str()))
                .collect();
            let first = specific.first()?;
            let last = specific.last()?;
            if last.split_whitespace().count() < first.split_whitespace().count() {
                (*last).clone()
            } else {
                (*first).clone()
            }
        }
    };
    // A sentence is a slogan, not a name.
    (!chosen.is_empty() && chosen.chars().count() <= 80).then_some(chosen)
}

fn strip_greeting(part: &str) -> String {
    let lowered = part.to_lowercase();
    for greeting in GREETINGS {
        if lowered.starts_with(greeting) {
            // Greetings are ASCII apart from their letters' case, so the
            // byte length is the same in the original.
            if let Some(rest) = part.get(greeting.len()..) {
                return rest.trim().to_owned();
            }
        }
    }
    part.to_owned()
}

/// Whitespace collapsed, at most [`MAX_SUMMARY_BYTES`], cut after a whole
/// word when there is one.
pub(crate) fn summary_text(text: &str) -> Option<String> {
    let text = collapse_whitespace(text);
    if text.is_empty() {
        return None;
    }
    if text.len() <= MAX_SUMMARY_BYTES {
        return Some(text);
    }
    let capped = cap_bytes(&text, MAX_SUMMARY_BYTES);
    let cut = capped.rfind(' ').map_or(capped, |at| &capped[..at]);
    Some(cut.trim_end_matches([',', ';', ':', '-']).to_owned())
}

/// The primary language subtag of an `<html lang>` (`de-DE`) or an
/// `og:locale` (`de_DE`), in lower case; `None` when it is not a language
/// code.
pub(crate) fn language(tag: &str) -> Option<String> {
    let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
    let valid = (2..=3).contains(&primary.len()) && primary.bytes().all(|b| b.is_ascii_lowercase());
    valid.then_some(primary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brand_from_titles() {
        let name = |title: &str| name_from_title(title, Some("acme.com"));
        assert_eq!(name("Acme | Home").as_deref(), Some("Acme"));
        assert_eq!(name("Home - Acme").as_deref(), Some("Acme"));
        assert_eq!(
            name("Welcome to Acme Widgets").as_deref(),
            Some("Acme Widgets")
        );
        assert_eq!(name("Widgets for everyone – ACME").as_deref(), Some("ACME"));
        let other = |title: &str| name_from_title(title, Some("zzz.com"));
        assert_eq!(
            other("Startseite | Müller Bau GmbH").as_deref(),
            Some("Müller Bau GmbH")
        );
        assert_eq!(
            other("Bolt – The fastest way to ship software").as_deref(),
            Some("Bolt")
        );
        assert_eq!(other("Home"), None);
    }

    #[test]
    fn summaries_are_cut_at_words() {
        let long = "word ".repeat(200);
        let summary = summary_text(&long).unwrap();
        assert!(summary.len() <= MAX_SUMMARY_BYTES && summary.ends_with("word"));
        assert_eq!(summary_text("  a \n b  ").as_deref(), Some("a b"));
    }

    #[test]
    fn languages() {
        assert_eq!(language("de-DE").as_deref(), Some("de"));
        assert_eq!(language("en_US").as_deref(), Some("en"));
        assert_eq!(language("x"), None);
        assert_eq!(language("12"), None);
    }
}
