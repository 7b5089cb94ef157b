//! Geography against counts worked out by hand over seeded records: the
//! window, the registrant-to-IP fallback, industries, cities, the CSV, the
//! plan gate, and rollups that follow a record's changes and agree with a
//! rebuild.

use std::io::Cursor;

use serde_json::{Value, json};

use crate::domains::import::{Format, import};
use crate::domains::pipeline::save::Findings;
use crate::domains::rollups;
use crate::testkit::{days_pass, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

pub(crate) async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |_| {}).await
}

/// A record of `industry` with the countries and city given.
pub(crate) fn at(
    industry: &str,
    registrant: Option<&str>,
    ip: Option<&str>,
    city: Option<&str>,
) -> Findings {
    Findings {
        summary: Some(format!("A {industry} company.")),
        industry: Some(industry.into()),
        business_type: Some("B2B".into()),
        confidence: 0.5,
        intent_level: "cold".into(),
        registrant_country: registrant.map(str::to_owned),
        ip_country: ip.map(str::to_owned),
        city: city.map(str::to_owned),
        social_links: json!({}),
        ..Findings::default()
    }
}

/// Day 0 (2026-11-21): a, b (IP country only), c, d (no country); day 20:
/// e, f; day 35 (today): g.
async fn seeded(app: &TestApp) {
    seed(app, "a.com", at("Software", Some("DE"), Some("US"), None)).await;
    seed(app, "b.com", at("Software", None, Some("FR"), None)).await;
    seed(app, "c.com", at("Retail", Some("US"), None, Some("Austin"))).await;
    seed(app, "d.com", at("Software", None, None, None)).await;
    days_pass(app, 20);
    seed(
        app,
        "e.com",
        at("Software", Some("DE"), None, Some("Berlin")),
    )
    .await;
    seed(app, "f.com", at("Retail", Some("de"), None, Some("Berlin"))).await;
    days_pass(app, 15);
    seed(
        app,
        "g.com",
        at("Software", Some("US"), None, Some("Austin")),
    )
    .await;
}

fn countries(body: &Value) -> Vec<(String, i64)> {
    body["countries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["country"].as_str().unwrap().to_string(),
                c["cnt"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, i64)]) -> Vec<(String, i64)> {
    list.iter().map(|(c, n)| (c.to_string(), *n)).collect()
}

#[tokio::test]
async fn geo_counts_the_window_by_country_with_the_ip_fallback() {
    let app = app().await;
    seeded(&app).await;
    let key = &app.account(Plan::Starter).await.api_key;

    // The default 30 days reach back to day 6: e, f and g.
    let r = app.get("/v1/intelligence/geo", key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(countries(&r.body), pairs(&[("DE", 2), ("US", 1)]));
    assert_eq!(r.body["total"], 3);
    assert_eq!(r.body["without_country"], 0);
    assert_eq!(r.body["days"], 30);
    assert_eq!(r.body["industry"], Value::Null);

    // A year: a counts under its registrant's DE (not its server's US), b
    // under its server's FR; d has neither.
    let r = app.get("/v1/intelligence/geo?days=365", key).await;
    assert_eq!(
        countries(&r.body),
        pairs(&[("DE", 3), ("US", 2), ("FR", 1)])
    );
    assert_eq!(r.body["total"], 6);
    assert_eq!(r.body["without_country"], 1);

    // One industry, named in any case; ties by code.
    let r = app
        .get("/v1/intelligence/geo?days=365&industry=software", key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        countries(&r.body),
        pairs(&[("DE", 2), ("FR", 1), ("US", 1)])
    );
    assert_eq!(r.body["industry"], "Software");
    let r = app
        .get("/v1/intelligence/geo?industry=Financial%20Services", key)
        .await;
    assert_eq!(
        (r.status.as_u16(), r.body["total"].clone()),
        (200, json!(0))
    );

    for (path, status) in [
        ("/v1/intelligence/geo?days=6", 400),
        ("/v1/intelligence/geo?days=366", 400),
        ("/v1/intelligence/geo?days=x", 400),
        ("/v1/intelligence/geo?industry=Astrology", 404),
        ("/v1/intelligence/geo/cities?industry=Astrology", 404),
        ("/v1/intelligence/geo/cities?country=DEU", 400),
        ("/v1/intelligence/geo/export?days=400", 400),
    ] {
        let r = app.get(path, key).await;
        assert_eq!(r.status, status, "{path}: {:?}", r.body);
        assert!(r.body["detail"].is_string(), "{path}");
    }
    let free = app.account(Plan::Free).await;
    for path in [
        "/v1/intelligence/geo",
        "/v1/intelligence/geo/cities",
        "/v1/intelligence/geo/export",
    ] {
        assert_eq!(app.get(path, &free.api_key).await.status, 403, "{path}");
    }
}

#[tokio::test]
async fn cities_rank_the_top_ones_of_a_country() {
    let app = app().await;
    seeded(&app).await;
    let key = &app.account(Plan::Pro).await.api_key;
    let city = |body: &Value| -> Vec<(String, i64)> {
        body["cities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["city"].as_str().unwrap().to_string(),
                    c["cnt"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let r = app
        .get("/v1/intelligence/geo/cities?country=de&days=365", key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(city(&r.body), pairs(&[("Berlin", 2)]));
    assert_eq!(
        (r.body["total"].clone(), r.body["country"].clone()),
        (json!(2), json!("DE"))
    );
    let r = app.get("/v1/intelligence/geo/cities?days=365", key).await;
    assert_eq!(city(&r.body), pairs(&[("Austin", 2), ("Berlin", 2)]));
    let r = app
        .get("/v1/intelligence/geo/cities?days=365&industry=Retail", key)
        .await;
    assert_eq!(city(&r.body), pairs(&[("Austin", 1), ("Berlin", 1)]));
    // The 30-day window holds f (Berlin) and g (Austin) only.
    let r = app.get("/v1/intelligence/geo/cities?country=US", key).await;
    assert_eq!(city(&r.body), pairs(&[("Austin", 1)]));

    // Thirty-one cities: the top 30 are listed, the total counts all.
    for i in 0..31 {
        let name = format!("Town {i:02}");
        seed(
            &app,
            &format!("town{i}.com"),
            at("Retail", Some("IT"), None, Some(&name)),
        )
        .await;
    }
    let r = app.get("/v1/intelligence/geo/cities?country=IT", key).await;
    assert_eq!(r.body["cities"].as_array().unwrap().len(), 30);
    assert_eq!(r.body["total"], 31);
}

#[tokio::test]
async fn the_export_is_the_geo_answer_as_safe_csv() {
    let app = app().await;
    seeded(&app).await;
    // An import's country is whatever its file said, a formula included.
    let line = r#"{"domain": "trap.com", "industry": "Software", "registrant_country": "=cmd|' /C calc'!A0"}"#;
    import(
        &app.state,
        Cursor::new(line.as_bytes().to_vec()),
        Format::JsonLines,
        false,
        |_| {},
    )
    .await
    .unwrap();
    let key = &app.account(Plan::Starter).await.api_key;
    let r = app
        .get(
            "/v1/intelligence/geo/export?days=365&industry=SOFTWARE",
            key,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.header("content-type"), Some("text/csv; charset=utf-8"));
    assert_eq!(
        r.header("content-disposition"),
        Some("attachment; filename=\"geo-software-365d.csv\"")
    );
    assert_eq!(
        r.body.as_str().unwrap(),
        "country,cnt,pct\nDE,2,40.00\n'=CMD|' /C CALC'!A0,1,20.00\nFR,1,20.00\nUS,1,20.00\n"
    );
}

#[tokio::test]
async fn rollups_follow_a_record_that_changes_and_agree_with_a_rebuild() {
    let app = app().await;
    seeded(&app).await;
    let key = &app.account(Plan::Pro).await.api_key;
    // a.com moves from Software in DE to Retail in the US.
    seed(&app, "a.com", at("Retail", Some("US"), None, None)).await;
    let software = "/v1/intelligence/geo?days=365&industry=software";
    let r = app.get(software, key).await;
    assert_eq!(
        countries(&r.body),
        pairs(&[("DE", 1), ("FR", 1), ("US", 1)])
    );
    let r = app
        .get("/v1/intelligence/geo?days=365&industry=retail", key)
        .await;
    assert_eq!(countries(&r.body), pairs(&[("US", 2), ("DE", 1)]));
    let before: Vec<Value> = answers(&app, key).await;
    assert_eq!(rollups::rebuild(&app.state.db).await.unwrap(), 7);
    assert_eq!(answers(&app, key).await, before);
}

/// Every geo and report answer that reads the rollups.
async fn answers(app: &TestApp, key: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for path in [
        "/v1/intelligence/geo?days=365",
        "/v1/intelligence/geo?days=30&industry=retail",
        "/v1/intelligence/geo/cities?days=365",
        "/v1/intelligence/overview",
        "/v1/intelligence/report/software",
        "/v1/intelligence/industry/retail",
    ] {
        let r = app.get(path, key).await;
        assert_eq!(r.status, 200, "{path}: {:?}", r.body);
        all.push(r.body);
    }
    all
}
