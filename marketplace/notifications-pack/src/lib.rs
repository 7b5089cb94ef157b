//! The first-party notifications template pack: workflows that hand the
//! pool's signals to Slack, your CRM and your other workflows.
//!
//! Slack incoming webhooks take `{"text": ...}`; `{{domains}}` in text is
//! written comma-separated. Whatever the installer must choose is a named
//! placeholder, "{{placeholder:NAME}}".

use outreach_plugin_sdk::prelude::*;
use serde_json::{Value, json};

pub struct NotificationsPack;

/// A Slack post of `text`, retried because a 429 or 5xx from Slack usually
/// passes on the next attempt.
fn slack(text: &str) -> Value {
    json!({"type": "http_request", "config": {
        "method": "POST",
        "url": "{{placeholder:slack_webhook_url}}",
        "body": {"text": text},
        "timeout_seconds": 15
    }, "retry": {"attempts": 3, "backoff_seconds": 10}})
}

impl TemplatePack for NotificationsPack {
    fn metadata() -> PackMetadata {
        PackMetadata {
            id: "notifications-pack".into(),
            name: "Notifications pack".into(),
            author: "Outreach".into(),
            description: "Tell Slack, your CRM and your own workflows about intent alerts, \
                          audience matches and new companies."
                .into(),
        }
    }

    fn templates() -> Vec<Template> {
        vec![
            template(
                "saas_intent_alert_slack_ping",
                "Slack ping on software intent alerts",
                "Posts the software companies of an intent alert to a Slack channel as soon as \
                 the alert fires.",
                TemplateTag::Beginner,
                "intent_alert",
                json!({"alert_id": "{{placeholder:alert_id}}"}),
                json!([{"field": "industry", "op": "equals", "value": "Software"}]),
                json!([slack("Intent alert: {{domains}} show buying intent.")]),
                Some(0),
                &["Software"],
            ),
            template(
                "fintech_audience_match_crm_push",
                "Push new fintech matches to your CRM",
                "When financial services companies join one of your audiences, sends each \
                 confidently classified one to your CRM's webhook as a new account.",
                TemplateTag::Intermediate,
                "audience_match",
                json!({"audience_id": "{{placeholder:audience_id}}"}),
                json!([{"field": "industry", "op": "equals", "value": "Financial Services"}]),
                json!([
                    // Record confidence is 0-1 (host/leads/src/ports.rs).
                    {"type": "filter_domains", "config": {"op": "gte", "field": "confidence", "value": 0.7}},
                    // A whole-string token keeps its JSON type: intent_score
                    // arrives as a number.
                    {"type": "http_request", "config": {
                        "method": "POST",
                        "url": "{{placeholder:crm_webhook_url}}",
                        "headers": {"Authorization": "{{placeholder:crm_authorization}}"},
                        "body": {
                            "domain": "{{domain}}",
                            "company": "{{company_name}}",
                            "country": "{{country}}",
                            "intent_score": "{{intent_score}}",
                            "source": "Outreach audience"
                        },
                        "per_domain": true,
                        "timeout_seconds": 20
                    }, "retry": {"attempts": 3, "backoff_seconds": 10}}
                ]),
                None,
                &["Financial Services"],
            ),
            template(
                "logistics_new_domain_fan_out",
                "Announce new logistics companies everywhere",
                "When a logistics company enters the pool, posts it to Slack, sends it to your CRM \
                 and adds it to a list at once, then queues your follow-up workflow for three \
                 days later.",
                TemplateTag::Advanced,
                "new_domain",
                json!({}),
                json!([
                    {"field": "industry", "op": "equals", "value": "Transportation & Logistics"},
                    {"field": "confidence", "op": "gte", "value": 0.6}
                ]),
                json!([
                    // Independent deliveries: one slow endpoint delays none of
                    // the others.
                    {"type": "parallel_split", "config": {"branches": [
                        [slack("New logistics company in the pool: {{domains}}")],
                        [{"type": "http_request", "config": {
                            "method": "POST",
                            "url": "{{placeholder:crm_webhook_url}}",
                            "body": {"domains": "{{domains}}", "source": "Outreach new domain"},
                            "timeout_seconds": 20
                        }, "retry": {"attempts": 3, "backoff_seconds": 10}}],
                        [{"type": "add_to_list", "config": {"list_id": "{{placeholder:list_id}}"}}]
                    ]}},
                    {"type": "merge_branches", "config": {"strategy": "union", "key": "domain"}},
                    {"type": "schedule_workflow", "config": {
                        "workflow_id": "{{placeholder:follow_up_workflow_id}}",
                        "delay_seconds": 259200
                    }}
                ]),
                None,
                &["Transportation & Logistics"],
            ),
            template(
                "edu_intent_alert_route_and_sync",
                "Route education intent alerts",
                "Enrolls high-intent education accounts with a contact address and announces them \
                 in Slack, puts the rest on a nurture list, and runs all of them through your CRM \
                 sync workflow.",
                TemplateTag::Advanced,
                "intent_alert",
                json!({"alert_id": "{{placeholder:alert_id}}"}),
                json!([{"field": "industry", "op": "equals", "value": "Education"}]),
                json!([
                    {"type": "conditional_branch", "config": {
                        "branches": [
                            {"when": [
                                {"field": "intent_score", "op": "gte", "value": 70},
                                {"field": "website_email", "op": "exists"}
                            ], "then": [
                                {"type": "enroll_in_sequence", "config": {"sequence_id": "{{placeholder:sequence_id}}"},
                                 "retry": {"attempts": 2, "backoff_seconds": 5}},
                                slack("High-intent education accounts enrolled: {{domains}}")
                            ]}
                        ],
                        "else": [
                            {"type": "add_to_list", "config": {"list_id": "{{placeholder:nurture_list_id}}"}}
                        ]
                    }},
                    // Reuses the account's own CRM sync (its conditions and
                    // actions run inline) instead of copying it here.
                    {"type": "sub_workflow", "config": {"workflow_id": "{{placeholder:crm_sync_workflow_id}}"}}
                ]),
                Some(3900),
                &["Education"],
            ),
        ]
    }
}

outreach_plugin_sdk::export_template_pack!(NotificationsPack);

#[cfg(test)]
#[path = "../../template_checks.rs"]
mod template_checks;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template_checks::{check_pack, manifest_id};

    #[test]
    fn templates_are_valid_workflows() {
        check_pack(&NotificationsPack::templates());
    }

    #[test]
    fn metadata_names_the_manifest_id() {
        assert_eq!(
            NotificationsPack::metadata().id,
            manifest_id(include_str!("../plugin.toml"))
        );
    }
}
