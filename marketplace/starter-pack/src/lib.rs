//! The first-party starter template pack. Ids carry an industry prefix
//! (`saas_`, `agency_`, `ecommerce_`) from which the host derives industries.

use outreach_plugin_sdk::prelude::*;
use serde_json::json;

pub struct StarterPack;

#[allow(clippy::too_many_arguments)]
fn template(
    id: &str,
    name: &str,
    description: &str,
    tag: TemplateTag,
    trigger_type: &str,
    trigger_config: serde_json::Value,
    actions: serde_json::Value,
    price_cents: Option<u32>,
    industries: &[&str],
) -> Template {
    Template {
        id: id.into(),
        name: name.into(),
        description: description.into(),
        tag,
        trigger_type: trigger_type.into(),
        trigger_config: to_json(&trigger_config),
        actions: to_json(&actions),
        conditions: "[]".into(),
        price_cents,
        industries: industries.iter().map(|s| s.to_string()).collect(),
    }
}

impl TemplatePack for StarterPack {
    fn metadata() -> PackMetadata {
        PackMetadata {
            id: "starter-pack".into(),
            name: "Starter pack".into(),
            author: "Outreach".into(),
            description: "First workflows for new accounts.".into(),
        }
    }

    fn templates() -> Vec<Template> {
        vec![
            template(
                "saas_new_domain_enrich_and_list",
                "Enrich new SaaS domains",
                "Enrich every new domain and add the ones running a SaaS stack to a list.",
                TemplateTag::Beginner,
                "new_domain",
                json!({}),
                json!([
                    {"type": "enrich", "config": {"fields": ["dns", "tech_stack"]}},
                    {"type": "filter_domains", "config": {"op": "equals", "field": "industry", "value": "saas", "limit": 500}},
                    {"type": "add_to_list", "config": {"list_id": null}}
                ]),
                Some(0),
                &["saas"],
            ),
            template(
                "agency_intent_alert_sequence",
                "Sequence on intent alerts",
                "When an intent alert fires, score the domains and enroll the best ones.",
                TemplateTag::Intermediate,
                "intent_alert",
                json!({"alert_id": null}),
                json!([
                    {"type": "score_domains", "config": {"rule_id": null}},
                    {"type": "filter_domains", "config": {"op": "equals", "field": "score_band", "value": "hot", "limit": 50}},
                    {"type": "enroll_in_sequence", "config": {"sequence_id": null}, "retry": {"attempts": 2, "backoff_seconds": 5}}
                ]),
                Some(1900),
                &["agency"],
            ),
            template(
                "ecommerce_weekly_watchlist_digest",
                "Weekly watchlist digest",
                "Every Monday, extract changes on watched shops with AI and post them to a webhook.",
                TemplateTag::Advanced,
                "schedule",
                json!({"cron": "0 8 * * 1"}),
                json!([
                    {"type": "ai_extract", "config": {"prompt": "Summarise the changes"}},
                    {"type": "http_request", "config": {"method": "POST", "url": "{{webhook_url}}", "body": {"text": "{{previous_result}}"}, "timeout_seconds": 30}}
                ]),
                None,
                &["ecommerce"],
            ),
        ]
    }
}

outreach_plugin_sdk::export_template_pack!(StarterPack);
