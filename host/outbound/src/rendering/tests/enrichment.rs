//! Enrichment tokens from the account's cache rows, inserted here.

use serde_json::json;

use super::{DAY_MS, contact, render};
use outreach_core::accounts::plans::Plan;
use outreach_core::platform::clock::Clock;
use outreach_core::testing::TestApp;
use outreach_core::testing::stub::{Canned, Stub};
use outreach_plugin_runtime::EnrichmentResult;
use outreach_vendors::vendor_keys::catalogue::Family;
use outreach_vendors::vendor_keys::store::{CachePut, cache_put};

fn enrichment(name: &str, technologies: usize) -> String {
    let e = EnrichmentResult {
        domain: "acme.com".into(),
        provider: "example-enricher".into(),
        name: Some(name.into()),
        legal_name: Some("Acme Inc.".into()),
        description: Some("Anvils & rockets".into()),
        founded_year: Some(2011),
        employee_count: Some(120),
        employee_range: None,
        annual_revenue_usd: Some(12_000_000.0),
        total_funding_usd: Some(2.5e6),
        latest_funding_stage: Some("series_a".into()),
        industry: Some("Manufacturing".into()),
        subindustry: None,
        hq_country: Some("US".into()),
        hq_city: None,
        linkedin_url: Some("https://linkedin.com/company/acme".into()),
        twitter_handle: Some("@acme".into()),
        technologies: (1..=technologies).map(|i| format!("T{i}")).collect(),
        latency_ms: 80,
        cost_estimate_usd: 0.005,
        raw: json!({}),
        cache_hit: false,
    };
    serde_json::to_string(&e).unwrap()
}

async fn cache(
    app: &TestApp,
    account_id: i64,
    user_key: &str,
    domain: &str,
    result: String,
    age_ms: i64,
    ttl_ms: i64,
) {
    let put = CachePut {
        account_id,
        user_key,
        family: Family::Enricher,
        subject: domain,
        provider: "example-enricher",
        result,
        now: app.clock.now_ms() - age_ms,
        ttl_ms,
    };
    cache_put(&app.state.db, put).await.unwrap();
}

#[tokio::test]
async fn enrichment_tokens_come_from_the_accounts_cache_only() {
    let stub = Stub::start().await;
    let ee = stub.url("/ee");
    let app = TestApp::with_areas(&[outreach_vendors::AREA, crate::AREA], move |c| {
        c.vendor_base_urls.insert("example-enricher".into(), ee);
    })
    .await;
    let acct = app.account(Plan::Pro).await;
    let other = app.account(Plan::Pro).await;
    // An enricher key on a vendor that would answer, to show none is asked.
    stub.set(
        "/ee/v1/account",
        Canned::json(200, json!({"credits_remaining": 5})),
    );
    stub.set(
        "/ee/v1/companies",
        Canned::json(200, json!({"name": "From the vendor"})),
    );
    let k = app
        .post(
            "/v1/contact-enrichers/providers",
            &acct.api_key,
            json!({"provider": "example-enricher", "api_key": "enricher-key-1"}),
        )
        .await;
    assert_eq!(k.status, 201, "{:?}", k.body);

    let month = 30 * DAY_MS;
    // Cached by other users of the account; the freshest wins.
    cache(
        &app,
        acct.account_id,
        "u-colleague",
        "acme.com",
        enrichment("Old Acme", 3),
        2 * DAY_MS,
        month,
    )
    .await;
    cache(
        &app,
        acct.account_id,
        "k-ops",
        "acme.com",
        enrichment("Acme", 25),
        DAY_MS,
        month,
    )
    .await;
    // Fresher, but another tenant's; and an expired row.
    cache(
        &app,
        other.account_id,
        "u1",
        "acme.com",
        enrichment("Not yours", 1),
        0,
        month,
    )
    .await;
    cache(
        &app,
        acct.account_id,
        "u-colleague",
        "gone.com",
        enrichment("Gone", 1),
        DAY_MS,
        1_000,
    )
    .await;

    let tokens = "{{name}}|{{legal_name}}|{{description}}|{{founded_year}}|{{employee_count}}|\
                  {{employee_range}}|{{annual_revenue_usd}}|{{total_funding_usd}}|{{latest_funding_stage}}|\
                  {{industry}}|{{hq_country}}|{{hq_city}}|{{linkedin_url}}|{{twitter_handle}}|\
                  {{company_size_estimate}}|{{company}}|{{provider}}";
    let c = contact("www.Acme.com", json!({}));
    let r = render(
        &app,
        &acct,
        "{{company}} ({{company_size_estimate}})",
        tokens,
        &c,
    )
    .await;
    assert_eq!(r.subject, "Acme (120)");
    assert_eq!(
        r.body_html,
        "Acme|Acme Inc.|Anvils &amp; rockets|2011|120|{{employee_range}}|12000000|2500000|series_a|\
         Manufacturing|US|{{hq_city}}|https://linkedin.com/company/acme|@acme|120|Acme|{{provider}}"
    );
    assert_eq!(r.missing_tokens, ["employee_range", "hq_city", "provider"]);

    let r = render(
        &app,
        &acct,
        "",
        "{{technologies}}\n{{technologies_list}}",
        &c,
    )
    .await;
    let (joined, list) = r.body_html.split_once('\n').unwrap();
    assert_eq!(joined.split(", ").count(), 20, "top 20: {joined}");
    assert!(
        joined.starts_with("T1, T2") && joined.ends_with("T20"),
        "{joined}"
    );
    let list: Vec<String> = serde_json::from_str(&list.replace("&quot;", "\"")).unwrap();
    assert_eq!(list.len(), 25);

    // Expired, never cached, or cached by another tenant only: literal.
    for domain in ["gone.com", "unknown.io"] {
        let r = render(
            &app,
            &acct,
            "{{name|there}}",
            "{{industry}}",
            &contact(domain, json!({})),
        )
        .await;
        assert_eq!(
            (r.subject.as_str(), r.body_html.as_str()),
            ("there", "{{industry}}"),
            "{domain}"
        );
    }
    let r = render(&app, &other, "{{name}}", "", &c).await;
    assert_eq!(r.subject, "Not yours", "each account reads its own rows");

    assert_eq!(
        stub.hits("/ee/v1/companies"),
        0,
        "rendering never calls the enricher"
    );
    let ledger: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM vendor_calls WHERE account_id = $1")
        .bind(acct.account_id)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(ledger, 0, "cache reads at render time are no vendor calls");
}
