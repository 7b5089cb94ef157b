//! What fetched pages say about a company.
//!
//! The crawler fetches a site's home page and a few same-site pages found
//! from it ([`PageFacts::crawl_candidates`]), calls [`extract_page`] on each
//! and [`merge`]s the results into the [`CompanyFacts`] of the domain record.
//!
//! Each page is tokenized once (html5ever's tokenizer, no tree; `scan.rs`
//! says why); the extractors then read what the pass collected:
//!
//! - `describe.rs`: the company name from a `<title>`, the summary, the
//!   language;
//! - `jsonld.rs`: the schema.org organisation (name, city, country, contact
//!   points, profiles);
//! - `emails.rs`, `phones.rs`, `social.rs`: contact details;
//! - `links.rs`: page features for the signals, and crawl candidates;
//! - `merge.rs`: one company from several pages.
//!
//! Hostile pages are bounded: the HTML is cut at [`MAX_HTML_BYTES`], every
//! collection has a cap, nothing keeps a stack of open elements or recurses
//! over the document, and text scanning is linear.

mod country;
pub use country::{country_code, is_region};
mod describe;
mod emails;
mod jsonld;
mod limits;
mod links;
mod merge;
mod phones;
mod scan;
mod social;
mod url;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use describe::MAX_SUMMARY_BYTES;
pub use limits::MAX_HTML_BYTES;
pub(crate) use limits::cap_bytes;
pub use links::MAX_CRAWL_CANDIDATES;
pub use merge::merge;
pub use scan::PageAssets;

use self::url::Url;
use crate::domain::normalise;

/// What the crawler fetched.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// The URL requested.
    pub url: &'a str,
    /// The URL after redirects; links resolve against it.
    pub final_url: &'a str,
    /// The body, decoded to text.
    pub html: &'a str,
    /// Why the crawler fetched it: [`PageKind::Home`], or the kind of the
    /// crawl candidate it followed.
    pub kind: PageKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageKind {
    Home,
    Contact,
    Imprint,
    About,
    Careers,
    Pricing,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompanyName {
    pub value: String,
    pub source: NameSource,
}

/// Where a company name was read, most trusted first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameSource {
    /// schema.org `Organization` (or a subtype) in JSON-LD.
    JsonLd,
    /// `<meta property="og:site_name">`.
    OgSiteName,
    /// The brand part of `<title>`.
    Title,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Whitespace collapsed, at most [`MAX_SUMMARY_BYTES`].
    pub text: String,
    pub source: SummarySource,
}

/// Where a summary was read, most trusted first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummarySource {
    MetaDescription,
    OgDescription,
    /// The first paragraph of at least 60 characters.
    Paragraph,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Email {
    /// Lower case.
    pub address: String,
    pub source: EmailSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmailSource {
    Mailto,
    /// Cloudflare's email protection, decoded.
    Cloudflare,
    JsonLd,
    Text,
    /// Text with `[at]`, `(punkt)`, `AT ... DOT` and the like undone.
    Obfuscated,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phone {
    /// E.164, such as `+4930123456`.
    pub e164: String,
    pub source: PhoneSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhoneSource {
    TelLink,
    JsonLd,
    Text,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SocialNetwork {
    Linkedin,
    Twitter,
    Facebook,
    Instagram,
    Youtube,
    Github,
    Tiktok,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocialLink {
    pub network: SocialNetwork,
    /// Canonical: `https://www.linkedin.com/company/acme`,
    /// `https://x.com/acme`...
    pub url: String,
    /// Listed in the organisation's JSON-LD `sameAs`, the most reliable
    /// source.
    pub from_json_ld: bool,
}

/// One profile URL per network.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocialLinks {
    pub linkedin: Option<String>,
    pub twitter: Option<String>,
    pub facebook: Option<String>,
    pub instagram: Option<String>,
    pub youtube: Option<String>,
    pub github: Option<String>,
    pub tiktok: Option<String>,
}

/// What a page shows that spec/2's alert and audience signals need; the
/// caller combines them with the detected technologies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageFeatures {
    /// A `<form>` with fields other than a site search.
    pub has_forms: bool,
    /// A login link or a password field.
    pub has_login: bool,
    /// Links to a blog or news section, or an RSS/Atom feed.
    pub has_blog: bool,
    /// An email form worded for a newsletter, or a Mailchimp/Substack link.
    pub has_newsletter: bool,
    /// `<video>`, or an embedded YouTube, Vimeo, Wistia... player.
    pub has_video: bool,
    /// Links to or embeds of podcast platforms, or a "podcast" link.
    pub has_podcast: bool,
    pub has_forum: bool,
    /// Links to a careers page or a job board (Greenhouse, Lever...).
    pub has_job_board: bool,
    /// Links to an API, developer portal or documentation.
    pub has_api: bool,
    /// Links to the App Store or Google Play.
    pub has_mobile_app: bool,
    /// Any social profile.
    pub has_social_media: bool,
    /// The final URL is `https`.
    pub has_ssl: bool,
    /// Links to a pricing page (SaaS and service businesses).
    pub has_pricing: bool,
}

/// A same-site page worth fetching next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrawlCandidate {
    pub kind: PageKind,
    /// Absolute, without fragment.
    pub url: String,
}

/// What one page says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageFacts {
    pub url: String,
    pub final_url: String,
    pub kind: PageKind,
    pub company_name: Option<CompanyName>,
    pub summary: Option<Summary>,
    /// Validated, lower case, deduplicated, in the order found.
    pub emails: Vec<Email>,
    /// Valid numbers in E.164, deduplicated, in the order found.
    pub phones: Vec<Phone>,
    pub social: Vec<SocialLink>,
    /// From JSON-LD `address.addressLocality`.
    pub city: Option<String>,
    /// ISO 3166-1 alpha-2, upper case, from JSON-LD `address.addressCountry`.
    pub country: Option<String>,
    /// Primary language subtag, lower case.
    pub language: Option<String>,
    pub features: PageFeatures,
    /// Same-site pages to fetch next, by kind (contact, imprint, about,
    /// careers, pricing), at most [`MAX_CRAWL_CANDIDATES`]. The crawler
    /// follows the home page's.
    pub crawl_candidates: Vec<CrawlCandidate>,
    /// The HTML was cut at [`MAX_HTML_BYTES`]; facts from the rest are
    /// missing.
    pub truncated: bool,
}

/// What a company's pages say together; see [`merge`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompanyFacts {
    /// The registrable domain the pages belong to.
    pub domain: String,
    pub company_name: Option<CompanyName>,
    pub summary: Option<Summary>,
    /// The address to write to: a role address (info@, contact@...) on the
    /// company's own domain when there is one.
    pub website_email: Option<String>,
    /// Every address, best first.
    pub emails: Vec<String>,
    /// The best number: from a `tel:` link, a contact page.
    pub phone: Option<String>,
    /// Every number in E.164, best first.
    pub phones: Vec<String>,
    pub social: SocialLinks,
    pub city: Option<String>,
    pub country: Option<String>,
    pub language: Option<String>,
    /// Any page's features; `has_ssl` is the home page's.
    pub features: PageFeatures,
}

/// Reads one page. Never fails: what cannot be read is left empty.
pub fn extract_page(page: &Page<'_>) -> PageFacts {
    read_page(page).facts
}

/// A page read once for both its facts and its technologies.
#[derive(Debug, Clone)]
pub struct ReadPage<'a> {
    pub facts: PageFacts,
    /// The HTML as read: `page.html` cut at [`MAX_HTML_BYTES`], which is
    /// what technology fingerprints should match.
    pub html: &'a str,
    pub assets: PageAssets,
    /// The visible text, at most [`MAX_READ_TEXT_BYTES`], for classifiers.
    pub text: String,
    /// The `<title>`, whitespace collapsed.
    pub title: Option<String>,
}

/// Visible text kept in a [`ReadPage`].
pub const MAX_READ_TEXT_BYTES: usize = 64 * 1024;

/// Reads one page's facts and keeps what technology detection needs, so
/// the crawler parses each page once.
pub fn read_page<'a>(page: &Page<'a>) -> ReadPage<'a> {
    let html = limits::cap_bytes(page.html, MAX_HTML_BYTES);
    let truncated = html.len() < page.html.len();
    let mut scan = scan::scan(html);
    let assets = std::mem::take(&mut scan.assets);
    let text = cap_bytes(&scan.text, MAX_READ_TEXT_BYTES).to_owned();
    let title = scan.title.as_deref().map(scan::collapse_whitespace);
    ReadPage {
        facts: facts(page, scan, truncated),
        html,
        assets,
        text,
        title,
    }
}

fn facts(page: &Page<'_>, scan: scan::Scan, truncated: bool) -> PageFacts {
    let final_url = Url::parse(page.final_url).or_else(|| Url::parse(page.url));
    let site = final_url.as_ref().and_then(|url| normalise(&url.host).ok());
    let site = site.as_deref();
    // Links resolve against `<base href>` when the page sets one.
    let base = match (&final_url, &scan.base_href) {
        (Some(url), Some(base)) => url.join(base).or_else(|| Some(url.clone())),
        (url, _) => url.clone(),
    };

    let org = jsonld::organization(&scan.json_ld, site).unwrap_or_default();
    let company_name = org
        .name
        .clone()
        .map(|value| (value, NameSource::JsonLd))
        .or_else(|| {
            let name = scan.og_site_name.as_deref().map(scan::collapse_whitespace);
            name.filter(|n| !n.is_empty())
                .map(|n| (n, NameSource::OgSiteName))
        })
        .or_else(|| {
            let title = scan.title.as_deref()?;
            describe::name_from_title(title, site).map(|n| (n, NameSource::Title))
        })
        .map(|(value, source)| CompanyName { value, source });

    let summary = [
        (&scan.description, SummarySource::MetaDescription),
        (&scan.og_description, SummarySource::OgDescription),
        (&scan.first_paragraph, SummarySource::Paragraph),
    ]
    .into_iter()
    .find_map(|(text, source)| {
        let text = describe::summary_text(text.as_deref()?)?;
        Some(Summary { text, source })
    });

    let links: Vec<links::Link> = match &base {
        Some(base) => scan
            .anchors
            .iter()
            .filter_map(|a| Some(links::Link::new(base.join(&a.href)?, &a.text, site)))
            .collect(),
        None => Vec::new(),
    };

    let mut emails = emails::Emails::new();
    for anchor in &scan.anchors {
        emails.add_mailto(&anchor.href);
    }
    for hex in &scan.cf_emails {
        emails.add_cloudflare(hex);
    }
    for address in &org.emails {
        let address = address.strip_prefix("mailto:").unwrap_or(address);
        emails.add(address, EmailSource::JsonLd);
    }
    emails.add_text(&scan.text);

    let region = country::phone_region(org.country.as_deref(), site);
    let mut phones = phones::Phones::new(region);
    for anchor in &scan.anchors {
        phones.add_tel(&anchor.href);
    }
    for number in &org.phones {
        phones.add(number, PhoneSource::JsonLd);
    }
    phones.add_text(&scan.text);

    let mut social_links = Vec::new();
    for profile in &org.same_as {
        social::add(&mut social_links, profile, true);
    }
    for link in &links {
        social::add(&mut social_links, &link.url.to_string(), false);
    }

    let mut features = links::features(&scan, &links);
    features.has_social_media = !social_links.is_empty();
    features.has_ssl = final_url.as_ref().is_some_and(|url| url.scheme == "https");

    let crawl_candidates = match &final_url {
        Some(url) => links::crawl_candidates(&links, url),
        None => Vec::new(),
    };

    PageFacts {
        url: page.url.to_owned(),
        final_url: page.final_url.to_owned(),
        kind: page.kind,
        company_name,
        summary,
        emails: emails.into_vec(),
        phones: phones.into_vec(),
        social: social_links,
        city: org.city,
        country: org.country,
        language: scan
            .lang
            .as_deref()
            .and_then(describe::language)
            .or_else(|| scan.og_locale.as_deref().and_then(describe::language)),
        features,
        crawl_candidates,
        truncated,
    }
}
