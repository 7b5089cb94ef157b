//! Vendor keys through the router, with the real plugin components in the
//! real host talking to a local stub in the vendors' shapes.

use crate::vendor_keys::service::VendorsExt;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;
use outreach_core::testing::stub::{Canned, Stub};

/// A test app whose example vendors point at `stub` under `/ev` and `/ee`,
/// and the compatible LLM kind at `/llm` (through the key's endpoint_url).
async fn app_with_stub() -> (TestApp, Stub) {
    let stub = Stub::start().await;
    let (ev, ee) = (stub.url("/ev"), stub.url("/ee"));
    let app = TestApp::with_areas(&[crate::AREA], move |c| {
        c.vendor_base_urls.insert("example-verifier".into(), ev);
        c.vendor_base_urls.insert("example-enricher".into(), ee);
    })
    .await;
    (app, stub)
}

fn verified(result: &str) -> Canned {
    Canned::json(
        200,
        json!({"result": result, "disposable": false, "role": false, "accept_all": false, "score": 97}),
    )
}

async fn add_verifier_key(app: &TestApp, key: &str, api_key: &str) -> Value {
    let r = app
        .post(
            "/v1/email-verifiers/providers",
            key,
            json!({"provider": "example-verifier", "api_key": api_key, "label": "main"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body
}

#[tokio::test]
async fn verifier_keys_are_validated_encrypted_and_never_returned() {
    let (app, stub) = app_with_stub().await;
    let acct = app.account(Plan::Starter).await;

    // Invalid key: the vendor says 401; nothing is stored.
    stub.set(
        "/ev/v1/credits",
        Canned::json(401, json!({"error": "bad key"})),
    );
    let r = app
        .post(
            "/v1/email-verifiers/providers",
            &acct.api_key,
            json!({"provider": "example-verifier", "api_key": "bad-key-123"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.detail().starts_with("Key validation failed"),
        "{}",
        r.detail()
    );
    let list = app
        .get("/v1/email-verifiers/providers", &acct.api_key)
        .await;
    assert_eq!(list.body["keys"], json!([]));

    stub.set(
        "/ev/v1/credits",
        Canned::json(200, json!({"credits": 1234})),
    );
    let body = add_verifier_key(&app, &acct.api_key, "live-secret-key-9876").await;
    assert_eq!(body["validation"]["credits_remaining"], 1234);
    assert_eq!(body["validation"]["provider"], "example-verifier");
    assert_eq!(body["key"]["key_preview"], "live...9876");
    assert_eq!(body["key"]["credits_remaining"], 1234);
    assert_eq!(body["key"]["is_active"], true);
    assert!(!body.to_string().contains("live-secret-key-9876"));
    let list = app
        .get("/v1/email-verifiers/providers", &acct.api_key)
        .await;
    assert!(!list.body.to_string().contains("live-secret-key-9876"));
    let stored: String = sqlx::query_scalar("SELECT api_key FROM vendor_keys")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert!(stored.starts_with("v1:") && !stored.contains("live-secret"));

    // Bad input, each a 4xx that stores nothing.
    for bad in [
        json!({"provider": "nope", "api_key": "12345678"}),
        json!({"provider": "example-verifier", "api_key": "short"}),
        json!({"provider": "example-verifier", "api_key": "x".repeat(513)}),
        json!({"provider": "example-verifier"}),
        json!({"provider": "example-verifier", "api_key": "12345678", "endpoint_url": "http://x.example"}),
    ] {
        let r = app
            .post("/v1/email-verifiers/providers", &acct.api_key, bad.clone())
            .await;
        assert_eq!(r.status, 400, "{bad}");
    }
    let list = app
        .get("/v1/email-verifiers/providers", &acct.api_key)
        .await;
    assert_eq!(list.body["keys"].as_array().unwrap().len(), 1);

    // Another account sees none of it and cannot touch it.
    let other = app.account(Plan::Starter).await;
    let id = body["key"]["id"].as_i64().unwrap();
    let path = format!("/v1/email-verifiers/providers/{id}");
    assert_eq!(
        app.call(
            "PUT",
            &path,
            Some(&other.api_key),
            Some(json!({"label": "x"}))
        )
        .await
        .status,
        404
    );
    assert_eq!(
        app.call("DELETE", &path, Some(&other.api_key), None)
            .await
            .status,
        404
    );
    assert_eq!(
        app.get("/v1/email-verifiers/providers", &other.api_key)
            .await
            .body["keys"],
        json!([])
    );
    // The same id under another family is not found either.
    assert_eq!(
        app.call(
            "DELETE",
            &format!("/v1/ai/providers/{id}"),
            Some(&acct.api_key),
            None
        )
        .await
        .status,
        404
    );

    // Rotation validates the new key first.
    stub.set("/ev/v1/credits", Canned::json(401, json!({})));
    let r = app
        .call(
            "PUT",
            &path,
            Some(&acct.api_key),
            Some(json!({"api_key": "rotated-bad-0000"})),
        )
        .await;
    assert_eq!(r.status, 400);
    stub.set("/ev/v1/credits", Canned::json(200, json!({"credits": 5})));
    let r = app
        .call(
            "PUT",
            &path,
            Some(&acct.api_key),
            Some(json!({"api_key": "rotated-good-1111", "label": "rotated"})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["key"]["key_preview"], "rota...1111");
    assert_eq!(r.body["key"]["credits_remaining"], 5);
    assert_eq!(r.body["validation"]["credits_remaining"], 5);

    assert_eq!(
        app.call("DELETE", &path, Some(&acct.api_key), None)
            .await
            .status,
        204
    );
    assert_eq!(
        app.call("DELETE", &path, Some(&acct.api_key), None)
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn verification_uses_the_cache_per_user_and_reports_usage() {
    let (app, stub) = app_with_stub().await;
    let acct = app.account(Plan::Pro).await;
    let no_keys = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "a@b.com"}),
        )
        .await;
    assert_eq!(no_keys.status, 400);

    stub.set("/ev/v1/credits", Canned::json(200, json!({"credits": 10})));
    add_verifier_key(&app, &acct.api_key, "verifier-key-0001").await;
    stub.set("/ev/v1/verify", verified("deliverable"));

    let r = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "Ann@Example.com"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["email"], "ann@example.com");
    assert_eq!(r.body["status"], "valid");
    assert_eq!(r.body["deliverability"], "deliverable");
    assert_eq!(r.body["provider"], "example-verifier");
    assert_eq!(r.body["_cache_hit"], false);
    assert_eq!(r.body["cost_estimate_usd"], 0.0049);
    assert_eq!(stub.hits("/ev/v1/verify"), 1);

    let again = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "ann@example.com"}),
        )
        .await;
    assert_eq!(again.body["_cache_hit"], true);
    assert_eq!(again.body["cost_estimate_usd"], 0.0);
    assert!(again.body["_expires_at"].is_string());
    assert_eq!(stub.hits("/ev/v1/verify"), 1, "served from the cache");

    // Another user of the same account does not share the cache.
    let (_, second_key) = app
        .state
        .keys
        .create(
            acct.account_id,
            None,
            None,
            serde_json::from_value(json!({"name": "other user"})).unwrap(),
        )
        .await
        .unwrap();
    let r = app
        .post(
            "/v1/email-verifiers/verify",
            &second_key,
            json!({"email": "ann@example.com"}),
        )
        .await;
    assert_eq!(r.body["_cache_hit"], false);
    assert_eq!(stub.hits("/ev/v1/verify"), 2);

    // After 7 days the cache entry is gone.
    app.clock.advance(Duration::from_secs(7 * 86_400 + 1));
    let r = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "ann@example.com"}),
        )
        .await;
    assert_eq!(r.body["_cache_hit"], false);
    assert_eq!(stub.hits("/ev/v1/verify"), 3);

    // Malformed input.
    let r = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "not-an-email"}),
        )
        .await;
    assert_eq!(r.status, 400);

    // A vendor that fails with 5xx: 502 with the reason.
    stub.set("/ev/v1/verify", Canned::json(503, json!({"error": "down"})));
    let r = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "new@example.com"}),
        )
        .await;
    assert_eq!(r.status, 502);
    assert!(r.detail().contains("example-verifier"), "{}", r.detail());
    // A vendor that answers garbage: a clean 502, never a 500.
    stub.set(
        "/ev/v1/verify",
        Canned {
            status: 200,
            body: "<html>".into(),
            headers: vec![],
            delay: Duration::ZERO,
        },
    );
    let r = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "new2@example.com"}),
        )
        .await;
    assert_eq!(r.status, 502, "{:?}", r.body);

    let usage = app
        .get("/v1/email-verifiers/usage?days=30", &acct.api_key)
        .await;
    assert_eq!(usage.status, 200);
    let u = &usage.body;
    // 3 vendor successes + 1 cache hit + 2 failures.
    assert_eq!(u["total_calls"], 6, "{u}");
    assert_eq!(u["total_cost_usd"], 0.0147);
    assert_eq!(u["by_deliverability"]["deliverable"], 4);
    assert_eq!(u["by_action_type"][0]["action_type"], "manual");
    assert_eq!(u["by_provider"][0]["provider"], "example-verifier");
    assert_eq!(
        app.get("/v1/email-verifiers/usage?days=0", &acct.api_key)
            .await
            .status,
        400
    );
    assert_eq!(
        app.get("/v1/email-verifiers/usage?days=366", &acct.api_key)
            .await
            .status,
        400
    );
}

#[tokio::test]
async fn inactive_keys_leave_the_rotation() {
    let (app, stub) = app_with_stub().await;
    let acct = app.account(Plan::Pro).await;
    stub.set("/ev/v1/credits", Canned::json(200, json!({"credits": 1})));
    let key = add_verifier_key(&app, &acct.api_key, "verifier-key-0002").await;
    let id = key["key"]["id"].as_i64().unwrap();
    let r = app
        .call(
            "PUT",
            &format!("/v1/email-verifiers/providers/{id}"),
            Some(&acct.api_key),
            Some(json!({"is_active": false})),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["key"]["is_active"], false);
    let r = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "a@b.com"}),
        )
        .await;
    assert_eq!(r.status, 400);
    let listed = app
        .get("/v1/email-verifiers/providers", &acct.api_key)
        .await;
    assert_eq!(
        listed.body["keys"].as_array().unwrap().len(),
        1,
        "kept, not deleted"
    );
}

#[tokio::test]
async fn bulk_verification_runs_ten_at_a_time_and_repeats_from_the_cache() {
    let (app, stub) = app_with_stub().await;
    let acct = app.account(Plan::Enterprise).await;
    stub.set("/ev/v1/credits", Canned::json(200, json!({"credits": 1})));
    add_verifier_key(&app, &acct.api_key, "verifier-key-0003").await;
    stub.set(
        "/ev/v1/verify",
        verified("deliverable").after(Duration::from_millis(50)),
    );

    let mut emails: Vec<Value> = (0..500)
        .map(|i| json!(format!("person{i}@example.com")))
        .collect();
    emails[7] = json!("broken");
    let started = Instant::now();
    let r = app
        .post(
            "/v1/email-verifiers/verify-bulk",
            &acct.api_key,
            json!({"emails": emails}),
        )
        .await;
    let first = started.elapsed();
    assert_eq!(r.status, 200);
    assert_eq!(r.body["count"], 500);
    let results = r.body["results"].as_array().unwrap();
    assert_eq!(results[7]["email"], "broken");
    assert!(results[7]["error"].is_string());
    assert_eq!(results[8]["status"], "valid");
    assert_eq!(stub.max_in_flight(), 10, "chunks of 10 concurrent calls");
    assert_eq!(stub.hits("/ev/v1/verify"), 499);

    let started = Instant::now();
    let r = app
        .post(
            "/v1/email-verifiers/verify-bulk",
            &acct.api_key,
            json!({"emails": emails}),
        )
        .await;
    let second = started.elapsed();
    let results = r.body["results"].as_array().unwrap();
    assert!(
        results
            .iter()
            .filter(|v| v.get("error").is_none())
            .all(|v| v["_cache_hit"] == true && v["cost_estimate_usd"] == 0.0)
    );
    assert_eq!(
        stub.hits("/ev/v1/verify"),
        499,
        "no vendor call on the repeat"
    );
    println!(
        "bulk verify of 500 at 50 ms per call: first {first:?} (sequential would be 25 s), cached repeat {second:?}"
    );

    for bad in [
        json!({"emails": []}),
        json!({"emails": vec!["a@b.com"; 501]}),
        json!({"emails": "a@b.com"}),
    ] {
        assert_eq!(
            app.post("/v1/email-verifiers/verify-bulk", &acct.api_key, bad)
                .await
                .status,
            400
        );
    }
}

fn company() -> Canned {
    Canned::json(
        200,
        json!({"name": "Acme", "legal_name": "Acme Inc.", "founded_year": 2011, "employees": {"exact": 120, "range": "51-200"},
               "hq": {"country": "US", "city": "Austin"}, "technologies": ["nginx", "react"]}),
    )
}

#[tokio::test]
async fn enrichment_caches_per_user_and_domain() {
    let (app, stub) = app_with_stub().await;
    let acct = app.account(Plan::Pro).await;
    let r = app
        .post(
            "/v1/contact-enrichers/enrich",
            &acct.api_key,
            json!({"domain": "acme.com"}),
        )
        .await;
    assert_eq!(r.status, 400, "no keys");
    stub.set(
        "/ee/v1/account",
        Canned::json(200, json!({"credits_remaining": 77})),
    );
    let k = app
        .post(
            "/v1/contact-enrichers/providers",
            &acct.api_key,
            json!({"provider": "example-enricher", "api_key": "enricher-key-1"}),
        )
        .await;
    assert_eq!(k.status, 201, "{:?}", k.body);
    assert_eq!(k.body["validation"]["credits_remaining"], 77);
    stub.set("/ee/v1/companies/acme.com", company());

    let r = app
        .post(
            "/v1/contact-enrichers/enrich",
            &acct.api_key,
            json!({"domain": "https://www.acme.com/about"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["domain"], "acme.com");
    assert_eq!(r.body["name"], "Acme");
    assert_eq!(r.body["employee_count"], 120);
    assert_eq!(r.body["employee_range"], "51-200");
    assert_eq!(r.body["annual_revenue_usd"], Value::Null);
    assert_eq!(r.body["_cache_hit"], false);
    assert_eq!(r.body["cost_estimate_usd"], 0.005);

    let cached = app
        .get("/v1/contact-enrichers/cache/acme.com", &acct.api_key)
        .await;
    assert_eq!(cached.status, 200);
    assert_eq!(cached.body["_cache_hit"], true);
    assert!(cached.body["_cached_at"].is_string() && cached.body["_expires_at"].is_string());
    let hit = app
        .post(
            "/v1/contact-enrichers/enrich",
            &acct.api_key,
            json!({"domain": "acme.com"}),
        )
        .await;
    assert_eq!(hit.body["_cache_hit"], true);
    assert_eq!(hit.body["cost_estimate_usd"], 0.0);
    assert_eq!(stub.hits("/ee/v1/companies/acme.com"), 1);
    let forced = app
        .post(
            "/v1/contact-enrichers/enrich",
            &acct.api_key,
            json!({"domain": "acme.com", "force_refresh": true}),
        )
        .await;
    assert_eq!(forced.body["_cache_hit"], false);
    assert_eq!(stub.hits("/ee/v1/companies/acme.com"), 2);

    // Never shared between accounts.
    let other = app.account(Plan::Pro).await;
    assert_eq!(
        app.get("/v1/contact-enrichers/cache/acme.com", &other.api_key)
            .await
            .status,
        404
    );

    let evicted = app
        .call(
            "DELETE",
            "/v1/contact-enrichers/cache/acme.com",
            Some(&acct.api_key),
            None,
        )
        .await;
    assert_eq!(evicted.body, json!({"evicted": 2, "domain": "acme.com"}));
    assert_eq!(
        app.get("/v1/contact-enrichers/cache/acme.com", &acct.api_key)
            .await
            .status,
        404
    );

    // The vendor knows nothing of a domain: an error, and nothing cached.
    stub.set(
        "/ee/v1/companies/unknown.io",
        Canned::json(404, json!({"error": "not found"})),
    );
    let r = app
        .post(
            "/v1/contact-enrichers/enrich",
            &acct.api_key,
            json!({"domain": "unknown.io"}),
        )
        .await;
    assert!(
        r.status.is_client_error() || r.status == 502,
        "{:?}",
        r.status
    );
    assert_eq!(
        app.get("/v1/contact-enrichers/cache/unknown.io", &acct.api_key)
            .await
            .status,
        404
    );

    for bad in [
        json!({"domain": "not a domain"}),
        json!({"domain": ""}),
        json!({}),
    ] {
        assert_eq!(
            app.post("/v1/contact-enrichers/enrich", &acct.api_key, bad)
                .await
                .status,
            400
        );
    }
    for bad in [
        json!({"domains": []}),
        json!({"domains": vec!["a.com"; 201]}),
    ] {
        assert_eq!(
            app.post("/v1/contact-enrichers/enrich-bulk", &acct.api_key, bad)
                .await
                .status,
            400
        );
    }
    let bulk = app
        .post(
            "/v1/contact-enrichers/enrich-bulk",
            &acct.api_key,
            json!({"domains": ["acme.com", "bad domain"]}),
        )
        .await;
    assert_eq!(bulk.body["count"], 2);
    assert_eq!(bulk.body["results"][0]["name"], "Acme");
    assert_eq!(bulk.body["results"][1]["domain"], "bad domain");

    let usage = app.get("/v1/contact-enrichers/usage", &acct.api_key).await;
    let u = &usage.body;
    assert_eq!(u["days"], 30);
    assert_eq!(u["cache_hits"], 1);
    // 3 vendor successes, 1 hit, 1 failure.
    assert_eq!(u["total_calls"], 5, "{u}");
    assert_eq!(u["cache_hit_rate_pct"], 20.0);
    assert_eq!(u["total_cost_usd"], 0.015);
}

#[tokio::test]
async fn known_providers_are_public_and_in_fallback_order() {
    let (app, _stub) = app_with_stub().await;
    for path in [
        "/v1/email-verifiers/known-providers",
        "/v1/contact-enrichers/known-providers",
    ] {
        let r = app.call("GET", path, None, None).await;
        assert_eq!(r.status, 200, "{path}");
        let providers = r.body["providers"].as_array().unwrap();
        assert!(!providers.is_empty());
        let ranks: Vec<u64> = providers
            .iter()
            .map(|p| p["fallback_rank"].as_u64().unwrap())
            .collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
        assert!(providers.iter().all(|p| p["list_rate_usd"].is_number()));
    }
    let acct = app.account(Plan::Free).await;
    let models = app
        .get("/v1/ai/providers/known-models", &acct.api_key)
        .await;
    assert_eq!(models.status, 200);
    assert!(
        models.body["providers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["supports_endpoint_url"] == true)
    );
}

#[tokio::test]
async fn ai_keys_for_the_compatible_kind_and_the_shared_completion_service() {
    let (app, stub) = app_with_stub().await;
    let acct = app.account(Plan::Pro).await;
    let compatible =
        crate::vendor_keys::catalogue::providers(&app.state, super::catalogue::Family::Ai)
            .into_iter()
            .find(|p| p.supports_endpoint_url == Some(true))
            .unwrap()
            .provider;
    let completion = Canned::json(
        200,
        json!({"model": "local-model", "choices": [{"message": {"role": "assistant", "content": "OK"}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 12, "completion_tokens": 1}}),
    );
    stub.set("/llm/v1/chat/completions", completion);

    // Missing endpoint_url or validation_model: 400, nothing stored.
    for bad in [
        json!({"provider": compatible, "api_key": "local-key-123"}),
        json!({"provider": compatible, "api_key": "local-key-123", "endpoint_url": stub.url("/llm")}),
        json!({"provider": compatible, "api_key": "local-key-123", "validation_model": "m", "endpoint_url": "ftp://x"}),
    ] {
        assert_eq!(
            app.post("/v1/ai/providers", &acct.api_key, bad)
                .await
                .status,
            400
        );
    }
    // An endpoint in a private range is refused by the SSRF guard at validation.
    let r = app
        .post(
            "/v1/ai/providers",
            &acct.api_key,
            json!({"provider": compatible, "api_key": "local-key-123", "validation_model": "m", "endpoint_url": "http://169.254.169.254"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.detail().contains("SSRF") || r.detail().contains("denied"),
        "{}",
        r.detail()
    );

    let r = app
        .post(
            "/v1/ai/providers",
            &acct.api_key,
            json!({"provider": compatible, "api_key": "local-key-123", "validation_model": "local-model", "endpoint_url": stub.url("/llm")}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.body["validation"]["model"], "local-model");
    assert_eq!(r.body["validation"]["prompt_tokens"], 12);
    assert_eq!(r.body["validation"]["echo"], "OK");
    assert!(r.body["validation"]["latency_ms"].is_u64());

    let actor = super::service::Actor {
        account_id: acct.account_id,
        user_key: format!("u{}", acct.user_id),
    };
    let request = outreach_plugin_runtime::CompletionRequest {
        model: String::new(),
        messages: vec![outreach_plugin_runtime::ChatMessage {
            role: outreach_plugin_runtime::Role::User,
            content: "Hi".into(),
        }],
        max_tokens: Some(5),
        temperature: None,
        stop: vec![],
        json_mode: false,
    };
    let done = app
        .state
        .vendors()
        .complete(&actor, "sequence_ai_write", request.clone())
        .await
        .unwrap();
    assert_eq!(done.completion.content, "OK");
    assert_eq!(done.provider, compatible);

    let usage = app
        .get("/v1/ai/providers/usage?days=7", &acct.api_key)
        .await;
    let u = &usage.body;
    assert_eq!(u["total_calls"], 1, "{u}");
    assert_eq!(u["by_provider"][0]["prompt_tokens"], 12);
    assert_eq!(u["by_action_type"][0]["action_type"], "sequence_ai_write");
    assert_eq!(u["by_day"].as_array().unwrap().len(), 1);
    assert!(u["projected_monthly_cost_usd"].is_number());

    // Without keys AI features answer "No BYOK provider connected".
    let id = r.body["key"]["id"].as_i64().unwrap();
    assert_eq!(
        app.call(
            "DELETE",
            &format!("/v1/ai/providers/{id}"),
            Some(&acct.api_key),
            None
        )
        .await
        .status,
        204
    );
    let err = app
        .state
        .vendors()
        .complete(&actor, "manual", request)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "No BYOK provider connected");
    assert_eq!(err.status(), 400);
}

/// spec/3 chain rule with three real adapters: the first rate-limits, the
/// second fails with 5xx, the third answers.
#[tokio::test]
async fn fallback_chain_moves_on_only_after_transient_failures() {
    let stub = Stub::start().await;
    let (mv, bo, nb) = (stub.url("/mv"), stub.url("/bo"), stub.url("/nb"));
    let app = TestApp::with_areas(&[crate::AREA], move |c| {
        c.vendor_base_urls.insert("millionverifier".into(), mv);
        c.vendor_base_urls.insert("bouncer".into(), bo);
        c.vendor_base_urls.insert("neverbounce".into(), nb);
    })
    .await;
    let acct = app.account(Plan::Pro).await;
    stub.set(
        "/mv/api/v3/credits",
        Canned::json(200, json!({"credits": 10, "bulk_credits": 0})),
    );
    stub.set(
        "/bo/v1.1/credits",
        Canned::json(200, json!({"credits": 1500})),
    );
    stub.set(
        "/nb/v4/account/info",
        Canned::json(200, json!({"status": "success", "credits_info": {"paid_credits_remaining": 900, "free_credits_remaining": 100}})),
    );
    // Added in reverse order: the chain follows the vendors' ranks, not insertion.
    for (provider, key) in [
        ("neverbounce", "nb-key-00001"),
        ("bouncer", "bo-key-00001"),
        ("millionverifier", "mv-key-00001"),
    ] {
        let r = app
            .post(
                "/v1/email-verifiers/providers",
                &acct.api_key,
                json!({"provider": provider, "api_key": key}),
            )
            .await;
        assert_eq!(r.status, 201, "{provider}: {:?}", r.body);
    }
    stub.set(
        "/mv/api/v3/",
        Canned::json(429, json!({"error": "Too many requests"})).with_header("retry-after", "3"),
    );
    stub.set(
        "/bo/v1.1/email/verify",
        Canned::json(503, json!({"message": "Service Unavailable"})),
    );
    stub.set(
        "/nb/v4/single/check",
        Canned::json(
            200,
            json!({"status": "success", "result": "valid", "flags": ["has_dns"]}),
        ),
    );

    let r = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "jane@acme.com"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["provider"], "neverbounce");
    assert_eq!(r.body["status"], "valid");
    assert_eq!(r.body["cost_estimate_usd"], 0.008);
    assert_eq!(
        (
            stub.hits("/mv/api/v3/"),
            stub.hits("/bo/v1.1/email/verify"),
            stub.hits("/nb/v4/single/check")
        ),
        (1, 1, 1)
    );

    let usage = app.get("/v1/email-verifiers/usage", &acct.api_key).await;
    let by_provider = usage.body["by_provider"].as_array().unwrap();
    assert_eq!(by_provider.len(), 3, "failures are in the ledger too");
    assert_eq!(
        usage.body["total_cost_usd"], 0.008,
        "failed calls cost nothing"
    );

    // Every vendor failing transiently: 502 naming each upstream reason.
    stub.set("/nb/v4/single/check", Canned::json(502, json!({})));
    let r = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "other@acme.com"}),
        )
        .await;
    assert_eq!(r.status, 502);
    for vendor in ["millionverifier", "bouncer", "neverbounce"] {
        assert!(r.detail().contains(vendor), "{}", r.detail());
    }

    // A rejected key is not transient: the chain stops there.
    stub.set(
        "/mv/api/v3/",
        Canned::json(200, json!({"result": "error", "error": "Apikey not found"})),
    );
    let r = app
        .post(
            "/v1/email-verifiers/verify",
            &acct.api_key,
            json!({"email": "third@acme.com"}),
        )
        .await;
    assert_eq!(r.status, 502);
    assert_eq!(
        stub.hits("/bo/v1.1/email/verify"),
        2,
        "bouncer was not tried after an auth failure"
    );
}

/// A real enricher answering "not found": 404 for the caller, no cache row,
/// and the next call asks the vendor again.
#[tokio::test]
async fn an_enricher_not_found_is_a_404_and_never_cached() {
    let stub = Stub::start().await;
    let hunter = stub.url("/hunter");
    let app = TestApp::with_areas(&[crate::AREA], move |c| {
        c.vendor_base_urls.insert("hunter".into(), hunter);
    })
    .await;
    let acct = app.account(Plan::Pro).await;
    stub.set(
        "/hunter/v2/account",
        Canned::json(
            200,
            json!({"data": {"requests": {"credits": {"used": 120, "available": 2000}}}}),
        ),
    );
    let r = app
        .post(
            "/v1/contact-enrichers/providers",
            &acct.api_key,
            json!({"provider": "hunter", "api_key": "hunter-key-0001"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.body["validation"]["credits_remaining"], 1880);
    stub.set(
        "/hunter/v2/companies/find",
        Canned::json(404, json!({"errors": [{"id": "not_found", "code": 404, "details": "No company found for this domain"}]})),
    );
    for _ in 0..2 {
        let r = app
            .post(
                "/v1/contact-enrichers/enrich",
                &acct.api_key,
                json!({"domain": "nobody.com"}),
            )
            .await;
        assert_eq!(r.status, 404, "{:?}", r.body);
        assert!(
            r.detail().starts_with("hunter: not found"),
            "{}",
            r.detail()
        );
    }
    assert_eq!(
        stub.hits("/hunter/v2/companies/find"),
        2,
        "nothing was cached"
    );
    assert_eq!(
        app.get("/v1/contact-enrichers/cache/nobody.com", &acct.api_key)
            .await
            .status,
        404
    );
}

/// SDK examples are loaded but not offered to customers by default.
#[tokio::test]
async fn example_vendors_are_not_offered_unless_configured() {
    let app = TestApp::with_areas(&[crate::AREA], |c| c.offer_example_vendors = false).await;
    let r = app
        .call("GET", "/v1/email-verifiers/known-providers", None, None)
        .await;
    let names: Vec<&str> = r.body["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["provider"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "millionverifier",
            "bouncer",
            "neverbounce",
            "zerobounce",
            "kickbox"
        ]
    );
    let r = app
        .call("GET", "/v1/contact-enrichers/known-providers", None, None)
        .await;
    let names: Vec<&str> = r.body["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["provider"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["hunter", "peopledatalabs", "apollo"]);
    let acct = app.account(Plan::Pro).await;
    let r = app
        .post(
            "/v1/email-verifiers/providers",
            &acct.api_key,
            json!({"provider": "example-verifier", "api_key": "12345678"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.detail().starts_with("Unknown provider"), "{}", r.detail());
}

/// Expired cache rows are removed by the housekeeping pass; fresh ones stay.
#[tokio::test]
async fn housekeeping_prunes_expired_cache_rows_only() {
    use outreach_core::platform::clock::Clock;
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    for (subject, ttl_ms) in [("old.com", 1_000), ("fresh.com", 86_400_000)] {
        super::store::cache_put(
            &app.state.db,
            super::store::CachePut {
                account_id: acct.account_id,
                user_key: "u1",
                family: super::catalogue::Family::Enricher,
                subject,
                provider: "hunter",
                result: "{}".into(),
                now: app.clock.now_ms(),
                ttl_ms,
            },
        )
        .await
        .unwrap();
    }
    app.clock.advance(Duration::from_secs(60));
    let cache = super::store::prune_cache(&app.state.db, app.clock.now_ms())
        .await
        .unwrap();
    assert_eq!(cache, 1);
    let left: Vec<String> = sqlx::query_scalar("SELECT subject FROM vendor_cache")
        .fetch_all(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(left, ["fresh.com"]);
}
