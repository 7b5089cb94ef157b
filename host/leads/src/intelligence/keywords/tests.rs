//! Tracked keywords through the router and the pipeline's save: input
//! rules, the plan's gate and cap, matches with their `keyword.match`
//! events across accounts, counts and stats, isolation.

use serde_json::{Value, json};

use crate::intelligence::geo_tests::{app, at};
use crate::testkit::{days_pass, delete, outbox, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::events::EventType;
use outreach_core::testing::TestApp;

const PATH: &str = "/v1/intelligence/tracked-keywords";

async fn track(app: &TestApp, key: &str, keyword: &str) -> (u16, Value) {
    let r = app.post(PATH, key, json!({"keyword": keyword})).await;
    (r.status.as_u16(), r.body)
}

fn about(summary: &str) -> crate::domains::pipeline::save::Findings {
    let mut f = at("Software", Some("DE"), None, None);
    f.summary = Some(summary.into());
    f
}

#[tokio::test]
async fn keywords_are_checked_counted_and_capped() {
    let app = app().await;
    let starter = app.account(Plan::Starter).await;
    assert_eq!(track(&app, &starter.api_key, "crm").await.0, 403);
    assert_eq!(app.get(PATH, &starter.api_key).await.status, 403);

    let key = &app.account(Plan::Pro).await.api_key;
    for bad in ["", "   ", &"x".repeat(201), "two\nlines"] {
        let (status, body) = track(&app, key, bad).await;
        assert_eq!(status, 400, "{bad:?}: {body:?}");
    }
    let (status, body) = track(&app, key, &"y".repeat(200)).await;
    assert_eq!(status, 201, "{body:?}");
    let (status, body) = track(&app, key, "  Cloud Security ").await;
    assert_eq!(status, 201, "{body:?}");
    assert_eq!(body["keyword"], "Cloud Security");
    assert_eq!(body["matches_30d"], 0);
    // The same words in another case or spacing are the same keyword.
    let (status, body) = track(&app, key, "cloud   SECURITY").await;
    assert_eq!(status, 409, "{body:?}");

    // Pro tracks 50.
    for i in 2..50 {
        assert_eq!(track(&app, key, &format!("word{i}")).await.0, 201);
    }
    let (status, body) = track(&app, key, "one too many").await;
    assert_eq!(status, 400, "{body:?}");
    let r = app.get(PATH, key).await;
    assert_eq!(
        (
            r.body["count"].clone(),
            r.body["limit"].clone(),
            r.body["remaining"].clone()
        ),
        (json!(50), json!(50), json!(0))
    );
}

#[tokio::test]
async fn an_enrichment_that_brings_a_keyword_records_a_match_and_its_event() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Enterprise).await;
    let (_, cloud) = track(&app, &a.api_key, "cloud security").await;
    let (_, fintech_a) = track(&app, &a.api_key, "Fintech").await;
    let (_, fintech_b) = track(&app, &b.api_key, "fintech").await;
    let cloud = cloud["id"].as_i64().unwrap();
    let fintech_a = fintech_a["id"].as_i64().unwrap();
    let fintech_b = fintech_b["id"].as_i64().unwrap();

    // "Fintechs" is not the word; "cloud security" is, across a line break.
    seed(&app, "near.com", about("Fintechs love Cloudsecurity.")).await;
    seed(
        &app,
        "acme.com",
        about("We build Cloud\nSecurity for FINTECH teams."),
    )
    .await;
    let events = outbox(&app, a.account_id, EventType::KeywordMatch).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(
        events[0],
        json!({"keyword_id": cloud, "keyword": "cloud security", "domain": "acme.com",
               "excerpt": "We build Cloud Security for FINTECH teams."})
    );
    assert_eq!(events[1]["keyword_id"], fintech_a);
    assert_eq!(events[1]["keyword"], "Fintech");
    let theirs = outbox(&app, b.account_id, EventType::KeywordMatch).await;
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0]["keyword_id"], fintech_b);

    // The same summary again matches nothing new; a summary that drops the
    // keyword and one that brings it back match once more.
    days_pass(&app, 1);
    seed(
        &app,
        "acme.com",
        about("We build Cloud Security for FINTECH teams."),
    )
    .await;
    assert_eq!(
        outbox(&app, a.account_id, EventType::KeywordMatch)
            .await
            .len(),
        2
    );
    seed(&app, "acme.com", about("We build cloud security.")).await;
    days_pass(&app, 10);
    seed(&app, "acme.com", about("Fintech and cloud security.")).await;
    assert_eq!(
        outbox(&app, a.account_id, EventType::KeywordMatch)
            .await
            .len(),
        3
    );

    let r = app.get(&format!("{PATH}/summary"), &a.api_key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({
            "keywords": [
                {"id": fintech_a, "keyword": "Fintech", "matches_7d": 1, "matches_30d": 2},
                {"id": cloud, "keyword": "cloud security", "matches_7d": 0, "matches_30d": 1},
            ],
            "total_7d": 1,
            "total_30d": 3,
        })
    );
    let r = app
        .get(&format!("{PATH}/{fintech_a}/stats"), &a.api_key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["total_matches"], 2);
    let by_day = r.body["by_day"].as_array().unwrap();
    assert_eq!(by_day.len(), 30);
    assert_eq!(by_day[29], json!({"day": "2026-12-02", "cnt": 1}));
    assert_eq!(by_day[18], json!({"day": "2026-11-21", "cnt": 1}));
    assert_eq!(r.body["recent"][0]["domain"], "acme.com");
    assert_eq!(
        r.body["recent"][0]["excerpt"],
        "Fintech and cloud security."
    );
    let r = app.get(PATH, &a.api_key).await;
    assert_eq!(
        r.body["keywords"][1]["last_match_at"],
        "2026-12-02T12:00:00Z"
    );

    // Another account's keyword is not found; a deleted one matches no more.
    let other = format!("{PATH}/{fintech_b}/stats");
    assert_eq!(app.get(&other, &a.api_key).await.status, 404);
    let gone = format!("{PATH}/{fintech_b}");
    assert_eq!(delete(&app, &gone, &a.api_key).await.status, 404);
    // b's "fintech" matched acme.com's return too.
    assert_eq!(
        outbox(&app, b.account_id, EventType::KeywordMatch)
            .await
            .len(),
        2
    );
    assert_eq!(delete(&app, &gone, &b.api_key).await.status, 204);
    seed(&app, "late.com", about("Fintech news.")).await;
    assert_eq!(
        outbox(&app, b.account_id, EventType::KeywordMatch)
            .await
            .len(),
        2
    );
    assert_eq!(
        outbox(&app, a.account_id, EventType::KeywordMatch)
            .await
            .len(),
        4
    );
}
