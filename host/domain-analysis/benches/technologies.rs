//! Technology detection: the Aho-Corasick prefilter with regex sets against
//! the naive matcher that runs every fingerprint pattern on every page (the
//! reference, measured in the same run on the same pages). Also checks that
//! both find the same technologies on every page.
//!
//! Run: `cargo bench -p outreach-domain-analysis --bench technologies`.

use std::time::Instant;

use outreach_domain_analysis::extract::{Page, PageKind, read_page};
use outreach_domain_analysis::technologies::{Fingerprints, Observed};

/// Marks of common technologies, as sites carry them.
const SNIPPETS: &[&str] = &[
    r#"<meta name="generator" content="WordPress 6.4.2">"#,
    r#"<link rel='stylesheet' href='/wp-content/themes/astra/style.css'>"#,
    r#"<script src="/wp-includes/js/jquery/jquery-3.7.1.min.js"></script>"#,
    r#"<script src="https://www.googletagmanager.com/gtm.js?id=GTM-ABC"></script>"#,
    r#"<script async src="https://www.googletagmanager.com/gtag/js?id=G-XYZ"></script>"#,
    r#"<script src="https://js.stripe.com/v3/"></script>"#,
    r#"<script src="https://cdn.shopify.com/s/files/1/theme.js"></script>"#,
    r#"<script src="https://widget.intercom.io/widget/abc"></script>"#,
    r#"<script src="https://js.hs-scripts.com/123.js"></script>"#,
    r#"<script src="https://static.hotjar.com/c/hotjar-1.js?sv=6"></script>"#,
    r#"<script src="https://connect.facebook.net/en_US/fbevents.js"></script>"#,
    r#"<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.2/dist/js/bootstrap.min.js"></script>"#,
    r#"<script src="https://unpkg.com/react@18.2.0/umd/react.production.min.js"></script>"#,
    r#"<div id="__next"></div><script src="/_next/static/chunks/main-abc.js"></script>"#,
    r#"<script src="https://cdnjs.cloudflare.com/ajax/libs/gsap/3.12.2/gsap.min.js"></script>"#,
    r#"<script src="https://www.google.com/recaptcha/api.js"></script>"#,
    r#"<script src="https://boards.greenhouse.io/embed/job_board/js?for=acme"></script>"#,
    r#"<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}</script>"#,
    r#"<link href="https://fonts.googleapis.com/css2?family=Inter" rel="stylesheet">"#,
    r#"<script src="https://kit.fontawesome.com/abc.js"></script>"#,
    r#"<meta name="generator" content="Wix.com Website Builder">"#,
    r#"<script src="https://static.zdassets.com/ekr/snippet.js?key=x"></script>"#,
    r#"<script src="https://cdn.cookielaw.org/scripttemplates/otSDKStub.js"></script>"#,
    r#"<script src="https://js.driftt.com/include/123/abc.js"></script>"#,
    r#"<script src="https://assets.calendly.com/assets/external/widget.js"></script>"#,
];

const HEADERS: &[&[(&str, &str)]] = &[
    &[("server", "nginx/1.25.3"), ("x-powered-by", "PHP/8.2.1")],
    &[("server", "cloudflare"), ("cf-ray", "8a1b")],
    &[("server", "Apache/2.4.57 (Debian)")],
    &[("x-powered-by", "Express"), ("via", "1.1 vegur")],
];

/// A page of about 60 KB: navigation, paragraphs and a few technologies.
fn page(seed: usize) -> String {
    let mut html = String::from("<!doctype html><html lang=\"en\"><head><title>Company ");
    html.push_str(&seed.to_string());
    html.push_str("</title>");
    for k in 0..(3 + seed % 6) {
        html.push_str(SNIPPETS[(seed * 7 + k * 13) % SNIPPETS.len()]);
    }
    html.push_str("</head><body><nav>");
    for k in 0..40 {
        html.push_str(&format!("<a href=\"/section-{k}\">Section {k}</a>"));
    }
    html.push_str("</nav>");
    while html.len() < 60_000 {
        html.push_str(
            "<div class=\"row\"><p>We help teams across Europe ship packaging lines, \
            with service contracts, spare parts and training for operators. \
            Call us or write to info@example.com for a quote.</p></div>",
        );
    }
    html.push_str("</body></html>");
    html
}

fn main() {
    let started = Instant::now();
    let fingerprints = Fingerprints::bundled();
    let load = started.elapsed();
    println!(
        "fingerprints: {} technologies, {} patterns skipped, loaded in {:.0} ms",
        fingerprints.technology_count(),
        fingerprints.skipped_patterns(),
        load.as_secs_f64() * 1000.0
    );

    for (field, all, unfiltered) in fingerprints.prefilter_sizes() {
        println!("  {field}: {all} patterns, {unfiltered} without a literal");
    }
    // The patterns every page pays for, to tune the literal choice.
    if std::env::var_os("SHOW_UNFILTERED").is_some() {
        for p in fingerprints.unfiltered_html() {
            println!("    {p}");
        }
    }

    let pages: Vec<String> = (0..200).map(page).collect();
    let read: Vec<_> = pages
        .iter()
        .map(|html| {
            read_page(&Page {
                url: "https://company.example/",
                final_url: "https://company.example/",
                html,
                kind: PageKind::Home,
            })
        })
        .collect();
    let headers: Vec<Vec<(String, String)>> = HEADERS
        .iter()
        .map(|h| {
            h.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect();
    let observed = |i: usize| Observed {
        url: "https://company.example/",
        html: read[i].html,
        assets: &read[i].assets,
        headers: &headers[i % headers.len()],
        cookies: &[],
    };

    // Warm both paths (lazy regex compilation) and check they agree.
    let mut found = 0;
    for i in 0..read.len() {
        let fast = fingerprints.detect(&observed(i));
        let naive = fingerprints.detect_naively(&observed(i));
        assert_eq!(
            fast, naive,
            "page {i}: the prefilter missed or added a technology"
        );
        found += fast.len();
    }
    println!(
        "{} pages, {:.1} technologies per page, same answers both ways",
        read.len(),
        found as f64 / read.len() as f64
    );

    let rounds = 5;
    let started = Instant::now();
    for _ in 0..rounds {
        for i in 0..read.len() {
            std::hint::black_box(fingerprints.detect(&observed(i)));
        }
    }
    let fast = (rounds * read.len()) as f64 / started.elapsed().as_secs_f64();

    let started = Instant::now();
    for i in 0..read.len() {
        std::hint::black_box(fingerprints.detect_naively(&observed(i)));
    }
    let naive = read.len() as f64 / started.elapsed().as_secs_f64();

    println!("prefilter + regex sets: {fast:.0} pages/s");
    println!("every pattern one by one (reference): {naive:.1} pages/s");
    println!("ratio: {:.0}x", fast / naive);
}
