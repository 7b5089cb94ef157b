//! Audiences through the router, on the backend the suite runs: the
//! endpoints and their checks, match counts against a brute-force count
//! over the same records (at creation and as the pool changes),
//! `new_since_viewed` and its reset, `audience.updated`, the preview, and
//! two servers consuming the same pool events.

use serde_json::{Value, json};

use crate::domains::pipeline::save::Findings;
use crate::testkit::{delete, evaluate, outbox, put, record, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::events::EventType;
use outreach_core::testing::TestApp;

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |c| {
        c.rdap_bootstrap_url = "http://127.0.0.1:9/".into();
    })
    .await
}

/// An independent reading of spec/2's audience filters over findings.
fn brute_matches(filters: &Value, f: &Findings) -> bool {
    let strings = |k: &str| -> Vec<String> {
        filters[k]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default()
    };
    let industries = strings("industries");
    let countries = strings("countries");
    let required = strings("required_signals");
    let excluded = strings("excluded_signals");
    let types = strings("business_types");
    let country = f.registrant_country.clone().or(f.ip_country.clone());
    (industries.is_empty()
        || industries.iter().any(|i| {
            f.industry
                .as_deref()
                .is_some_and(|x| x.eq_ignore_ascii_case(i))
        }))
        && (countries.is_empty()
            || countries.iter().any(|c| {
                country
                    .as_deref()
                    .is_some_and(|x| x.eq_ignore_ascii_case(c))
            }))
        && (f.confidence * 100.0).round() as i64 >= filters["min_confidence"].as_i64().unwrap_or(0)
        && f.intent_score >= filters["min_intent_score"].as_i64().unwrap_or(0)
        && required.iter().all(|s| f.audience_signals.contains(s))
        && !excluded.iter().any(|s| f.audience_signals.contains(s))
        && (types.is_empty()
            || types.iter().any(|t| {
                f.business_type
                    .as_deref()
                    .is_some_and(|x| x.eq_ignore_ascii_case(t))
            }))
}

fn filter_sets() -> Vec<Value> {
    vec![
        json!({}),
        json!({"industries": ["software"]}),
        json!({"industries": ["Software", "Retail"], "countries": ["de"]}),
        json!({"countries": ["NL"]}),
        json!({"min_confidence": 50}),
        json!({"min_intent_score": 60, "business_types": ["b2b"]}),
        json!({"required_signals": ["has_crm", "has_ssl"]}),
        json!({"excluded_signals": ["has_blog"], "industries": ["Healthcare"]}),
        json!({"required_signals": ["has_saas"], "excluded_signals": ["has_crm"], "min_confidence": 30}),
        json!({"business_types": ["marketplace", "B2C"], "countries": ["US", "FR"]}),
    ]
}

async fn create(app: &TestApp, key: &str, name: &str, filters: Value) -> Value {
    let r = app
        .post(
            "/v1/audiences",
            key,
            json!({"name": name, "filters": filters}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body
}

#[tokio::test]
async fn audiences_are_created_listed_read_changed_and_deleted() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let other = app.account(Plan::Pro).await;
    let r = app
        .post(
            "/v1/audiences",
            &a.api_key,
            json!({"name": " German SaaS ", "description": "Software in DE",
                   "filters": {"industries": ["software"], "countries": ["de"],
                               "business_types": ["b2b"], "required_signals": ["has_saas"]}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = r.body["id"].as_i64().unwrap();
    assert_eq!(r.body["name"], "German SaaS");
    assert_eq!(r.body["is_active"], true);
    assert_eq!(r.body["match_count"], 0);
    assert_eq!(r.body["new_since_viewed"], 0);
    // Values are stored in their canonical spelling, defaults filled in.
    assert_eq!(
        r.body["filters"],
        json!({"industries": ["Software"], "countries": ["DE"], "min_confidence": 0,
               "required_signals": ["has_saas"], "excluded_signals": [],
               "business_types": ["B2B"], "min_intent_score": 0})
    );
    let list = app.get("/v1/audiences", &a.api_key).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.body["count"], 1);
    assert_eq!(list.body["limit"], 10);
    assert_eq!(list.body["remaining"], 9);
    let path = format!("/v1/audiences/{id}");
    assert_eq!(app.get(&path, &a.api_key).await.body["id"], id);
    // Another account's id is not found, whatever the method.
    assert_eq!(app.get(&path, &other.api_key).await.status, 404);
    assert_eq!(
        put(&app, &path, &other.api_key, json!({"name": "x"}))
            .await
            .status,
        404
    );
    assert_eq!(delete(&app, &path, &other.api_key).await.status, 404);

    let r = put(
        &app,
        &path,
        &a.api_key,
        json!({"is_active": false, "name": "Paused"}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["is_active"], false);
    assert_eq!(r.body["name"], "Paused");
    assert_eq!(
        r.body["description"], "Software in DE",
        "fields not sent stay"
    );
    assert_eq!(r.body["filters"]["industries"], json!(["Software"]));
    assert_eq!(delete(&app, &path, &a.api_key).await.status, 204);
    assert_eq!(app.get(&path, &a.api_key).await.status, 404);
    let signals = app.get("/v1/audiences/signals", &a.api_key).await;
    assert_eq!(signals.body["signals"].as_array().unwrap().len(), 21);
    assert_eq!(signals.body["signals"][0], "has_analytics");
}

#[tokio::test]
async fn bad_filters_and_names_are_refused_naming_the_value() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let cases = [
        (json!({"industries": ["Softwear"]}), "'Softwear'"),
        (json!({"countries": ["XX"]}), "'XX'"),
        (json!({"countries": ["DEU"]}), "'DEU'"),
        (
            json!({"required_signals": ["has_chat_widget"]}),
            "'has_chat_widget'",
        ),
        (json!({"excluded_signals": ["HAS_CRM"]}), "'HAS_CRM'"),
        (json!({"business_types": ["B2X"]}), "'B2X'"),
        (json!({"min_confidence": 101}), "min_confidence"),
        (json!({"min_intent_score": -1}), "min_intent_score"),
        (json!({"colour": "red"}), "colour"),
    ];
    for (filters, named) in cases {
        let create = json!({"name": "x", "filters": filters});
        let preview = json!({"filters": filters});
        for (path, body) in [
            ("/v1/audiences", create),
            ("/v1/audiences/preview", preview),
        ] {
            let r = app.post(path, &a.api_key, body).await;
            assert_eq!(r.status, 400, "{filters} {path}: {:?}", r.body);
            assert!(r.detail().contains(named), "{filters}: {}", r.detail());
        }
    }
    let long = "n".repeat(201);
    let r = app
        .post(
            "/v1/audiences",
            &a.api_key,
            json!({"name": long, "filters": {}}),
        )
        .await;
    assert_eq!(r.status, 400);
    let r = app
        .post("/v1/audiences", &a.api_key, json!({"name": "x"}))
        .await;
    assert_eq!(r.status, 400, "filters are required: {:?}", r.body);
    assert_eq!(app.get("/v1/audiences", &a.api_key).await.body["count"], 0);
}

#[tokio::test]
async fn the_plan_cap_refuses_one_more_and_writes_nothing() {
    let app = app().await;
    let free = app.account(Plan::Free).await;
    create(&app, &free.api_key, "one", json!({})).await;
    let r = app
        .post(
            "/v1/audiences",
            &free.api_key,
            json!({"name": "two", "filters": {}}),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(r.detail().contains("Plan limit"), "{}", r.detail());
    assert_eq!(
        app.get("/v1/audiences", &free.api_key).await.body["count"],
        1
    );
    let ent = app.account(Plan::Enterprise).await;
    for i in 0..12 {
        create(&app, &ent.api_key, &format!("a{i}"), json!({})).await;
    }
    let list = app.get("/v1/audiences", &ent.api_key).await;
    assert!(list.body["limit"].is_null(), "Enterprise is unlimited");
}

#[tokio::test]
async fn match_counts_equal_a_brute_force_count_as_the_pool_changes() {
    let app = app().await;
    let a = app.account(Plan::Enterprise).await;
    let mut records: Vec<(String, Findings)> = Vec::new();
    for i in 0..40 {
        let domain = format!("co{i}.example");
        seed(&app, &domain, record(i)).await;
        records.push((domain, record(i)));
    }
    evaluate(&app).await;
    let mut ids = Vec::new();
    for (n, filters) in filter_sets().into_iter().enumerate() {
        let expected = records
            .iter()
            .filter(|(_, f)| brute_matches(&filters, f))
            .count();
        let preview = app
            .post(
                "/v1/audiences/preview",
                &a.api_key,
                json!({"filters": filters}),
            )
            .await;
        assert_eq!(preview.status, 200, "{:?}", preview.body);
        assert_eq!(preview.body["match_count"], expected, "preview {filters}");
        let body = create(&app, &a.api_key, &format!("set {n}"), filters.clone()).await;
        assert_eq!(body["match_count"], expected, "create {filters}");
        ids.push((body["id"].as_i64().unwrap(), filters));
    }
    // The pool moves: new records, and old ones enriched again with other
    // facts (some start matching, some stop).
    for i in 40..60 {
        let domain = format!("co{i}.example");
        seed(&app, &domain, record(i)).await;
        records.push((domain, record(i)));
    }
    for (i, (domain, stored)) in records.iter_mut().enumerate().take(10) {
        let mut changed = record(i + 101);
        seed(&app, domain, changed.clone()).await;
        // A fact the enrichment did not learn keeps the stored one.
        changed.registrant_country = changed
            .registrant_country
            .or(stored.registrant_country.take());
        changed.ip_country = changed.ip_country.or(stored.ip_country.take());
        *stored = changed;
    }
    evaluate(&app).await;
    for (id, filters) in &ids {
        let expected = records
            .iter()
            .filter(|(_, f)| brute_matches(filters, f))
            .count();
        let r = app.get(&format!("/v1/audiences/{id}"), &a.api_key).await;
        assert_eq!(r.body["match_count"], expected, "after changes {filters}");
    }
    // A recount (PUT) agrees with the moved counter.
    let (id, filters) = &ids[2];
    let r = put(
        &app,
        &format!("/v1/audiences/{id}"),
        &a.api_key,
        json!({"name": "again"}),
    )
    .await;
    let expected = records
        .iter()
        .filter(|(_, f)| brute_matches(filters, f))
        .count();
    assert_eq!(r.body["match_count"], expected);
}

#[tokio::test]
async fn new_matches_are_counted_announced_and_reset_by_a_view() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let aud = create(
        &app,
        &a.api_key,
        "Software",
        json!({"industries": ["Software"]}),
    )
    .await;
    let id = aud["id"].as_i64().unwrap();
    let path = format!("/v1/audiences/{id}");
    // record(0) and record(4) are Software, record(1) is not.
    for (d, i) in [("a.example", 0), ("b.example", 4), ("c.example", 1)] {
        seed(&app, d, record(i)).await;
    }
    evaluate(&app).await;
    let list = app.get("/v1/audiences", &a.api_key).await;
    assert_eq!(list.body["audiences"][0]["new_since_viewed"], 2);
    assert_eq!(list.body["audiences"][0]["match_count"], 2);
    let list = app.get("/v1/audiences", &a.api_key).await;
    assert_eq!(
        list.body["audiences"][0]["new_since_viewed"], 2,
        "the list does not reset"
    );
    let events = outbox(&app, a.account_id, EventType::AudienceUpdated).await;
    assert_eq!(
        events.len(),
        1,
        "one event per audience per batch: {events:?}"
    );
    assert_eq!(events[0]["audience_id"], id);
    assert_eq!(events[0]["audience_name"], "Software");
    assert_eq!(events[0]["match_count"], 2);
    assert_eq!(events[0]["new_domains"], json!(["a.example", "b.example"]));

    let viewed = app.get(&path, &a.api_key).await;
    assert_eq!(
        viewed.body["new_since_viewed"], 2,
        "the view shows the count"
    );
    assert_eq!(app.get(&path, &a.api_key).await.body["new_since_viewed"], 0);

    // Enriched again with the same facts: matched before, so not new.
    seed(&app, "a.example", record(0)).await;
    evaluate(&app).await;
    let r = app.get(&path, &a.api_key).await;
    assert_eq!(r.body["new_since_viewed"], 0);
    assert_eq!(r.body["match_count"], 2);
    assert_eq!(
        outbox(&app, a.account_id, EventType::AudienceUpdated)
            .await
            .len(),
        1
    );
    // An inactive audience is not evaluated; activating it recounts.
    put(&app, &path, &a.api_key, json!({"is_active": false})).await;
    seed(&app, "d.example", record(8)).await;
    evaluate(&app).await;
    assert_eq!(app.get(&path, &a.api_key).await.body["new_since_viewed"], 0);
    let r = put(&app, &path, &a.api_key, json!({"is_active": true})).await;
    assert_eq!(r.body["match_count"], 3);
}

#[tokio::test]
async fn a_preview_answers_newest_enrichment_first_and_saves_nothing() {
    let app = app().await;
    let a = app.account(Plan::Free).await;
    for i in 0..14 {
        seed(&app, &format!("p{i:02}.example"), record(4 * i)).await;
        app.clock.advance(std::time::Duration::from_secs(60));
    }
    let r = app
        .post(
            "/v1/audiences/preview",
            &a.api_key,
            json!({"filters": {"industries": ["Software"]}}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["match_count"], 14);
    let sample = r.body["sample_domains"].as_array().unwrap();
    assert_eq!(sample.len(), 10);
    assert_eq!(sample[0]["domain"], "p13.example");
    assert_eq!(sample[9]["domain"], "p04.example");
    assert_eq!(sample[0]["industry"], "Software");
    assert_eq!(sample[0]["country"], "DE");
    assert!(sample[0]["confidence"].is_number());
    assert_eq!(app.get("/v1/audiences", &a.api_key).await.body["count"], 0);
}

#[tokio::test]
async fn two_servers_consuming_the_same_events_record_each_match_once() {
    let app = app().await;
    let second = app.another_server().await;
    let a = app.account(Plan::Enterprise).await;
    let aud = create(&app, &a.api_key, "all", json!({})).await;
    for i in 0..300 {
        seed(&app, &format!("t{i}.example"), record(i)).await;
    }
    let (x, y) = tokio::join!(
        crate::evaluation::drain(&app.state),
        crate::evaluation::drain(&second.state)
    );
    assert_eq!(x.unwrap() + y.unwrap(), 300, "each event consumed once");
    let r = app
        .get(&format!("/v1/audiences/{}", aud["id"]), &a.api_key)
        .await;
    assert_eq!(r.body["match_count"], 300);
    assert_eq!(r.body["new_since_viewed"], 300);
    let events = outbox(&app, a.account_id, EventType::AudienceUpdated).await;
    let mut announced: Vec<String> = events
        .iter()
        .flat_map(|e| e["new_domains"].as_array().unwrap().clone())
        .map(|d| d.as_str().unwrap().to_owned())
        .collect();
    announced.sort();
    announced.dedup();
    assert_eq!(announced.len(), 300);
    assert_eq!(
        events
            .iter()
            .map(|e| e["new_domains"].as_array().unwrap().len())
            .sum::<usize>(),
        300,
        "no domain announced twice"
    );
}

#[tokio::test]
async fn a_sample_is_the_same_whichever_plan_takes_it() {
    use crate::domains::facet_filter::SampleOrder;
    let app = app().await;
    for i in 0..40 {
        seed(&app, &format!("s{i:02}.example"), record(i)).await;
        app.clock.advance(std::time::Duration::from_secs(1));
    }
    let filters: crate::audiences::model::AudienceFilters =
        serde_json::from_value(json!({"countries": ["DE", "US"]})).unwrap();
    let filter = filters.checked().unwrap().compile();
    let mut samples = Vec::new();
    // The count only picks the plan: few matches sort, many walk the index.
    for matches in [5, 1_000_000] {
        for order in [SampleOrder::Newest, SampleOrder::Intent] {
            let rows = filter
                .sample(&app.state.db, "d.domain", order, matches, 10)
                .await
                .unwrap();
            let domains: Vec<String> = rows
                .iter()
                .map(|r| sqlx::Row::try_get(r, "domain").unwrap())
                .collect();
            samples.push((order, domains));
        }
    }
    assert_eq!(samples[0], samples[2]);
    assert_eq!(samples[1], samples[3]);
    assert_eq!(samples[0].1.len(), 10);
    assert_eq!(samples[0].1[0], "s38.example", "newest first");
}

#[tokio::test]
async fn imported_records_count_with_the_fields_they_carry() {
    use crate::domains::import::{Format, import};
    use std::io::Cursor;
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let aud = create(
        &app,
        &a.api_key,
        "German software",
        json!({"industries": ["Software"], "countries": ["DE"]}),
    )
    .await;
    let path = format!("/v1/audiences/{}", aud["id"]);
    let lines = r#"{"domain": "epsilon-soft.com", "industry": "Software", "registrant_country": "DE", "confidence": 0.7}
{"domain": "zeta-bare.com"}
"#;
    let input = Cursor::new(lines.as_bytes().to_vec());
    import(&app.state, input, Format::JsonLines, false, |_| {})
        .await
        .unwrap();
    evaluate(&app).await;
    let r = app.get(&path, &a.api_key).await;
    assert_eq!(r.body["match_count"], 1, "{:?}", r.body);
    assert_eq!(r.body["new_since_viewed"], 1);
    // A bare import is a record too: it matches filters that ask nothing
    // of the fields it lacks.
    let preview = |filters: serde_json::Value| {
        let app = &app;
        let key = a.api_key.clone();
        async move {
            app.post("/v1/audiences/preview", &key, json!({"filters": filters}))
                .await
                .body["match_count"]
                .clone()
        }
    };
    assert_eq!(preview(json!({})).await, 2);
    assert_eq!(preview(json!({"min_confidence": 50})).await, 1);
    // Imported again with another industry, it stops matching.
    let input = Cursor::new(br#"{"domain": "epsilon-soft.com", "industry": "Retail"}"#.to_vec());
    import(&app.state, input, Format::JsonLines, false, |_| {})
        .await
        .unwrap();
    evaluate(&app).await;
    assert_eq!(app.get(&path, &a.api_key).await.body["match_count"], 0);
}
