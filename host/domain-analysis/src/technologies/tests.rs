use super::*;
use crate::extract::{Page, PageKind, read_page};

/// A page with the marks of a dozen common technologies.
pub(crate) const SHOP_PAGE: &str = r#"<!doctype html><html lang="en"><head>
<meta name="generator" content="WordPress 6.4.2">
<link rel='stylesheet' href='https://shop.example/wp-content/themes/x/style.css'>
<script src="https://shop.example/wp-includes/js/jquery/jquery-3.7.1.min.js"></script>
<script src="https://www.googletagmanager.com/gtm.js?id=GTM-XXXX"></script>
<script src="https://js.stripe.com/v3/"></script>
<script src="https://boards.greenhouse.io/embed/job_board/js?for=acme"></script>
<script src="https://widget.intercom.io/widget/abc"></script>
<script>var _hsq = window._hsq = []; // Start of Async HubSpot</script>
</head><body>
<!-- Start of Async HubSpot Analytics Code -->
<div data-reactroot=""><input type="text" data-stripe="number"></div>
</body></html>"#;

fn observed<'a>(
    url: &'a str,
    html: &'a str,
    assets: &'a PageAssets,
    headers: &'a [(String, String)],
    cookies: &'a [(String, String)],
) -> Observed<'a> {
    Observed {
        url,
        html,
        assets,
        headers,
        cookies,
    }
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn detect_page(html: &str, headers: &[(&str, &str)], cookies: &[(&str, &str)]) -> Vec<Detected> {
    let page = Page {
        url: "https://shop.example/",
        final_url: "https://shop.example/",
        html,
        kind: PageKind::Home,
    };
    let read = read_page(&page);
    let (headers, cookies) = (pairs(headers), pairs(cookies));
    let seen = observed(page.url, read.html, &read.assets, &headers, &cookies);
    Fingerprints::bundled().detect(&seen)
}

fn find<'a>(detected: &'a [Detected], name: &str) -> Option<&'a Detected> {
    detected.iter().find(|d| d.name == name)
}

#[test]
fn the_bundled_data_loads_with_few_patterns_skipped() {
    let f = Fingerprints::bundled();
    assert_eq!(f.technology_count(), 3588);
    // Look-around and back-references: a handful of thousands.
    assert!(
        f.skipped_patterns() < 60,
        "skipped {}",
        f.skipped_patterns()
    );
}

#[test]
fn a_page_with_headers_and_cookies_reveals_its_stack() {
    let detected = detect_page(
        SHOP_PAGE,
        &[
            ("Server", "nginx/1.25.3"),
            ("X-Powered-By", "Express"),
            ("CF-RAY", "8a1b"),
        ],
        &[
            ("_ga", "GA1.1.1"),
            ("_ga_ABC123", "GS1.1"),
            ("__stripe_mid", "x"),
        ],
    );
    let names: Vec<&str> = detected.iter().map(|d| d.name.as_str()).collect();
    for expected in [
        "WordPress",
        "PHP",
        "MySQL",
        "jQuery",
        "Google Tag Manager",
        "Stripe",
        "Greenhouse",
        "HubSpot",
        "Nginx",
        "Express",
        "Node.js",
        "Cloudflare",
        "Google Analytics",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let wordpress = find(&detected, "WordPress").unwrap();
    assert_eq!(wordpress.version.as_deref(), Some("6.4.2"));
    assert!(
        wordpress.categories.contains(&"CMS".to_owned()),
        "{:?}",
        wordpress.categories
    );
    assert_eq!(wordpress.confidence, 100);
    assert_eq!(
        find(&detected, "jQuery").unwrap().version.as_deref(),
        Some("3.7.1")
    );
    assert_eq!(
        find(&detected, "Nginx").unwrap().version.as_deref(),
        Some("1.25.3")
    );
    // Implied, through Express.
    assert!(find(&detected, "Node.js").is_some());
    // Cookie names with a wildcard: `_ga_*` says GA4.
    assert_eq!(
        find(&detected, "Google Analytics")
            .unwrap()
            .version
            .as_deref(),
        Some("GA4")
    );
}

#[test]
fn a_plain_page_has_no_technologies() {
    let detected = detect_page("<html><body><p>Hello</p></body></html>", &[], &[]);
    assert!(detected.is_empty(), "{detected:?}");
}

#[test]
fn dns_records_reveal_mail_providers() {
    let f = Fingerprints::bundled();
    let mut detection = f.detection();
    detection.dns(&pairs(&[
        ("MX", "aspmx.l.google.com"),
        ("TXT", "stripe-verification=abc"),
    ]));
    let detected = detection.finish();
    assert!(
        find(&detected, "Google Workspace").is_some(),
        "{detected:?}"
    );
    assert!(find(&detected, "Stripe").is_some(), "{detected:?}");
}

const SMALL_CATEGORIES: &str =
    r#"{"1": {"name": "CMS"}, "2": {"name": "Language"}, "3": {"name": "Shop"}}"#;
const SMALL_TECHNOLOGIES: &str = r#"{
  "Alpha": {"cats": [1], "html": "alpha-(\\d+)\\;version:\\1\\;confidence:40", "implies": ["Lang\\;confidence:50"], "excludes": "Beta"},
  "Alpha2": {"cats": [1], "html": "alpha-mark\\;confidence:40"},
  "Beta": {"cats": [1], "html": "beta"},
  "Lang": {"cats": [2]},
  "Plugin": {"cats": [3], "html": "plugin", "requires": "Alpha"},
  "Orphan": {"cats": [3], "html": "orphan", "requires": "Gamma", "implies": "Lang", "excludes": "Alpha2"},
  "Gate": {"cats": [3], "html": "gate", "excludes": "Lang"},
  "Addon": {"cats": [3], "html": "addon", "requiresCategory": 1},
  "Loop1": {"cats": [2], "html": "loop", "implies": "Loop2"},
  "Loop2": {"cats": [2], "implies": "Loop1"},
  "Lookahead": {"cats": [2], "html": "x(?=y)"}
}"#;

fn small(html: &str) -> Vec<Detected> {
    let f = Fingerprints::from_json(SMALL_CATEGORIES, &[SMALL_TECHNOLOGIES]).unwrap();
    let assets = PageAssets::default();
    f.detect(&observed("https://x.example/", html, &assets, &[], &[]))
}

#[test]
fn implies_excludes_requires_and_confidence_settle_the_set() {
    let detected = small("alpha-7 alpha-7 beta plugin orphan addon");
    let names: Vec<&str> = detected.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["Addon", "Alpha", "Lang", "Plugin"]);
    let alpha = find(&detected, "Alpha").unwrap();
    // One pattern counted once, however often it matched.
    assert_eq!(
        (alpha.confidence, alpha.version.as_deref()),
        (40, Some("7"))
    );
    assert_eq!(find(&detected, "Lang").unwrap().confidence, 40);
    assert_eq!(find(&detected, "Lang").unwrap().categories, ["Language"]);

    // A technology whose requirement is missing neither implies nor
    // excludes anything; exclusions act before implications, so an implied
    // technology stays (as in Wappalyzer's `resolve`).
    let names = |html| small(html).into_iter().map(|d| d.name).collect::<Vec<_>>();
    assert!(names("orphan").is_empty());
    assert_eq!(names("orphan alpha-mark"), ["Alpha2"]);
    assert_eq!(names("alpha-7 gate"), ["Alpha", "Gate", "Lang"]);

    // Without a CMS the add-on is not reported; cycles of implies end.
    let detected = small("addon loop");
    let names: Vec<&str> = detected.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["Loop1", "Loop2"]);
}

#[test]
fn the_prefilter_finds_what_running_every_pattern_finds() {
    let f = Fingerprints::bundled();
    let page = Page {
        url: "https://shop.example/",
        final_url: "https://shop.example/",
        html: SHOP_PAGE,
        kind: PageKind::Home,
    };
    let read = read_page(&page);
    let mut haystacks: Vec<(&index::TextIndex, Field, &str)> = vec![
        (&f.html, Field::Html, read.html),
        (&f.url, Field::Url, page.url),
    ];
    haystacks.extend(
        read.assets
            .scripts
            .iter()
            .map(|s| (&f.scripts, Field::Scripts, s.as_str())),
    );
    haystacks.extend(
        read.assets
            .script_srcs
            .iter()
            .map(|s| (&f.script_src, Field::ScriptSrc, s.as_str())),
    );
    for (index, field, haystack) in haystacks {
        let (mut fast, mut naive) = (Vec::new(), Vec::new());
        index.matches(field, haystack, &mut fast);
        index.matches_naively(field, haystack, &mut naive);
        let ids = |found: &[index::Found]| found.iter().map(|h| h.pattern).collect::<Vec<_>>();
        assert_eq!(ids(&fast), ids(&naive), "{field:?} on {haystack:.80}");
    }
}

#[test]
fn naive_and_indexed_detection_agree_on_a_rich_page() {
    let page = Page {
        url: "https://shop.example/",
        final_url: "https://shop.example/",
        html: SHOP_PAGE,
        kind: PageKind::Home,
    };
    let read = read_page(&page);
    let headers = pairs(&[("Server", "nginx/1.25.3"), ("X-Powered-By", "Express")]);
    let seen = observed(page.url, read.html, &read.assets, &headers, &[]);
    let f = Fingerprints::bundled();
    assert_eq!(f.detect(&seen), f.detect_naively(&seen));
}
