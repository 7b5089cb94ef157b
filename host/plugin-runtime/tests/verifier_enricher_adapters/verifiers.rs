//! Email-verifier adapters against stubs in each vendor's documented shapes.

use super::*;

/// Checks the answers every verifier stub gives for `jane` (deliverable),
/// `nobody` (undeliverable), `boom` (server error) and `junk` (200 garbage),
/// plus a malformed address that must be refused before any request.
async fn common_verifier_checks(rt: &PluginRuntime, id: &str, vendor: &str, base: &str, rate: f64) {
    let r = rt
        .verify_email(id, GOOD, Some(base), "jane@acme.com")
        .await
        .unwrap();
    assert_eq!(
        (r.status.as_str(), r.deliverability.as_str()),
        ("valid", "deliverable"),
        "{id}"
    );
    assert_eq!(
        (r.provider.as_str(), r.email.as_str(), r.cost_estimate_usd),
        (vendor, "jane@acme.com", rate)
    );
    let r = rt
        .verify_email(id, GOOD, Some(base), "nobody@acme.com")
        .await
        .unwrap();
    assert_eq!(
        (r.status.as_str(), r.deliverability.as_str()),
        ("invalid", "undeliverable"),
        "{id}"
    );
    assert_eq!(
        verify_err(rt, id, base, GOOD, "boom@acme.com")
            .await
            .label(),
        "transient",
        "{id}"
    );
    assert_eq!(
        verify_err(rt, id, base, GOOD, "junk@acme.com")
            .await
            .label(),
        "permanent",
        "{id}"
    );
    assert_eq!(
        verify_err(rt, id, base, GOOD, "not an email").await.label(),
        "invalid_input",
        "{id}"
    );
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
    let r = rt
        .verify_email(id, GOOD, Some(&base), "info@acme.com")
        .await
        .unwrap();
    assert_eq!(
        (
            r.status.as_str(),
            r.is_catch_all,
            r.is_role,
            r.raw_status.as_str()
        ),
        ("risky", Some(true), true, "catch_all")
    );
    assert_eq!(
        verify_err(&rt, id, &base, GOOD, "busy@acme.com")
            .await
            .label(),
        "rate_limited"
    );
    assert_eq!(
        verify_err(&rt, id, &base, BAD, "jane@acme.com")
            .await
            .label(),
        "auth"
    );
    assert_eq!(
        rt.validate_key(id, GOOD, Some(&base))
            .await
            .unwrap()
            .credits_remaining,
        Some(4242)
    );
    assert_eq!(
        rt.validate_key(id, BAD, Some(&base))
            .await
            .unwrap_err()
            .label(),
        "auth"
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        9,
        "the malformed address must not reach the vendor"
    );
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
    let r = rt
        .verify_email(id, GOOD, Some(&base), "jane@acme.com")
        .await
        .unwrap();
    assert_eq!(
        (r.confidence, r.is_catch_all, r.raw_status.as_str()),
        (Some(0.97), Some(false), "deliverable")
    );
    let r = rt
        .verify_email(id, GOOD, Some(&base), "temp@acme.com")
        .await
        .unwrap();
    assert_eq!(
        (r.status.as_str(), r.is_disposable, r.is_catch_all),
        ("risky", true, None)
    );
    assert_eq!(
        retry_after_secs(&verify_err(&rt, id, &base, GOOD, "busy@acme.com").await),
        Some(5)
    );
    assert_eq!(
        verify_err(&rt, id, &base, GOOD, "broke@acme.com")
            .await
            .label(),
        "rate_limited"
    );
    assert_eq!(
        verify_err(&rt, id, &base, BAD, "jane@acme.com")
            .await
            .label(),
        "auth"
    );
    assert_eq!(
        rt.validate_key(id, GOOD, Some(&base))
            .await
            .unwrap()
            .credits_remaining,
        Some(1500)
    );
    assert_eq!(
        rt.validate_key(id, BAD, Some(&base))
            .await
            .unwrap_err()
            .label(),
        "auth"
    );
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
    let r = rt
        .verify_email(id, GOOD, Some(&base), "info@acme.com")
        .await
        .unwrap();
    assert_eq!(
        (
            r.status.as_str(),
            r.is_role,
            r.is_catch_all,
            r.raw_status.as_str()
        ),
        ("risky", true, Some(true), "catchall")
    );
    assert_eq!(
        verify_err(&rt, id, &base, GOOD, "busy@acme.com")
            .await
            .label(),
        "rate_limited"
    );
    assert_eq!(
        verify_err(&rt, id, &base, GOOD, "temp@acme.com")
            .await
            .label(),
        "transient"
    );
    assert_eq!(
        verify_err(&rt, id, &base, BAD, "jane@acme.com")
            .await
            .label(),
        "auth"
    );
    assert_eq!(
        rt.validate_key(id, GOOD, Some(&base))
            .await
            .unwrap()
            .credits_remaining,
        Some(1000)
    );
    assert_eq!(
        rt.validate_key(id, BAD, Some(&base))
            .await
            .unwrap_err()
            .label(),
        "auth"
    );
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
    let r = rt
        .verify_email(id, GOOD, Some(&base), "info@acme.com")
        .await
        .unwrap();
    assert_eq!(
        (r.status.as_str(), r.is_role, r.raw_status.as_str()),
        ("risky", true, "do_not_mail")
    );
    assert_eq!(
        retry_after_secs(&verify_err(&rt, id, &base, GOOD, "busy@acme.com").await),
        Some(60)
    );
    // ZeroBounce words a rejected key and an empty balance identically; for a
    // key that passed validation it is the balance, so fallback moves on.
    assert_eq!(
        verify_err(&rt, id, &base, BAD, "jane@acme.com")
            .await
            .label(),
        "rate_limited"
    );
    assert_eq!(
        rt.validate_key(id, GOOD, Some(&base))
            .await
            .unwrap()
            .credits_remaining,
        Some(2375323)
    );
    assert_eq!(
        rt.validate_key(id, BAD, Some(&base))
            .await
            .unwrap_err()
            .label(),
        "auth"
    );
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
    let r = rt
        .verify_email(id, GOOD, Some(&base), "jane@acme.com")
        .await
        .unwrap();
    assert_eq!((r.confidence, r.is_catch_all), (Some(0.91), Some(false)));
    let r = rt
        .verify_email(id, GOOD, Some(&base), "sales@acme.com")
        .await
        .unwrap();
    assert_eq!(
        (r.status.as_str(), r.is_role, r.is_catch_all),
        ("risky", true, Some(true))
    );
    assert_eq!(
        retry_after_secs(&verify_err(&rt, id, &base, GOOD, "busy@acme.com").await),
        Some(2)
    );
    assert_eq!(
        verify_err(&rt, id, &base, GOOD, "broke@acme.com")
            .await
            .label(),
        "rate_limited"
    );
    assert_eq!(
        verify_err(&rt, id, &base, BAD, "jane@acme.com")
            .await
            .label(),
        "auth"
    );
    assert_eq!(
        rt.validate_key(id, GOOD, Some(&base))
            .await
            .unwrap()
            .credits_remaining,
        Some(870)
    );
    assert_eq!(
        rt.validate_key(id, BAD, Some(&base))
            .await
            .unwrap_err()
            .label(),
        "auth"
    );
}
