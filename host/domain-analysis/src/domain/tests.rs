use super::*;

use DomainError::*;

/// Every accepted form and every refusal, one row each.
const CASES: &[(&str, Result<&str, DomainError>)] = &[
    // Bare names, case, whitespace, trailing dot.
    ("acme.com", Ok("acme.com")),
    ("  ACME.Com \n", Ok("acme.com")),
    ("acme.com.", Ok("acme.com")),
    ("www.acme.com", Ok("acme.com")),
    ("WWW.ACME.COM", Ok("acme.com")),
    ("shop.eu.acme.com", Ok("acme.com")),
    ("a-b.io", Ok("a-b.io")),
    ("xn--bcher-kva.de", Ok("xn--bcher-kva.de")),
    ("x1.co", Ok("x1.co")),
    // URL forms.
    ("https://www.blog.acme.co.uk/x", Ok("acme.co.uk")),
    ("http://acme.com", Ok("acme.com")),
    ("HTTPS://ACME.COM/Path?Q=1#Frag", Ok("acme.com")),
    ("ftp://files.acme.com/pub", Ok("acme.com")),
    ("//cdn.acme.com/app.js", Ok("acme.com")),
    ("https://user:p@ss@acme.com:8443/login", Ok("acme.com")),
    ("acme.com:8080", Ok("acme.com")),
    ("acme.com/about-us", Ok("acme.com")),
    ("acme.com?ref=x", Ok("acme.com")),
    ("acme.com#top", Ok("acme.com")),
    ("mailto:info@acme.com", Ok("acme.com")),
    ("info@acme.com", Ok("acme.com")),
    ("https://acme.com.:443/", Ok("acme.com")),
    // Public suffix awareness: ICANN, private and wildcard suffixes.
    ("foo.co.uk", Ok("foo.co.uk")),
    ("www.foo.co.uk", Ok("foo.co.uk")),
    ("acme.github.io", Ok("acme.github.io")),
    ("docs.acme.github.io", Ok("acme.github.io")),
    ("shop.acme.com.au", Ok("acme.com.au")),
    ("city.kawasaki.jp", Ok("city.kawasaki.jp")),
    ("www.example.com", Ok("example.com")),
    // Unicode.
    ("bücher.de", Ok("xn--bcher-kva.de")),
    ("BÜCHER.DE", Ok("xn--bcher-kva.de")),
    ("https://www.müller.de/impressum", Ok("xn--mller-kva.de")),
    ("例え.jp", Ok("xn--r8jz45g.jp")),
    ("acme\u{3002}com", Ok("acme.com")),
    ("ＡＣＭＥ.com", Ok("acme.com")),
    // RFC 2606 testing names (see the module documentation).
    ("acme.test", Ok("acme.test")),
    ("www.acme.test", Ok("acme.test")),
    ("http://shop.acme.example:8080/", Ok("acme.example")),
    // Empty.
    ("", Err(Empty)),
    ("   ", Err(Empty)),
    ("https://", Err(Empty)),
    ("https:///path", Err(Empty)),
    (".", Err(Empty)),
    // IP addresses in every form.
    ("127.0.0.1", Err(IpAddress)),
    ("http://192.168.1.10:8080/x", Err(IpAddress)),
    ("::1", Err(IpAddress)),
    ("[::1]", Err(IpAddress)),
    ("http://[2001:db8::1]:80/", Err(IpAddress)),
    ("2130706433", Err(IpAddress)),
    ("0x7f.1", Err(IpAddress)),
    ("0177.0.0.1", Err(IpAddress)),
    ("http://0x7f000001/", Err(IpAddress)),
    ("169.254.169.254", Err(IpAddress)),
    // localhost, single labels, special-use names.
    ("localhost", Err(Localhost)),
    ("http://localhost:3000", Err(Localhost)),
    ("app.localhost", Err(Localhost)),
    ("intranet", Err(SingleLabel)),
    ("com", Err(SingleLabel)),
    ("printer.local", Err(SpecialUse)),
    ("db.internal", Err(SpecialUse)),
    ("wiki.intranet", Err(SpecialUse)),
    ("nas.lan", Err(SpecialUse)),
    ("router.home.arpa", Err(SpecialUse)),
    ("dc1.corp", Err(SpecialUse)),
    ("1.0.0.127.in-addr.arpa", Err(SpecialUse)),
    ("x.in-addr.arpa", Err(SpecialUse)),
    (
        "duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion",
        Err(SpecialUse),
    ),
    ("acme.invalid", Err(SpecialUse)),
    // Public suffixes themselves, unknown top-level domains.
    ("co.uk", Err(PublicSuffix)),
    ("github.io", Err(PublicSuffix)),
    ("CO.UK.", Err(PublicSuffix)),
    ("blogspot.com", Err(PublicSuffix)),
    ("acme.notatld", Err(UnknownTld)),
    ("acme.corpx", Err(UnknownTld)),
    // Lengths.
    (
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com",
        Err(LabelTooLong),
    ),
    // Bad characters and hyphens.
    ("acme_corp.com", Err(InvalidCharacter)),
    ("acme corp.com", Err(InvalidCharacter)),
    ("acme%2e.com", Err(InvalidCharacter)),
    ("acme.com:http", Err(InvalidCharacter)),
    ("a:b:c", Err(InvalidCharacter)),
    ("-acme.com", Err(InvalidHyphen)),
    ("acme-.com", Err(InvalidHyphen)),
    ("acme..com", Err(EmptyLabel)),
    ("xn--zz.com", Err(InvalidIdn)),
];

#[test]
fn normalise_table() {
    let mut failures = Vec::new();
    for (input, expected) in CASES {
        let got = normalise(input);
        let expected = expected.map(str::to_owned);
        if got != expected {
            failures.push(format!("{input:?}: got {got:?}, expected {expected:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn long_names_are_refused() {
    let label = "a".repeat(60);
    let name = format!("{label}.{label}.{label}.{label}.{label}.com");
    assert_eq!(normalise(&name), Err(NameTooLong));
    // 63 octets is the limit, not one more.
    let ok = format!("{}.com", "a".repeat(63));
    assert_eq!(normalise(&ok), Ok(ok.clone()));
}

#[test]
fn every_error_has_a_short_reason() {
    for (_, expected) in CASES {
        if let Err(error) = expected {
            let reason = error.to_string();
            assert!(!reason.is_empty() && reason.len() < 80, "{reason}");
        }
    }
}

#[test]
fn same_site() {
    assert!(is_same_site("acme.com", "acme.com"));
    assert!(is_same_site("acme.com", "www.acme.com"));
    assert!(is_same_site("acme.com", "Blog.ACME.com."));
    assert!(!is_same_site("acme.com", "notacme.com"));
    assert!(!is_same_site("acme.com", "acme.com.evil.net"));
    assert!(!is_same_site("acme.com", "com"));
    assert!(!is_same_site("", "acme.com"));
    assert!(is_same_site("acme.co.uk", "shop.acme.co.uk"));
}
