//! The site stages: extraction, technology detection, signals and scores,
//! turning a crawled site (and the DNS facts) into [`Findings`]; the
//! classifier's verdict comes in through [`classified`].
//!
//! Reading pages is CPU work (HTML parsing, thousands of fingerprints), so
//! it runs on the blocking pool, not on the async workers.

use outreach_domain_analysis::classify::{Classification, ClassifyInput};
use outreach_domain_analysis::extract::{self, Page as PageInput, PageKind, read_page};
use outreach_domain_analysis::signals;
use outreach_domain_analysis::technologies::{Detected, Fingerprints, Observed};
use outreach_ssrf::Url;
use serde_json::{Map, Value};

use super::crawl::{Page, Site};
use super::dns::DnsFacts;
use super::save::Findings;
use crate::domains::record::Technology;

/// The same-site pages worth fetching after the home page, with the kind
/// of each (under a test's base-URL override, mapped back onto it).
pub fn next_pages(home: &Page, base: Option<&str>, domain: &str) -> Vec<(Url, PageKind)> {
    let shown = shown_url(home.url.as_str(), base, domain);
    let page = PageInput {
        url: &shown,
        final_url: &shown,
        html: &home.html,
        kind: PageKind::Home,
    };
    let own = format!("https://{domain}");
    extract::extract_page(&page)
        .crawl_candidates
        .into_iter()
        .filter_map(|c| {
            let url = match (base, c.url.strip_prefix(&own)) {
                (Some(base), Some(path)) => {
                    Url::parse(&format!("{}{path}", base.trim_end_matches('/'))).ok()
                }
                _ => Url::parse(&c.url).ok(),
            };
            Some((url?, c.kind))
        })
        .collect()
}

/// What the site and DNS say: company facts, technologies and the
/// signals. Returns what the domain classifier reads; its verdict
/// goes to [`classified`], and the scores to [`score`].
pub fn analyse(
    domain: &str,
    base: Option<&str>,
    site: Option<&Site>,
    dns: Option<&DnsFacts>,
    f: &mut Findings,
) -> ClassifyInput {
    let fingerprints = Fingerprints::bundled();
    let mut detection = fingerprints.detection();
    let mut pages = Vec::new();
    let mut text = String::new();
    let mut title = None;
    if let Some(site) = site {
        for (index, page) in site.pages.iter().enumerate() {
            let url = shown_url(page.url.as_str(), base, domain);
            let input = PageInput {
                url: &url,
                final_url: &url,
                html: &page.html,
                kind: page.kind,
            };
            let read = read_page(&input);
            detection.page(&Observed {
                url: &url,
                html: read.html,
                assets: &read.assets,
                headers: &page.headers,
                cookies: &site.cookies,
            });
            if index == 0 {
                title = read.title.clone();
            }
            text.push_str(&read.text);
            text.push('\n');
            pages.push(read.facts);
        }
    }
    if let Some(dns) = dns {
        let mut records: Vec<(String, String)> = dns
            .mx
            .iter()
            .map(|m| ("MX".to_owned(), m.clone()))
            .collect();
        records.extend(dns.txt.iter().map(|t| ("TXT".to_owned(), t.clone())));
        detection.dns(&records);
    }
    let detected = detection.finish();
    let company = extract::merge(domain, &pages);

    f.company_name = company.company_name.as_ref().map(|n| n.value.clone());
    f.summary = company.summary.as_ref().map(|s| s.text.clone());
    f.website_email = company.website_email.clone();
    f.emails_seen = company.emails.clone();
    f.phone = company.phone.clone();
    f.city = company.city.clone();
    f.language = company.language.clone();
    if f.registrant_country.is_none() {
        // The address a company publishes says where it is when the
        // registry does not.
        f.registrant_country = company.country.clone();
    }
    f.social_links = social_links(&company.social);
    f.technologies = detected.iter().map(technology).collect();

    let techs: Vec<signals::Tech<'_>> = detected
        .iter()
        .map(|d| signals::Tech {
            name: &d.name,
            categories: &d.categories,
        })
        .collect();
    let reading = signals::read(&techs, &company.features);
    f.alert_signals = reading.alert.iter().map(|s| s.to_string()).collect();
    f.audience_signals = reading.audience.iter().map(|s| s.to_string()).collect();
    // Sign-in with plans or a payment processor, and no shop: a SaaS.
    let sells_subscriptions = reading.audience.contains(&"has_saas");
    f.reading = Some(reading);

    ClassifyInput {
        domain: domain.to_owned(),
        company_name: f.company_name.clone(),
        title,
        summary: f.summary.clone(),
        text,
        technologies: detected
            .iter()
            .map(|d| (d.name.clone(), d.categories.clone()))
            .collect(),
        sells_subscriptions,
    }
}

/// Takes the classifier's verdict, and reads `likely_buys` and `gaps`
/// against the business type it gave.
pub fn classified(f: &mut Findings, c: Classification) {
    f.industry = c.industry;
    f.sub_industry = c.sub_industry;
    f.confidence = c.confidence;
    if let Some(reading) = &f.reading {
        let (likely_buys, gaps) = signals::gaps_and_buys(reading, &c.business_type);
        f.likely_buys = likely_buys;
        f.gaps = gaps;
    }
    f.business_type = Some(c.business_type);
}

/// The intent score and level, once the previous technologies and the
/// registration date are known.
pub fn score(f: &mut Findings, previous_technologies: Option<&[String]>, now_ms: i64) {
    let current: Vec<&str> = f.technologies.iter().map(|t| t.name.as_str()).collect();
    let changed = previous_technologies.is_some_and(|before| {
        let mut before: Vec<&str> = before.iter().map(String::as_str).collect();
        let mut after = current.clone();
        before.sort_unstable();
        after.sort_unstable();
        before != after
    });
    let age_days = f
        .registered_at
        .map(|at| (now_ms - at) / (24 * 60 * 60 * 1000));
    let score = f
        .reading
        .as_ref()
        .map_or(0, |r| signals::intent(r, changed, age_days));
    f.intent_score = score;
    f.intent_level = signals::level(score).to_owned();
}

/// A page's address as the domain's own: under a test's base-URL override
/// (`crawler_base_url_overrides`) the pages come from another host, but
/// links, phone regions and address ownership must read as the domain's.
fn shown_url(url: &str, base: Option<&str>, domain: &str) -> String {
    match base.and_then(|b| url.strip_prefix(b.trim_end_matches('/'))) {
        Some(rest) => format!(
            "https://{domain}{}",
            if rest.starts_with('/') {
                rest.to_owned()
            } else {
                format!("/{rest}")
            }
        ),
        None => url.to_owned(),
    }
}

fn technology(d: &Detected) -> Technology {
    Technology {
        name: d.name.clone(),
        categories: d.categories.clone(),
        version: d.version.clone(),
        confidence: d.confidence,
    }
}

fn social_links(links: &extract::SocialLinks) -> Value {
    let mut map = Map::new();
    for (network, url) in [
        ("linkedin", &links.linkedin),
        ("twitter", &links.twitter),
        ("facebook", &links.facebook),
        ("instagram", &links.instagram),
        ("youtube", &links.youtube),
        ("github", &links.github),
        ("tiktok", &links.tiktok),
    ] {
        if let Some(url) = url {
            map.insert(network.to_owned(), Value::String(url.clone()));
        }
    }
    Value::Object(map)
}
