//! The embedded first-party plugins load and answer through the typed API,
//! talking to local stubs through the base-URL override.

mod common;

use common::*;
use outreach_plugin_runtime::{
    CallError, ChatMessage, CompletionRequest, GuardPolicy, PluginKind, PluginMetadata, Role,
};
use serde_json::json;

#[tokio::test]
async fn first_party_plugins_are_listed_with_metadata() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let ids: Vec<String> = rt.list().into_iter().map(|p| p.id).collect();
    for id in [
        "llm-compatible",
        "example-verifier",
        "example-enricher",
        "action-dedup",
        "action-filter",
        "action-transform",
        "starter-pack",
    ] {
        assert!(ids.contains(&id.to_string()), "{id} missing from {ids:?}");
    }
    // Fallback order: ascending rank, so rank 1 comes before the rest.
    let verifiers = rt.plugins_of_kind(PluginKind::EmailVerifier);
    let ranks: Vec<u32> = verifiers
        .iter()
        .map(|id| rt.plugin(id).unwrap().fallback_rank.unwrap())
        .collect();
    assert!(verifiers.contains(&"example-verifier".to_string()));
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
    let v = rt.plugin("example-verifier").unwrap();
    assert!(
        matches!(v.metadata, Some(PluginMetadata::EmailVerifier(ref m)) if m.identifier == "example-verifier")
    );
    assert_eq!(v.list_rate_usd, Some(0.0049));
}

#[tokio::test]
async fn verifier_normalises_and_classifies_vendor_answers() {
    let (base, _) = stub(|_, path, _, head| {
        if !head.contains("authorization: bearer good-key") {
            return json(401, r#"{"error":"bad key"}"#);
        }
        match path {
            p if p.starts_with("/v1/verify?email=jane%40acme.com") => {
                json(200, r#"{"result":"deliverable","score":90,"role":false,"disposable":false,"accept_all":false}"#)
            }
            p if p.starts_with("/v1/verify?email=busy") => {
                (429, vec![("retry-after".into(), "7".into())], b"{}".to_vec())
            }
            p if p.starts_with("/v1/verify") => json(503, "{}"),
            "/v1/credits" => json(200, r#"{"credits":1234}"#),
            _ => json(404, "{}"),
        }
    })
    .await;
    let rt = runtime(None, GuardPolicy::allow_loopback_for_tests(), true).await;
    let b = Some(base.as_str());

    let r = rt
        .verify_email("example-verifier", "good-key", b, "jane@acme.com")
        .await
        .unwrap();
    assert_eq!(
        (r.status.as_str(), r.deliverability.as_str()),
        ("valid", "deliverable")
    );
    assert_eq!(r.confidence, Some(0.9));
    assert_eq!(r.cost_estimate_usd, 0.0049);
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["_cache_hit"], false);

    let e = rt
        .verify_email("example-verifier", "good-key", b, "busy@acme.com")
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::RateLimited { retry_after: Some(d), .. } if d.as_secs() == 7),
        "{e}"
    );
    assert!(e.is_transient());
    let e = rt
        .verify_email("example-verifier", "good-key", b, "x@acme.com")
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::Transient(_)), "{e}");
    let e = rt
        .verify_email("example-verifier", "bad-key", b, "jane@acme.com")
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::Auth(_)) && !e.is_transient(), "{e}");
    let e = rt
        .verify_email("example-verifier", "good-key", b, "not-an-email")
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::InvalidInput(_)), "{e}");

    let k = rt
        .validate_key("example-verifier", "good-key", b)
        .await
        .unwrap();
    assert_eq!(k.credits_remaining, Some(1234));

    // Without the override the vendor's public host is used; the stub is
    // not reachable that way, and a non-allowed base is refused.
    let stats = rt.plugin("example-verifier").unwrap().stats;
    assert_eq!(stats.calls, 6);
    assert_eq!(stats.errors["auth"], 1);
}

#[tokio::test]
async fn enricher_llm_action_and_templates() {
    let (base, _) = stub(|method, path, body, _| match (method, path) {
        ("GET", "/v1/companies/acme.com") => json(
            200,
            r#"{"name":"Acme","founded_year":2009,"employees":{"exact":140,"range":"51-200"},"technologies":["nginx","react"],"hq":{"country":"US","city":"Austin"}}"#,
        ),
        ("GET", p) if p.starts_with("/v1/companies/") => json(404, "{}"),
        ("POST", "/v1/chat/completions") => {
            let req: serde_json::Value = serde_json::from_slice(body).unwrap();
            assert_eq!(req["messages"][0]["content"], "Say hi");
            json(
                200,
                r#"{"model":"tiny-1","choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1}}"#,
            )
        }
        _ => json(404, "{}"),
    })
    .await;
    let rt = runtime(None, GuardPolicy::allow_loopback_for_tests(), true).await;
    let b = Some(base.as_str());

    let e = rt
        .enrich_domain("example-enricher", "k", b, "acme.com")
        .await
        .unwrap();
    assert_eq!(e.employee_count, Some(140));
    assert_eq!(e.hq_city.as_deref(), Some("Austin"));
    assert_eq!(e.raw["name"], "Acme");
    assert_eq!(e.cost_estimate_usd, 0.005);
    let nf = rt
        .enrich_domain("example-enricher", "k", b, "nobody.com")
        .await
        .unwrap_err();
    assert!(matches!(nf, CallError::Permanent(_)), "{nf}");

    let req = CompletionRequest {
        model: "tiny-1".into(),
        messages: vec![ChatMessage {
            role: Role::User,
            content: "Say hi".into(),
        }],
        max_tokens: Some(5),
        temperature: None,
        stop: vec![],
        json_mode: false,
    };
    let c = rt
        .llm_complete("llm-compatible", "k", b, req)
        .await
        .unwrap();
    assert_eq!(
        (c.content.as_str(), c.prompt_tokens, c.completion_tokens),
        ("hi", 9, 1)
    );
    // The compatible kind has no fixed host: without an endpoint it refuses.
    let v = rt
        .llm_validate_key("llm-compatible", "k", None, Some("tiny-1"))
        .await
        .unwrap_err();
    assert!(matches!(v, CallError::InvalidInput(_)), "{v}");

    assert_eq!(
        rt.workflow_action_plugin("dedup_by_field").as_deref(),
        Some("action-dedup")
    );
    let d = rt.workflow_action_describe("action-dedup").unwrap();
    assert_eq!(d.config_schema["required"][0], "field");
    let out = rt
        .workflow_action_execute(
            "action-dedup",
            &json!({"field": "domain"}),
            &[
                json!({"domain": "a.com"}),
                json!({"domain": "a.com"}),
                json!({"domain": "b.com"}),
            ],
        )
        .await
        .unwrap();
    assert_eq!(out.items.len(), 2);
    assert_eq!(out.previous_result, Some(json!({"kept": 2})));

    let t = rt.template_pack_templates("starter-pack").await.unwrap();
    assert!(t.len() >= 3, "{t:?}");
    assert!(
        t.iter()
            .all(|t| t.actions.is_array() && t.pack == "starter-pack")
    );

    let wrong = rt
        .verify_email("starter-pack", "k", None, "a@b.c")
        .await
        .unwrap_err();
    assert!(matches!(wrong, CallError::WrongKind { .. }));
}

/// The filter and transform actions, described and run through the runtime.
#[tokio::test]
async fn filter_and_transform_actions() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let items = [
        json!({"domain": "a.com", "industry": "SaaS", "country": "US", "confidence": 0.9,
               "intent_score": 80, "signals": ["hiring", "funding"]}),
        json!({"domain": "b.io", "industry": "saas", "country": "DE", "confidence": 0.4,
               "intent_score": "35", "signals": []}),
        json!({"domain": "c.org", "industry": "Retail", "country": "us", "signals": ["hiring"]}),
    ];

    assert_eq!(
        rt.workflow_action_plugin("filter_domains").as_deref(),
        Some("action-filter")
    );
    let d = rt.workflow_action_describe("action-filter").unwrap();
    assert_eq!(d.config_schema["required"], json!(["op", "field"]));
    assert_eq!(d.config_schema["additionalProperties"], false);
    let out = rt
        .workflow_action_execute(
            "action-filter",
            &json!({"op": "equals", "field": "industry", "value": "saas"}),
            &items,
        )
        .await
        .unwrap();
    assert_eq!(out.items, items[..2]);
    assert_eq!(out.previous_result, Some(json!({"kept": 2, "removed": 1})));
    let out = rt
        .workflow_action_execute(
            "action-filter",
            &json!({"op": "contains", "field": "signals", "value": "hiring", "limit": 1}),
            &items,
        )
        .await
        .unwrap();
    assert_eq!(out.items, [items[0].clone()]);
    let e = rt
        .workflow_action_execute(
            "action-filter",
            &json!({"op": "gt", "field": "intent_score"}),
            &items,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::InvalidInput(m) if m.contains("config.value")),
        "{e}"
    );

    assert_eq!(
        rt.workflow_action_plugin("data_transform").as_deref(),
        Some("action-transform")
    );
    let d = rt.workflow_action_describe("action-transform").unwrap();
    assert_eq!(d.config_schema["required"], json!(["operation"]));
    let out = rt
        .workflow_action_execute(
            "action-transform",
            &json!({"operation": "sort", "field": "intent_score", "order": "desc"}),
            &items,
        )
        .await
        .unwrap();
    let domains: Vec<&str> = out
        .items
        .iter()
        .map(|i| i["domain"].as_str().unwrap())
        .collect();
    assert_eq!(domains, ["a.com", "b.io", "c.org"]);
    assert_eq!(
        out.previous_result,
        Some(json!({"operation": "sort", "input": 3, "output": 3}))
    );
    let out = rt
        .workflow_action_execute(
            "action-transform",
            &json!({"operation": "pick_fields", "fields": ["country"]}),
            &items,
        )
        .await
        .unwrap();
    assert_eq!(out.items[2], json!({"domain": "c.org", "country": "us"}));
    let e = rt
        .workflow_action_execute(
            "action-transform",
            &json!({"operation": "limit", "count": 1, "field": "x"}),
            &items,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::InvalidInput(m) if m.starts_with("config.field")),
        "{e}"
    );
}
