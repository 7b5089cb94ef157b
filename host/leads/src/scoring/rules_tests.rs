//! The condition model without a database: every op on each kind of field,
//! the checks and their details, labels, clamping and tiers, and the
//! default rules.

use serde_json::{Value, json};

use super::defaults::{DEFAULT_RULE_ID, defaults};
use super::fields::FIELDS;
use super::rules::{ScoringCondition, compile, tier};
use crate::domains::record::{DomainRecord, Technology};

fn record() -> DomainRecord {
    DomainRecord {
        domain: "acme.com".into(),
        status: "enriched".into(),
        company_name: Some("Acme Widgets GmbH".into()),
        summary: Some("Acme builds widgets for factories.".into()),
        industry: Some("Software".into()),
        sub_industry: None,
        business_type: "B2B".into(),
        confidence: 0.8,
        website_email: Some("info@acme.com".into()),
        phone: None,
        employees_range: Some("11-50".into()),
        technologies: vec![Technology {
            name: "Stripe".into(),
            categories: vec!["Payment processors".into()],
            version: None,
            confidence: 100,
        }],
        alert_signals: vec!["has_payments".into()],
        audience_signals: vec!["has_payment".into(), "has_job_board".into()],
        intent_score: 55,
        intent_level: "warm".into(),
        likely_buys: vec![],
        gaps: vec!["crm".into()],
        registrant_country: None,
        ip_country: Some("DE".into()),
        city: Some("München".into()),
        registered_at: None,
        language: Some("de".into()),
        social_links: json!({}),
        mx_provider: Some("Google Workspace".into()),
        has_spf: Some(true),
        has_dmarc: None,
        is_trusted: false,
        fields_filled: 9,
        completeness_score: 64,
        created_at: "2026-11-21T12:00:00Z".into(),
        enriched_at: Some("2026-11-21T12:00:00Z".into()),
        enrichment_errors: json!({}),
    }
}

fn cond(field: &str, op: &str, value: Value, points: i64) -> ScoringCondition {
    ScoringCondition {
        field: field.into(),
        op: op.into(),
        value,
        points,
    }
}

/// Whether one condition matches `record()`.
fn matches(field: &str, op: &str, value: Value) -> bool {
    let rule = compile(&[cond(field, op, value.clone(), 10)])
        .unwrap_or_else(|e| panic!("{field} {op} {value}: {e}"));
    rule.evaluate(&record()).breakdown[0].matched
}

/// The 400 detail of one condition.
fn refused(field: &str, op: &str, value: Value, points: i64) -> String {
    compile(&[cond(field, op, value.clone(), points)])
        .map(|_| ())
        .expect_err(&format!("{field} {op} {value} should be refused"))
}

#[test]
fn text_fields_take_every_text_op_case_insensitively() {
    assert!(matches("industry", "equals", json!("software")));
    assert!(matches("industry", "equals", json!("SOFTWARE")));
    assert!(!matches("industry", "equals", json!("Fintech")));
    assert!(matches("industry", "not_equals", json!("Fintech")));
    assert!(!matches("industry", "not_equals", json!("Software")));
    assert!(matches("industry", "in", json!(["Fintech", "software"])));
    assert!(!matches("industry", "in", json!(["Fintech", "Retail"])));
    assert!(matches("company_name", "contains", json!("widgets")));
    assert!(!matches("company_name", "contains", json!("gadgets")));
    assert!(matches("city", "equals", json!("MÜNCHEN")), "non-ASCII");
    assert!(matches("city", "contains", json!("ünch")));
    assert!(matches("website_email", "exists", json!(true)));
    assert!(
        matches("website_email", "exists", Value::Null),
        "default true"
    );
    assert!(!matches("phone", "exists", json!(true)));
    assert!(matches("phone", "exists", json!(false)));
    // A missing value equals nothing.
    assert!(!matches("sub_industry", "equals", json!("SaaS")));
    assert!(matches("sub_industry", "not_equals", json!("SaaS")));
    assert!(!matches("sub_industry", "in", json!(["SaaS"])));
    assert!(!matches("sub_industry", "contains", json!("a")));
    // Known sets compare case-insensitively too.
    assert!(matches("business_type", "equals", json!("b2b")));
    assert!(matches("business_type", "in", json!(["B2B2C", "B2B"])));
    assert!(matches("status", "equals", json!("enriched")));
    assert!(matches("intent_level", "equals", json!("warm")));
    assert!(matches("domain", "equals", json!("ACME.com")));
}

#[test]
fn country_is_the_registrant_country_else_the_server_country() {
    assert!(matches("country", "equals", json!("de")));
    assert!(!matches("registrant_country", "exists", json!(true)));
    let mut r = record();
    r.registrant_country = Some("AT".into());
    let rule = compile(&[cond("country", "equals", json!("AT"), 10)]).unwrap();
    assert!(rule.evaluate(&r).breakdown[0].matched);
}

#[test]
fn number_fields_take_comparisons() {
    assert!(matches("intent_score", "gte", json!(55)));
    assert!(!matches("intent_score", "gte", json!(56)));
    assert!(matches("intent_score", "lte", json!(55)));
    assert!(!matches("intent_score", "lte", json!(54)));
    assert!(matches("intent_score", "equals", json!(55)));
    assert!(matches("intent_score", "not_equals", json!(50)));
    assert!(matches("intent_score", "in", json!([50, 55])));
    assert!(!matches("intent_score", "in", json!([50, 60])));
    assert!(matches("confidence", "gte", json!(0.8)));
    assert!(!matches("confidence", "gte", json!(0.81)));
    assert!(matches("confidence", "lte", json!(1)));
    assert!(matches("completeness_score", "gte", json!(60)));
    assert!(matches("fields_filled", "equals", json!(9)));
    assert!(matches("intent_score", "exists", json!(true)), "always");
}

#[test]
fn flag_fields_take_equality_and_existence() {
    assert!(matches("has_spf", "equals", json!(true)));
    assert!(!matches("has_spf", "equals", json!(false)));
    assert!(matches("has_spf", "not_equals", json!(false)));
    assert!(matches("is_trusted", "equals", json!(false)));
    // Unknown (never looked up) is neither true nor false.
    assert!(!matches("has_dmarc", "equals", json!(true)));
    assert!(!matches("has_dmarc", "equals", json!(false)));
    assert!(matches("has_dmarc", "not_equals", json!(true)));
    assert!(!matches("has_dmarc", "exists", json!(true)));
    assert!(matches("has_spf", "exists", json!(true)));
}

#[test]
fn list_fields_take_contains_in_and_exists() {
    assert!(matches("technologies", "contains", json!("stripe")));
    assert!(
        !matches("technologies", "contains", json!("Strip")),
        "whole names"
    );
    assert!(matches("technologies", "in", json!(["Shopify", "STRIPE"])));
    assert!(!matches("technologies", "in", json!(["Shopify"])));
    assert!(matches("technologies", "exists", json!(true)));
    // Alert and audience signals together.
    assert!(matches("signals", "contains", json!("has_payments")));
    assert!(matches("signals", "contains", json!("has_job_board")));
    assert!(!matches("signals", "contains", json!("has_crm")));
    assert!(matches("signals", "in", json!(["has_crm", "has_payment"])));
    assert!(matches("gaps", "contains", json!("CRM")));
    assert!(!matches("likely_buys", "exists", json!(true)));
    assert!(matches("likely_buys", "exists", json!(false)));
    assert!(!matches("likely_buys", "contains", json!("crm")));
}

#[test]
fn unknown_fields_and_ops_are_refused_with_what_is_allowed() {
    let e = refused("revenue", "gte", json!(5), 10);
    assert!(
        e.starts_with("conditions[0]: unknown field 'revenue'; allowed: "),
        "{e}"
    );
    for (name, _) in FIELDS {
        assert!(e.contains(name), "{e} lists {name}");
    }
    let e = refused("industry", "like", json!("soft"), 10);
    assert_eq!(
        e,
        "conditions[0]: unknown op 'like'; allowed: equals, not_equals, in, contains, exists, gte, lte"
    );
    // The index names the faulty condition.
    let e = compile(&[
        cond("industry", "equals", json!("Software"), 10),
        cond("Industry", "equals", json!("Software"), 10),
    ])
    .unwrap_err();
    assert!(
        e.starts_with("conditions[1]: unknown field 'Industry'"),
        "{e}"
    );
}

#[test]
fn ops_that_do_not_fit_the_field_are_refused() {
    let e = refused("industry", "gte", json!(5), 10);
    assert_eq!(
        e,
        "conditions[0]: op 'gte' does not apply to text field 'industry' \
         (it takes equals, not_equals, in, contains, exists)"
    );
    let e = refused("has_spf", "contains", json!("x"), 10);
    assert!(
        e.contains("does not apply to boolean field 'has_spf'"),
        "{e}"
    );
    let e = refused("technologies", "equals", json!("Stripe"), 10);
    assert!(
        e.contains("does not apply to list field 'technologies'"),
        "{e}"
    );
    let e = refused("intent_score", "contains", json!("5"), 10);
    assert!(
        e.contains("does not apply to number field 'intent_score'"),
        "{e}"
    );
    assert!(refused("signals", "gte", json!(1), 10).contains("list field"));
    assert!(refused("is_trusted", "in", json!([true]), 10).contains("boolean field"));
}

#[test]
fn values_of_the_wrong_type_are_refused() {
    for (field, op, value) in [
        ("industry", "in", json!("Software")),
        ("industry", "in", json!([])),
        ("industry", "in", json!([1, 2])),
        ("industry", "equals", json!(5)),
        ("industry", "equals", json!("")),
        ("industry", "equals", json!("  ")),
        ("industry", "equals", Value::Null),
        ("industry", "contains", json!(["a"])),
        ("intent_score", "gte", json!("50")),
        ("intent_score", "lte", Value::Null),
        ("intent_score", "in", json!(["50"])),
        ("intent_score", "equals", json!(true)),
        ("has_spf", "equals", json!("true")),
        ("has_spf", "not_equals", json!(1)),
        ("phone", "exists", json!("yes")),
        ("technologies", "exists", json!(1)),
        ("technologies", "contains", json!(["Stripe"])),
        ("technologies", "in", json!("Stripe")),
    ] {
        refused(field, op, value, 10);
    }
    let e = refused("industry", "in", json!("Software"), 10);
    assert_eq!(e, "conditions[0]: in takes an array of 1 to 100 values");
    let too_many: Vec<String> = (0..101).map(|i| format!("v{i}")).collect();
    refused("industry", "in", json!(too_many), 10);
    refused("industry", "equals", json!("x".repeat(201)), 10);
    let e = refused("intent_score", "gte", json!("50"), 10);
    assert_eq!(e, "conditions[0]: 'intent_score' takes a number value");
    let e = refused("phone", "exists", json!("yes"), 10);
    assert_eq!(
        e,
        "conditions[0]: exists takes a boolean value (default true)"
    );
}

#[test]
fn numbers_outside_their_field_range_and_unknown_set_values_are_refused() {
    let e = refused("confidence", "gte", json!(70), 10);
    assert_eq!(e, "conditions[0]: 'confidence' is between 0 and 1");
    refused("intent_score", "gte", json!(101), 10);
    refused("completeness_score", "lte", json!(-1), 10);
    let e = refused("business_type", "equals", json!("B2X"), 10);
    assert!(
        e.starts_with("conditions[0]: unknown business_type 'B2X'; allowed: B2B, B2C"),
        "{e}"
    );
    refused("business_type", "in", json!(["B2B", "B2X"]), 10);
    let e = refused("signals", "contains", json!("has_payments_x"), 10);
    assert!(e.contains("unknown signals 'has_payments_x'"), "{e}");
    assert!(e.contains("has_saas"), "audience signals listed: {e}");
    refused("intent_level", "equals", json!("lukewarm"), 10);
    refused("status", "in", json!(["done"]), 10);
    // A substring of a known-set field is not checked against the set.
    assert!(matches("business_type", "contains", json!("b2")));
}

#[test]
fn points_and_the_number_of_conditions_are_bounded() {
    let e = refused("industry", "exists", json!(true), 101);
    assert_eq!(e, "conditions[0]: points must be between -100 and 100");
    refused("industry", "exists", json!(true), -101);
    assert!(compile(&[cond("industry", "exists", json!(true), 100)]).is_ok());
    assert!(compile(&[cond("industry", "exists", json!(true), -100)]).is_ok());
    assert_eq!(
        compile(&[]).unwrap_err(),
        "conditions must hold 1 to 50 conditions"
    );
    let fifty: Vec<_> = (0..50)
        .map(|_| cond("industry", "exists", json!(true), 1))
        .collect();
    assert!(compile(&fifty).is_ok());
    let mut fifty_one = fifty;
    fifty_one.push(cond("industry", "exists", json!(true), 1));
    assert!(compile(&fifty_one).is_err());
}

#[test]
fn breakdown_labels_points_and_the_stored_form() {
    let rule = compile(&[
        cond("industry", "equals", json!("Software"), 30),
        cond("technologies", "contains", json!("Stripe"), 20),
        cond("intent_score", "gte", json!(50), 15),
        cond("business_type", "in", json!(["B2B", "B2B2C"]), 10),
        cond("phone", "exists", Value::Null, 10),
        cond("phone", "exists", json!(false), -5),
        cond("confidence", "gte", json!(0.9), 10),
    ])
    .unwrap();
    let s = rule.evaluate(&record());
    let labels: Vec<(&str, bool, i64)> = s
        .breakdown
        .iter()
        .map(|b| (b.condition.as_str(), b.matched, b.points))
        .collect();
    assert_eq!(
        labels,
        vec![
            ("industry equals \"Software\"", true, 30),
            ("technologies contains \"Stripe\"", true, 20),
            ("intent_score gte 50", true, 15),
            ("business_type in [\"B2B\", \"B2B2C\"]", true, 10),
            ("phone exists", false, 0),
            ("phone does not exist", true, -5),
            ("confidence gte 0.9", false, 0),
        ]
    );
    assert_eq!(s.score, 70);
    // `exists` is stored with its boolean spelled out; values as given.
    assert_eq!(rule.conditions[4].value, json!(true));
    assert_eq!(rule.conditions[0].value, json!("Software"));
}

#[test]
fn the_sum_is_clamped_to_0_100() {
    let high = compile(&[
        cond("industry", "exists", json!(true), 100),
        cond("domain", "exists", json!(true), 50),
    ])
    .unwrap();
    let s = high.evaluate(&record());
    assert_eq!(s.score, 100);
    assert_eq!(s.breakdown[1].points, 50, "the breakdown keeps the points");
    let low = compile(&[
        cond("industry", "exists", json!(true), -30),
        cond("domain", "exists", json!(true), 10),
    ])
    .unwrap();
    assert_eq!(low.evaluate(&record()).score, 0);
}

#[test]
fn tiers_follow_the_spec_boundaries() {
    for (score, want) in [
        (100, "hot"),
        (80, "hot"),
        (79, "warm"),
        (50, "warm"),
        (49, "neutral"),
        (20, "neutral"),
        (19, "cold"),
        (0, "cold"),
    ] {
        assert_eq!(tier(score), want, "{score}");
    }
}

#[test]
fn default_rules_compile_and_sum_to_100() {
    let all = defaults();
    assert!(all.len() >= 2);
    assert_eq!(all[0].id, DEFAULT_RULE_ID);
    for (i, d) in all.iter().enumerate() {
        assert!(d.id.starts_with("default"), "{}", d.id);
        assert!(!d.id.starts_with("rule_"));
        assert!(all[..i].iter().all(|o| o.id != d.id), "unique ids");
        let total: i64 = d.rule.conditions.iter().map(|c| c.points).sum();
        assert_eq!(total, 100, "{}", d.id);
        assert!(compile(&d.rule.conditions).is_ok());
    }
    // A B2B company with everything scores 100 under the first.
    let mut r = record();
    r.phone = Some("+4930123456".into());
    let s = all[0].rule.evaluate(&r);
    assert_eq!(s.score, 100, "{:?}", s.breakdown);
    // An empty record (not enriched yet) scores 0.
    let mut empty = record();
    empty.business_type = "unknown".into();
    empty.website_email = None;
    empty.intent_score = 0;
    empty.confidence = 0.0;
    empty.technologies.clear();
    empty.completeness_score = 0;
    assert_eq!(all[0].rule.evaluate(&empty).score, 0);
}
