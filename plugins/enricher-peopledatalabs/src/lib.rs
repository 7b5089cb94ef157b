//! People Data Labs (`peopledatalabs`), fallback rank 2, 0.01 USD a lookup.
//!
//! API v5 with the key in the `X-Api-Key` header:
//! `GET /v5/company/enrich?website=...` answers the company record
//! (`display_name`, `size`, `employee_count`, `founded`, `industry`,
//! `location`, `linkedin_url`, `twitter_url`, `total_funding_raised`,
//! `latest_funding_stage`, ...) with HTTP 200, and `{status: 404, error:
//! {type: "not_found"}}` with HTTP 404 when no company matches. PDL uses
//! 401/403 for key problems, 402 for an exhausted balance and 429 for its
//! rate limit.
//!
//! PDL has no credits endpoint. Every answer carries the balance in the
//! `x-totallimit-remaining` header, and a lookup that matches nothing is not
//! billed, so key validation looks up a reserved `.invalid` domain: a 404
//! proves the key works and costs nothing.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;
use vendor_common::*;

const DEFAULT_BASE: &str = "https://api.peopledatalabs.com";
const VENDOR: &str = "peopledatalabs";
const REQUEST_TIMEOUT_MS: u32 = 10_000;
/// RFC 2606 reserves `.invalid`, so no company can ever match it.
const PROBE_DOMAIN: &str = "outreach-key-check.invalid";

pub struct PeopleDataLabs;

impl ContactEnricher for PeopleDataLabs {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: VENDOR.into(),
            display_name: "People Data Labs".into(),
            list_rate_usd: 0.01,
            fallback_rank: 2,
        }
    }

    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        let resp = lookup(ctx, PROBE_DOMAIN)?;
        let balance = resp
            .header("x-totallimit-remaining")
            .and_then(|h| h.trim().parse::<i64>().ok());
        // 400 and 404 both mean the key was accepted and the probe matched nothing.
        if matches!(resp.status, 400 | 404) {
            return Ok(KeyValidation {
                credits_remaining: balance,
            });
        }
        check_status(resp)?;
        Ok(KeyValidation {
            credits_remaining: balance,
        })
    }

    fn enrich(ctx: &VendorContext, domain: &str) -> Result<EnrichmentResult, PluginError> {
        check_domain(domain)?;
        let resp = lookup(ctx, domain)?;
        if resp.status == 404 {
            return Err(not_found(VENDOR, domain));
        }
        let body = json_object(&check_status(resp)?)?;
        normalise(domain, &body)
    }
}

fn lookup(ctx: &VendorContext, domain: &str) -> Result<Response, PluginError> {
    let url = format!("{}/v5/company/enrich", base_url(ctx, DEFAULT_BASE));
    Request::get(&url)
        .query("website", domain)
        .header("x-api-key", &ctx.api_key)
        .timeout_ms(REQUEST_TIMEOUT_MS)
        .send()
}

/// Maps the company record. PDL sends `name` lower-cased and `display_name`
/// as written, so the latter is the name; it reports revenue only as a range
/// (`inferred_revenue`), so the revenue number stays null, and it has no
/// legal name or technology list.
pub fn normalise(domain: &str, body: &Value) -> Result<EnrichmentResult, PluginError> {
    if integer(&body["status"]).is_some_and(|s| s == 404) {
        return Err(not_found(VENDOR, domain));
    }
    if text(&body["name"]).is_none()
        && text(&body["display_name"]).is_none()
        && text(&body["id"]).is_none()
    {
        return Err(PluginError::Permanent(
            "peopledatalabs: answer is not a company record".into(),
        ));
    }
    let count = integer(&body["employee_count"]);
    let loc = &body["location"];
    Ok(EnrichmentResult {
        name: text(&body["display_name"]).or_else(|| text(&body["name"])),
        description: text(&body["summary"]).or_else(|| text(&body["headline"])),
        founded_year: year(&body["founded"]),
        employee_count: count,
        employee_range: employee_range(&body["size"]).or_else(|| count.and_then(employee_bucket)),
        total_funding_usd: number(&body["total_funding_raised"]),
        latest_funding_stage: text(&body["latest_funding_stage"]),
        industry: text(&body["industry"]),
        hq_country: text(&loc["country"]),
        hq_city: text(&loc["locality"]),
        linkedin_url: linkedin_url(&body["linkedin_url"]),
        twitter_handle: twitter_handle(&body["twitter_url"]),
        ..enrichment(domain, VENDOR, body)
    })
}

outreach_plugin_sdk::export_contact_enricher!(PeopleDataLabs);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_record_and_probe() {
        let body: Value = serde_json::from_str(
            r#"{"status":200,"name":"acme","display_name":"Acme","size":"51-200","employee_count":140,
               "founded":2009,"location":{"locality":"austin","country":"united states"},
               "linkedin_url":"linkedin.com/company/acme","twitter_url":"twitter.com/acmehq"}"#,
        )
        .unwrap();
        let r = normalise("acme.com", &body).unwrap();
        assert_eq!(
            (r.name.as_deref(), r.employee_count),
            (Some("Acme"), Some(140))
        );
        assert_eq!(r.twitter_handle.as_deref(), Some("acmehq"));
        let _m = testing::mock_http(|req| {
            assert!(
                req.url.ends_with("website=outreach-key-check.invalid"),
                "{}",
                req.url
            );
            let mut r =
                testing::json_response(404, r#"{"status":404,"error":{"type":"not_found"}}"#);
            r.headers
                .push(("x-totallimit-remaining".into(), "77".into()));
            Ok(r)
        });
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: None,
        };
        assert_eq!(
            PeopleDataLabs::validate_key(&ctx)
                .unwrap()
                .credits_remaining,
            Some(77)
        );
    }
}
