//! The crawl stage: the home page and a few same-site pages found from it,
//! through the SSRF-guarded client (every address checked after DNS on
//! `dns_nameservers`, redirects followed hop by hop), with robots.txt
//! honoured, a politeness delay between two fetches of one site, an
//! identifying User-Agent, and caps on size, time and pages.

use std::time::Duration;

use outreach_domain_analysis::extract::PageKind;
use outreach_ssrf::{ClientOptions, GuardError, GuardPolicy, GuardedClient, GuardedRequest, Url};

/// Who we are, with where to read about it.
pub const USER_AGENT: &str = concat!(
    "OutreachBot/",
    env!("CARGO_PKG_VERSION"),
    " (company-data crawler; +https://github.com/outreach-platform/outreach)"
);
/// Bytes read of one page; the rest is cut (a 1 GB body costs 2 MB).
const MAX_PAGE_BYTES: usize = 2 * 1024 * 1024;
/// Bytes read of robots.txt (Google reads 500 KiB).
const MAX_ROBOTS_BYTES: usize = 512 * 1024;
/// One fetch, headers and body, at most; a slow-loris server is cut off
/// here.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// Pages besides the home page.
pub const MAX_EXTRA_PAGES: usize = 5;
/// The pause between two fetches of one site, unless robots.txt asks for a
/// longer one (capped at [`MAX_CRAWL_DELAY`]).
const POLITENESS: Duration = Duration::from_millis(250);
const MAX_CRAWL_DELAY: Duration = Duration::from_secs(5);

/// One fetched page.
#[derive(Debug, Clone)]
pub struct Page {
    /// Where the page was found after redirects.
    pub url: Url,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body as text (invalid UTF-8 replaced), cut at the size cap.
    pub html: String,
    /// Why the body is incomplete, when it is: over the size cap, or the
    /// time ran out while it trickled in (what arrived is kept).
    pub cut: Option<String>,
    /// The home page, or the kind of link the crawler followed to it.
    pub kind: PageKind,
}

/// What the crawl brought back.
#[derive(Debug, Clone, Default)]
pub struct Site {
    pub pages: Vec<Page>,
    /// Cookies the site set (name, value).
    pub cookies: Vec<(String, String)>,
}

impl Site {
    /// What went wrong on the way, for `enrichment_errors.crawl`: pages cut
    /// by size or time.
    pub fn problems(&self) -> Vec<String> {
        self.pages
            .iter()
            .filter_map(|p| p.cut.as_ref().map(|cut| format!("{}: {cut}", p.url)))
            .collect()
    }
}

/// Why the site could not be read: a final reason (the address is blocked,
/// nothing answers) or one worth another try later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CrawlFailure {
    Final(String),
    Retry(String),
}

/// The crawler's client, built once per server.
#[derive(Clone, Debug)]
pub struct Crawler {
    client: GuardedClient,
}

impl Crawler {
    pub fn new(policy: GuardPolicy) -> anyhow::Result<Crawler> {
        let options = ClientOptions {
            timeout: FETCH_TIMEOUT,
            connect_timeout: Duration::from_secs(5),
            max_redirects: 5,
            max_response_bytes: MAX_PAGE_BYTES,
            user_agent: USER_AGENT.to_string(),
            follow_redirects: true,
            truncate_response: true,
            ..ClientOptions::default()
        };
        Ok(Crawler {
            client: GuardedClient::new(policy, options)?,
        })
    }

    /// Crawls `domain` from `base` (its override, else `https://domain/`
    /// and the usual fall-backs). `links` picks the same-site pages worth
    /// reading from the home page.
    pub async fn crawl(
        &self,
        domain: &str,
        base: Option<&str>,
        links: impl Fn(&Page) -> Vec<(Url, PageKind)>,
    ) -> Result<Site, CrawlFailure> {
        let starts: Vec<String> = match base {
            Some(b) => vec![b.to_string()],
            None => vec![
                format!("https://{domain}/"),
                format!("https://www.{domain}/"),
                format!("http://{domain}/"),
            ],
        };
        // The first address's failure is the one reported: the fall-backs
        // are guesses, and `www.` failing to resolve says nothing new.
        let mut first = None;
        for start in starts {
            let Ok(start) = Url::parse(&start) else {
                continue;
            };
            match self.crawl_from(domain, &start, &links).await {
                Ok(site) => return Ok(site),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        Err(first.unwrap_or_else(|| CrawlFailure::Final("no start address".into())))
    }

    async fn crawl_from(
        &self,
        domain: &str,
        start: &Url,
        links: &impl Fn(&Page) -> Vec<(Url, PageKind)>,
    ) -> Result<Site, CrawlFailure> {
        let host = start.host_str().unwrap_or(domain).to_string();
        // Redirects may move within the site (or the overridden host), never
        // off it: a shortener or parking page is not the company's site.
        let same_site = |url: &Url| -> Result<(), String> {
            match url.host_str() {
                Some(h)
                    if h == host || outreach_domain_analysis::domain::is_same_site(domain, h) =>
                {
                    Ok(())
                }
                other => Err(format!("redirect off the site to {}", other.unwrap_or("?"))),
            }
        };
        let robots = self.robots(start, &same_site).await;
        let delay = robots
            .as_ref()
            .and_then(|r| r.delay)
            .map(|s| Duration::from_secs_f32(s.clamp(0.0, MAX_CRAWL_DELAY.as_secs_f32())))
            .unwrap_or(POLITENESS)
            .max(POLITENESS);
        let allowed = |url: &Url| robots.as_ref().is_none_or(|r| r.allowed(url.as_str()));
        if !allowed(start) {
            return Err(CrawlFailure::Final(
                "robots.txt disallows the home page".into(),
            ));
        }
        let mut site = Site::default();
        let home = self.fetch(start, &same_site).await?;
        site.cookies.extend(cookies(&home.headers));
        if home.status >= 400 {
            return Err(if home.status >= 500 || home.status == 429 {
                CrawlFailure::Retry(format!("home page answered {}", home.status))
            } else {
                CrawlFailure::Final(format!("home page answered {}", home.status))
            });
        }
        let mut extra: Vec<(Url, PageKind)> = links(&home)
            .into_iter()
            .filter(|(u, _)| allowed(u) && u != &home.url)
            .collect();
        extra.dedup_by(|a, b| a.0 == b.0);
        extra.truncate(MAX_EXTRA_PAGES);
        site.pages.push(home);
        for (url, kind) in extra {
            tokio::time::sleep(delay).await;
            // A sub-page that fails leaves what the others found.
            match self.fetch(&url, &same_site).await {
                Ok(page) if page.status < 400 => {
                    site.cookies.extend(cookies(&page.headers));
                    site.pages.push(Page { kind, ..page });
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(%url, ?e, "sub-page not read"),
            }
        }
        site.cookies.sort();
        site.cookies.dedup_by(|a, b| a.0 == b.0);
        Ok(site)
    }

    async fn robots(
        &self,
        start: &Url,
        same_site: &(dyn Fn(&Url) -> Result<(), String> + Sync),
    ) -> Option<texting_robots::Robot> {
        let url = start.join("/robots.txt").ok()?;
        let mut req = GuardedRequest::get(url);
        req.timeout = Some(FETCH_TIMEOUT);
        let resp = self.client.send_with(req, same_site).await.ok()?;
        if resp.status != 200 {
            // No robots.txt (or one we cannot read) allows everything.
            return None;
        }
        let body = &resp.body[..resp.body.len().min(MAX_ROBOTS_BYTES)];
        texting_robots::Robot::new("OutreachBot", body).ok()
    }

    async fn fetch(
        &self,
        url: &Url,
        same_site: &(dyn Fn(&Url) -> Result<(), String> + Sync),
    ) -> Result<Page, CrawlFailure> {
        let mut req = GuardedRequest::get(url.clone());
        req.headers.push((
            "Accept".into(),
            "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5".into(),
        ));
        req.timeout = Some(FETCH_TIMEOUT);
        let resp = self
            .client
            .send_with(req, same_site)
            .await
            .map_err(failure)?;
        let html = String::from_utf8_lossy(&resp.body).into_owned();
        let cut = resp.truncated.then(|| {
            if resp.body.len() >= MAX_PAGE_BYTES {
                format!("page cut at {} MB", MAX_PAGE_BYTES / (1024 * 1024))
            } else {
                format!(
                    "timed out after {} s while the page trickled in ({} bytes kept)",
                    FETCH_TIMEOUT.as_secs(),
                    resp.body.len()
                )
            }
        });
        Ok(Page {
            url: resp.final_url,
            status: resp.status,
            headers: resp.headers,
            html,
            cut,
            kind: PageKind::Home,
        })
    }
}

/// A connection that could not be made may work later; everything else
/// is final for this enrichment. A time-out is final too: a site too slow
/// to answer in [`FETCH_TIMEOUT`] would hold a worker on every retry, and
/// the refresh comes back to it anyway.
fn failure(e: GuardError) -> CrawlFailure {
    match e {
        GuardError::Connect(_) => CrawlFailure::Retry(e.to_string()),
        _ => CrawlFailure::Final(e.to_string()),
    }
}

/// The cookies of `Set-Cookie` headers: each one's name and value.
fn cookies(headers: &[(String, String)]) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
        .filter_map(|(_, v)| {
            let pair = v.split(';').next()?;
            let (name, value) = pair.split_once('=')?;
            Some((name.trim().to_string(), value.trim().to_string()))
        })
        .collect()
}
