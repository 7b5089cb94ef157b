//! Contact-enricher adapters against stubs in each vendor's documented shapes.

use super::*;

/// Checks shared by every enricher stub: `nobody.com` is unknown to the
/// vendor, `boom.com` fails upstream, `junk.com` answers 200 garbage, and a
/// malformed domain is refused.
async fn common_enricher_checks(rt: &PluginRuntime, id: &str, base: &str) {
    match enrich_err(rt, id, base, GOOD, "nobody.com").await {
        CallError::Permanent(m) => assert!(m.starts_with("not found"), "{id}: {m}"),
        other => panic!("{id}: expected not found, got {other}"),
    }
    assert_eq!(
        enrich_err(rt, id, base, GOOD, "boom.com").await.label(),
        "transient",
        "{id}"
    );
    let junk = enrich_err(rt, id, base, GOOD, "junk.com").await;
    assert!(
        matches!(&junk, CallError::Permanent(m) if !m.starts_with("not found")),
        "{id}: {junk}"
    );
    assert_eq!(
        enrich_err(rt, id, base, GOOD, "not a domain").await.label(),
        "invalid_input",
        "{id}"
    );
    assert_eq!(
        enrich_err(rt, id, base, BAD, "acme.com").await.label(),
        "auth",
        "{id}"
    );
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
    let e = rt
        .enrich_domain(id, GOOD, Some(&base), "acme.com")
        .await
        .unwrap();
    assert_eq!(
        (
            e.provider.as_str(),
            e.name.as_deref(),
            e.legal_name.as_deref()
        ),
        ("hunter", Some("Acme"), Some("Acme, Inc."))
    );
    assert_eq!(
        (
            e.founded_year,
            e.employee_count,
            e.employee_range.as_deref()
        ),
        (Some(2009), None, Some("1000-5000"))
    );
    assert_eq!(
        (e.total_funding_usd, e.annual_revenue_usd),
        (Some(15_000_000.0), None)
    );
    assert_eq!(
        (e.industry.as_deref(), e.subindustry.as_deref()),
        (Some("Machinery"), Some("Anvils"))
    );
    assert_eq!(
        (e.hq_country.as_deref(), e.hq_city.as_deref()),
        (Some("United States"), Some("Austin"))
    );
    assert_eq!(
        e.linkedin_url.as_deref(),
        Some("https://linkedin.com/company/acme")
    );
    assert_eq!(
        (e.twitter_handle.as_deref(), e.technologies.len()),
        (Some("acmehq"), 2)
    );
    assert_eq!(
        (e.raw["data"]["id"].as_str(), e.cost_estimate_usd),
        (Some("c1"), 0.005)
    );
    common_enricher_checks(&rt, id, &base).await;
    assert_eq!(
        enrich_err(&rt, id, &base, GOOD, "busy.com").await.label(),
        "rate_limited"
    );
    assert_eq!(
        enrich_err(&rt, id, &base, GOOD, "fast.com").await.label(),
        "rate_limited"
    );
    assert_eq!(
        rt.validate_key(id, GOOD, Some(&base))
            .await
            .unwrap()
            .credits_remaining,
        Some(1880)
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
    let e = rt
        .enrich_domain(id, GOOD, Some(&base), "acme.com")
        .await
        .unwrap();
    assert_eq!(
        (
            e.name.as_deref(),
            e.legal_name.as_deref(),
            e.description.as_deref()
        ),
        (Some("Acme"), None, Some("Anvils."))
    );
    assert_eq!(
        (
            e.employee_count,
            e.employee_range.as_deref(),
            e.founded_year
        ),
        (Some(1234), Some("1001-5000"), Some(2009))
    );
    assert_eq!(
        (e.total_funding_usd, e.latest_funding_stage.as_deref()),
        (Some(15_000_000.0), Some("series_b"))
    );
    assert_eq!(
        (e.hq_city.as_deref(), e.hq_country.as_deref()),
        (Some("austin"), Some("united states"))
    );
    assert_eq!(
        (e.linkedin_url.as_deref(), e.twitter_handle.as_deref()),
        (Some("https://linkedin.com/company/acme"), Some("acmehq"))
    );
    assert_eq!(
        (
            e.annual_revenue_usd,
            e.raw["likelihood"].as_i64(),
            e.cost_estimate_usd
        ),
        (None, Some(6), 0.01)
    );
    common_enricher_checks(&rt, id, &base).await;
    assert_eq!(
        retry_after_secs(&enrich_err(&rt, id, &base, GOOD, "busy.com").await),
        Some(10)
    );
    assert_eq!(
        enrich_err(&rt, id, &base, GOOD, "broke.com").await.label(),
        "rate_limited"
    );
    assert_eq!(
        rt.validate_key(id, GOOD, Some(&base))
            .await
            .unwrap()
            .credits_remaining,
        Some(99)
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
    let e = rt
        .enrich_domain(id, GOOD, Some(&base), "acme.com")
        .await
        .unwrap();
    assert_eq!(
        (
            e.name.as_deref(),
            e.employee_count,
            e.employee_range.as_deref()
        ),
        (Some("Acme"), Some(140), Some("51-200"))
    );
    assert_eq!(
        (e.annual_revenue_usd, e.total_funding_usd),
        (Some(25_000_000.0), Some(15_000_000.0))
    );
    assert_eq!(
        (e.latest_funding_stage.as_deref(), e.subindustry.as_deref()),
        (Some("Series B"), Some("industrial automation"))
    );
    assert_eq!(
        (e.twitter_handle.as_deref(), e.linkedin_url.as_deref()),
        (Some("acmehq"), Some("http://www.linkedin.com/company/acme"))
    );
    assert_eq!(
        (
            e.technologies.len(),
            e.raw["organization"]["id"].as_str(),
            e.cost_estimate_usd
        ),
        (3, Some("o1"), 0.05)
    );
    common_enricher_checks(&rt, id, &base).await;
    match enrich_err(&rt, id, &base, GOOD, "gone.com").await {
        CallError::Permanent(m) => assert!(m.starts_with("not found"), "{m}"),
        other => panic!("{other}"),
    }
    assert_eq!(
        retry_after_secs(&enrich_err(&rt, id, &base, GOOD, "busy.com").await),
        Some(3600)
    );
    let k = rt.validate_key(id, GOOD, Some(&base)).await.unwrap();
    assert_eq!(k.credits_remaining, None);
    assert_eq!(
        rt.validate_key(id, BAD, Some(&base))
            .await
            .unwrap_err()
            .label(),
        "auth"
    );
}
