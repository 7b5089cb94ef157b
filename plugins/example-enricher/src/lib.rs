//! Reference `contact-enricher` adapter: `GET /v1/companies/{domain}` with an
//! `x-api-key` header, normalised into the canonical enrichment result.
//! A 404 means "vendor does not know this domain": a permanent error, which the
//! host does not cache and which does not trigger fallback.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;

const DEFAULT_BASE: &str = "https://api.enricher.example";

pub struct ExampleEnricher;

fn s(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

impl ContactEnricher for ExampleEnricher {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: "example-enricher".into(),
            display_name: "Example Enricher".into(),
            list_rate_usd: 0.005,
            fallback_rank: 1,
        }
    }

    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        let url = format!("{}/v1/account", base_url(ctx, DEFAULT_BASE));
        let body: Value = Request::get(&url)
            .header("x-api-key", &ctx.api_key)
            .send()?
            .check()?
            .json()?;
        Ok(KeyValidation {
            credits_remaining: body["credits_remaining"].as_i64(),
        })
    }

    fn enrich(ctx: &VendorContext, domain: &str) -> Result<EnrichmentResult, PluginError> {
        let url = format!(
            "{}/v1/companies/{}",
            base_url(ctx, DEFAULT_BASE),
            outreach_plugin_sdk::http::encode(domain)
        );
        let resp = Request::get(&url)
            .header("x-api-key", &ctx.api_key)
            .send()?;
        if resp.status == 404 {
            return Err(PluginError::Permanent(format!(
                "vendor has no record of {domain}"
            )));
        }
        let resp = resp.check()?;
        let v: Value = resp.json()?;
        Ok(EnrichmentResult {
            domain: domain.to_string(),
            provider: "example-enricher".into(),
            name: s(&v["name"]),
            legal_name: s(&v["legal_name"]),
            description: s(&v["description"]),
            founded_year: v["founded_year"].as_i64().map(|y| y as i32),
            employee_count: v["employees"]["exact"].as_i64(),
            employee_range: s(&v["employees"]["range"]),
            annual_revenue_usd: v["revenue_usd"].as_f64(),
            total_funding_usd: v["funding"]["total_usd"].as_f64(),
            latest_funding_stage: s(&v["funding"]["latest_stage"]),
            industry: s(&v["industry"]),
            subindustry: s(&v["subindustry"]),
            hq_country: s(&v["hq"]["country"]),
            hq_city: s(&v["hq"]["city"]),
            linkedin_url: s(&v["social"]["linkedin"]),
            twitter_handle: s(&v["social"]["twitter"]),
            technologies: v["technologies"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            raw: resp.text(),
        })
    }
}

outreach_plugin_sdk::export_contact_enricher!(ExampleEnricher);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_nested_vendor_fields() {
        let _m = testing::mock_http(|_| {
            Ok(testing::json_response(
                200,
                r#"{"name":"Acme","employees":{"range":"51-200"},"hq":{"country":"US"},"technologies":["nginx"]}"#,
            ))
        });
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: None,
        };
        let r = ExampleEnricher::enrich(&ctx, "acme.com").unwrap();
        assert_eq!(r.employee_range.as_deref(), Some("51-200"));
        assert_eq!(r.employee_count, None);
        assert_eq!(r.technologies, vec!["nginx".to_string()]);
    }
}
