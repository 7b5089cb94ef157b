//! The industry report, its lighter form and the overview against figures
//! worked out by hand, enriched and imported records alike.

use std::io::Cursor;

use serde_json::{Value, json};

use super::geo_tests::{app, at};
use crate::domains::import::{Format, import};
use crate::testkit::{days_pass, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

fn record(
    confidence: f64,
    email: bool,
    country: Option<&str>,
) -> crate::domains::pipeline::save::Findings {
    let mut f = at("Software", country, None, None);
    f.confidence = confidence;
    f.website_email = email.then(|| "hello@example.com".to_string());
    f
}

/// Day 0 (Saturday 2026-11-21, ISO week 47): s1, s2, s3 and a Retail
/// record; day 20 (week 50): s6; day 40 (Thursday 2026-12-31, week 53):
/// s4, s5 and an imported record of "software".
async fn seeded(app: &TestApp) {
    seed(app, "s1.com", record(0.9, true, Some("DE"))).await;
    seed(app, "s2.com", record(0.5, false, Some("US"))).await;
    seed(app, "s3.com", record(0.7, true, Some("DE"))).await;
    let mut retail = record(0.4, true, Some("FR"));
    retail.industry = Some("Retail".into());
    seed(app, "r1.com", retail).await;
    days_pass(app, 20);
    seed(app, "s6.com", record(0.2, false, Some("US"))).await;
    days_pass(app, 20);
    seed(app, "s4.com", record(0.6, true, Some("FR"))).await;
    seed(app, "s5.com", record(0.8, false, None)).await;
    let line = r#"{"domain": "imp.com", "industry": "software", "confidence": 0.3, "website_email": "hi@imp.com", "registrant_country": "DE", "summary": "Imported."}"#;
    import(
        &app.state,
        Cursor::new(line.as_bytes().to_vec()),
        Format::JsonLines,
        false,
        |_| {},
    )
    .await
    .unwrap();
}

fn top(domain: &str, confidence: f64, summary: &str) -> Value {
    json!({"domain": domain, "confidence": confidence, "summary": summary})
}

#[tokio::test]
async fn the_industry_report_sums_every_record_of_the_industry() {
    let app = app().await;
    seeded(&app).await;
    let key = &app.account(Plan::Pro).await.api_key;
    let r = app.get("/v1/intelligence/report/software", key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let soft = "A Software company.";
    let weeks: Vec<Value> = (42..=53)
        .map(|w| {
            let cnt = match w {
                47 => 3,
                50 => 1,
                53 => 3,
                _ => 0,
            };
            json!({"week": format!("2026-W{w}"), "cnt": cnt})
        })
        .collect();
    assert_eq!(
        r.body,
        json!({
            "industry": "Software",
            "summary": {
                "total_leads": 7,
                "with_email": 4,
                "email_coverage_pct": 57.14,
                "avg_confidence": 0.57,
                // 4 in the last 30 days (s6, s4, s5, imp) against 3 before.
                "growth_rate_pct": 33.33,
            },
            "weekly_trend": weeks,
            "country_distribution": [
                {"country": "DE", "cnt": 3, "pct": 50.0},
                {"country": "US", "cnt": 2, "pct": 33.33},
                {"country": "FR", "cnt": 1, "pct": 16.67},
            ],
            "top_domains": [
                top("s1.com", 0.9, soft),
                top("s5.com", 0.8, soft),
                top("s3.com", 0.7, soft),
                top("s4.com", 0.6, soft),
                top("s2.com", 0.5, soft),
                top("imp.com", 0.3, "Imported."),
                top("s6.com", 0.2, soft),
            ],
        })
    );

    let r = app.get("/v1/intelligence/industry/SOFTWARE", key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({
            "industry": "Software", "total_leads": 7, "with_email": 4,
            "email_coverage_pct": 57.14, "avg_confidence": 0.57,
            "new_7d": 3, "new_30d": 4, "growth_rate_pct": 33.33,
            "top_countries": [
                {"country": "DE", "cnt": 3, "pct": 50.0},
                {"country": "US", "cnt": 2, "pct": 33.33},
                {"country": "FR", "cnt": 1, "pct": 16.67},
            ],
        })
    );

    // Retail's one record entered 40 days ago: none in the last 30 days
    // against one before. Growth is null without records before.
    let r = app.get("/v1/intelligence/industry/retail", key).await;
    assert_eq!(r.body["growth_rate_pct"], -100.0);
    let r = app
        .get(
            "/v1/intelligence/report/Real%20Estate%20%26%20Construction",
            key,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["industry"], "Real Estate & Construction");
    assert_eq!(r.body["summary"]["total_leads"], 0);
    assert_eq!(r.body["summary"]["growth_rate_pct"], Value::Null);
}

#[tokio::test]
async fn the_overview_rolls_up_every_industry() {
    let app = app().await;
    seeded(&app).await;
    let key = &app.account(Plan::Enterprise).await.api_key;
    let r = app.get("/v1/intelligence/overview", key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({
            "total_domains": 8, "with_industry": 8, "with_email": 5,
            "email_rate": 62.5, "avg_confidence": 0.55, "new_7d": 3, "new_30d": 4,
            "industries": [
                {"industry": "Software", "domain_count": 7, "email_rate": 57.14,
                 "avg_confidence": 0.57, "new_7d": 3, "new_30d": 4, "share_pct": 87.5},
                {"industry": "Retail", "domain_count": 1, "email_rate": 100.0,
                 "avg_confidence": 0.4, "new_7d": 0, "new_30d": 0, "share_pct": 12.5},
            ],
            "top_countries": [
                {"country": "DE", "cnt": 3, "pct": 42.86},
                {"country": "FR", "cnt": 2, "pct": 28.57},
                {"country": "US", "cnt": 2, "pct": 28.57},
            ],
        })
    );
}

#[tokio::test]
async fn reports_refuse_bad_input_and_lower_plans() {
    let app = app().await;
    seeded(&app).await;
    let pro = app.account(Plan::Pro).await;
    for (path, status) in [
        ("/v1/intelligence/report/Astrology", 404),
        ("/v1/intelligence/industry/Astrology", 404),
        ("/v1/intelligence/report/Software?format=docx", 400),
    ] {
        let r = app.get(path, &pro.api_key).await;
        assert_eq!(r.status, status, "{path}: {:?}", r.body);
        assert!(r.body["detail"].is_string());
    }
    for plan in [Plan::Free, Plan::Starter] {
        let key = &app.account(plan).await.api_key;
        for path in [
            "/v1/intelligence/report/Software",
            "/v1/intelligence/report/Software?format=pdf",
            "/v1/intelligence/industry/Software",
            "/v1/intelligence/overview",
        ] {
            let r = app.get(path, key).await;
            assert_eq!(r.status, 403, "{plan:?} {path}");
            assert_eq!(
                r.body["detail"],
                "API key does not have access to this resource"
            );
        }
    }
    let r = app
        .get("/v1/intelligence/report/software?format=pdf", &pro.api_key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.header("content-type"), Some("application/pdf"));
    assert!(r.body.as_str().unwrap().starts_with("%PDF-"));
}
