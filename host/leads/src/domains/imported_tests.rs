//! ARCHITECTURE.md "Imported records": a record `outreach domains import`
//! put in the pool is a record on every path that reads the pool, on the
//! backend the suite runs. The lookup answers it as it stands and queues
//! its first enrichment once; bulk answers it the same way; search finds
//! it on the fields it carries; a lead list joins them; a failed
//! enrichment keeps them.

use std::io::Cursor;
use std::net::Ipv4Addr;

use serde_json::json;

use super::import::{Format, import};
use super::pipeline;
use super::tests::{app, drain};
use crate::testkit::{add_domains, new_list, outbox};
use outreach_core::accounts::plans::Plan;
use outreach_core::events::EventType;
use outreach_core::testing::dns::TestDns;
use outreach_core::testing::{TestAccount, TestApp};

const LINES: &str = r#"{"domain": "epsilon-soft.com", "company_name": "Epsilon", "industry": "Software", "business_type": "B2B", "confidence": 0.7, "registrant_country": "DE", "technologies": ["Stripe", "HubSpot"]}
{"domain": "zeta-bare.com"}
"#;

/// A pool holding the two imported records, and a Free account.
async fn imported(dns: &TestDns) -> (TestApp, TestAccount) {
    let app = app(dns).await;
    let account = app.account(Plan::Free).await;
    let lines = Cursor::new(LINES.as_bytes().to_vec());
    let summary = import(&app.state, lines, Format::JsonLines, false, |_| {})
        .await
        .unwrap();
    assert_eq!(summary.imported, 2);
    (app, account)
}

async fn jobs(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE queue = $1")
        .bind(pipeline::QUEUE)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_lookup_answers_the_imported_record_and_queues_it_once() {
    let dns = TestDns::start().await;
    dns.a("epsilon-soft.com", Ipv4Addr::new(203, 0, 113, 20));
    dns.mx("epsilon-soft.com", 10, "aspmx.l.google.com");
    let (app, a) = imported(&dns).await;
    assert_eq!(jobs(&app).await, 0, "nothing is queued until asked");

    let r = app
        .get("/v1/enrichment/domain?domain=epsilon-soft.com", &a.api_key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["status"], "imported");
    assert_eq!(r.body["company_name"], "Epsilon");
    assert_eq!(r.body["industry"], "Software");
    assert_eq!(r.body["enriched_at"], serde_json::Value::Null);
    assert_eq!(jobs(&app).await, 1, "its first enrichment is queued");

    // Asked again, and through the technologies route: the same record, no
    // second job.
    let again = app
        .get("/v1/enrichment/domain?domain=epsilon-soft.com", &a.api_key)
        .await;
    assert_eq!(again.status, 200);
    assert_eq!(again.body["status"], "imported");
    let tech = app
        .get(
            "/v1/enrichment/tech-stack?domain=epsilon-soft.com",
            &a.api_key,
        )
        .await;
    assert_eq!(tech.status, 200, "{:?}", tech.body);
    assert_eq!(tech.body["technologies"][0]["name"], "Stripe");
    assert_eq!(jobs(&app).await, 1);

    // A record imported without fields is known all the same.
    let bare = app
        .get("/v1/enrichment/domain?domain=zeta-bare.com", &a.api_key)
        .await;
    assert_eq!(bare.status, 200, "{:?}", bare.body);
    assert_eq!(bare.body["status"], "imported");
    assert_eq!(bare.body["company_name"], serde_json::Value::Null);

    // The enrichment fills it in; what it could not learn stays imported,
    // and the asking account hears of it.
    assert_eq!(drain(&app).await, 2);
    let r = app
        .get("/v1/enrichment/domain?domain=epsilon-soft.com", &a.api_key)
        .await;
    assert_eq!(r.body["status"], "enriched", "{:?}", r.body);
    assert_eq!(r.body["mx_provider"], "Google Workspace");
    assert_eq!(r.body["company_name"], "Epsilon");
    let heard = outbox(&app, a.account_id, EventType::DomainEnriched).await;
    let domains: Vec<&str> = heard.iter().filter_map(|d| d["domain"].as_str()).collect();
    assert!(domains.contains(&"epsilon-soft.com"), "{heard:?}");
}

#[tokio::test]
async fn a_failed_first_enrichment_keeps_the_imported_record() {
    // No DNS answers for it: every stage fails.
    let dns = TestDns::start().await;
    let (app, a) = imported(&dns).await;
    app.get("/v1/enrichment/domain?domain=epsilon-soft.com", &a.api_key)
        .await;
    drain(&app).await;
    let r = app
        .get("/v1/enrichment/domain?domain=epsilon-soft.com", &a.api_key)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status"], "imported", "{:?}", r.body);
    assert_eq!(r.body["industry"], "Software");
    assert!(
        r.body["enrichment_errors"]["dns"].is_string(),
        "{:?}",
        r.body
    );
    // Still searchable on what it carries.
    let s = app
        .get("/v1/search/domains?industry=Software", &a.api_key)
        .await;
    assert_eq!(s.body["total"], 1, "{:?}", s.body);
}

#[tokio::test]
async fn bulk_answers_imported_records_with_their_fields() {
    let dns = TestDns::start().await;
    let (app, a) = imported(&dns).await;
    let r = app
        .post(
            "/v1/enrichment/bulk",
            &a.api_key,
            json!({"domains": ["epsilon-soft.com", "zeta-bare.com", "brand-new-co.com"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let data = r.body["data"].as_array().unwrap();
    assert_eq!(data[0]["status"], "imported");
    assert_eq!(data[0]["record"]["company_name"], "Epsilon");
    assert_eq!(data[1]["status"], "imported");
    assert_eq!(data[1]["record"]["domain"], "zeta-bare.com");
    assert_eq!(data[2]["status"], "queued");
    assert_eq!(data[2]["record"], serde_json::Value::Null);
    assert_eq!(r.body["queued"], 1, "only the new domain has no record");
    assert_eq!(jobs(&app).await, 3, "every never-enriched record is queued");
}

#[tokio::test]
async fn search_finds_imported_records_on_the_fields_they_carry() {
    let dns = TestDns::start().await;
    let (app, a) = imported(&dns).await;
    // A domain new to the pool is a name only: search leaves it out.
    app.get("/v1/enrichment/domain?domain=brand-new-co.com", &a.api_key)
        .await;
    for (query, expected) in [
        ("industry=software", 1),
        ("country=de", 1),
        ("business_type=B2B", 1),
        ("min_confidence=0.6", 1),
        ("technologies=stripe", 1),
        ("q=epsilon", 1),
        ("industry=Retail", 0),
        ("", 2),
    ] {
        let r = app
            .get(&format!("/v1/search/domains?{query}"), &a.api_key)
            .await;
        assert_eq!(r.status, 200, "{query}: {:?}", r.body);
        assert_eq!(r.body["total"], expected, "{query}: {:?}", r.body);
    }
}

#[tokio::test]
async fn a_lead_list_joins_the_fields_the_record_has() {
    let dns = TestDns::start().await;
    let (app, a) = imported(&dns).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "Imported").await;
    let r = add_domains(&app, key, list, &["epsilon-soft.com", "zeta-bare.com"]).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = app.get(&format!("/v1/lists/{list}/enriched"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let items = r.body["items"].as_array().unwrap();
    assert_eq!(
        items[0]["lead"],
        json!({"domain": "epsilon-soft.com", "industry": "Software", "business_type": "B2B",
               "confidence": 0.7, "website_email": null, "registrant_country": "DE"})
    );
    assert_eq!(
        items[1]["lead"],
        json!({"domain": "zeta-bare.com", "industry": null, "business_type": null,
               "confidence": null, "website_email": null, "registrant_country": null})
    );
}
