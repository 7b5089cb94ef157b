//! The first-party starter template pack: the first workflows of a new
//! account, mostly beginner templates that need one list or one URL.
//!
//! Template ids carry an industry prefix (`saas_`, `agency_`, ...; `general_`
//! for none). Whatever the installer must choose (a list, a URL) is a named
//! placeholder, "{{placeholder:NAME}}", which installing fills in.

use outreach_plugin_sdk::prelude::*;
use serde_json::json;

pub struct StarterPack;

impl TemplatePack for StarterPack {
    fn metadata() -> PackMetadata {
        PackMetadata {
            id: "starter-pack".into(),
            name: "Starter pack".into(),
            author: "Outreach".into(),
            description: "First workflows for new accounts: fill a list, import from your CRM, \
                          clean a call list and get a weekly digest."
                .into(),
        }
    }

    fn templates() -> Vec<Template> {
        vec![
            // `new_domain` fires on a domain's first enrichment, so the items
            // already carry industry and confidence: no enrich step needed.
            template(
                "saas_new_domain_add_to_list",
                "Collect new software companies",
                "Adds every software company that newly enters the domain pool to a list, \
                 keeping only confident classifications.",
                TemplateTag::Beginner,
                "new_domain",
                json!({}),
                json!([{"field": "industry", "op": "equals", "value": "Software"}]),
                json!([
                    // Record confidence is 0-1 (host/leads/src/ports.rs).
                    {"type": "filter_domains", "config": {"op": "gte", "field": "confidence", "value": 0.7}},
                    {"type": "add_to_list", "config": {"list_id": "{{placeholder:list_id}}"}}
                ]),
                Some(0),
                &["Software"],
            ),
            // A CRM posts {"domains": [...]} to the workflow's webhook. No
            // industry condition: domains new to the pool have no industry
            // until their enrichment, which this workflow queues.
            template(
                "general_webhook_crm_import",
                "Import accounts from your CRM",
                "Takes the domains your CRM posts to this workflow's webhook, drops duplicates, \
                 queues their enrichment and adds them to a list.",
                TemplateTag::Beginner,
                "webhook",
                json!({}),
                json!([]),
                json!([
                    // One export often names a company twice, in any case.
                    {"type": "dedup_by_field", "config": {"field": "domain", "case_insensitive": true}},
                    {"type": "enrich", "config": {"fields": ["dns", "ssl", "whois", "tech_stack"]}},
                    {"type": "add_to_list", "config": {"list_id": "{{placeholder:list_id}}"}}
                ]),
                None,
                &[],
            ),
            template(
                "general_manual_call_list_cleanup",
                "Build a clean call list",
                "On demand, takes the newest pool records, drops duplicates and companies without \
                 a contact address, and adds the 200 with the strongest buying intent to a list.",
                TemplateTag::Beginner,
                "manual",
                json!({}),
                json!([]),
                json!([
                    {"type": "dedup_by_field", "config": {"field": "domain", "case_insensitive": true}},
                    {"type": "filter_domains", "config": {"op": "exists", "field": "website_email"}},
                    {"type": "data_transform", "config": {"operation": "sort", "field": "intent_score", "order": "desc"}},
                    {"type": "data_transform", "config": {"operation": "limit", "count": 200}},
                    {"type": "add_to_list", "config": {"list_id": "{{placeholder:list_id}}"}}
                ]),
                Some(0),
                &[],
            ),
            template(
                "general_weekly_hot_accounts_digest",
                "Weekly hot accounts digest",
                "Every Monday at 8:00 posts the ten companies with the highest buying intent to a \
                 Slack channel.",
                TemplateTag::Intermediate,
                "schedule",
                json!({"cron": "0 8 * * 1", "timezone": "Europe/Berlin"}),
                json!([{"field": "intent_score", "op": "gte", "value": 60}]),
                json!([
                    {"type": "data_transform", "config": {"operation": "sort", "field": "intent_score", "order": "desc"}},
                    {"type": "data_transform", "config": {"operation": "limit", "count": 10}},
                    {"type": "http_request", "config": {
                        "method": "POST",
                        "url": "{{placeholder:slack_webhook_url}}",
                        "body": {"text": "Hot accounts this week: {{domains}}"},
                        "timeout_seconds": 15
                    }, "retry": {"attempts": 3, "backoff_seconds": 10}}
                ]),
                None,
                &[],
            ),
        ]
    }
}

outreach_plugin_sdk::export_template_pack!(StarterPack);

#[cfg(test)]
#[path = "../../template_checks.rs"]
mod template_checks;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template_checks::{TRIGGERS, check_pack, manifest_id};
    use std::collections::HashSet;

    #[test]
    fn templates_are_valid_workflows() {
        check_pack(&StarterPack::templates());
    }

    #[test]
    fn metadata_names_the_manifest_id() {
        assert_eq!(
            StarterPack::metadata().id,
            manifest_id(include_str!("../plugin.toml"))
        );
    }

    /// The whole first-party catalogue (the packs are dev-dependencies of
    /// this one): ids unique across packs, every trigger and tag offered.
    #[test]
    fn first_party_catalogue() {
        let all: Vec<Template> = [
            StarterPack::templates(),
            outbound_pack::OutboundPack::templates(),
            enrichment_pack::EnrichmentPack::templates(),
            monitoring_pack::MonitoringPack::templates(),
            notifications_pack::NotificationsPack::templates(),
        ]
        .concat();
        check_pack(&all);
        assert!(all.len() >= 16, "{} templates", all.len());
        let triggers: HashSet<&str> = all.iter().map(|t| t.trigger_type.as_str()).collect();
        for trigger in TRIGGERS {
            assert!(triggers.contains(trigger), "no template uses {trigger}");
        }
        for tag in [
            TemplateTag::Beginner,
            TemplateTag::Intermediate,
            TemplateTag::Advanced,
        ] {
            assert!(all.iter().any(|t| t.tag == tag), "no {tag:?} template");
        }
    }
}
