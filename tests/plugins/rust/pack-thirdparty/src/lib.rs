//! Test `template-pack` standing in for a third-party pack: two valid
//! templates and one the host must refuse on its own (`no_such_action` is
//! no action type), so tests can show that one bad template does not cost
//! the pack its good ones.

use outreach_plugin_sdk::prelude::*;
use serde_json::{Value, json};

pub struct PackThirdparty;

/// One template without industries; the JSON values are the definition.
fn template(
    id: &str,
    name: &str,
    tag: TemplateTag,
    (trigger_type, trigger_config): (&str, Value),
    conditions: Value,
    actions: Value,
    price_cents: Option<u32>,
) -> Template {
    outreach_plugin_sdk::prelude::template(
        id,
        name,
        &format!("Test template {id}."),
        tag,
        trigger_type,
        trigger_config,
        conditions,
        actions,
        price_cents,
        &[],
    )
}

impl TemplatePack for PackThirdparty {
    fn metadata() -> PackMetadata {
        PackMetadata {
            id: "pack-thirdparty".into(),
            name: "Third-party test pack".into(),
            author: "Example Partner".into(),
            description: "Two valid templates and a broken one.".into(),
        }
    }

    fn templates() -> Vec<Template> {
        vec![
            // Free by its own price.
            template(
                "general_thirdparty_digest",
                "Third-party digest",
                TemplateTag::Beginner,
                ("manual", json!({})),
                json!([]),
                json!([
                    {"type": "data_transform", "config": {"operation": "sort", "field": "intent_score", "order": "desc"}},
                    {"type": "data_transform", "config": {"operation": "limit", "count": 10}},
                    {"type": "http_request", "config": {
                        "method": "POST",
                        "url": "{{placeholder:digest_webhook_url}}",
                        "body": {"domains": "{{domains}}"}
                    }}
                ]),
                Some(0),
            ),
            // No price of its own: the intermediate tag's default applies.
            template(
                "general_thirdparty_list",
                "Third-party list builder",
                TemplateTag::Intermediate,
                ("schedule", json!({"cron": "0 9 * * 1-5"})),
                json!([{"field": "intent_score", "op": "gte", "value": 50}]),
                json!([
                    {"type": "add_to_list", "config": {"list_id": "{{placeholder:list_id}}"}}
                ]),
                None,
            ),
            // Valid in every respect but its action type.
            template(
                "general_thirdparty_broken",
                "Third-party broken template",
                TemplateTag::Beginner,
                ("manual", json!({})),
                json!([]),
                json!([{"type": "no_such_action", "config": {}}]),
                None,
            ),
        ]
    }
}

outreach_plugin_sdk::export_template_pack!(PackThirdparty);

#[cfg(test)]
#[path = "../../../../../marketplace/template_checks.rs"]
mod template_checks;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template_checks::{check_pack, check_template, manifest_id};

    #[test]
    fn only_the_broken_template_is_invalid() {
        let all = PackThirdparty::templates();
        let ids: Vec<&str> = all.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "general_thirdparty_digest",
                "general_thirdparty_list",
                "general_thirdparty_broken"
            ]
        );
        check_pack(&all[..2]);
        let err = check_template(&all[2]).unwrap_err();
        assert!(
            err.contains("unknown action type \"no_such_action\""),
            "{err}"
        );
    }

    #[test]
    fn prices_and_tags() {
        let all = PackThirdparty::templates();
        assert_eq!(
            (all[0].price_cents, all[0].tag, &*all[0].trigger_type),
            (Some(0), TemplateTag::Beginner, "manual")
        );
        assert_eq!(
            (all[1].price_cents, all[1].tag, &*all[1].trigger_type),
            (None, TemplateTag::Intermediate, "schedule")
        );
    }

    #[test]
    fn metadata_names_the_manifest_id() {
        assert_eq!(
            PackThirdparty::metadata().id,
            manifest_id(include_str!("../plugin.toml"))
        );
    }
}
