//! The first-party monitoring template pack: workflows that watch companies
//! (watchlist changes, tracked keywords, daily intent) and tell the team.
//!
//! A watchlist change arrives as one item, the domain with its `changes`; a
//! keyword match as the domain with `keyword`, `url` and `snippet`. Whatever
//! the installer must choose is a named placeholder, "{{placeholder:NAME}}".

use outreach_plugin_sdk::prelude::*;
use serde_json::json;

pub struct MonitoringPack;

impl TemplatePack for MonitoringPack {
    fn metadata() -> PackMetadata {
        PackMetadata {
            id: "monitoring-pack".into(),
            name: "Monitoring pack".into(),
            author: "Outreach".into(),
            description: "Turn website changes, keyword matches and daily intent into messages \
                          your team reads."
                .into(),
        }
    }

    fn templates() -> Vec<Template> {
        vec![
            // The trigger config names no watch, so every watched domain of
            // the account counts.
            template(
                "general_watchlist_change_slack_summary",
                "Summarise watchlist changes in Slack",
                "When a watched company's website changes, summarises the change with AI and \
                 posts it to Slack with a note on whether it suggests a buying moment.",
                TemplateTag::Intermediate,
                "watchlist_change",
                json!({}),
                json!([]),
                json!([
                    {"type": "ai_extract", "config": {
                        "prompt": "Each item's changes list what changed on a watched company's website. Summarise them in one sentence, and say in a few words whether they suggest a buying moment (funding, hiring, a new product, a new location) or none.",
                        "fields": ["change_summary", "buying_moment"]
                    }, "retry": {"attempts": 2, "backoff_seconds": 10}},
                    {"type": "http_request", "config": {
                        "method": "POST",
                        "url": "{{placeholder:slack_webhook_url}}",
                        "body": {"text": "{{domain}}: {{change_summary}} Buying moment: {{buying_moment}}"},
                        "per_domain": true,
                        "timeout_seconds": 15
                    }, "retry": {"attempts": 3, "backoff_seconds": 10}}
                ]),
                None,
                &[],
            ),
            template(
                "ecommerce_keyword_competitor_mentions",
                "Track shops that mention a competitor",
                "When an online retailer's site matches one of your tracked keywords, such as a \
                 competitor's name, adds it to a list and posts the page to Slack.",
                TemplateTag::Beginner,
                "tracked_keyword_match",
                json!({}),
                json!([{"field": "industry", "op": "equals", "value": "Retail"}]),
                json!([
                    {"type": "add_to_list", "config": {"list_id": "{{placeholder:list_id}}"}},
                    {"type": "http_request", "config": {
                        "method": "POST",
                        "url": "{{placeholder:slack_webhook_url}}",
                        "body": {"text": "{{domain}} mentions \"{{keyword}}\": {{url}}"},
                        "per_domain": true,
                        "timeout_seconds": 15
                    }, "retry": {"attempts": 3, "backoff_seconds": 10}}
                ]),
                None,
                &["Retail"],
            ),
            template(
                "realestate_daily_intent_movers",
                "Daily real estate intent briefing",
                "Every weekday at 7:30 posts the real estate and construction companies with the \
                 most buying intent to Slack, next to the previous briefing's list.",
                TemplateTag::Advanced,
                "schedule",
                json!({"cron": "30 7 * * 1-5", "timezone": "Europe/Berlin"}),
                json!([
                    {"field": "industry", "op": "equals", "value": "Real Estate & Construction"},
                    {"field": "intent_score", "op": "gte", "value": 50}
                ]),
                json!([
                    {"type": "data_transform", "config": {"operation": "sort", "field": "intent_score", "order": "desc"}},
                    {"type": "data_transform", "config": {"operation": "limit", "count": 15}},
                    // The memory still holds the previous run's list here; it
                    // is replaced only after the post.
                    {"type": "http_request", "config": {
                        "method": "POST",
                        "url": "{{placeholder:slack_webhook_url}}",
                        "body": {"text": "Buying intent today: {{domains}}. Previous briefing: {{ai_memory_recall:realestate_intent_previous}}"},
                        "timeout_seconds": 15
                    }, "retry": {"attempts": 3, "backoff_seconds": 10}},
                    // Four days outlive the weekend between Friday and Monday.
                    {"type": "cross_run_memory", "config": {
                        "op": "store",
                        "key": "realestate_intent_previous",
                        "value": "{{domains}}",
                        "ttl_seconds": 345600
                    }}
                ]),
                None,
                &["Real Estate & Construction"],
            ),
            template(
                "health_watchlist_change_crm_note",
                "Log healthcare website changes in your CRM",
                "When a watched healthcare company's website changes, writes a short note on the \
                 change and a next step with AI and sends it to your CRM.",
                TemplateTag::Intermediate,
                "watchlist_change",
                json!({}),
                json!([{"field": "industry", "op": "equals", "value": "Healthcare"}]),
                json!([
                    {"type": "ai_write", "config": {
                        "prompt": "Write a CRM note of at most two sentences for the account owner: what changed on this healthcare company's website, and a suggested next step.",
                        "output_field": "crm_note"
                    }, "retry": {"attempts": 2, "backoff_seconds": 10}},
                    {"type": "http_request", "config": {
                        "method": "POST",
                        "url": "{{placeholder:crm_notes_url}}",
                        "headers": {"Authorization": "{{placeholder:crm_authorization}}"},
                        "body": {"domain": "{{domain}}", "note": "{{crm_note}}", "source": "Outreach watchlist"},
                        "per_domain": true,
                        "timeout_seconds": 20
                    }, "retry": {"attempts": 3, "backoff_seconds": 10}}
                ]),
                None,
                &["Healthcare"],
            ),
        ]
    }
}

outreach_plugin_sdk::export_template_pack!(MonitoringPack);

#[cfg(test)]
#[path = "../../template_checks.rs"]
mod template_checks;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template_checks::{check_pack, manifest_id};

    #[test]
    fn templates_are_valid_workflows() {
        check_pack(&MonitoringPack::templates());
    }

    #[test]
    fn metadata_names_the_manifest_id() {
        assert_eq!(
            MonitoringPack::metadata().id,
            manifest_id(include_str!("../plugin.toml"))
        );
    }
}
