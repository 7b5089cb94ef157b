//! The domain pool through the router, on the backend the suite runs
//! (`OUTREACH_TEST_BACKEND`): lookups that queue, bulk, search filters,
//! the DNS stage against a local DNS server, change records and the
//! `domain.enriched` event.

use std::net::Ipv4Addr;

use serde_json::json;

use super::pipeline::{self, save};
use super::record::Technology;
use crate::testkit::{findings, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::events;
use outreach_core::testing::TestApp;
use outreach_core::testing::dns::TestDns;

pub(super) async fn app(dns: &TestDns) -> TestApp {
    let ns = dns.nameserver();
    TestApp::with_areas(&[crate::AREA], move |c| {
        c.dns_nameservers = vec![ns];
        // No registry to ask: loopback is refused at once.
        c.rdap_bootstrap_url = "http://127.0.0.1:9/".into();
    })
    .await
}

/// Runs every queued enrichment.
pub(super) async fn drain(app: &TestApp) -> usize {
    let mut total = 0;
    loop {
        let n = pipeline::enrich_claimed(&app.state, "test").await.unwrap();
        if n == 0 {
            return total;
        }
        total += n;
    }
}

#[tokio::test]
async fn unknown_domains_are_queued_then_enriched_from_dns() {
    let dns = TestDns::start().await;
    dns.a("acme-widgets.com", Ipv4Addr::new(203, 0, 113, 10));
    dns.mx("acme-widgets.com", 10, "aspmx.l.google.com");
    dns.txt("acme-widgets.com", "v=spf1 include:_spf.google.com ~all");
    dns.txt("_dmarc.acme-widgets.com", "v=DMARC1; p=none");
    let app = app(&dns).await;
    let a = app.account(Plan::Free).await;

    // Any spelling of the domain is the one record.
    let r = app
        .get(
            "/v1/enrichment/domain?domain=https://WWW.Acme-Widgets.com/about",
            &a.api_key,
        )
        .await;
    assert_eq!(r.status, 202, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({"domain": "acme-widgets.com", "status": "queued"})
    );
    let again = app
        .get("/v1/enrichment/domain?domain=acme-widgets.com", &a.api_key)
        .await;
    assert_eq!(again.status, 202);

    assert_eq!(drain(&app).await, 1, "one job for the domain");
    let r = app
        .get("/v1/enrichment/domain?domain=acme-widgets.com", &a.api_key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["status"], "enriched");
    assert_eq!(r.body["mx_provider"], "Google Workspace");
    assert_eq!(r.body["has_spf"], true);
    assert_eq!(r.body["has_dmarc"], true);
    assert_eq!(r.body["business_type"], "unknown");

    // The asking account heard about it, once.
    let seen = events::for_account(&app.state.db, a.account_id, 10)
        .await
        .unwrap();
    let enriched: Vec<_> = seen
        .iter()
        .filter(|e| e.event_type.as_str() == "domain.enriched")
        .collect();
    assert_eq!(enriched.len(), 1);
    assert_eq!(enriched[0].data["domain"], "acme-widgets.com");
}

#[tokio::test]
async fn a_domain_that_does_not_exist_fails_with_its_reason() {
    let dns = TestDns::start().await;
    let app = app(&dns).await;
    let a = app.account(Plan::Free).await;
    let r = app
        .get(
            "/v1/enrichment/domain?domain=no-such-company.com",
            &a.api_key,
        )
        .await;
    assert_eq!(r.status, 202);
    drain(&app).await;
    let r = app
        .get(
            "/v1/enrichment/domain?domain=no-such-company.com",
            &a.api_key,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status"], "failed");
    assert_eq!(r.body["enrichment_errors"]["dns"], "no such domain");
}

#[tokio::test]
async fn a_dns_server_failure_is_retried_later() {
    let dns = TestDns::start().await;
    dns.fail("flaky-dns.com");
    let app = app(&dns).await;
    let a = app.account(Plan::Free).await;
    app.get("/v1/enrichment/domain?domain=flaky-dns.com", &a.api_key)
        .await;
    assert_eq!(drain(&app).await, 1);
    let r = app
        .get("/v1/enrichment/domain?domain=flaky-dns.com", &a.api_key)
        .await;
    assert_eq!(r.status, 202, "still waiting: {:?}", r.body);
    // The retry is due a minute later; by then the server answers.
    dns.remove("flaky-dns.com");
    dns.a("flaky-dns.com", Ipv4Addr::new(203, 0, 113, 11));
    assert_eq!(drain(&app).await, 0, "not due yet");
    app.clock.advance(std::time::Duration::from_secs(61));
    assert_eq!(drain(&app).await, 1);
    let r = app
        .get("/v1/enrichment/domain?domain=flaky-dns.com", &a.api_key)
        .await;
    assert_eq!(r.body["status"], "enriched", "{:?}", r.body);
}

#[tokio::test]
async fn bad_domains_are_refused_in_the_error_format() {
    let dns = TestDns::start().await;
    let app = app(&dns).await;
    let a = app.account(Plan::Free).await;
    for bad in [
        "",
        "localhost",
        "127.0.0.1",
        "intranet",
        "co.uk",
        "a_b.com",
        "x.internal",
    ] {
        let r = app
            .get(&format!("/v1/enrichment/domain?domain={bad}"), &a.api_key)
            .await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
        assert!(
            r.detail().starts_with("Invalid domain"),
            "{bad}: {}",
            r.detail()
        );
    }
    let long = format!("{}.com", "a".repeat(64));
    let r = app
        .get(&format!("/v1/enrichment/domain?domain={long}"), &a.api_key)
        .await;
    assert_eq!(r.status, 400);

    let too_many: Vec<String> = (0..201).map(|i| format!("company{i}.com")).collect();
    let r = app
        .post(
            "/v1/enrichment/bulk",
            &a.api_key,
            json!({"domains": too_many}),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    let r = app
        .post("/v1/enrichment/bulk", &a.api_key, json!({"domains": []}))
        .await;
    assert_eq!(r.status, 400);
    let r = app
        .post(
            "/v1/enrichment/bulk",
            &a.api_key,
            json!({"domains": ["ok-company.com", "localhost"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    // Nothing entered the pool from the refused requests.
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM domains")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(n, 0);
}

#[tokio::test]
async fn bulk_answers_each_domain_once() {
    let dns = TestDns::start().await;
    dns.a("bulk-one.com", Ipv4Addr::new(203, 0, 113, 12));
    let app = app(&dns).await;
    let a = app.account(Plan::Starter).await;
    let r = app
        .post(
            "/v1/enrichment/bulk",
            &a.api_key,
            json!({"domains": ["bulk-one.com", "https://www.bulk-one.com/", "bulk-two.com"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["queued"], 2);
    assert_eq!(r.body["data"].as_array().unwrap().len(), 2);
    drain(&app).await;
    let r = app
        .post(
            "/v1/enrichment/bulk",
            &a.api_key,
            json!({"domains": ["bulk-one.com", "bulk-two.com"]}),
        )
        .await;
    assert_eq!(r.body["queued"], 0);
    assert_eq!(r.body["data"][0]["status"], "enriched");
    assert_eq!(r.body["data"][0]["record"]["domain"], "bulk-one.com");
    assert_eq!(r.body["data"][1]["status"], "failed");
}

fn tech(name: &str, category: &str) -> Technology {
    Technology {
        name: name.into(),
        categories: vec![category.into()],
        version: None,
        confidence: 100,
    }
}

#[tokio::test]
async fn search_filters_sorts_and_pages() {
    let dns = TestDns::start().await;
    let app = app(&dns).await;
    let a = app.account(Plan::Enterprise).await;
    let mut shop = findings("E-commerce", 70);
    shop.technologies = vec![
        tech("Shopify", "Ecommerce"),
        tech("Google Analytics", "Analytics"),
    ];
    shop.alert_signals = vec!["has_ecommerce".into(), "has_analytics".into()];
    shop.registered_at = Some(1_700_000_000_000);
    seed(&app, "shop-one.com", shop).await;
    let mut saas = findings("Software", 90);
    saas.technologies = vec![tech("Stripe", "Payment processors")];
    saas.alert_signals = vec!["has_payments".into()];
    saas.registrant_country = None;
    saas.ip_country = Some("US".into());
    seed(&app, "saas-one.com", saas).await;
    seed(&app, "plain-one.com", findings("Consulting", 10)).await;

    let search = |q: &str| {
        let path = format!("/v1/search/domains?{q}");
        let app = &app;
        let key = a.api_key.clone();
        async move {
            let r = app.get(&path, &key).await;
            assert_eq!(r.status, 200, "{path}: {:?}", r.body);
            let names: Vec<String> = r.body["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["domain"].as_str().unwrap().to_string())
                .collect();
            (names, r.body["total"].as_i64().unwrap())
        }
    };
    assert_eq!(
        search("").await,
        (
            vec![
                "saas-one.com".into(),
                "shop-one.com".into(),
                "plain-one.com".into()
            ],
            3
        )
    );
    assert_eq!(
        search("technologies=shopify,google%20analytics").await.0,
        vec!["shop-one.com"]
    );
    assert_eq!(search("technologies=shopify,stripe").await.1, 0);
    assert_eq!(search("signals=has_payments").await.0, vec!["saas-one.com"]);
    assert_eq!(
        search("country=us").await.0,
        vec!["saas-one.com"],
        "server country as fallback"
    );
    assert_eq!(
        search("country=DE&min_intent_score=50").await.0,
        vec!["shop-one.com"]
    );
    assert_eq!(search("q=consulting").await.0, vec!["plain-one.com"]);
    assert_eq!(search("q=100%25").await.1, 0, "a % matches literally");
    assert_eq!(
        search("industry=software&business_type=B2B").await.0,
        vec!["saas-one.com"]
    );
    assert_eq!(
        search("registered_after=2023-01-01").await.0,
        vec!["shop-one.com"]
    );
    assert_eq!(search("min_confidence=0.9").await.1, 0);
    assert_eq!(
        search("sort=domain&order=asc&limit=1&offset=1").await,
        (vec!["saas-one.com".into()], 3)
    );

    for bad in [
        "sort=color",
        "order=up",
        "limit=0",
        "limit=201",
        "offset=10001",
        "min_confidence=1.5",
        "min_intent_score=101",
        "country=Germany",
        "business_type=B2X",
        "registered_after=yesterday",
    ] {
        let r = app
            .get(&format!("/v1/search/domains?{bad}"), &a.api_key)
            .await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
    }
}

#[tokio::test]
async fn re_enrichment_records_changes_of_monitored_fields() {
    let dns = TestDns::start().await;
    let app = app(&dns).await;
    let id = seed(&app, "changing-co.com", findings("Software", 40)).await;
    // The first enrichment has nothing to compare with.
    let count = |app: &TestApp| {
        let db = app.state.db.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM domain_changes")
                .fetch_one(&db.pool)
                .await
                .unwrap()
        }
    };
    assert_eq!(count(&app).await, 0);
    let mut next = findings("Fintech", 40);
    next.website_email = Some("info@changing-co.com".into());
    let now = app.state.clock.now_ms();
    let changes = save::save(&app.state, id, &next, now, now + 1)
        .await
        .unwrap();
    assert_eq!(changes, 3, "industry, website_email and summary");
    let rows: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT field_changed, old_value, new_value FROM domain_changes ORDER BY field_changed",
    )
    .fetch_all(&app.state.db.pool)
    .await
    .unwrap();
    assert_eq!(
        rows[0],
        (
            "industry".into(),
            Some("Software".into()),
            Some("Fintech".into())
        )
    );
    assert_eq!(rows[2].0, "website_email");
    assert_eq!(rows[2].1, None);
    // The same findings again change nothing.
    let changes = save::save(&app.state, id, &next, now, now + 1)
        .await
        .unwrap();
    assert_eq!(changes, 0);
}

#[tokio::test]
async fn the_refresh_scan_queues_stale_records_within_its_cap() {
    let dns = TestDns::start().await;
    dns.a("stale-one.com", Ipv4Addr::new(203, 0, 113, 13));
    dns.a("stale-two.com", Ipv4Addr::new(203, 0, 113, 14));
    let app = app(&dns).await;
    pipeline::submit(
        &app.state,
        &["stale-one.com".into(), "stale-two.com".into()],
        "import",
        None,
    )
    .await
    .unwrap();
    assert_eq!(drain(&app).await, 2);
    assert_eq!(
        pipeline::queue_due(&app.state, 10).await.unwrap(),
        0,
        "fresh"
    );
    app.clock
        .advance(std::time::Duration::from_secs(31 * 24 * 3600));
    assert_eq!(
        pipeline::queue_due(&app.state, 1).await.unwrap(),
        1,
        "the cap"
    );
    assert_eq!(
        pipeline::queue_due(&app.state, 10).await.unwrap(),
        1,
        "the other one"
    );
    assert_eq!(
        pipeline::queue_due(&app.state, 10).await.unwrap(),
        0,
        "both queued"
    );
    assert_eq!(drain(&app).await, 2);
}
