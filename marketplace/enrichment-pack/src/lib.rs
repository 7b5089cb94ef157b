//! The first-party enrichment template pack: workflows that complete what
//! the pool knows about companies, from its own pipeline, AI and your APIs.
//!
//! Enrichment costs credits, so each template narrows the items (score,
//! status, a cap) before enriching. Whatever the installer must choose is a
//! named placeholder, "{{placeholder:NAME}}".

use outreach_plugin_sdk::prelude::*;
use serde_json::json;

pub struct EnrichmentPack;

impl TemplatePack for EnrichmentPack {
    fn metadata() -> PackMetadata {
        PackMetadata {
            id: "enrichment-pack".into(),
            name: "Enrichment pack".into(),
            author: "Outreach".into(),
            description: "Complete company data with the enrichment pipeline, AI extraction and \
                          your own data providers."
                .into(),
        }
    }

    fn templates() -> Vec<Template> {
        vec![
            template(
                "ecommerce_new_domain_shop_profile",
                "Profile new online shops",
                "When a new online shop enters the pool, extracts its product category, price \
                 point and shipping reach with AI and files it on a list by shipping reach.",
                TemplateTag::Intermediate,
                "new_domain",
                json!({}),
                json!([
                    {"field": "industry", "op": "equals", "value": "Retail"},
                    {"field": "signals", "op": "contains", "value": "has_ecommerce"}
                ]),
                json!([
                    // Record confidence is 0-1 (host/leads/src/ports.rs).
                    {"type": "filter_domains", "config": {"op": "gte", "field": "confidence", "value": 0.6}},
                    {"type": "ai_extract", "config": {
                        "prompt": "From the shop's website, extract its main product category, its price point (budget, mid-range or premium) and whether it ships internationally (true or false).",
                        "fields": ["product_category", "price_point", "ships_internationally"]
                    }, "retry": {"attempts": 2, "backoff_seconds": 10}},
                    {"type": "conditional_branch", "config": {
                        "branches": [
                            {"when": {"field": "ships_internationally", "op": "equals", "value": true}, "then": [
                                {"type": "add_to_list", "config": {"list_id": "{{placeholder:international_list_id}}"}}
                            ]}
                        ],
                        "else": [
                            {"type": "add_to_list", "config": {"list_id": "{{placeholder:domestic_list_id}}"}}
                        ]
                    }}
                ]),
                None,
                &["Retail"],
            ),
            // Scoring reads what the pool already holds, so it runs first and
            // only good fits spend enrichment credits.
            template(
                "manufacturing_audience_score_then_enrich",
                "Score, then enrich manufacturers",
                "When manufacturers join one of your audiences, scores them and queues full \
                 enrichment for the good fits only, adding those to a list.",
                TemplateTag::Intermediate,
                "audience_match",
                json!({"audience_id": "{{placeholder:audience_id}}"}),
                json!([{"field": "industry", "op": "equals", "value": "Manufacturing"}]),
                json!([
                    {"type": "score_domains", "config": {"rule_id": "{{placeholder:scoring_rule_id}}"}},
                    {"type": "filter_domains", "config": {"op": "gte", "field": "score", "value": 50}},
                    {"type": "enrich", "config": {"fields": ["whois", "tech_stack"]}},
                    {"type": "add_to_list", "config": {"list_id": "{{placeholder:list_id}}"}}
                ]),
                None,
                &["Manufacturing"],
            ),
            template(
                "saas_manual_firmographics_lookup",
                "Fill employee counts from your data provider",
                "On demand, asks your firmographics API for the employee count of software \
                 companies the pool has none for, and lists those with 50 or more employees.",
                TemplateTag::Advanced,
                "manual",
                json!({}),
                json!([
                    {"field": "industry", "op": "equals", "value": "Software"},
                    {"field": "employees_range", "op": "not_exists"}
                ]),
                json!([
                    // One paid API call per item: cap the run.
                    {"type": "data_transform", "config": {"operation": "limit", "count": 100}},
                    // per_domain: each item gains http_status and, from
                    // capture_field, http_result.
                    {"type": "http_request", "config": {
                        "method": "POST",
                        "url": "{{placeholder:firmographics_api_url}}",
                        "headers": {"Authorization": "{{placeholder:firmographics_authorization}}"},
                        "body": {"domain": "{{domain}}"},
                        "per_domain": true,
                        "capture_field": "employees",
                        "timeout_seconds": 20
                    }, "retry": {"attempts": 3, "backoff_seconds": 10}},
                    {"type": "data_transform", "config": {"operation": "map_fields", "mapping": {"employee_count": "http_result"}}},
                    {"type": "filter_domains", "config": {"op": "gte", "field": "employee_count", "value": 50}},
                    {"type": "add_to_list", "config": {"list_id": "{{placeholder:list_id}}"}}
                ]),
                Some(2900),
                &["Software"],
            ),
            template(
                "general_weekly_enrichment_catch_up",
                "Weekly enrichment catch-up",
                "Every Sunday night, queues full enrichment for up to 100 of the newest pool \
                 records that were imported from your own data but never enriched.",
                TemplateTag::Beginner,
                "schedule",
                json!({"cron": "0 3 * * 0"}),
                json!([{"field": "status", "op": "equals", "value": "imported"}]),
                json!([
                    {"type": "data_transform", "config": {"operation": "limit", "count": 100}},
                    {"type": "enrich", "config": {"fields": ["dns", "ssl", "whois", "tech_stack"]}}
                ]),
                Some(0),
                &[],
            ),
        ]
    }
}

outreach_plugin_sdk::export_template_pack!(EnrichmentPack);

#[cfg(test)]
#[path = "../../template_checks.rs"]
mod template_checks;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template_checks::{check_pack, manifest_id};

    #[test]
    fn templates_are_valid_workflows() {
        check_pack(&EnrichmentPack::templates());
    }

    #[test]
    fn metadata_names_the_manifest_id() {
        assert_eq!(
            EnrichmentPack::metadata().id,
            manifest_id(include_str!("../plugin.toml"))
        );
    }
}
