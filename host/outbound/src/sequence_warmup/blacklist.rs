//! DNS blacklist (DNSBL) checks of a sending domain, cached 24 hours per
//! domain in `dns_check_cache` (key `blacklist:<domain>`).
//!
//! The address checked is the domain's mail server: the first address of
//! its most preferred MX host, or the domain's own A record when it has no
//! MX (RFC 5321's implicit MX). For self-hosted mail that is the sending
//! server; for hosted mail it is the provider's, which is rarely listed, so
//! the domain lists matter more there. Only IPv4 is checked (the lists
//! below publish IPv4 zones). Without an address, only the domain lists are
//! asked and `ip` is null.
//!
//! Address lists are asked `<reversed octets>.<zone>`, domain lists
//! `<domain>.<zone>`, all at once. An answer in 127.0.0.0/8 is a listing,
//! except the lists' refusal codes (`outreach_core::platform::dns::
//! is_refusal_code`: Spamhaus 127.255.255.x, 127.0.0.1); a refusal, a
//! time-out or any other failure reads as not listed (spec/3).

use futures::future::join_all;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::store;
use outreach_core::error::ApiResult;
use outreach_core::platform::clock::iso;
use outreach_core::platform::dns::{Dns, dnsbl_ip_query};
use outreach_core::state::AppState;

/// How long a domain's result is reused (spec/3: 24 hours per domain).
pub const CACHE_MS: i64 = 24 * 3_600_000;

/// Lists asked with the mail server's IPv4 address.
pub const IP_LISTS: [&str; 8] = [
    "zen.spamhaus.org",
    "bl.spamcop.net",
    "b.barracudacentral.org",
    "dnsbl.sorbs.net",
    "psbl.surriel.com",
    "bl.mailspike.net",
    "dnsbl-1.uceprotect.net",
    "ix.dnsbl.manitu.net",
];

/// Lists asked with the domain name.
pub const DOMAIN_LISTS: [&str; 3] = ["dbl.spamhaus.org", "multi.surbl.org", "multi.uribl.com"];

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ListResult {
    /// The list's DNS zone.
    pub list: String,
    pub listed: bool,
}

/// `GET /v1/sequence-warmup/{sequence_id}/blacklist`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BlacklistReport {
    pub domain: String,
    /// The mail server address checked; null when the domain has none.
    pub ip: Option<String>,
    /// Whether this answer came from the 24-hour cache.
    pub cached: bool,
    pub results: Vec<ListResult>,
    pub listed_count: i64,
    pub total_checked: i64,
    pub checked_at: String,
}

impl BlacklistReport {
    pub fn flagged(&self) -> impl Iterator<Item = &str> {
        self.results
            .iter()
            .filter(|r| r.listed)
            .map(|r| r.list.as_str())
    }
}

/// The IPv4 address of the domain's mail server (see the module docs).
async fn mail_server_ip(dns: &Dns, domain: &str) -> Option<std::net::Ipv4Addr> {
    if let Ok(mx) = dns.mx(domain).await {
        // A null MX (".") says the domain takes no mail; fall through to A.
        for host in mx.iter().filter(|m| !m.exchange.is_empty()) {
            if let Ok(ips) = dns.ipv4(&host.exchange).await {
                return ips.first().copied();
            }
        }
    }
    dns.ipv4(domain).await.ok()?.first().copied()
}

/// Asks every list now, without the cache.
pub async fn check_now(dns: &Dns, domain: &str, now: i64) -> BlacklistReport {
    let ip = mail_server_ip(dns, domain).await;
    let mut queries: Vec<(&str, String)> = Vec::new();
    if let Some(ip) = ip {
        queries.extend(IP_LISTS.iter().map(|z| (*z, dnsbl_ip_query(ip, z))));
    }
    queries.extend(DOMAIN_LISTS.iter().map(|z| (*z, format!("{domain}.{z}"))));
    let answers = join_all(queries.iter().map(|(_, q)| dns.dnsbl(q))).await;
    let results: Vec<ListResult> = queries
        .iter()
        .zip(answers)
        .map(|((zone, _), answer)| ListResult {
            list: zone.to_string(),
            listed: answer.is_listed(),
        })
        .collect();
    BlacklistReport {
        domain: domain.to_string(),
        ip: ip.map(|ip| ip.to_string()),
        cached: false,
        listed_count: results.iter().filter(|r| r.listed).count() as i64,
        total_checked: results.len() as i64,
        results,
        checked_at: iso(now),
    }
}

/// The domain's result from the cache when younger than 24 hours,
/// otherwise asked now and cached.
pub async fn check(state: &AppState, domain: &str) -> ApiResult<BlacklistReport> {
    let now = state.clock.now_ms();
    let key = format!("blacklist:{domain}");
    if let Some(body) = store::cached(&state.db, &key, now).await?
        && let Ok(mut report) = serde_json::from_str::<BlacklistReport>(&body)
    {
        report.cached = true;
        return Ok(report);
    }
    let report = check_now(&state.dns, domain, now).await;
    let body = serde_json::to_string(&report).map_err(anyhow::Error::from)?;
    store::cache(&state.db, &key, &body, now, now + CACHE_MS).await?;
    Ok(report)
}
