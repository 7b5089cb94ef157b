//! The spec/3 email-verifier and contact-enricher adapters, run as real
//! components in the real host against local stubs that answer in each
//! vendor's documented shapes: success, rejected key, rate limit or quota,
//! server error, undeliverable or unknown domain, and a 200 with garbage.

mod common;

// The adapters' tests live in one file per kind to keep files short.
#[path = "verifier_enricher_adapters/enrichers.rs"]
mod enrichers;
#[path = "verifier_enricher_adapters/verifiers.rs"]
mod verifiers;

use common::*;
use outreach_plugin_runtime::{CallError, GuardPolicy, PluginKind, PluginRuntime};
use std::sync::atomic::Ordering;

const GOOD: &str = "good-key-123";
const BAD: &str = "bad-key-456";

/// A query parameter of a request path, with the '@' of emails decoded.
fn param(path: &str, name: &str) -> String {
    let query = path.split_once('?').map(|(_, q)| q).unwrap_or("");
    let value = query
        .split('&')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='));
    value.unwrap_or("").replace("%40", "@")
}

/// The local part of the `email` parameter, which the stubs route on.
fn who(path: &str) -> String {
    param(path, "email")
        .split('@')
        .next()
        .unwrap_or("")
        .to_string()
}

fn with_header(mut a: Answer, name: &str, value: &str) -> Answer {
    a.1.push((name.into(), value.into()));
    a
}

async fn rt() -> PluginRuntime {
    runtime(None, GuardPolicy::allow_loopback_for_tests(), true).await
}

async fn verify_err(rt: &PluginRuntime, id: &str, base: &str, key: &str, email: &str) -> CallError {
    rt.verify_email(id, key, Some(base), email)
        .await
        .unwrap_err()
}

async fn enrich_err(
    rt: &PluginRuntime,
    id: &str,
    base: &str,
    key: &str,
    domain: &str,
) -> CallError {
    rt.enrich_domain(id, key, Some(base), domain)
        .await
        .unwrap_err()
}

fn retry_after_secs(e: &CallError) -> Option<u64> {
    match e {
        CallError::RateLimited { retry_after, .. } => retry_after.map(|d| d.as_secs()),
        other => panic!("expected rate-limited, got {other}"),
    }
}

fn garbage() -> Answer {
    (
        200,
        vec![("content-type".into(), "text/html".into())],
        b"<html>maintenance</html>".to_vec(),
    )
}

#[tokio::test]
async fn adapters_are_listed_in_fallback_order_with_their_hosts() {
    let rt = rt().await;
    let verifiers = rt.plugins_of_kind(PluginKind::EmailVerifier);
    let ours = [
        "millionverifier",
        "bouncer",
        "neverbounce",
        "zerobounce",
        "kickbox",
    ]
    .map(|v| format!("verifier-{v}"));
    let order: Vec<&String> = verifiers.iter().filter(|v| ours.contains(v)).collect();
    assert_eq!(order, ours.iter().collect::<Vec<_>>());
    let enrichers = rt.plugins_of_kind(PluginKind::ContactEnricher);
    let ours = ["hunter", "peopledatalabs", "apollo"].map(|v| format!("enricher-{v}"));
    let order: Vec<&String> = enrichers.iter().filter(|v| ours.contains(v)).collect();
    assert_eq!(order, ours.iter().collect::<Vec<_>>());
    for (id, rank, rate, host) in [
        (
            "verifier-millionverifier",
            1,
            0.0049,
            "https://api.millionverifier.com",
        ),
        ("verifier-bouncer", 2, 0.005, "https://api.usebouncer.com"),
        (
            "verifier-neverbounce",
            3,
            0.008,
            "https://api.neverbounce.com",
        ),
        (
            "verifier-zerobounce",
            4,
            0.008,
            "https://api.zerobounce.net",
        ),
        ("verifier-kickbox", 5, 0.0098, "https://api.kickbox.com"),
        ("enricher-hunter", 1, 0.005, "https://api.hunter.io"),
        (
            "enricher-peopledatalabs",
            2,
            0.01,
            "https://api.peopledatalabs.com",
        ),
        ("enricher-apollo", 3, 0.05, "https://api.apollo.io"),
    ] {
        let p = rt.plugin(id).unwrap_or_else(|| panic!("{id} not loaded"));
        assert_eq!(
            (p.fallback_rank, p.list_rate_usd),
            (Some(rank), Some(rate)),
            "{id}"
        );
        assert_eq!(p.allowed_hosts, vec![host.to_string()], "{id}");
    }
}
