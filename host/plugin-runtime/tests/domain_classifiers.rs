//! Domain classifiers: the embedded rules component against the native rules
//! it wraps, the AI component through a fake bridge, and the host's checks
//! on every verdict (with the `echo-domain-classifier` fixture, which
//! returns the AI's answer unchecked).

mod common;

use common::*;
use outreach_domain_analysis::classify::{ClassifyInput, TAXONOMY, classify};
use outreach_plugin_runtime::{
    BUSINESS_TYPES, CallError, DomainInput, DomainVerdict, GuardPolicy, MAX_DOMAIN_TEXT_BYTES,
    NO_AI_PROVIDER, PluginError, PluginKind, PluginMetadata, PluginRuntime, ReplyInput, Role,
};

const RULES: &str = "domain-classifier-rules";
const LLM: &str = "domain-classifier-llm";
const ECHO: &str = "echo-domain-classifier";

fn site(domain: &str, name: &str, summary: &str, text: &str) -> ClassifyInput {
    ClassifyInput {
        domain: domain.into(),
        company_name: Some(name.into()),
        summary: Some(summary.into()),
        text: text.into(),
        ..ClassifyInput::default()
    }
}

/// Sites that reach every branch of the rules: an industry with and without
/// a sub-industry, each way of telling the business type, too little
/// evidence, and a text longer than the 64 KB both sides read.
fn sites() -> Vec<ClassifyInput> {
    let mut shop = site(
        "schuhhaus-meier.de",
        "Schuhhaus Meier",
        "Schuhe und Mode online kaufen – versandkostenfrei ab 50 €",
        "Warenkorb Damen Herren Sale Schuhe Stiefel Sneaker jetzt kaufen",
    );
    shop.technologies = vec![("Shopify".into(), vec!["Ecommerce".into()])];
    let mut long = site(
        "grand-hotel.example",
        "Grand Hotel",
        "",
        &"Our clients love the view. ".repeat(3_000),
    );
    long.text
        .push_str(" hotel restaurant travel booking resort enterprise b2b solutions");
    vec![
        ClassifyInput {
            sells_subscriptions: true,
            ..site(
                "initech.io",
                "Initech",
                "The workflow automation platform for finance teams. Book a demo.",
                "Integrate with our API. Trusted by 2,000 businesses. Enterprise plans. \
                 Developer docs.",
            )
        },
        shop,
        site("berlin.gov.example", "Stadt Berlin", "", ""),
        site(
            "stiftung-wald.org",
            "Stiftung Wald",
            "Jetzt spenden für den Wald",
            "Spenden",
        ),
        site(
            "kanzlei-weber.de",
            "Kanzlei Weber Rechtsanwälte",
            "Ihre Rechtsanwälte für Arbeitsrecht",
            "Kanzlei Rechtsanwalt Beratung Unternehmen Kunden",
        ),
        site("x.example", "X", "Welcome", "Hello world"),
        long,
    ]
}

async fn with_echo() -> (PluginRuntime, tempfile::TempDir) {
    let dir = guest_dir(&[ECHO]);
    let rt = runtime(Some(dir.path()), GuardPolicy::strict(), true).await;
    (rt, dir)
}

/// A verdict's fields but the latency, for comparing.
fn parts(v: &DomainVerdict) -> (Option<&str>, Option<&str>, &str, f64, &str) {
    let (industry, sub) = (v.industry.as_deref(), v.sub_industry.as_deref());
    (industry, sub, &v.business_type, v.confidence, &v.model)
}

fn domain(text: &str) -> DomainInput {
    site("acme.example", "Acme", "", text).into()
}

#[tokio::test]
async fn domain_classifiers_are_listed_with_their_metadata() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let ids: Vec<String> = rt.domain_classifiers().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, [LLM, RULES]);
    assert_eq!(
        rt.plugins_of_kind(PluginKind::DomainClassifier),
        [LLM, RULES]
    );
    let rules = rt.domain_classifier(RULES).unwrap();
    assert_eq!(
        (rules.name.as_str(), rules.model.as_str(), rules.uses_ai),
        ("Rules", "domain-rules-v1", false)
    );
    assert!(rt.domain_classifier(LLM).unwrap().uses_ai);
    // The two classifier kinds do not mix.
    assert!(rt.domain_classifier("reply-classifier-rules").is_none());
    assert!(rt.reply_classifier(RULES).is_none());

    let info = rt.plugin(RULES).unwrap();
    assert!(matches!(
        &info.metadata,
        Some(PluginMetadata::DomainClassifier(m)) if m.model == "domain-rules-v1"
    ));
    let row = serde_json::to_value(&info).unwrap();
    assert_eq!(row["kind"], "domain-classifier");
    assert_eq!(row["metadata"]["kind"], "domain-classifier");
    assert!(info.allowed_hosts.is_empty());
}

#[tokio::test]
async fn the_rules_component_agrees_with_the_native_rules() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let mut named = 0;
    for input in sites() {
        let native = classify(&input);
        let v = rt
            .classify_domain(RULES, input.clone().into(), None)
            .await
            .unwrap();
        assert_eq!(
            (&v.industry, &v.sub_industry, &v.business_type, v.confidence),
            (
                &native.industry,
                &native.sub_industry,
                &native.business_type,
                native.confidence
            ),
            "{}",
            input.domain
        );
        assert_eq!(v.model, "domain-rules-v1");
        named += usize::from(native.industry.is_some());
    }
    // The inputs are not all "unknown": the comparison means something.
    assert!(named >= 4, "{named}");
    let shop = classify(&sites()[1]);
    assert_eq!(
        (shop.sub_industry.as_deref(), shop.business_type.as_str()),
        (Some("Fashion & Apparel"), "B2C")
    );
    let stats = rt.plugin(RULES).unwrap().stats;
    assert_eq!((stats.calls, stats.ok), (7, 7), "{stats:?}");
}

#[tokio::test]
async fn the_llm_classifier_asks_the_bridge_and_maps_its_answer() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let ai = FakeAi::content(
        "claude-3-5-haiku-20241022",
        "Sure.\n```json\n{\"industry\": \"software\", \"subIndustry\": \"Cybersecurity\", \
         \"business_type\": \"b2b\", \"confidence\": 0.81}\n```",
    );
    let v = rt
        .classify_domain(
            LLM,
            domain("Endpoint security for enterprises."),
            bridge(&ai),
        )
        .await
        .unwrap();
    assert_eq!(
        parts(&v),
        (
            Some("Software"),
            Some("Cybersecurity"),
            "B2B",
            0.81,
            "claude-3-5-haiku-20241022"
        )
    );
    let requests = ai.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert!(r.json_mode);
    assert_eq!(r.model, "", "the key's default model");
    assert_eq!(r.messages[0].role, Role::System);
    for industry in TAXONOMY {
        assert!(
            r.messages[0].content.contains(industry.name),
            "{}",
            industry.name
        );
    }
    for business_type in BUSINESS_TYPES {
        assert!(
            r.messages[0].content.contains(business_type),
            "{business_type}"
        );
    }
    assert!(r.messages[1].content.contains("Domain: acme.example"));

    // Values outside the taxonomy become none and `unknown`, not errors.
    let odd = FakeAi::content(
        "m",
        r#"{"industry":"Aerospace","sub_industry":"Rockets","business_type":"B2G","confidence":0.4}"#,
    );
    let v = rt
        .classify_domain(LLM, domain("Rockets."), bridge(&odd))
        .await
        .unwrap();
    assert_eq!(
        (v.industry, v.sub_industry, v.business_type.as_str()),
        (None, None, "unknown")
    );
}

#[tokio::test]
async fn llm_classifier_failures() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;

    // No AI provider connected: the import refuses, the plugin passes it on.
    let e = rt
        .classify_domain(LLM, domain("hi"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::Permanent(m) if m.contains(NO_AI_PROVIDER)),
        "{e}"
    );

    let junk = FakeAi::content("m", "It looks like a nice company!");
    let e = rt
        .classify_domain(LLM, domain("hi"), bridge(&junk))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::Permanent(m) if m.contains("not a classification")),
        "{e}"
    );

    let down = FakeAi::failing(PluginError::Transient("All vendors failed".into()));
    let e = rt
        .classify_domain(LLM, domain("hi"), bridge(&down))
        .await
        .unwrap_err();
    assert!(e.is_transient(), "{e}");

    // Another kind, or no such plugin.
    let e = rt
        .classify_domain("reply-classifier-rules", domain("hi"), None)
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::WrongKind { .. }), "{e}");
    let reply = ReplyInput {
        headers: vec![],
        subject: "Re: hi".into(),
        text: "hi".into(),
        original_subject: None,
    };
    let e = rt.classify_reply(RULES, reply, None).await.unwrap_err();
    assert!(matches!(e, CallError::WrongKind { .. }), "{e}");
    let e = rt
        .classify_domain("nope", domain("hi"), None)
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::NotFound(_)), "{e}");
}

#[tokio::test]
async fn the_host_checks_every_domain_verdict() {
    let (rt, _dir) = with_echo().await;
    let echo = |answer: &str| FakeAi::content("m", answer);
    let call = |answer: &str| {
        let ai = echo(answer);
        let rt = rt.clone();
        async move { rt.classify_domain(ECHO, domain("hi"), bridge(&ai)).await }
    };

    let v = call("Retail|Fashion & Apparel|B2C|0.7|tiny-1")
        .await
        .unwrap();
    assert_eq!(
        parts(&v),
        (
            Some("Retail"),
            Some("Fashion & Apparel"),
            "B2C",
            0.7,
            "tiny-1"
        )
    );
    // Confidence is clamped; an empty model is the metadata's.
    let v = call("||unknown|4.5|").await.unwrap();
    assert_eq!(
        (v.industry, v.confidence, v.model.as_str()),
        (None, 1.0, "echo-domain-v0")
    );

    let refused = [
        (
            "Software||b2b|0.5|m",
            "business type \"b2b\" is not one of B2B, B2C",
        ),
        ("Software||Enterprise|0.5|m", "business type \"Enterprise\""),
        (
            "Aerospace||B2B|0.5|m",
            "industry \"Aerospace\" is not one of Software, ",
        ),
        ("software||B2B|0.5|m", "industry \"software\""),
        (
            "Software|Legal|B2B|0.5|m",
            "sub-industry \"Legal\" is not one of Software's: Developer Tools",
        ),
        (
            "|Legal|B2B|0.5|m",
            "sub-industry \"Legal\" without an industry",
        ),
        ("Software||B2B|NaN|m", "confidence NaN is not a number"),
        ("Software||B2B|inf|m", "confidence inf is not a number"),
    ];
    for (answer, message) in refused {
        let e = call(answer).await.unwrap_err();
        assert!(
            matches!(&e, CallError::InvalidOutput(m) if m.contains(message)),
            "{answer}: {e}"
        );
    }

    // The plugin receives at most 64 KB of text, cut on a character boundary.
    let ai = echo("||unknown|0|m");
    let text = format!("a{}", "é".repeat(MAX_DOMAIN_TEXT_BYTES));
    rt.classify_domain(ECHO, domain(&text), bridge(&ai))
        .await
        .unwrap();
    let sent = &ai.requests()[0].messages[0].content;
    assert_eq!(sent, &format!("acme.example|{}", MAX_DOMAIN_TEXT_BYTES - 1));
}
