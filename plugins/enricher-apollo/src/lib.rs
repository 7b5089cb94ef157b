//! Apollo (`apollo`), fallback rank 3, 0.05 USD a lookup.
//!
//! REST API with the key in the `x-api-key` header:
//! `GET /api/v1/organizations/enrich?domain=...` answers
//! `{organization: {name, short_description, founded_year,
//! estimated_num_employees, annual_revenue, total_funding,
//! latest_funding_stage, industry, city, country, linkedin_url, twitter_url,
//! technology_names, ...}}`; an unknown domain comes back either as HTTP 404
//! or as HTTP 200 without an organization. Apollo uses 401 for a bad key,
//! 403 for a key whose plan lacks the endpoint, 422 for bad parameters and
//! 429 for its rate limit.
//!
//! Apollo has no credits endpoint a plain key may call, so key validation
//! uses `GET /api/v1/auth/health` (`{healthy, is_logged_in}`) and reports
//! credits as null.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;
use vendor_common::*;

const DEFAULT_BASE: &str = "https://api.apollo.io";
const VENDOR: &str = "apollo";
const REQUEST_TIMEOUT_MS: u32 = 10_000;

pub struct Apollo;

impl ContactEnricher for Apollo {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: VENDOR.into(),
            display_name: "Apollo".into(),
            list_rate_usd: 0.05,
            fallback_rank: 3,
        }
    }

    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        let url = format!("{}/api/v1/auth/health", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .header("x-api-key", &ctx.api_key)
            .timeout_ms(REQUEST_TIMEOUT_MS)
            .send()?;
        let body = json_object(&check_status(resp)?)?;
        match flag(&body["is_logged_in"]) {
            Some(true) => Ok(KeyValidation {
                credits_remaining: None,
            }),
            Some(false) => Err(PluginError::Auth(
                "apollo: the API key was not accepted (is_logged_in false)".into(),
            )),
            None => Err(PluginError::Permanent(
                "apollo: health answer has no is_logged_in field".into(),
            )),
        }
    }

    fn enrich(ctx: &VendorContext, domain: &str) -> Result<EnrichmentResult, PluginError> {
        check_domain(domain)?;
        let url = format!(
            "{}/api/v1/organizations/enrich",
            base_url(ctx, DEFAULT_BASE)
        );
        let resp = Request::get(&url)
            .query("domain", domain)
            .header("x-api-key", &ctx.api_key)
            .header("cache-control", "no-cache")
            .timeout_ms(REQUEST_TIMEOUT_MS)
            .send()?;
        if resp.status == 404 {
            return Err(not_found(VENDOR, domain));
        }
        let body = json_object(&check_status(resp)?)?;
        normalise(domain, &body)
    }
}

/// Maps `organization`. Apollo reports an estimated exact headcount, from
/// which the range bucket is derived, and a first secondary industry that
/// serves as the sub-industry.
pub fn normalise(domain: &str, body: &Value) -> Result<EnrichmentResult, PluginError> {
    let o = &body["organization"];
    if !o.is_object() || o.as_object().is_some_and(|m| m.is_empty()) {
        return Err(not_found(VENDOR, domain));
    }
    let count = integer(&o["estimated_num_employees"]).filter(|n| *n > 0);
    let mut technologies = strings(&o["technology_names"]);
    if technologies.is_empty() {
        technologies = o["current_technologies"]
            .as_array()
            .map(|a| a.iter().filter_map(|t| text(&t["name"])).collect())
            .unwrap_or_default();
    }
    Ok(EnrichmentResult {
        name: text(&o["name"]),
        description: text(&o["short_description"]).or_else(|| text(&o["seo_description"])),
        founded_year: year(&o["founded_year"]),
        employee_count: count,
        employee_range: count.and_then(employee_bucket),
        annual_revenue_usd: number(&o["annual_revenue"]),
        total_funding_usd: number(&o["total_funding"]),
        latest_funding_stage: text(&o["latest_funding_stage"]),
        industry: text(&o["industry"]),
        subindustry: o["secondary_industries"]
            .as_array()
            .and_then(|a| a.iter().find_map(text)),
        hq_country: text(&o["country"]),
        hq_city: text(&o["city"]),
        linkedin_url: linkedin_url(&o["linkedin_url"]),
        twitter_handle: twitter_handle(&o["twitter_url"]),
        technologies,
        ..enrichment(domain, VENDOR, body)
    })
}

outreach_plugin_sdk::export_contact_enricher!(Apollo);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_organization_or_not_found() {
        let body: Value = serde_json::from_str(
            r#"{"organization":{"name":"Acme","estimated_num_employees":140,"annual_revenue":2.5e7,
               "twitter_url":"https://twitter.com/acmehq/","current_technologies":[{"name":"React"}]}}"#,
        )
        .unwrap();
        let r = normalise("acme.com", &body).unwrap();
        assert_eq!(r.employee_range.as_deref(), Some("51-200"));
        assert_eq!(r.technologies, vec!["React".to_string()]);
        assert_eq!(r.twitter_handle.as_deref(), Some("acmehq"));
        match normalise("nobody.com", &serde_json::json!({})) {
            Err(PluginError::Permanent(m)) => assert!(m.starts_with("not found")),
            other => panic!("{other:?}"),
        }
    }
}
