//! Crawl benchmark: 2,000 local company sites enriched end to end through
//! the real pipeline (queue, DNS on a local DNS server, RDAP from a local
//! registry, the guarded crawler with robots.txt and politeness, extraction,
//! fingerprints, classification, scores, the write with tags and events) on
//! embedded SQLite, one worker as `outreach serve` runs it. Prints domains
//! per second and the process's peak RSS.
//!
//! Run: `tests/bench/crawl.sh` (release build). `CRAWL_SITES` changes the
//! number of sites.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::time::Instant;

use axum::Router;
use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::get;
use serde_json::json;

use outreach_core::testing::TestApp;
use outreach_core::testing::dns::TestDns;
use outreach_leads::domains::pipeline;

/// Marks of technologies a site may carry, one picked per site and slot.
const MARKS: &[&str] = &[
    r#"<meta name="generator" content="WordPress 6.4.2"><script src="/wp-includes/js/jquery/jquery-3.7.1.min.js"></script>"#,
    r#"<script src="https://cdn.shopify.com/s/files/1/theme.js"></script>"#,
    r#"<script src="https://js.stripe.com/v3/"></script>"#,
    r#"<script src="https://static.intercomcdn.com/intercom.v1.js"></script>"#,
    r#"<script src="https://js.hs-scripts.com/123.js"></script>"#,
    r#"<script src="https://www.googletagmanager.com/gtm.js?id=GTM-1"></script>"#,
    r#"<script src="https://static.hotjar.com/c/hotjar-1.js?sv=6"></script>"#,
    r#"<script src="https://boards.greenhouse.io/embed/job_board/js?for=x"></script>"#,
];

const TOPICS: &[(&str, &str)] = &[
    (
        "Packaging machines",
        "We build packaging machinery and industrial automation for manufacturers.",
    ),
    (
        "Reconciliation software",
        "The finance platform for teams: connect your ERP and payments data. Book a demo.",
    ),
    (
        "Shoes and fashion",
        "Sneakers, boots and sandals online. Free shipping on orders over 50. Shop the sale.",
    ),
    (
        "Business law",
        "Our law firm advises companies on contracts, employment and disputes.",
    ),
    (
        "Hotel by the lake",
        "Rooms, restaurant and spa by the lake. Book your stay online.",
    ),
];

fn home(n: usize) -> String {
    let (topic, about) = TOPICS[n % TOPICS.len()];
    let mut html = format!(
        "<!doctype html><html lang=\"en\"><head><title>Company {n} | {topic}</title>\
         <meta name=\"description\" content=\"Company {n}: {about}\">{}{}</head><body>\
         <nav><a href=\"contact\">Contact</a> <a href=\"about\">About us</a> <a href=\"careers\">Careers</a></nav>",
        MARKS[n % MARKS.len()],
        MARKS[(n / 3 + 2) % MARKS.len()],
    );
    while html.len() < 40_000 {
        html.push_str("<div class=\"section\"><h2>What we do</h2><p>");
        html.push_str(about);
        html.push_str(" Call us or write to us for a quote; we answer within a day.</p></div>");
    }
    html.push_str(&format!(
        "<footer><a href=\"mailto:info@company{n}.com\">info@company{n}.com</a> \
         <a href=\"https://www.linkedin.com/company/company{n}\">LinkedIn</a></footer></body></html>"
    ));
    html
}

fn page(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

async fn sites() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (dns_json, ip_json) = (
        json!({"services": [[["com"], [format!("{base}/rdap/registry/")]]]}),
        json!({"services": [[["127.0.0.0/8"], [format!("{base}/rdap/rir/")]]]}),
    );
    let app = Router::new()
        .route("/site/{n}/", get(|Path(n): Path<usize>| async move { page(home(n)) }))
        .route(
            "/site/{n}/contact",
            get(|Path(n): Path<usize>| async move {
                page(format!("<h1>Contact</h1><p>sales [at] company{n} [dot] com, +1 415 555 {:04}</p>", n % 10_000))
            }),
        )
        .route("/site/{n}/about", get(|| async { page("<h1>About</h1><p>Founded in 2009.</p>".into()) }))
        .route("/site/{n}/careers", get(|| async { page("<h1>Jobs</h1><p>We are hiring.</p>".into()) }))
        .route("/robots.txt", get(|| async { "User-agent: *\nAllow: /\n" }))
        .route("/rdap/bootstrap/dns.json", get(move || async move { Json(dns_json) }))
        .route("/rdap/bootstrap/ipv4.json", get(move || async move { Json(ip_json) }))
        .route(
            "/rdap/registry/domain/{d}",
            get(|| async {
                Json(json!({"events": [{"eventAction": "registration", "eventDate": "2015-03-01T00:00:00Z"}]}))
            }),
        )
        .route("/rdap/rir/ip/{ip}", get(|| async { Json(json!({"country": "US"})) }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// The process's peak resident set, from the kernel.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

#[tokio::main]
async fn main() {
    let count: usize = std::env::var("CRAWL_SITES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let dns = TestDns::start().await;
    let base = sites().await;
    let domains: Vec<String> = (0..count).map(|n| format!("company{n}.com")).collect();
    for domain in &domains {
        dns.a(domain, Ipv4Addr::LOCALHOST);
    }
    let overrides: BTreeMap<String, String> = domains
        .iter()
        .enumerate()
        .map(|(n, d)| (d.clone(), format!("{base}/site/{n}/")))
        .collect();
    let ns = dns.nameserver();
    let bootstrap = format!("{base}/rdap/bootstrap/");
    let app = TestApp::with_areas(&[outreach_leads::AREA], move |c| {
        c.dns_nameservers = vec![ns];
        c.crawler_base_url_overrides = overrides;
        c.rdap_bootstrap_url = bootstrap;
    })
    .await;
    let rss_before = peak_rss_mb();

    let started = Instant::now();
    pipeline::submit(&app.state, &domains, "import", None)
        .await
        .unwrap();
    let mut done = 0;
    while done < count {
        let n = pipeline::enrich_claimed(&app.state, "bench").await.unwrap();
        if n == 0 {
            break;
        }
        done += n;
    }
    let elapsed = started.elapsed().as_secs_f64();

    let statuses: Vec<(String, i64)> =
        sqlx::query_as("SELECT status, COUNT(*) FROM domains GROUP BY status ORDER BY status")
            .fetch_all(&app.state.db.pool)
            .await
            .unwrap();
    let classified: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM domains WHERE industry IS NOT NULL")
            .fetch_one(&app.state.db.pool)
            .await
            .unwrap();
    println!(
        "sites: {count}, enrichments run: {done}, statuses: {statuses:?}, with an industry: {classified}"
    );
    println!(
        "elapsed: {elapsed:.1} s, {:.1} domains/s",
        count as f64 / elapsed
    );
    println!(
        "peak RSS: {:.0} MB (after set-up: {rss_before:.0} MB)",
        peak_rss_mb()
    );
}
