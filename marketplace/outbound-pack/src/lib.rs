//! The first-party outbound template pack: workflows that put companies into
//! sequences and answer their replies.
//!
//! Every item field other than `email` and `domain` becomes enrollment
//! metadata, so a field an action adds (an AI opener, an extracted
//! initiative) is a token the sequence's steps can use. Whatever the
//! installer must choose is a named placeholder, "{{placeholder:NAME}}".

use outreach_plugin_sdk::prelude::*;
use serde_json::json;

pub struct OutboundPack;

impl TemplatePack for OutboundPack {
    fn metadata() -> PackMetadata {
        PackMetadata {
            id: "outbound-pack".into(),
            name: "Outbound pack".into(),
            author: "Outreach".into(),
            description: "Enroll the right companies in sequences at the right moment and answer \
                          interested replies."
                .into(),
        }
    }

    fn templates() -> Vec<Template> {
        vec![
            template(
                "saas_intent_alert_score_and_enroll",
                "Enroll hot accounts from intent alerts",
                "When an intent alert fires, scores the software companies it found, enrolls the \
                 hot ones in a sequence and tells Slack, and puts the warm ones on a nurture list.",
                TemplateTag::Intermediate,
                "intent_alert",
                json!({"alert_id": "{{placeholder:alert_id}}"}),
                json!([{"field": "industry", "op": "equals", "value": "Software"}]),
                json!([
                    {"type": "score_domains", "config": {"rule_id": "{{placeholder:scoring_rule_id}}"}},
                    // Score tiers: hot 80+, warm 50-79 (docs/decisions/scoring.md);
                    // colder accounts take no branch and are left alone.
                    {"type": "conditional_branch", "config": {"branches": [
                        {"when": {"field": "score", "op": "gte", "value": 80}, "then": [
                            {"type": "enroll_in_sequence", "config": {"sequence_id": "{{placeholder:sequence_id}}"},
                             "retry": {"attempts": 2, "backoff_seconds": 5}},
                            {"type": "http_request", "config": {
                                "method": "POST",
                                "url": "{{placeholder:slack_webhook_url}}",
                                "body": {"text": "Enrolled from an intent alert: {{domains}}"},
                                "timeout_seconds": 15
                            }, "retry": {"attempts": 3, "backoff_seconds": 10}}
                        ]},
                        {"when": {"field": "score", "op": "gte", "value": 50}, "then": [
                            {"type": "add_to_list", "config": {"list_id": "{{placeholder:nurture_list_id}}"}}
                        ]}
                    ]}}
                ]),
                None,
                &["Software"],
            ),
            template(
                "agency_audience_match_ai_opener",
                "Personalised openers for new agency matches",
                "When agencies join one of your audiences, writes each a personal first line with \
                 AI and enrolls them in a sequence whose steps use it as the opener token.",
                TemplateTag::Advanced,
                "audience_match",
                json!({"audience_id": "{{placeholder:audience_id}}"}),
                json!([
                    {"field": "industry", "op": "equals", "value": "Marketing & Advertising"},
                    {"field": "website_email", "op": "exists"}
                ]),
                json!([
                    // The cap bounds the AI spend of one large audience update.
                    {"type": "filter_domains", "config": {"op": "gte", "field": "intent_score", "value": 40, "limit": 100}},
                    // The prompt holds no {{field}} tokens: they render empty
                    // outside per-item actions, and the AI sees each item anyway.
                    {"type": "ai_write", "config": {
                        "prompt": "Write the first sentence of a cold email to this agency. Refer to a service or a type of client named on its website. No greeting, no sign-off, at most 25 words.",
                        "output_field": "opener"
                    }, "retry": {"attempts": 2, "backoff_seconds": 10}},
                    {"type": "enroll_in_sequence", "config": {"sequence_id": "{{placeholder:sequence_id}}"},
                     "retry": {"attempts": 2, "backoff_seconds": 10}}
                ]),
                None,
                &["Marketing & Advertising"],
            ),
            // No reply trigger exists: the inbox tool or CRM posts the domains
            // that replied. The action itself answers only the replies the
            // classifier labelled interested, and each reply at most once.
            template(
                "general_interested_reply_auto_answer",
                "Answer interested replies",
                "For the domains posted to this workflow's webhook, answers their latest \
                 interested reply with a request for meeting times and adds them to a list.",
                TemplateTag::Beginner,
                "webhook",
                json!({}),
                json!([]),
                json!([
                    {"type": "dedup_by_field", "config": {"field": "domain", "case_insensitive": true}},
                    // Plain text without {{tokens}}: the workflow renders its
                    // own templating first, and unknown names become empty.
                    {"type": "auto_reply_template", "config": {
                        "template_subject": "Next steps",
                        "template_body": "Thanks for getting back to us! Reply with two or three times that suit you this week and I will send a calendar invite.",
                        "only_classes": ["interested"]
                    }, "retry": {"attempts": 2, "backoff_seconds": 10}},
                    {"type": "add_to_list", "config": {"list_id": "{{placeholder:interested_list_id}}"}}
                ]),
                Some(0),
                &[],
            ),
            template(
                "fintech_keyword_match_approved_outreach",
                "Reviewed outreach on fintech keyword matches",
                "When a financial services company's site matches a tracked keyword, extracts what \
                 it is working on, lists it for review and enrolls it in a sequence once approved.",
                TemplateTag::Advanced,
                "tracked_keyword_match",
                json!({}),
                json!([{"field": "industry", "op": "equals", "value": "Financial Services"}]),
                json!([
                    {"type": "ai_extract", "config": {
                        "prompt": "From the page where the tracked keyword matched, extract the initiative the company is launching or changing and the team that would buy a solution for it.",
                        "fields": ["initiative", "buying_team"]
                    }, "retry": {"attempts": 2, "backoff_seconds": 10}},
                    {"type": "add_to_list", "config": {"list_id": "{{placeholder:review_list_id}}"}},
                    {"type": "wait_for_approval", "config": {
                        "message": "Financial services companies matched a tracked keyword: {{domains}}. Approve to start outreach.",
                        "email": "{{placeholder:approver_email}}",
                        "expires_in_hours": 48
                    }},
                    // The decision starts a new run here with the waiting
                    // items; a rejection takes no branch and ends it.
                    {"type": "conditional_branch", "config": {"branches": [
                        {"when": {"field": "trigger.approval_decision", "op": "equals", "value": "approved"}, "then": [
                            {"type": "enroll_in_sequence", "config": {"sequence_id": "{{placeholder:sequence_id}}"},
                             "retry": {"attempts": 2, "backoff_seconds": 5}}
                        ]}
                    ]}}
                ]),
                Some(3900),
                &["Financial Services"],
            ),
        ]
    }
}

outreach_plugin_sdk::export_template_pack!(OutboundPack);

#[cfg(test)]
#[path = "../../template_checks.rs"]
mod template_checks;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template_checks::{check_pack, manifest_id};

    #[test]
    fn templates_are_valid_workflows() {
        check_pack(&OutboundPack::templates());
    }

    #[test]
    fn metadata_names_the_manifest_id() {
        assert_eq!(
            OutboundPack::metadata().id,
            manifest_id(include_str!("../plugin.toml"))
        );
    }
}
