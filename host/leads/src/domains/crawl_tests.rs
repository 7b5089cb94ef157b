//! The crawl and the stages after it, against local websites: a company
//! site that fills the record, and hostile sites that must each end with a
//! recorded reason while the pipeline goes on.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::pipeline;
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;
use outreach_core::testing::dns::TestDns;

const HOME: &str = r#"<!doctype html><html lang="en"><head>
<title>Acme Packaging | Packaging machines for food producers</title>
<meta name="description" content="Acme builds packaging machines and industrial automation for food manufacturers. Request a demo for your production line.">
<meta name="generator" content="WordPress 6.4.2">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"Acme Packaging Ltd",
 "address":{"@type":"PostalAddress","addressLocality":"Leeds","addressCountry":"GB"},
 "sameAs":["https://www.linkedin.com/company/acme-packaging"]}</script>
<script src="/wp-includes/js/jquery/jquery-3.7.1.min.js"></script>
<script src="https://www.googletagmanager.com/gtm.js?id=GTM-1"></script>
</head><body>
<nav><a href="contact">Contact</a> <a href="careers">Careers</a> <a href="private/x">Private</a></nav>
<p>Our machinery serves manufacturers and industrial production lines across Europe.</p>
</body></html>"#;

const CONTACT: &str = r#"<html><body><h1>Contact</h1>
<p>Sales: <a href="mailto:sales@acme-packaging.co.uk">sales@acme-packaging.co.uk</a>,
general enquiries info [at] acme-packaging [dot] co [dot] uk, call <a href="tel:+44 113 496 0000">us</a>.</p></body></html>"#;

/// A Shopify-like shop: the platform's CDN, cookies and meta tags.
const SHOP: &str = r#"<!doctype html><html lang="de"><head>
<title>Schuhhaus Meier – Schuhe online kaufen</title>
<meta name="description" content="Schuhe und Mode online kaufen: Sneaker, Stiefel und Sandalen für Damen und Herren. Versandkostenfrei ab 50 €.">
<meta name="shopify-digital-wallet" content="/123/digital_wallets/dialog">
<meta property="og:site_name" content="Schuhhaus Meier">
<script src="https://cdn.shopify.com/s/files/1/0123/theme.js"></script>
<script src="https://www.googletagmanager.com/gtag/js?id=G-ABC123"></script>
<script src="https://connect.facebook.net/en_US/fbevents.js"></script>
</head><body>
<a href="/cart">Warenkorb</a> <a href="/collections/sale">Sale</a>
<a href="https://www.instagram.com/schuhhausmeier/">Instagram</a>
<p>Telefon: 030 1234567 · E-Mail: service@schuhhaus-meier.de</p>
<form action="/contact#newsletter"><input type="email" name="contact[email]"><button>Newsletter abonnieren</button></form>
</body></html>"#;

/// A SaaS landing page with Stripe, Intercom and HubSpot.
const SAAS: &str = r#"<!doctype html><html lang="en"><head>
<title>Ledgerly — Reconciliation software for finance teams</title>
<meta name="description" content="Ledgerly is the reconciliation platform for finance teams: connect your bank, ERP and payments data and close the books in days, not weeks.">
<meta property="og:site_name" content="Ledgerly">
<script src="https://js.stripe.com/v3/"></script>
<script src="https://static.intercomcdn.com/intercom.v1.js"></script>
<script src="https://js.hs-scripts.com/4242.js"></script>
</head><body>
<nav><a href="pricing">Pricing</a> <a href="https://app.ledgerly.io/login">Log in</a>
<a href="docs/api">API</a> <a href="blog/">Blog</a> <a href="careers">Careers</a></nav>
<!-- Start of Async HubSpot Analytics Code -->
<p>Trusted by 2,000 businesses. Book a demo with our team.</p>
<a href="https://twitter.com/ledgerly">Twitter</a> <a href="https://github.com/ledgerly">GitHub</a>
</body></html>"#;

/// Addresses written so that harvesters miss them.
const OBFUSCATED: &str = r#"<html lang="fr"><head><title>Cabinet Dupont Avocats</title></head><body>
<p>Cabinet d'avocats à Lyon, droit des affaires et droit social pour les entreprises.</p>
<p>Écrivez-nous : contact (at) dupont-avocats (dot) fr</p>
<p>Secrétariat : <a href="/cdn-cgi/l/email-protection#0b786e6879...">[email protected]</a></p>
<p>Tél. 04 72 10 20 30</p></body></html>"#;

fn html(body: impl Into<Body>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body.into(),
    )
        .into_response()
}

/// One local server for every test site; each domain's override points at
/// its own path prefix.
async fn websites() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let chunk = vec![b'a'; 64 * 1024];
    let (dns_json, ip_json) = (
        json!({"version": "1.0", "services": [[["uk"], [format!("{base}/rdap/nominet/")]]]}),
        json!({"version": "1.0", "services": [[["127.0.0.0/8"], [format!("{base}/rdap/ripe/")]]]}),
    );
    let app = Router::new()
        .route("/rdap/bootstrap/dns.json", get(move || async move { Json(dns_json) }))
        .route("/rdap/bootstrap/ipv4.json", get(move || async move { Json(ip_json) }))
        .route(
            "/rdap/nominet/domain/{domain}",
            get(|Path(domain): Path<String>| async move {
                if domain != "acme-packaging.co.uk" {
                    return StatusCode::NOT_FOUND.into_response();
                }
                Json(json!({
                    "objectClassName": "domain",
                    "ldhName": domain,
                    "events": [{"eventAction": "registration", "eventDate": "2019-05-01T00:00:00Z"}],
                    "entities": [{"roles": ["registrant"], "vcardArray": ["vcard", [
                        ["version", {}, "text", "4.0"],
                        ["adr", {}, "text", ["", "", "1 Park Row", "Leeds", "", "LS1 5AB", "United Kingdom"]]
                    ]]}]
                }))
                .into_response()
            }),
        )
        .route(
            "/rdap/ripe/ip/{ip}",
            get(|| async { Json(json!({"objectClassName": "ip network", "country": "IE"})) }),
        )
        .route("/acme/", get(|| async { html(HOME) }))
        .route("/acme/contact", get(|| async { html(CONTACT) }))
        .route("/acme/careers", get(|| async { html("<p>We are hiring engineers.</p>") }))
        .route("/shop/", get(|| async { html(SHOP) }))
        .route("/saas/", get(|| async { html(SAAS) }))
        .route("/saas/pricing", get(|| async { html("<h1>Plans</h1><p>Starter, Growth and Enterprise plans, billed monthly.</p>") }))
        .route("/saas/careers", get(|| async { html("<h1>Join us</h1><p>We are hiring engineers in Berlin and remote.</p>") }))
        .route("/obf/", get(|| async { html(OBFUSCATED) }))
        .route("/robots.txt", get(|| async { "User-agent: *\nDisallow: /acme/private\n" }))
        .route(
            "/loop/{n}",
            get(|Path(n): Path<u64>| async move {
                (StatusCode::FOUND, [(header::LOCATION, format!("/loop/{}", n + 1))]).into_response()
            }),
        )
        .route(
            "/huge/",
            get(move || async move {
                // 1 GB, produced as it is read.
                let stream = futures::stream::iter(
                    std::iter::repeat_n(chunk, 16 * 1024).map(Ok::<_, std::io::Error>),
                );
                html(Body::from_stream(stream))
            }),
        )
        .route(
            "/slow/",
            get(|| async {
                // A byte every second, for ever.
                let stream = futures::stream::unfold((), |()| async {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Some((Ok::<_, std::io::Error>(vec![b'<']), ()))
                });
                html(Body::from_stream(stream))
            }),
        )
        .route(
            "/deep/",
            get(|| async {
                let depth = 100_000;
                html(format!("<html><body>{}deep{}</body></html>", "<div>".repeat(depth), "</div>".repeat(depth)))
            }),
        )
        .route(
            "/latin/",
            get(|| async {
                let mut body = b"<html><head><title>Caf\xe9 M\xfcller</title></head><body><p>info@latin-one.de \xff\xfe</p></body></html>".to_vec();
                body.extend_from_slice(&[0xc3, 0x28, 0xa0, 0xa1]);
                html(body)
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// A site of its own (robots.txt is per host) whose robots.txt is 10 MB of
/// rules that do not concern its home page.
async fn heavy_robots_site() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let rules: String = (0..400_000)
        .map(|i| format!("Disallow: /private-{i}\n"))
        .collect();
    let robots = std::sync::Arc::new(format!("User-agent: *\n{rules}"));
    assert!(robots.len() > 10_000_000);
    let app = Router::new()
        .route(
            "/robots.txt",
            get(move || {
                let robots = robots.clone();
                async move { robots.to_string() }
            }),
        )
        .route(
            "/",
            get(|| async {
                html("<html><body><p>Write to info@huge-robots.com</p></body></html>")
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// `extra`: more `(domain, base URL)` overrides, for sites served apart.
async fn app(dns: &TestDns, base: &str, extra: &[(&str, &str)]) -> TestApp {
    let ns = dns.nameserver();
    let base = base.to_owned();
    let mut overrides: BTreeMap<String, String> = [
        ("acme-packaging.co.uk", "/acme/"),
        ("redirect-loop.com", "/loop/0"),
        ("huge-body.com", "/huge/"),
        ("slow-loris.com", "/slow/"),
        ("deep-dom.com", "/deep/"),
        ("latin-one.de", "/latin/"),
        ("schuhhaus-meier.de", "/shop/"),
        ("ledgerly.io", "/saas/"),
        ("dupont-avocats.fr", "/obf/"),
    ]
    .into_iter()
    .map(|(domain, path)| (domain.to_owned(), format!("{base}{path}")))
    .collect();
    for (domain, url) in extra {
        overrides.insert((*domain).to_owned(), (*url).to_owned());
    }
    TestApp::with_areas(&[crate::AREA], move |c| {
        c.dns_nameservers = vec![ns];
        c.crawler_base_url_overrides = overrides;
        c.unsafe_outbound_allow_loopback = true;
        c.rdap_bootstrap_url = format!("{base}/rdap/bootstrap/");
    })
    .await
}

async fn enrich(app: &TestApp, key: &str, domain: &str) -> Value {
    let r = app
        .get(&format!("/v1/enrichment/domain?domain={domain}"), key)
        .await;
    assert_eq!(r.status, 202, "{domain}: {:?}", r.body);
    while pipeline::enrich_claimed(&app.state, "test").await.unwrap() > 0 {}
    let r = app
        .get(&format!("/v1/enrichment/domain?domain={domain}"), key)
        .await;
    assert_eq!(r.status, 200, "{domain}: {:?}", r.body);
    r.body
}

#[tokio::test]
async fn a_company_site_fills_the_record() {
    let dns = TestDns::start().await;
    dns.a("acme-packaging.co.uk", Ipv4Addr::LOCALHOST);
    dns.mx(
        "acme-packaging.co.uk",
        10,
        "acme-packaging-co-uk.mail.protection.outlook.com",
    );
    dns.txt(
        "acme-packaging.co.uk",
        "v=spf1 include:spf.protection.outlook.com -all",
    );
    let base = websites().await;
    let app = app(&dns, &base, &[]).await;
    let a = app.account(Plan::Starter).await;

    let record = enrich(&app, &a.api_key, "acme-packaging.co.uk").await;
    assert_eq!(record["status"], "enriched", "{record:#}");
    assert_eq!(record["company_name"], "Acme Packaging Ltd");
    assert!(
        record["summary"]
            .as_str()
            .unwrap()
            .starts_with("Acme builds packaging machines")
    );
    assert_eq!(
        record["website_email"], "info@acme-packaging.co.uk",
        "{record:#}"
    );
    assert_eq!(record["phone"], "+441134960000");
    assert_eq!(record["city"], "Leeds");
    // From RDAP: the registry's registrant address and the RIR's country
    // of the address the site is served from.
    assert_eq!(record["registrant_country"], "GB");
    assert_eq!(record["ip_country"], "IE");
    assert_eq!(record["registered_at"], "2019-05-01T00:00:00Z");
    assert_eq!(record["language"], "en");
    assert_eq!(record["mx_provider"], "Microsoft 365");
    assert_eq!(
        record["social_links"]["linkedin"],
        "https://www.linkedin.com/company/acme-packaging"
    );
    assert_eq!(record["industry"], "Manufacturing", "{record:#}");
    assert_eq!(record["sub_industry"], "Machinery");
    assert_eq!(record["business_type"], "B2B");
    assert!(record["confidence"].as_f64().unwrap() > 0.5);

    let names: Vec<&str> = record["technologies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in [
        "WordPress",
        "PHP",
        "jQuery",
        "Google Tag Manager",
        "Microsoft 365",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let signals = record["audience_signals"].as_array().unwrap();
    assert!(signals.contains(&"has_job_board".into()), "{signals:?}");
    assert!(signals.contains(&"has_social_media".into()), "{signals:?}");
    assert!(
        record["fields_filled"].as_i64().unwrap() >= 10,
        "{record:#}"
    );

    let r = app
        .get(
            "/v1/enrichment/tech-stack?domain=acme-packaging.co.uk",
            &a.api_key,
        )
        .await;
    assert_eq!(r.status, 200);
    let wordpress = r.body["technologies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "WordPress")
        .cloned()
        .unwrap();
    assert_eq!(wordpress["version"], "6.4.2");
    assert!(
        wordpress["categories"]
            .as_array()
            .unwrap()
            .contains(&"CMS".into())
    );

    let r = app
        .get(
            "/v1/search/domains?technologies=wordpress&industry=Manufacturing",
            &a.api_key,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["total"], 1, "{:?}", r.body);
}

#[tokio::test]
async fn hostile_sites_end_with_a_reason_and_the_pipeline_goes_on() {
    let dns = TestDns::start().await;
    // The cloud metadata address: refused by the outbound policy.
    dns.a("metadata-trap.com", Ipv4Addr::new(169, 254, 169, 254));
    let base = websites().await;
    let heavy_robots = format!("{}/", heavy_robots_site().await);
    let app = app(&dns, &base, &[("huge-robots.com", &heavy_robots)]).await;
    let a = app.account(Plan::Starter).await;

    let started = Instant::now();
    let record = enrich(&app, &a.api_key, "metadata-trap.com").await;
    assert_eq!(
        record["status"], "enriched",
        "DNS still answered: {record:#}"
    );
    let reason = record["enrichment_errors"]["crawl"].as_str().unwrap();
    assert!(reason.contains("Blocked by SSRF guard"), "{reason}");

    let record = enrich(&app, &a.api_key, "redirect-loop.com").await;
    let reason = record["enrichment_errors"]["crawl"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.to_lowercase().contains("redirect"), "{record:#}");

    // A 1 GB body is cut at the page cap; what was read is still used.
    let record = enrich(&app, &a.api_key, "huge-body.com").await;
    assert_eq!(record["status"], "enriched", "{record:#}");

    let reason = record["enrichment_errors"]["crawl"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("page cut at 2 MB"), "{record:#}");

    let record = enrich(&app, &a.api_key, "slow-loris.com").await;
    let reason = record["enrichment_errors"]["crawl"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("timed out"), "{record:#}");

    let record = enrich(&app, &a.api_key, "deep-dom.com").await;
    assert_eq!(record["status"], "enriched", "{record:#}");

    let record = enrich(&app, &a.api_key, "latin-one.de").await;
    assert_eq!(record["website_email"], "info@latin-one.de", "{record:#}");

    // A 10 MB robots.txt is read up to its cap; the site is still crawled.
    let record = enrich(&app, &a.api_key, "huge-robots.com").await;
    assert_eq!(
        record["website_email"], "info@huge-robots.com",
        "{record:#}"
    );

    // The slow site is the only one that takes its time-out.
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "took {:?}",
        started.elapsed()
    );
}

fn technology_names(record: &Value) -> Vec<String> {
    record["technologies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn has_all(record: &Value, field: &str, expected: &[&str]) {
    let found: Vec<String> = match field {
        "technologies" => technology_names(record),
        _ => record[field]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect(),
    };
    for e in expected {
        assert!(
            found.iter().any(|f| f == e),
            "{field}: {e} missing from {found:?}"
        );
    }
}

#[tokio::test]
async fn a_shop_a_saas_and_a_law_firm_read_field_by_field() {
    let dns = TestDns::start().await;
    for domain in ["schuhhaus-meier.de", "ledgerly.io", "dupont-avocats.fr"] {
        dns.a(domain, Ipv4Addr::LOCALHOST);
    }
    dns.mx("ledgerly.io", 1, "aspmx.l.google.com");
    let base = websites().await;
    let app = app(&dns, &base, &[]).await;
    let a = app.account(Plan::Starter).await;

    let shop = enrich(&app, &a.api_key, "schuhhaus-meier.de").await;
    assert_eq!(shop["company_name"], "Schuhhaus Meier", "{shop:#}");
    assert_eq!(shop["industry"], "Retail", "{shop:#}");
    assert_eq!(shop["sub_industry"], "Fashion & Apparel");
    assert_eq!(shop["business_type"], "B2C");
    assert_eq!(shop["language"], "de");
    assert_eq!(shop["website_email"], "service@schuhhaus-meier.de");
    assert_eq!(shop["phone"], "+49301234567");
    assert_eq!(
        shop["social_links"]["instagram"],
        "https://www.instagram.com/schuhhausmeier"
    );
    has_all(
        &shop,
        "technologies",
        &["Shopify", "Google Analytics", "Facebook Pixel"],
    );
    has_all(
        &shop,
        "alert_signals",
        &["has_ecommerce", "has_analytics", "has_forms"],
    );
    has_all(
        &shop,
        "audience_signals",
        &["has_ecommerce", "has_newsletter", "has_social_media"],
    );
    // No RDAP registry for .de in the bootstrap: left empty, not an error.
    assert!(shop["registered_at"].is_null());

    let saas = enrich(&app, &a.api_key, "ledgerly.io").await;
    assert_eq!(saas["company_name"], "Ledgerly", "{saas:#}");
    assert_eq!(saas["industry"], "Software", "{saas:#}");
    assert_eq!(saas["business_type"], "B2B");
    assert_eq!(saas["mx_provider"], "Google Workspace");
    has_all(
        &saas,
        "technologies",
        &["Stripe", "Intercom", "HubSpot", "Google Workspace"],
    );
    has_all(
        &saas,
        "alert_signals",
        &["has_payments", "has_chat_widget", "has_api"],
    );
    has_all(
        &saas,
        "audience_signals",
        &["has_saas", "has_login", "has_blog", "has_job_board"],
    );
    assert_eq!(
        saas["social_links"]["github"],
        "https://github.com/ledgerly"
    );
    // Hiring and a live chat on a SaaS site: some intent, not none.
    assert!(saas["intent_score"].as_i64().unwrap() >= 20, "{saas:#}");
    assert_ne!(saas["intent_level"], "cold");

    let firm = enrich(&app, &a.api_key, "dupont-avocats.fr").await;
    assert_eq!(
        firm["website_email"], "contact@dupont-avocats.fr",
        "{firm:#}"
    );
    assert_eq!(firm["phone"], "+33472102030");
    assert_eq!(firm["industry"], "Professional Services", "{firm:#}");
    assert_eq!(firm["sub_industry"], "Legal");
    assert_eq!(firm["language"], "fr");
}
