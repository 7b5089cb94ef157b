//! The first-party default rules every account may use and no account may
//! change. They live in code, not in `scoring_rules`; their ids have no
//! `rule_` prefix. The first is the one scoring uses when a request names
//! no rule. Each rule's points add up to 100, so a domain matching every
//! condition scores 100.
//!
//! - `default` (B2B fit): a business selling to businesses that can be
//!   reached and is known well enough to act on.
//! - `default_intent` (Buying intent): the intent score and the signals it
//!   is read from (hiring, advertising, marketing tools), plus something
//!   it is likely to buy.
//! - `default_ecommerce` (E-commerce fit): an online shop taking payments.

use std::sync::LazyLock;

use serde_json::{Value, json};

use super::rules::{CompiledRule, ScoringCondition, compile};

/// The id of the rule used when a request names none.
pub const DEFAULT_RULE_ID: &str = "default";

/// A default rule, compiled once per process.
#[derive(Debug)]
pub struct DefaultRule {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub rule: CompiledRule,
}

fn condition(field: &str, op: &str, value: Value, points: i64) -> ScoringCondition {
    ScoringCondition {
        field: field.into(),
        op: op.into(),
        value,
        points,
    }
}

fn rule(
    id: &'static str,
    name: &'static str,
    description: &'static str,
    conditions: Vec<ScoringCondition>,
) -> DefaultRule {
    DefaultRule {
        id,
        name,
        description,
        // The unit tests compile every default rule.
        rule: compile(&conditions).expect("a default scoring rule compiles"),
    }
}

static DEFAULTS: LazyLock<Vec<DefaultRule>> = LazyLock::new(|| {
    vec![
        rule(
            DEFAULT_RULE_ID,
            "B2B fit",
            "Businesses selling to businesses, with a way to reach them and a record complete \
             enough to act on.",
            vec![
                condition("business_type", "in", json!(["B2B", "B2B2C"]), 25),
                condition("website_email", "exists", json!(true), 15),
                condition("intent_score", "gte", json!(50), 20),
                condition("confidence", "gte", json!(0.7), 10),
                condition("phone", "exists", json!(true), 10),
                condition("technologies", "exists", json!(true), 10),
                condition("completeness_score", "gte", json!(60), 10),
            ],
        ),
        rule(
            "default_intent",
            "Buying intent",
            "Companies showing that they are buying now: a high intent score, hiring, \
             advertising, marketing tools and a likely purchase.",
            vec![
                condition("intent_level", "equals", json!("hot"), 30),
                condition("intent_score", "gte", json!(50), 20),
                condition("signals", "contains", json!("has_job_board"), 15),
                condition("signals", "contains", json!("has_ads"), 10),
                condition(
                    "signals",
                    "in",
                    json!(["has_crm", "has_marketing_automation", "has_email_marketing"]),
                    10,
                ),
                condition("likely_buys", "exists", json!(true), 10),
                condition("website_email", "exists", json!(true), 5),
            ],
        ),
        rule(
            "default_ecommerce",
            "E-commerce fit",
            "Online shops that take payments and can be reached.",
            vec![
                condition("signals", "contains", json!("has_ecommerce"), 30),
                condition(
                    "business_type",
                    "in",
                    json!(["B2C", "B2B2C", "marketplace"]),
                    15,
                ),
                condition("signals", "contains", json!("has_payments"), 15),
                condition("signals", "contains", json!("has_analytics"), 10),
                condition("website_email", "exists", json!(true), 10),
                condition("intent_score", "gte", json!(50), 10),
                condition("phone", "exists", json!(true), 10),
            ],
        ),
    ]
});

/// The default rules, the one used by default first.
pub fn defaults() -> &'static [DefaultRule] {
    &DEFAULTS
}

/// The default rule of this id.
pub fn find(id: &str) -> Option<&'static DefaultRule> {
    defaults().iter().find(|r| r.id == id)
}
