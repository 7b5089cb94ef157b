//! The RDAP stage: the domain's registration date and registrant country
//! from its registry, and the country of its first address from the
//! regional internet registry, both found through IANA's bootstrap files
//! (`rdap_bootstrap_url`), which are cached for a day.
//!
//! RDAP is best effort: a registry without RDAP, a redacted answer or a
//! refusal leaves the fields empty and notes why; it never fails the
//! enrichment.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use outreach_domain_analysis::rdap::{self, Bootstrap};
use outreach_ssrf::{ClientOptions, GuardPolicy, GuardedClient, GuardedRequest, Url};
use serde_json::Value;

/// Bootstrap files change a few times a year; a day is fresh enough.
const BOOTSTRAP_TTL: Duration = Duration::from_secs(24 * 60 * 60);
const TIMEOUT: Duration = Duration::from_secs(10);
/// RDAP answers are a few KB; bootstrap files about 100 KB.
const MAX_BYTES: usize = 2 * 1024 * 1024;

/// What the stage learned; `errors` says what it could not.
#[derive(Debug, Clone, Default)]
pub struct RdapFacts {
    /// Unix milliseconds.
    pub registered_at: Option<i64>,
    pub registrant_country: Option<String>,
    pub ip_country: Option<String>,
    pub errors: Vec<String>,
}

type Cached = (Instant, Arc<Bootstrap>);

/// The RDAP client with its bootstrap cache, one per server.
#[derive(Clone)]
pub struct Rdap {
    client: GuardedClient,
    bootstrap_url: String,
    bootstraps: Arc<Mutex<HashMap<&'static str, Cached>>>,
}

impl Rdap {
    pub fn new(policy: GuardPolicy, bootstrap_url: &str) -> anyhow::Result<Rdap> {
        let options = ClientOptions {
            timeout: TIMEOUT,
            max_response_bytes: MAX_BYTES,
            user_agent: super::crawl::USER_AGENT.to_string(),
            follow_redirects: true,
            ..ClientOptions::default()
        };
        let base = if bootstrap_url.ends_with('/') {
            bootstrap_url.to_string()
        } else {
            format!("{bootstrap_url}/")
        };
        Ok(Rdap {
            client: GuardedClient::new(policy, options)?,
            bootstrap_url: base,
            bootstraps: Arc::default(),
        })
    }

    /// Looks up `domain` and, when given, its address.
    pub async fn lookup(&self, domain: &str, ip: Option<IpAddr>) -> RdapFacts {
        let mut facts = RdapFacts::default();
        let (registry, network) = tokio::join!(self.domain(domain), async {
            match ip {
                Some(ip) => Some(self.ip(ip).await),
                None => None,
            }
        });
        match registry {
            Ok(Some(found)) => {
                facts.registered_at = found.registered_at.as_deref().and_then(parse_date);
                facts.registrant_country = found.registrant_country;
            }
            Ok(None) => {}
            Err(e) => facts.errors.push(format!("domain: {e}")),
        }
        match network {
            Some(Ok(country)) => facts.ip_country = country,
            Some(Err(e)) => facts.errors.push(format!("ip: {e}")),
            None => {}
        }
        facts
    }

    async fn domain(&self, domain: &str) -> Result<Option<rdap::DomainFacts>, String> {
        let bootstrap = self.bootstrap("dns.json").await?;
        let Some(url) = bootstrap.domain_url(domain) else {
            return Ok(None);
        };
        Ok(self
            .get(&url)
            .await?
            .map(|answer| rdap::domain_facts(&answer)))
    }

    async fn ip(&self, ip: IpAddr) -> Result<Option<String>, String> {
        let file = if ip.is_ipv4() {
            "ipv4.json"
        } else {
            "ipv6.json"
        };
        let bootstrap = self.bootstrap(file).await?;
        let Some(url) = bootstrap.ip_url(ip) else {
            return Ok(None);
        };
        Ok(self
            .get(&url)
            .await?
            .and_then(|answer| rdap::ip_country(&answer)))
    }

    async fn bootstrap(&self, file: &'static str) -> Result<Arc<Bootstrap>, String> {
        if let Some((at, cached)) = self.bootstraps.lock().expect("not poisoned").get(file)
            && at.elapsed() < BOOTSTRAP_TTL
        {
            return Ok(cached.clone());
        }
        let url = format!("{}{file}", self.bootstrap_url);
        let answer = self
            .get(&url)
            .await?
            .ok_or_else(|| format!("{url} not found"))?;
        let parsed = Arc::new(Bootstrap::from_value(&answer)?);
        let mut cache = self.bootstraps.lock().expect("not poisoned");
        cache.insert(file, (Instant::now(), parsed.clone()));
        Ok(parsed)
    }

    /// GETs an RDAP document; 404 is `None`.
    async fn get(&self, url: &str) -> Result<Option<Value>, String> {
        let url = Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
        let mut req = GuardedRequest::get(url.clone());
        req.headers.push((
            "Accept".into(),
            "application/rdap+json, application/json".into(),
        ));
        let resp = self.client.send(req).await.map_err(|e| e.to_string())?;
        match resp.status {
            200 => serde_json::from_slice(&resp.body)
                .map(Some)
                .map_err(|e| format!("{url} answered invalid JSON: {e}")),
            404 => Ok(None),
            status => Err(format!("{url} answered {status}")),
        }
    }
}

fn parse_date(date: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(date)
        .ok()
        .map(|d| d.timestamp_millis())
}
