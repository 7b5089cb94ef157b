//! The spec/3 email-verifier and contact-enricher adapters, run as real
//! components in the real host against local stubs that answer in each
//! vendor's documented shapes: success, rejected key, rate limit or quota,
//! server error, undeliverable or unknown domain, and a 200 with garbage.

mod common;

use common::*;
use outreach_plugin_runtime::{CallError, GuardPolicy, PluginKind, PluginRuntime};
use std::sync::atomic::Ordering;

const GOOD: &str = "good-key-123";
const BAD: &str = "bad-key-456";

/// A query parameter of a request path, with the '@' of emails decoded.
fn param(path: &str, name: &str) -> String {
    let query = path.split_once('?').map(|(_, q)| q).unwrap_or("");
    let value = query.split('&').find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='));
    value.unwrap_or("").replace("%40", "@")
}

/// The local part of the `email` parameter, which the stubs route on.
fn who(path: &str) -> String {
    param(path, "email").split('@').next().unwrap_or("").to_string()
}

fn with_header(mut a: Answer, name: &str, value: &str) -> Answer {
    a.1.push((name.into(), value.into()));
    a
}

async fn rt() -> PluginRuntime {
    runtime(None, GuardPolicy::allow_loopback_for_tests(), true).await
}

async fn verify_err(rt: &PluginRuntime, id: &str, base: &str, key: &str, email: &str) -> CallError {
    rt.verify_email(id, key, Some(base), email).await.unwrap_err()
}

async fn enrich_err(rt: &PluginRuntime, id: &str, base: &str, key: &str, domain: &str) -> CallError {
    rt.enrich_domain(id, key, Some(base), domain).await.unwrap_err()
}

fn retry_after_secs(e: &CallError) -> Option<u64> {
    match e {
        CallError::RateLimited { retry_after, .. } => retry_after.map(|d| d.as_secs()),
        other => panic!("expected rate-limited, got {other}"),
    }
}

/// Checks the answers every verifier stub gives for `jane` (deliverable),
/// `nobody` (undeliverable), `boom` (server error) and `junk` (200 garbage),
/// plus a malformed address that must be refused before any request.
async fn common_verifier_checks(rt: &PluginRuntime, id: &str, vendor: &str, base: &str, rate: f64) {
    let r = rt.verify_email(id, GOOD, Some(base), "jane@acme.com").await.unwrap();
    assert_eq!((r.status.as_str(), r.deliverability.as_str()), ("valid", "deliverable"), "{id}");
    assert_eq!((r.provider.as_str(), r.email.as_str(), r.cost_estimate_usd), (vendor, "jane@acme.com", rate));
    let r = rt.verify_email(id, GOOD, Some(base), "nobody@acme.com").await.unwrap();
    assert_eq!((r.status.as_str(), r.deliverability.as_str()), ("invalid", "undeliverable"), "{id}");
    assert_eq!(verify_err(rt, id, base, GOOD, "boom@acme.com").await.label(), "transient", "{id}");
    assert_eq!(verify_err(rt, id, base, GOOD, "junk@acme.com").await.label(), "permanent", "{id}");
    assert_eq!(verify_err(rt, id, base, GOOD, "not an email").await.label(), "invalid_input", "{id}");
}

fn garbage() -> Answer {
    (200, vec![("content-type".into(), "text/html".into())], b"<html>maintenance</html>".to_vec())
}

#[tokio::test]
async fn adapters_are_listed_in_fallback_order_with_their_hosts() {
    let rt = rt().await;
    let verifiers = rt.plugins_of_kind(PluginKind::EmailVerifier);
    let ours = ["millionverifier", "bouncer", "neverbounce", "zerobounce", "kickbox"].map(|v| format!("verifier-{v}"));
    let order: Vec<&String> = verifiers.iter().filter(|v| ours.contains(v)).collect();
    assert_eq!(order, ours.iter().collect::<Vec<_>>());
    let enrichers = rt.plugins_of_kind(PluginKind::ContactEnricher);
    let ours = ["hunter", "peopledatalabs", "apollo"].map(|v| format!("enricher-{v}"));
    let order: Vec<&String> = enrichers.iter().filter(|v| ours.contains(v)).collect();
    assert_eq!(order, ours.iter().collect::<Vec<_>>());
    for (id, rank, rate, host) in [
        ("verifier-millionverifier", 1, 0.0049, "https://api.millionverifier.com"),
        ("verifier-bouncer", 2, 0.005, "https://api.usebouncer.com"),
        ("verifier-neverbounce", 3, 0.008, "https://api.neverbounce.com"),
        ("verifier-zerobounce", 4, 0.008, "https://api.zerobounce.net"),
        ("verifier-kickbox", 5, 0.0098, "https://api.kickbox.com"),
        ("enricher-hunter", 1, 0.005, "https://api.hunter.io"),
        ("enricher-peopledatalabs", 2, 0.01, "https://api.peopledatalabs.com"),
        ("enricher-apollo", 3, 0.05, "https://api.apollo.io"),
    ] {
        let p = rt.plugin(id).unwrap_or_else(|| panic!("{id} not loaded"));
        assert_eq!((p.fallback_rank, p.list_rate_usd), (Some(rank), Some(rate)), "{id}");
        assert_eq!(p.allowed_hosts, vec![host.to_string()], "{id}");
    }
}

#[tokio::test]
async fn millionverifier_reads_result_and_error_fields() {
    let (base, hits) = stub(|_, path, _, _| {
        if param(path, "api") != GOOD {
            // MillionVerifier reports a rejected key with HTTP 200.
            return json(200, r#"{"result":"error","resultcode":4,"credits":0,"error":"Apikey not found"}"#);
        }
        if path.starts_with("/api/v3/credits") {
            return json(200, r#"{"credits":4242,"bulk_credits":0,"renewing_credits":0}"#);
        }
        match who(path).as_str() {
            "jane" => json(200, r#"{"email":"jane@acme.com","quality":"good","result":"ok","resultcode":1,"subresult":"ok","free":false,"role":false,"didyoumean":"","credits":99,"error":""}"#),
            "nobody" => json(200, r#"{"result":"invalid","resultcode":6,"subresult":"invalid","role":false,"error":""}"#),
            "info" => json(200, r#"{"result":"catch_all","resultcode":2,"role":true,"error":""}"#),
            "busy" => json(200, r#"{"result":"error","resultcode":4,"error":"Insufficient credits"}"#),
            "boom" => json(503, "{}"),
            _ => garbage(),
        }
    })
    .await;
    let rt = rt().await;
    let id = "verifier-millionverifier";
    common_verifier_checks(&rt, id, "millionverifier", &base, 0.0049).await;
    let r = rt.verify_email(id, GOOD, Some(&base), "info@acme.com").await.unwrap();
    assert_eq!((r.status.as_str(), r.is_catch_all, r.is_role, r.raw_status.as_str()), ("risky", Some(true), true, "catch_all"));
    assert_eq!(verify_err(&rt, id, &base, GOOD, "busy@acme.com").await.label(), "rate_limited");
    assert_eq!(verify_err(&rt, id, &base, BAD, "jane@acme.com").await.label(), "auth");
    assert_eq!(rt.validate_key(id, GOOD, Some(&base)).await.unwrap().credits_remaining, Some(4242));
    assert_eq!(rt.validate_key(id, BAD, Some(&base)).await.unwrap_err().label(), "auth");
    assert_eq!(hits.load(Ordering::SeqCst), 9, "the malformed address must not reach the vendor");
}

#[tokio::test]
async fn bouncer_maps_nested_string_flags_and_statuses() {
    let (base, _) = stub(|_, path, _, head| {
        if !head.contains(&format!("x-api-key: {GOOD}")) {
            return json(401, r#"{"error":"Unauthorized","message":"Invalid API key"}"#);
        }
        if path == "/v1.1/credits" {
            return json(200, r#"{"credits":1500}"#);
        }
        assert!(path.starts_with("/v1.1/email/verify?email="), "{path}");
        match who(path).as_str() {
            "jane" => json(200, r#"{"email":"jane@acme.com","status":"deliverable","reason":"accepted_email","domain":{"name":"acme.com","acceptAll":"no","disposable":"no","free":"no"},"account":{"role":"no","disabled":"no","fullMailbox":"no"},"provider":"google.com","score":97,"toxic":"unknown"}"#),
            "nobody" => json(200, r#"{"status":"undeliverable","reason":"rejected_email","domain":{"acceptAll":"no","disposable":"no"},"account":{"role":"no"},"score":0}"#),
            "temp" => json(200, r#"{"status":"risky","reason":"low_quality","domain":{"acceptAll":"unknown","disposable":"yes"},"account":{"role":"no"},"score":40}"#),
            "busy" => with_header(json(429, r#"{"message":"Too many requests"}"#), "retry-after", "5"),
            "broke" => json(402, r#"{"message":"Payment required: not enough credits"}"#),
            "boom" => json(503, r#"{"message":"Service Unavailable"}"#),
            _ => garbage(),
        }
    })
    .await;
    let rt = rt().await;
    let id = "verifier-bouncer";
    common_verifier_checks(&rt, id, "bouncer", &base, 0.005).await;
    let r = rt.verify_email(id, GOOD, Some(&base), "jane@acme.com").await.unwrap();
    assert_eq!((r.confidence, r.is_catch_all, r.raw_status.as_str()), (Some(0.97), Some(false), "deliverable"));
    let r = rt.verify_email(id, GOOD, Some(&base), "temp@acme.com").await.unwrap();
    assert_eq!((r.status.as_str(), r.is_disposable, r.is_catch_all), ("risky", true, None));
    assert_eq!(retry_after_secs(&verify_err(&rt, id, &base, GOOD, "busy@acme.com").await), Some(5));
    assert_eq!(verify_err(&rt, id, &base, GOOD, "broke@acme.com").await.label(), "rate_limited");
    assert_eq!(verify_err(&rt, id, &base, BAD, "jane@acme.com").await.label(), "auth");
    assert_eq!(rt.validate_key(id, GOOD, Some(&base)).await.unwrap().credits_remaining, Some(1500));
    assert_eq!(rt.validate_key(id, BAD, Some(&base)).await.unwrap_err().label(), "auth");
}

#[tokio::test]
async fn neverbounce_reads_status_before_result() {
    let (base, _) = stub(|_, path, _, _| {
        if param(path, "key") != GOOD {
            return json(200, r#"{"status":"auth_failure","message":"Invalid API key 'bad-key-456'","execution_time":12}"#);
        }
        if path.starts_with("/v4/account/info") {
            return json(200, r#"{"status":"success","billing_type":"default","credits_info":{"paid_credits_used":10,"free_credits_used":0,"paid_credits_remaining":900,"free_credits_remaining":100},"job_counts":{"completed":0,"under_review":0,"queued":0,"processing":0},"execution_time":20}"#);
        }
        assert!(path.starts_with("/v4/single/check?"), "{path}");
        match who(path).as_str() {
            "jane" => json(200, r#"{"status":"success","result":"valid","flags":["has_dns","has_dns_mx","smtp_connectable"],"suggested_correction":"","execution_time":285}"#),
            "nobody" => json(200, r#"{"status":"success","result":"invalid","flags":["has_dns"],"suggested_correction":"","execution_time":120}"#),
            "info" => json(200, r#"{"status":"success","result":"catchall","flags":["has_dns","role_account"],"execution_time":90}"#),
            "busy" => json(200, r#"{"status":"throttle_triggered","message":"Too many requests in a short amount of time","execution_time":1}"#),
            "temp" => json(200, r#"{"status":"temp_unavail","message":"Service temporarily unavailable","execution_time":1}"#),
            "boom" => json(503, "{}"),
            _ => garbage(),
        }
    })
    .await;
    let rt = rt().await;
    let id = "verifier-neverbounce";
    common_verifier_checks(&rt, id, "neverbounce", &base, 0.008).await;
    let r = rt.verify_email(id, GOOD, Some(&base), "info@acme.com").await.unwrap();
    assert_eq!((r.status.as_str(), r.is_role, r.is_catch_all, r.raw_status.as_str()), ("risky", true, Some(true), "catchall"));
    assert_eq!(verify_err(&rt, id, &base, GOOD, "busy@acme.com").await.label(), "rate_limited");
    assert_eq!(verify_err(&rt, id, &base, GOOD, "temp@acme.com").await.label(), "transient");
    assert_eq!(verify_err(&rt, id, &base, BAD, "jane@acme.com").await.label(), "auth");
    assert_eq!(rt.validate_key(id, GOOD, Some(&base)).await.unwrap().credits_remaining, Some(1000));
    assert_eq!(rt.validate_key(id, BAD, Some(&base)).await.unwrap_err().label(), "auth");
}

#[tokio::test]
async fn zerobounce_maps_status_sub_status_and_error_bodies() {
    let (base, _) = stub(|_, path, _, _| {
        let key_ok = param(path, "api_key") == GOOD;
        if path.starts_with("/v2/getcredits") {
            return json(200, if key_ok { r#"{"Credits":"2375323"}"# } else { r#"{"Credits":"-1"}"# });
        }
        if !key_ok {
            return json(200, r#"{"error":"Invalid API key or your account ran out of credits"}"#);
        }
        assert!(path.starts_with("/v2/validate?"), "{path}");
        match who(path).as_str() {
            "jane" => json(200, r#"{"address":"jane@acme.com","status":"valid","sub_status":"","free_email":false,"did_you_mean":null,"account":"jane","domain":"acme.com","domain_age_days":"8426","smtp_provider":"google","mx_found":"true","mx_record":"mx.acme.com","processed_at":"2024-04-01 02:48:02.592"}"#),
            "nobody" => json(200, r#"{"address":"nobody@acme.com","status":"invalid","sub_status":"mailbox_not_found","free_email":false}"#),
            "info" => json(200, r#"{"address":"info@acme.com","status":"do_not_mail","sub_status":"role_based","free_email":false}"#),
            "busy" => with_header(json(429, r#"{"error":"Too many requests"}"#), "retry-after", "60"),
            "boom" => json(500, "{}"),
            _ => garbage(),
        }
    })
    .await;
    let rt = rt().await;
    let id = "verifier-zerobounce";
    common_verifier_checks(&rt, id, "zerobounce", &base, 0.008).await;
    let r = rt.verify_email(id, GOOD, Some(&base), "info@acme.com").await.unwrap();
    assert_eq!((r.status.as_str(), r.is_role, r.raw_status.as_str()), ("risky", true, "do_not_mail"));
    assert_eq!(retry_after_secs(&verify_err(&rt, id, &base, GOOD, "busy@acme.com").await), Some(60));
    // ZeroBounce words a rejected key and an empty balance identically; for a
    // key that passed validation it is the balance, so fallback moves on.
    assert_eq!(verify_err(&rt, id, &base, BAD, "jane@acme.com").await.label(), "rate_limited");
    assert_eq!(rt.validate_key(id, GOOD, Some(&base)).await.unwrap().credits_remaining, Some(2375323));
    assert_eq!(rt.validate_key(id, BAD, Some(&base)).await.unwrap_err().label(), "auth");
}

#[tokio::test]
async fn kickbox_maps_results_and_reads_the_balance() {
    let (base, _) = stub(|_, path, _, _| {
        if param(path, "apikey") != GOOD {
            return json(403, r#"{"success":false,"message":"Invalid API key"}"#);
        }
        if path.starts_with("/v2/balance") {
            return with_header(json(200, r#"{"balance":870,"success":true,"message":null}"#), "x-kickbox-balance", "870");
        }
        assert!(path.starts_with("/v2/verify?"), "{path}");
        let ok = |body: &str| with_header(json(200, body), "x-kickbox-balance", "869");
        match who(path).as_str() {
            "jane" => ok(r#"{"result":"deliverable","reason":"accepted_email","role":false,"free":false,"disposable":false,"accept_all":false,"did_you_mean":null,"sendex":0.91,"email":"jane@acme.com","user":"jane","domain":"acme.com","success":true,"message":null}"#),
            "nobody" => ok(r#"{"result":"undeliverable","reason":"rejected_email","role":false,"disposable":false,"accept_all":false,"sendex":0,"success":true,"message":null}"#),
            "sales" => ok(r#"{"result":"risky","reason":"low_quality","role":true,"disposable":false,"accept_all":true,"sendex":0.4,"success":true,"message":null}"#),
            "busy" => with_header(json(429, r#"{"success":false,"message":"Too many requests"}"#), "retry-after", "2"),
            "broke" => json(403, r#"{"success":false,"message":"Insufficient balance"}"#),
            "boom" => json(500, r#"{"success":false,"message":"Internal error"}"#),
            _ => garbage(),
        }
    })
    .await;
    let rt = rt().await;
    let id = "verifier-kickbox";
    common_verifier_checks(&rt, id, "kickbox", &base, 0.0098).await;
    let r = rt.verify_email(id, GOOD, Some(&base), "jane@acme.com").await.unwrap();
    assert_eq!((r.confidence, r.is_catch_all), (Some(0.91), Some(false)));
    let r = rt.verify_email(id, GOOD, Some(&base), "sales@acme.com").await.unwrap();
    assert_eq!((r.status.as_str(), r.is_role, r.is_catch_all), ("risky", true, Some(true)));
    assert_eq!(retry_after_secs(&verify_err(&rt, id, &base, GOOD, "busy@acme.com").await), Some(2));
    assert_eq!(verify_err(&rt, id, &base, GOOD, "broke@acme.com").await.label(), "rate_limited");
    assert_eq!(verify_err(&rt, id, &base, BAD, "jane@acme.com").await.label(), "auth");
    assert_eq!(rt.validate_key(id, GOOD, Some(&base)).await.unwrap().credits_remaining, Some(870));
    assert_eq!(rt.validate_key(id, BAD, Some(&base)).await.unwrap_err().label(), "auth");
}

/// Checks shared by every enricher stub: `nobody.com` is unknown to the
/// vendor, `boom.com` fails upstream, `junk.com` answers 200 garbage, and a
/// malformed domain is refused.
async fn common_enricher_checks(rt: &PluginRuntime, id: &str, base: &str) {
    match enrich_err(rt, id, base, GOOD, "nobody.com").await {
        CallError::Permanent(m) => assert!(m.starts_with("not found"), "{id}: {m}"),
        other => panic!("{id}: expected not found, got {other}"),
    }
    assert_eq!(enrich_err(rt, id, base, GOOD, "boom.com").await.label(), "transient", "{id}");
    let junk = enrich_err(rt, id, base, GOOD, "junk.com").await;
    assert!(matches!(&junk, CallError::Permanent(m) if !m.starts_with("not found")), "{id}: {junk}");
    assert_eq!(enrich_err(rt, id, base, GOOD, "not a domain").await.label(), "invalid_input", "{id}");
    assert_eq!(enrich_err(rt, id, base, BAD, "acme.com").await.label(), "auth", "{id}");
}

#[tokio::test]
async fn hunter_maps_company_find() {
    let (base, _) = stub(|_, path, _, head| {
        if !head.contains(&format!("x-api-key: {GOOD}")) {
            return json(401, r#"{"errors":[{"id":"authentication_failed","code":401,"details":"No user found for the API key supplied"}]}"#);
        }
        if path == "/v2/account" {
            return json(200, r#"{"data":{"first_name":"Jane","plan_name":"Starter","reset_date":"2024-05-01","requests":{"searches":{"used":10,"available":500},"verifications":{"used":3,"available":500},"credits":{"used":120,"available":2000}}}}"#);
        }
        match param(path, "domain").as_str() {
            "acme.com" => json(200, r#"{"data":{"id":"c1","name":"Acme","legalName":"Acme, Inc.","domain":"acme.com","description":"Anvils.","foundedYear":2009,"category":{"sector":"Industrials","industry":"Machinery","subIndustry":"Anvils"},"geo":{"city":"Austin","state":"Texas","country":"United States","countryCode":"US"},"linkedin":{"handle":"company/acme"},"twitter":{"handle":"acmehq","followers":10},"metrics":{"employees":"1K-5K","raised":15000000,"annualRevenue":null,"estimatedAnnualRevenue":"$10M-$50M"},"tech":["react","stripe"]},"meta":{"domain":"acme.com"}}"#),
            "nobody.com" => json(404, r#"{"errors":[{"id":"not_found","code":404,"details":"No company found for this domain"}]}"#),
            "busy.com" => json(429, r#"{"errors":[{"id":"too_many_requests","code":429,"details":"You have reached your usage limit"}]}"#),
            "fast.com" => json(403, r#"{"errors":[{"id":"too_many_requests","code":403,"details":"You have reached the rate limit"}]}"#),
            "boom.com" => json(502, "bad gateway"),
            _ => garbage(),
        }
    })
    .await;
    let rt = rt().await;
    let id = "enricher-hunter";
    let e = rt.enrich_domain(id, GOOD, Some(&base), "acme.com").await.unwrap();
    assert_eq!((e.provider.as_str(), e.name.as_deref(), e.legal_name.as_deref()), ("hunter", Some("Acme"), Some("Acme, Inc.")));
    assert_eq!((e.founded_year, e.employee_count, e.employee_range.as_deref()), (Some(2009), None, Some("1000-5000")));
    assert_eq!((e.total_funding_usd, e.annual_revenue_usd), (Some(15_000_000.0), None));
    assert_eq!((e.industry.as_deref(), e.subindustry.as_deref()), (Some("Machinery"), Some("Anvils")));
    assert_eq!((e.hq_country.as_deref(), e.hq_city.as_deref()), (Some("United States"), Some("Austin")));
    assert_eq!(e.linkedin_url.as_deref(), Some("https://linkedin.com/company/acme"));
    assert_eq!((e.twitter_handle.as_deref(), e.technologies.len()), (Some("acmehq"), 2));
    assert_eq!((e.raw["data"]["id"].as_str(), e.cost_estimate_usd), (Some("c1"), 0.005));
    common_enricher_checks(&rt, id, &base).await;
    assert_eq!(enrich_err(&rt, id, &base, GOOD, "busy.com").await.label(), "rate_limited");
    assert_eq!(enrich_err(&rt, id, &base, GOOD, "fast.com").await.label(), "rate_limited");
    assert_eq!(rt.validate_key(id, GOOD, Some(&base)).await.unwrap().credits_remaining, Some(1880));
    assert_eq!(rt.validate_key(id, BAD, Some(&base)).await.unwrap_err().label(), "auth");
}

#[tokio::test]
async fn peopledatalabs_maps_company_enrich_and_validates_for_free() {
    let (base, _) = stub(|_, path, _, head| {
        if !head.contains(&format!("x-api-key: {GOOD}")) {
            return json(401, r#"{"status":401,"error":{"type":"authentication_error","message":"Invalid API key"}}"#);
        }
        let not_found = r#"{"status":404,"error":{"type":"not_found","message":"No records were found matching your request"}}"#;
        let answer = match param(path, "website").as_str() {
            "acme.com" => json(200, r#"{"status":200,"id":"pdl1","name":"acme","display_name":"Acme","size":"1001-5000","employee_count":1234,"founded":2009,"industry":"machinery","location":{"name":"austin, texas, united states","locality":"austin","region":"texas","country":"united states"},"linkedin_url":"linkedin.com/company/acme","twitter_url":"twitter.com/acmehq","website":"acme.com","summary":"Anvils.","total_funding_raised":15000000,"latest_funding_stage":"series_b","inferred_revenue":"$10M-$25M","likelihood":6}"#),
            "nobody.com" | "outreach-key-check.invalid" => json(404, not_found),
            "busy.com" => with_header(json(429, r#"{"status":429,"error":{"type":"rate_limit_error","message":"Rate limit exceeded"}}"#), "retry-after", "10"),
            "broke.com" => json(402, r#"{"status":402,"error":{"type":"payment_required","message":"You have hit your account maximum"}}"#),
            "boom.com" => json(500, r#"{"status":500,"error":{"type":"server_error"}}"#),
            _ => garbage(),
        };
        with_header(answer, "x-totallimit-remaining", "99")
    })
    .await;
    let rt = rt().await;
    let id = "enricher-peopledatalabs";
    let e = rt.enrich_domain(id, GOOD, Some(&base), "acme.com").await.unwrap();
    assert_eq!((e.name.as_deref(), e.legal_name.as_deref(), e.description.as_deref()), (Some("Acme"), None, Some("Anvils.")));
    assert_eq!((e.employee_count, e.employee_range.as_deref(), e.founded_year), (Some(1234), Some("1001-5000"), Some(2009)));
    assert_eq!((e.total_funding_usd, e.latest_funding_stage.as_deref()), (Some(15_000_000.0), Some("series_b")));
    assert_eq!((e.hq_city.as_deref(), e.hq_country.as_deref()), (Some("austin"), Some("united states")));
    assert_eq!((e.linkedin_url.as_deref(), e.twitter_handle.as_deref()), (Some("https://linkedin.com/company/acme"), Some("acmehq")));
    assert_eq!((e.annual_revenue_usd, e.raw["likelihood"].as_i64(), e.cost_estimate_usd), (None, Some(6), 0.01));
    common_enricher_checks(&rt, id, &base).await;
    assert_eq!(retry_after_secs(&enrich_err(&rt, id, &base, GOOD, "busy.com").await), Some(10));
    assert_eq!(enrich_err(&rt, id, &base, GOOD, "broke.com").await.label(), "rate_limited");
    assert_eq!(rt.validate_key(id, GOOD, Some(&base)).await.unwrap().credits_remaining, Some(99));
    assert_eq!(rt.validate_key(id, BAD, Some(&base)).await.unwrap_err().label(), "auth");
}

#[tokio::test]
async fn apollo_maps_organizations_enrich() {
    let (base, _) = stub(|_, path, _, head| {
        let key_ok = head.contains(&format!("x-api-key: {GOOD}"));
        if path == "/api/v1/auth/health" {
            return json(200, if key_ok { r#"{"healthy":true,"is_logged_in":true}"# } else { r#"{"healthy":true,"is_logged_in":false}"# });
        }
        if !key_ok {
            return json(401, r#"{"error":"Invalid access credentials."}"#);
        }
        match param(path, "domain").as_str() {
            "acme.com" => json(200, r#"{"organization":{"id":"o1","name":"Acme","website_url":"http://www.acme.com","linkedin_url":"http://www.linkedin.com/company/acme","twitter_url":"https://twitter.com/acmehq/","founded_year":2009,"primary_domain":"acme.com","industry":"machinery","secondary_industries":["industrial automation"],"estimated_num_employees":140,"city":"Austin","country":"United States","short_description":"Anvils.","annual_revenue":25000000.0,"total_funding":15000000,"latest_funding_stage":"Series B","technology_names":["React","Stripe","Zendesk"]}}"#),
            "nobody.com" => json(200, "{}"),
            "gone.com" => json(404, r#"{"error":"Not found"}"#),
            "busy.com" => with_header(json(429, r#"{"message":"The maximum number of api calls allowed for api/v1/organizations/enrich is 600 times per hour."}"#), "retry-after", "3600"),
            "boom.com" => json(503, "{}"),
            _ => garbage(),
        }
    })
    .await;
    let rt = rt().await;
    let id = "enricher-apollo";
    let e = rt.enrich_domain(id, GOOD, Some(&base), "acme.com").await.unwrap();
    assert_eq!((e.name.as_deref(), e.employee_count, e.employee_range.as_deref()), (Some("Acme"), Some(140), Some("51-200")));
    assert_eq!((e.annual_revenue_usd, e.total_funding_usd), (Some(25_000_000.0), Some(15_000_000.0)));
    assert_eq!((e.latest_funding_stage.as_deref(), e.subindustry.as_deref()), (Some("Series B"), Some("industrial automation")));
    assert_eq!((e.twitter_handle.as_deref(), e.linkedin_url.as_deref()), (Some("acmehq"), Some("http://www.linkedin.com/company/acme")));
    assert_eq!((e.technologies.len(), e.raw["organization"]["id"].as_str(), e.cost_estimate_usd), (3, Some("o1"), 0.05));
    common_enricher_checks(&rt, id, &base).await;
    match enrich_err(&rt, id, &base, GOOD, "gone.com").await {
        CallError::Permanent(m) => assert!(m.starts_with("not found"), "{m}"),
        other => panic!("{other}"),
    }
    assert_eq!(retry_after_secs(&enrich_err(&rt, id, &base, GOOD, "busy.com").await), Some(3600));
    let k = rt.validate_key(id, GOOD, Some(&base)).await.unwrap();
    assert_eq!(k.credits_remaining, None);
    assert_eq!(rt.validate_key(id, BAD, Some(&base)).await.unwrap_err().label(), "auth");
}
