//! The LLM provider adapters (`plugins/llm-*`), run as the real components in
//! the real host against local stubs that answer in each vendor's documented
//! shapes: a completion with usage counts, a 1-token key validation on the
//! default model, an invalid key, a rate limit with the vendor's retry hint,
//! a server error, an unknown model, and 200 answers that are not a
//! completion. Stubs are reached through the base-URL override with the
//! loopback-allowing test policy.

mod common;

use common::*;
use outreach_plugin_runtime::{
    CallError, FIRST_PARTY, GuardPolicy, PluginKind, PluginMetadata, PluginRuntime,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Requests the stub received: path and JSON body.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

// In a folder rather than next to this file, so that cargo does not take
// the vendor tables for test targets of their own.
#[path = "llm_adapters/own_shapes.rs"]
mod own_shapes;
#[path = "llm_adapters/vendors.rs"]
mod vendors;
use own_shapes::*;
use vendors::*;

/// Starts the vendor's stub: wrong auth gets the vendor's bad-key answer, the
/// model picks the scenario (`busy`, `boom`, `nope`, `weird`, `garbage`).
async fn vendor_stub(v: Vendor) -> (String, Seen) {
    let seen = Seen::default();
    let log = seen.clone();
    let (base, _) = stub(move |_, path, body, head| {
        let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        log.lock().unwrap().push((path.to_string(), body.clone()));
        if !v.auth.iter().all(|h| head.contains(h)) {
            return (v.bad_key)();
        }
        let model = match body["model"].as_str() {
            Some(m) => m.to_string(),
            None => path
                .trim_start_matches("/v1beta/models/")
                .split(':')
                .next()
                .unwrap_or("")
                .to_string(),
        };
        if path != (v.path)(&model) {
            return json(
                418,
                &format!(r#"{{"error":"stub: unexpected path {path}"}}"#),
            );
        }
        match model.as_str() {
            "busy" => (v.rate_limited)(),
            "boom" => (v.server_error)(),
            "nope" => (v.unknown_model)(),
            "weird" => (v.error_200)(),
            "garbage" => (200, vec![], b"<html>gateway timeout</html>".to_vec()),
            m => json(200, &(v.success)(m)),
        }
    })
    .await;
    (base, seen)
}

/// A runtime holding only the given embedded components, loaded from a
/// folder so that a test compiles just what it calls.
async fn runtime_with(plugins: &[&str]) -> (PluginRuntime, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for name in plugins {
        let p = FIRST_PARTY
            .iter()
            .find(|p| p.name == *name)
            .unwrap_or_else(|| panic!("{name} is not embedded"));
        std::fs::write(dir.path().join(format!("{name}.wasm")), p.wasm).unwrap();
        std::fs::write(dir.path().join(format!("{name}.toml")), p.manifest).unwrap();
    }
    (
        runtime(
            Some(dir.path()),
            GuardPolicy::allow_loopback_for_tests(),
            false,
        )
        .await,
        dir,
    )
}

fn last(seen: &Seen) -> (String, Value) {
    seen.lock()
        .unwrap()
        .last()
        .cloned()
        .expect("the stub saw no request")
}

/// Runs every scenario against one vendor.
async fn exercise(v: Vendor) {
    let (base, seen) = vendor_stub(v).await;
    let (rt, _dir) = runtime_with(&[v.plugin]).await;
    let b = Some(base.as_str());

    let info = rt.plugin(v.plugin).expect("plugin loaded");
    assert_eq!(
        (info.vendor.as_deref(), info.fallback_rank),
        (Some(v.identifier), Some(v.rank))
    );
    let expected_hosts: Vec<String> = [v.host]
        .iter()
        .filter(|h| !h.is_empty())
        .map(|h| h.to_string())
        .collect();
    assert_eq!(info.allowed_hosts, expected_hosts);
    let Some(PluginMetadata::LlmProvider(meta)) = &info.metadata else {
        panic!("no LLM metadata")
    };
    assert_eq!(
        (meta.identifier.as_str(), meta.fallback_rank),
        (v.identifier, v.rank)
    );
    assert_eq!(meta.default_validation_model, v.default_model);
    if !v.default_model.is_empty() {
        let m = meta
            .models
            .iter()
            .find(|m| m.id == v.default_model)
            .expect("default model in the known models");
        assert!(m.input_usd_per_mtok > 0.0 && m.output_usd_per_mtok > 0.0);
        assert!(!meta.requires_endpoint_url);
    }

    let model = if v.default_model.is_empty() {
        "local-model"
    } else {
        v.default_model
    };
    let c = rt
        .llm_complete(v.plugin, "good-key", b, full_request(model))
        .await
        .unwrap();
    assert_eq!(
        (c.content.as_str(), c.prompt_tokens, c.completion_tokens),
        ("Hello", 11, 3)
    );
    assert_eq!(
        (c.model.as_str(), c.finish_reason.as_str()),
        (model, "stop")
    );
    (v.check_body)(&last(&seen).1);

    let k = rt
        .llm_validate_key(v.plugin, "good-key", b, Some(model))
        .await
        .unwrap();
    assert_eq!(
        (
            k.model.as_str(),
            k.echo.as_str(),
            k.prompt_tokens,
            k.completion_tokens
        ),
        (model, "Hello", 11, 3)
    );
    if !v.default_model.is_empty() {
        // Without a model the vendor's default validation model is used.
        rt.llm_validate_key(v.plugin, "good-key", b, None)
            .await
            .unwrap();
        let (path, body) = last(&seen);
        assert_eq!(path, (v.path)(v.default_model));
        assert_eq!(
            body.pointer(v.max_tokens),
            Some(&json!(1)),
            "1-token validation: {body}"
        );
    }

    let e = rt
        .llm_validate_key(v.plugin, "bad-key", b, Some(model))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::Auth(m) if !m.contains("bad-key")),
        "{e}"
    );
    assert!(!e.is_transient());
    let e = rt
        .llm_validate_key(v.plugin, "good-key", b, Some("busy"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::RateLimited { retry_after: Some(d), .. } if *d == Duration::from_secs(7)),
        "{e}"
    );
    assert!(e.is_transient());
    let e = rt
        .llm_validate_key(v.plugin, "good-key", b, Some("boom"))
        .await
        .unwrap_err();
    assert!(
        matches!(e, CallError::Transient(_)) && e.is_transient(),
        "{e}"
    );
    let e = rt
        .llm_validate_key(v.plugin, "good-key", b, Some("nope"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::InvalidInput(m) if m.contains("nope")),
        "{e}"
    );
    for broken in ["weird", "garbage"] {
        let e = rt
            .llm_validate_key(v.plugin, "good-key", b, Some(broken))
            .await
            .unwrap_err();
        assert!(
            matches!(e, CallError::Permanent(_)) && !e.is_transient(),
            "{broken}: {e}"
        );
    }
    // Every failure above is the adapter's own classification: no trap, no
    // host-side error label.
    let stats = rt.plugin(v.plugin).unwrap().stats;
    let count = |label: &str| stats.errors.get(label).copied().unwrap_or(0);
    let labels = [
        "auth",
        "rate_limited",
        "transient",
        "invalid_input",
        "permanent",
    ];
    assert_eq!(labels.map(count), [1, 1, 1, 1, 2], "{:?}", stats.errors);
    assert_eq!(stats.traps, 0);
}

#[tokio::test]
async fn openai() {
    exercise(OPENAI).await;
}

#[tokio::test]
async fn anthropic() {
    exercise(ANTHROPIC).await;
}

#[tokio::test]
async fn gemini() {
    exercise(GEMINI).await;
}

#[tokio::test]
async fn mistral() {
    exercise(MISTRAL).await;
}

#[tokio::test]
async fn cohere() {
    exercise(COHERE).await;
}

#[tokio::test]
async fn groq() {
    exercise(GROQ).await;
}

#[tokio::test]
async fn openai_compatible() {
    exercise(COMPATIBLE).await;
    let (base, _) = vendor_stub(COMPATIBLE).await;
    let (rt, _dir) = runtime_with(&["llm-compatible"]).await;
    // The compatible kind has no default model and no fixed host.
    let e = rt
        .llm_validate_key("llm-compatible", "good-key", Some(&base), None)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::InvalidInput(m) if m.contains("validation_model")),
        "{e}"
    );
    let e = rt
        .llm_validate_key("llm-compatible", "good-key", None, Some("m"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::InvalidInput(m) if m.contains("endpoint_url")),
        "{e}"
    );
    // Operators paste endpoints with or without the /v1 suffix.
    let k = rt
        .llm_validate_key(
            "llm-compatible",
            "good-key",
            Some(&format!("{base}/v1/")),
            Some("m"),
        )
        .await
        .unwrap();
    assert_eq!(k.echo, "Hello");
}

/// The embedded first-party set holds all seven providers in the spec's
/// fallback order, manifest and component agreeing on identifier and rank.
#[tokio::test]
async fn first_party_fallback_order() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let order: Vec<String> = rt
        .plugins_of_kind(PluginKind::LlmProvider)
        .into_iter()
        .filter(|id| id.starts_with("llm-"))
        .collect();
    let expected = [OPENAI, ANTHROPIC, GEMINI, MISTRAL, COHERE, GROQ, COMPATIBLE];
    assert_eq!(order, expected.iter().map(|v| v.plugin).collect::<Vec<_>>());
    for v in expected {
        let info = rt.plugin(v.plugin).unwrap();
        let Some(PluginMetadata::LlmProvider(meta)) = &info.metadata else {
            panic!("{}: no metadata", v.plugin)
        };
        assert_eq!(
            (meta.identifier.as_str(), meta.fallback_rank),
            (v.identifier, v.rank)
        );
        assert_eq!(
            meta.requires_endpoint_url,
            v.identifier == "openai_compatible"
        );
    }
}
