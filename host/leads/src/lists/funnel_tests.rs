//! The funnel arithmetic on lists with known histories (the test clock
//! moves between changes) and its CSV export.

use serde_json::{Value, json};

use super::funnel::avg_days_in_stage;
use super::history::ItemTimes;
use crate::testkit::{add_domains, days_pass, new_list};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::{TestApp, TestResponse};

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |_| {}).await
}

pub(crate) async fn move_to(
    app: &TestApp,
    key: &str,
    list: i64,
    domain: &str,
    status: &str,
) -> TestResponse {
    let r = app
        .call(
            "PUT",
            &format!("/v1/lists/{list}/items/{domain}/status"),
            Some(key),
            Some(json!({"status": status})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r
}

#[tokio::test]
async fn the_funnel_counts_shares_conversions_and_days_in_stage_from_history() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "Q1").await;
    let r = app
        .call(
            "PUT",
            &format!("/v1/lists/{list}"),
            Some(key),
            Some(json!({"conversion_goal": 25})),
        )
        .await;
    assert_eq!(r.status, 200);
    // Day 0: four items discovered.
    add_domains(&app, key, list, &["a.com", "b.com", "c.com", "d.com"]).await;
    days_pass(&app, 2);
    // Day 2: a, b, c contacted.
    for d in ["a.com", "b.com", "c.com"] {
        move_to(&app, key, list, d, "contacted").await;
    }
    days_pass(&app, 4);
    // Day 6: a and b qualified.
    move_to(&app, key, list, "a.com", "qualified").await;
    move_to(&app, key, list, "b.com", "qualified").await;
    days_pass(&app, 4);
    // Day 10: a converted.
    move_to(&app, key, list, "a.com", "converted").await;
    days_pass(&app, 2);
    // Day 12: the funnel.
    let r = app.get(&format!("/v1/lists/{list}/funnel"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["total"], 4);
    assert_eq!(
        r.body["stages"],
        json!([
            {"stage": "discovered", "count": 1, "percentage": 25.0},
            {"stage": "contacted", "count": 1, "percentage": 25.0},
            {"stage": "qualified", "count": 1, "percentage": 25.0},
            {"stage": "converted", "count": 1, "percentage": 25.0},
        ])
    );
    assert_eq!(
        r.body["conversions"],
        json!([
            {"from": "discovered", "to": "contacted", "rate": 100.0},
            {"from": "contacted", "to": "qualified", "rate": 100.0},
            {"from": "qualified", "to": "converted", "rate": 100.0},
        ])
    );
    // discovered: a, b, c stayed 2 days, d is still there after 12 = 18/4.
    // contacted: a and b 4 days, c still there after 10 = 18/3.
    // qualified: a 4 days, b still there after 6 = 10/2.
    // converted: a since day 10 = 2.
    assert_eq!(
        r.body["avg_days_in_stage"],
        json!({"discovered": 4.5, "contacted": 6.0, "qualified": 5.0, "converted": 2.0})
    );
    assert_eq!(r.body["conversion_goal"], 25.0);

    // Moving c back to discovered: a second stay in discovered (0 days so
    // far) and a shorter contacted stay (10 days) enter the means.
    move_to(&app, key, list, "c.com", "discovered").await;
    let r = app.get(&format!("/v1/lists/{list}/funnel"), key).await;
    assert_eq!(r.body["stages"][0]["count"], 2);
    assert_eq!(r.body["stages"][0]["percentage"], 50.0);
    assert_eq!(r.body["conversions"][0]["rate"], 0.0);
    // discovered: 2 + 2 + 2 + 12 + 0 = 18 over 5 stays.
    assert_eq!(r.body["avg_days_in_stage"]["discovered"], 3.6);
    // contacted: 4 + 4 + 10 = 18 over 3.
    assert_eq!(r.body["avg_days_in_stage"]["contacted"], 6.0);

    // An empty list: zeros, never a division by zero.
    let empty = new_list(&app, key, "Empty").await;
    let r = app.get(&format!("/v1/lists/{empty}/funnel"), key).await;
    assert_eq!(r.body["total"], 0);
    assert_eq!(r.body["stages"][1]["percentage"], 0.0);
    assert_eq!(r.body["conversions"][2]["rate"], 0.0);
    assert_eq!(r.body["avg_days_in_stage"]["converted"], 0.0);
    assert!(r.body["conversion_goal"].is_null());
}

#[test]
fn items_without_history_fall_back_to_status_changed_at_then_added_at() {
    let day = 86_400_000;
    let items = [
        ItemTimes {
            id: 1,
            status: "contacted".into(),
            added_at: 0,
            status_changed_at: Some(3 * day),
        },
        ItemTimes {
            id: 2,
            status: "contacted".into(),
            added_at: day,
            status_changed_at: None,
        },
        ItemTimes {
            id: 3,
            status: "qualified".into(),
            added_at: 0,
            status_changed_at: None,
        },
    ];
    // Item 3 has history: discovered for 1 day, then qualified since.
    let history = [
        (3, Some("discovered".to_string()), 0),
        (3, Some("qualified".to_string()), day),
    ];
    let days = avg_days_in_stage(&items, &history, 10 * day);
    // contacted: item 1 since day 3 (7), item 2 since it was added (9).
    assert_eq!(days.contacted, 8.0);
    assert_eq!(days.discovered, 1.0);
    assert_eq!(days.qualified, 9.0);
    assert_eq!(days.converted, 0.0);
}

#[tokio::test]
async fn the_funnel_export_is_csv_with_the_spec_columns_and_no_formulas() {
    let app = app().await;
    let a = app.account(Plan::Free).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "Export").await;
    let items = json!({"items": [
        {"domain": "acme.com", "notes": "=HYPERLINK(\"http://evil\",\"x\")"},
        {"domain": "beta.io", "notes": "plain, with \"quotes\""},
    ]});
    app.post(&format!("/v1/lists/{list}/items"), key, items)
        .await;
    days_pass(&app, 1);
    move_to(&app, key, list, "beta.io", "contacted").await;

    let r = app
        .get(&format!("/v1/lists/{list}/funnel/export"), key)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/csv; charset=utf-8"));
    assert!(
        r.header("content-disposition")
            .unwrap()
            .starts_with("attachment")
    );
    let Value::String(text) = &r.body else {
        panic!("not text: {:?}", r.body)
    };
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        ["Domain", "Status", "Notes", "Added At", "Status Changed At"]
    );
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    assert_eq!(
        rows,
        [
            [
                "acme.com",
                "discovered",
                "'=HYPERLINK(\"http://evil\",\"x\")",
                "2026-11-21T12:00:00Z",
                ""
            ],
            [
                "beta.io",
                "contacted",
                "plain, with \"quotes\"",
                "2026-11-21T12:00:00Z",
                "2026-11-22T12:00:00Z"
            ],
        ]
    );
}
