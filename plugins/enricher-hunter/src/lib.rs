//! Hunter (`hunter`), fallback rank 1, 0.005 USD a lookup.
//!
//! API v2 with the key in the `X-API-KEY` header (kept out of URLs, which
//! proxies log): `GET /v2/companies/find?domain=...` answers
//! `{data: {name, legalName, description, foundedYear, category, geo,
//! linkedin, twitter, metrics, tech, ...}, meta}` and `GET /v2/account`
//! answers the plan's request counters. Hunter documents 401 for a bad key,
//! 403 for its per-second rate limit, 429 for an exhausted monthly quota,
//! 404 for an unknown company and 451 for a company removed on request.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;
use vendor_common::*;

const DEFAULT_BASE: &str = "https://api.hunter.io";
const VENDOR: &str = "hunter";
const REQUEST_TIMEOUT_MS: u32 = 10_000;

pub struct Hunter;

impl ContactEnricher for Hunter {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: VENDOR.into(),
            display_name: "Hunter".into(),
            list_rate_usd: 0.005,
            fallback_rank: 1,
        }
    }

    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        let url = format!("{}/v2/account", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .header("x-api-key", &ctx.api_key)
            .timeout_ms(REQUEST_TIMEOUT_MS)
            .send()?;
        let body = json_object(&classify(resp)?)?;
        let requests = &body["data"]["requests"];
        if !requests.is_object() {
            return Err(PluginError::Permanent(
                "hunter: account answer has no data.requests".into(),
            ));
        }
        Ok(KeyValidation {
            credits_remaining: remaining(requests),
        })
    }

    fn enrich(ctx: &VendorContext, domain: &str) -> Result<EnrichmentResult, PluginError> {
        check_domain(domain)?;
        let url = format!("{}/v2/companies/find", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .query("domain", domain)
            .header("x-api-key", &ctx.api_key)
            .timeout_ms(REQUEST_TIMEOUT_MS)
            .send()?;
        if resp.status == 404 || resp.status == 451 {
            return Err(not_found(VENDOR, domain));
        }
        let body = json_object(&classify(resp)?)?;
        normalise(domain, &body)
    }
}

/// Hunter's documented statuses on top of the shared ones: 403 is its
/// short-window rate limit, not an auth failure, and 202 means the company
/// is still being compiled, which a later retry may answer.
fn classify(resp: Response) -> Result<Response, PluginError> {
    let snippet: String = resp.text().chars().take(300).collect();
    match resp.status {
        403 => Err(quota(format!(
            "hunter: rate limit reached (HTTP 403): {snippet}"
        ))),
        202 => Err(PluginError::Transient(
            "hunter: the company is still being processed (HTTP 202)".into(),
        )),
        _ => check_status(resp),
    }
}

/// Credits left this period: `available` is the plan's allowance and
/// `used` what was spent, for the `credits` counter (current plans) or the
/// `searches` counter (older plans).
fn remaining(requests: &Value) -> Option<i64> {
    ["credits", "searches"].iter().find_map(|k| {
        let c = &requests[*k];
        Some((credits(&c["available"])? - credits(&c["used"]).unwrap_or(0)).max(0))
    })
}

/// Maps `data`. Hunter reports headcount only as a range ("1K-5K"), so the
/// exact count stays null unless the range is a single number; funding stage
/// is not reported.
pub fn normalise(domain: &str, body: &Value) -> Result<EnrichmentResult, PluginError> {
    let d = &body["data"];
    if !d.is_object() {
        return Err(not_found(VENDOR, domain));
    }
    let m = &d["metrics"];
    let g = &d["geo"];
    let range = employee_range(&m["employees"]);
    let count = range.as_deref().and_then(|r| r.parse::<i64>().ok());
    let linkedin = text(&d["linkedin"]["handle"]).map(|h| {
        if h.contains("linkedin.com") {
            h
        } else {
            format!("linkedin.com/{}", h.trim_start_matches('/'))
        }
    });
    Ok(EnrichmentResult {
        name: text(&d["name"]),
        legal_name: text(&d["legalName"]),
        description: text(&d["description"]),
        founded_year: year(&d["foundedYear"]),
        employee_count: count,
        employee_range: if count.is_some() {
            count.and_then(employee_bucket)
        } else {
            range
        },
        annual_revenue_usd: number(&m["annualRevenue"]),
        total_funding_usd: number(&m["raised"]),
        industry: text(&d["category"]["industry"]).or_else(|| text(&d["category"]["sector"])),
        subindustry: text(&d["category"]["subIndustry"]),
        hq_country: text(&g["country"]).or_else(|| text(&g["countryCode"])),
        hq_city: text(&g["city"]),
        linkedin_url: linkedin.and_then(|l| linkedin_url(&Value::String(l))),
        twitter_handle: twitter_handle(&d["twitter"]["handle"]),
        technologies: strings(&d["tech"]),
        ..enrichment(domain, VENDOR, body)
    })
}

outreach_plugin_sdk::export_contact_enricher!(Hunter);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_nested_fields() {
        let body: Value = serde_json::from_str(
            r#"{"data":{"name":"Acme","foundedYear":2009,"metrics":{"employees":"51-200","raised":1.5e7},
               "geo":{"city":"Austin","countryCode":"US"},"linkedin":{"handle":"company/acme"},
               "twitter":{"handle":"acmehq"},"tech":["react"]}}"#,
        )
        .unwrap();
        let r = normalise("acme.com", &body).unwrap();
        assert_eq!(r.employee_range.as_deref(), Some("51-200"));
        assert_eq!(r.employee_count, None);
        assert_eq!(
            r.linkedin_url.as_deref(),
            Some("https://linkedin.com/company/acme")
        );
        assert_eq!(r.hq_country.as_deref(), Some("US"));
        let acct: Value = serde_json::from_str(r#"{"credits":{"used":5,"available":50}}"#).unwrap();
        assert_eq!(remaining(&acct), Some(45));
    }
}
