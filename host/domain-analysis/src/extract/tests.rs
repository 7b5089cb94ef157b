use std::time::Instant;

use super::*;

fn page<'a>(url: &'a str, html: &'a str, kind: PageKind) -> Page<'a> {
    Page {
        url,
        final_url: url,
        html,
        kind,
    }
}

const HOME: &str = r#"<!doctype html>
<html lang="de-DE"><head>
<title>Startseite | Acme Maschinenbau GmbH</title>
<meta name="description" content="Acme builds   packaging machines for food producers across Europe.">
<meta property="og:site_name" content="Acme">
<script type="application/ld+json">
{"@context":"https://schema.org","@type":"Organization","name":"Acme Maschinenbau GmbH",
 "address":{"@type":"PostalAddress","addressLocality":"Stuttgart","addressCountry":"DE"},
 "sameAs":["https://www.linkedin.com/company/acme-maschinenbau/","https://twitter.com/acme"]}
</script>
</head><body>
<nav><a href="/kontakt">Kontakt</a> <a href="/impressum">Impressum</a> <a href="/karriere">Karriere</a>
<a href="https://other.example/about">Elsewhere</a> <a href="/blog/">Blog</a></nav>
<p>Write to vertrieb [at] acme-maschinen [dot] de or call <a href="tel:+49 711 1234567">us</a>.</p>
<a href="mailto:Info@Acme-Maschinen.de?subject=Hi">Mail</a>
<a href="https://www.facebook.com/acmemaschinen">Facebook</a>
<form><input type="email" name="newsletter"><button>Newsletter abonnieren</button></form>
</body></html>"#;

#[test]
fn a_home_page_gives_name_summary_contacts_and_place() {
    let facts = extract_page(&page(
        "https://www.acme-maschinen.de/",
        HOME,
        PageKind::Home,
    ));
    let name = facts.company_name.as_ref().unwrap();
    assert_eq!(name.value, "Acme Maschinenbau GmbH");
    assert_eq!(name.source, NameSource::JsonLd);
    let summary = facts.summary.as_ref().unwrap();
    assert_eq!(
        summary.text,
        "Acme builds packaging machines for food producers across Europe."
    );
    assert_eq!(summary.source, SummarySource::MetaDescription);
    let emails: Vec<&str> = facts.emails.iter().map(|e| e.address.as_str()).collect();
    assert!(emails.contains(&"info@acme-maschinen.de"), "{emails:?}");
    assert!(emails.contains(&"vertrieb@acme-maschinen.de"), "{emails:?}");
    assert_eq!(facts.phones[0].e164, "+497111234567");
    assert_eq!(facts.city.as_deref(), Some("Stuttgart"));
    assert_eq!(facts.country.as_deref(), Some("DE"));
    assert_eq!(facts.language.as_deref(), Some("de"));
    assert!(facts.features.has_ssl);
    assert!(facts.features.has_social_media);
    assert!(!facts.truncated);
    let kinds: Vec<PageKind> = facts.crawl_candidates.iter().map(|c| c.kind).collect();
    assert!(kinds.contains(&PageKind::Contact), "{kinds:?}");
    assert!(kinds.contains(&PageKind::Imprint), "{kinds:?}");
    assert!(kinds.contains(&PageKind::Careers), "{kinds:?}");
    assert!(
        facts
            .crawl_candidates
            .iter()
            .all(|c| c.url.starts_with("https://www.acme-maschinen.de/")),
        "only same-site pages are followed: {:?}",
        facts.crawl_candidates
    );
}

#[test]
fn merging_prefers_contact_pages_and_role_addresses_on_the_own_domain() {
    let home = extract_page(&page("https://acme-maschinen.de/", HOME, PageKind::Home));
    let contact_html = r#"<html><body><h1>Kontakt</h1>
        <p>Anna Schmidt: anna.schmidt@acme-maschinen.de, Tel. 0711 7654321</p>
        <p>Our agency: hello@agency.example</p></body></html>"#;
    let contact = extract_page(&page(
        "https://acme-maschinen.de/kontakt",
        contact_html,
        PageKind::Contact,
    ));
    let company = merge("acme-maschinen.de", &[home, contact]);
    assert_eq!(
        company.website_email.as_deref(),
        Some("info@acme-maschinen.de")
    );
    assert_eq!(company.emails.len(), 4, "{:?}", company.emails);
    // The tel: link outranks numbers in text, wherever they appear.
    assert_eq!(company.phone.as_deref(), Some("+497111234567"));
    assert!(
        company.phones.contains(&"+497117654321".to_owned()),
        "{:?}",
        company.phones
    );
    assert_eq!(
        company.social.linkedin.as_deref(),
        Some("https://www.linkedin.com/company/acme-maschinenbau")
    );
    assert!(company.social.facebook.is_some());
    assert_eq!(
        company.company_name.unwrap().value,
        "Acme Maschinenbau GmbH"
    );
}

#[test]
fn without_json_ld_the_name_comes_from_og_site_name_then_the_title() {
    let og = r#"<html><head><meta property="og:site_name" content=" Globex "><title>Home - Globex Corp</title></head></html>"#;
    let facts = extract_page(&page("https://globex.com/", og, PageKind::Home));
    assert_eq!(facts.company_name.unwrap().source, NameSource::OgSiteName);

    let title = r#"<html><head><title>Welcome | Initech</title></head>
        <body><p>Initech makes the software that banks use to reconcile their ledgers every night.</p></body></html>"#;
    let facts = extract_page(&page("https://initech.io/", title, PageKind::Home));
    let name = facts.company_name.unwrap();
    assert_eq!(
        (name.value.as_str(), name.source),
        ("Initech", NameSource::Title)
    );
    assert_eq!(facts.summary.unwrap().source, SummarySource::Paragraph);
}

#[test]
fn hostile_pages_are_bounded() {
    // 100,000 nested elements: read whole and quickly, as the tokenizer
    // keeps no stack of open elements.
    let deep = format!(
        "<html><body>{}x{}<p>Write to deep@deep.example</p></body></html>",
        "<div>".repeat(100_000),
        "</div>".repeat(100_000)
    );
    let started = Instant::now();
    let facts = extract_page(&page("https://deep.example/", &deep, PageKind::Home));
    assert!(!facts.truncated);
    assert_eq!(facts.emails[0].address, "deep@deep.example");
    assert!(
        started.elapsed().as_secs() < 10,
        "took {:?}",
        started.elapsed()
    );

    // 8 MB of text: cut at the size cap.
    let big = format!("<html><body><p>{}</p></body></html>", "a ".repeat(4 << 20));
    let facts = extract_page(&page("https://big.example/", &big, PageKind::Home));
    assert!(facts.truncated);

    // Thousands of addresses and links: collections are capped.
    let many: String = (0..5000)
        .map(|i| format!("<a href=\"mailto:u{i}@many.example\">x</a><a href=\"/p{i}\">contact</a>"))
        .collect();
    let facts = extract_page(&page("https://many.example/", &many, PageKind::Home));
    assert!(facts.emails.len() <= emails::MAX_EMAILS);
    assert!(facts.crawl_candidates.len() <= MAX_CRAWL_CANDIDATES);

    // Broken markup and a javascript: link read as far as they go.
    let broken = "<html><head><title>Broken &amp; Co</title><body><table><tr><td><div><a href='javascript:alert(1)'>x</a><p>info@broken.example<span><b></div>";
    let facts = extract_page(&page("https://broken.example/", broken, PageKind::Home));
    assert_eq!(facts.emails[0].address, "info@broken.example");
}

#[test]
fn french_numbers_read_in_the_tld_region() {
    let html = "<html lang=\"fr\"><body><p>Tél. 04 72 10 20 30</p></body></html>";
    let facts = extract_page(&page("https://dupont-avocats.fr/", html, PageKind::Home));
    assert_eq!(
        facts.phones.first().map(|p| p.e164.as_str()),
        Some("+33472102030")
    );
}

#[test]
fn markup_a_browser_repairs_reads_as_a_browser_shows_it() {
    // An unclosed head, an unclosed inline SVG that a paragraph breaks out
    // of, a paragraph ended by a `div` rather than `</p>`, a script
    // self-closed as XHTML (raw text all the same) and a form in a form.
    let html = r#"<html><head><title>Repair &amp; Co</title>
<body><svg viewBox="0 0 1 1"><path d="M0 0"/>
<p>Repair and Co restores antique clocks for museums and private collectors in Ghent<div>Call +49 711 1234567</div>
<script src="/app.js"/>var hidden = "not@visible.example";</script>
<noscript><p>js@off.example</p></noscript>
<form id="contact"><form id="inner"></form><input name="email" type="email"></form>
<p>Mail hello@repair.example</p>"#;
    let read = read_page(&page("https://repair.example/", html, PageKind::Home));
    let facts = &read.facts;
    assert_eq!(read.title.as_deref(), Some("Repair & Co"));
    assert_eq!(
        facts.summary.as_ref().map(|s| s.text.as_str()),
        Some("Repair and Co restores antique clocks for museums and private collectors in Ghent")
    );
    let emails: Vec<&str> = facts.emails.iter().map(|e| e.address.as_str()).collect();
    assert_eq!(emails, ["hello@repair.example"]);
    assert_eq!(
        facts.phones.first().map(|p| p.e164.as_str()),
        Some("+497111234567")
    );
    assert_eq!(read.assets.script_srcs, ["/app.js"]);
    assert!(read.text.contains("Call +49"), "{}", read.text);
}
