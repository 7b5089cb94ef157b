//! The intelligence funnel through the router: the rollup over every
//! list, the plan gate, and the weekly trends replayed from the history.

use serde_json::json;

use crate::lists::funnel_tests::move_to;
use crate::testkit::{add_domains, days_pass, new_list};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |_| {}).await
}

#[tokio::test]
async fn the_intelligence_funnel_rolls_up_every_list_for_pro_and_above() {
    let app = app().await;
    let starter = app.account(Plan::Starter).await;
    for path in ["/v1/intelligence/funnel", "/v1/intelligence/funnel/trends"] {
        let r = app.get(path, &starter.api_key).await;
        assert_eq!(r.status, 403, "{path}");
        assert_eq!(r.detail(), "API key does not have access to this resource");
    }
    let a = app.account(Plan::Pro).await;
    let key = &a.api_key;
    let one = new_list(&app, key, "One").await;
    let two = new_list(&app, key, "Two").await;
    add_domains(&app, key, one, &["a.com", "b.com", "c.com", "d.com"]).await;
    add_domains(&app, key, two, &["a.com", "e.com", "f.com", "g.com"]).await;
    for (list, d, s) in [
        (one, "a.com", "contacted"),
        (one, "b.com", "contacted"),
        (one, "c.com", "qualified"),
        (two, "a.com", "converted"),
        (two, "e.com", "contacted"),
    ] {
        move_to(&app, key, list, d, s).await;
    }
    // Another account's lists never count.
    let other = app.account(Plan::Pro).await;
    let theirs = new_list(&app, &other.api_key, "Theirs").await;
    add_domains(&app, &other.api_key, theirs, &["x.com"]).await;

    let r = app.get("/v1/intelligence/funnel", key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({
            "stages": {"discovered": 3, "contacted": 3, "qualified": 1, "converted": 1},
            "stage_conversion_rates": {
                "discovered_to_contacted": 100.0,
                "contacted_to_qualified": 33.33,
                "qualified_to_converted": 100.0,
            },
            "overall_conversion_rate": 12.5,
            "total": 8,
        })
    );
}

#[tokio::test]
async fn trends_replay_twelve_weeks_of_history_including_removed_items() {
    let app = app().await;
    let a = app.account(Plan::Enterprise).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "Trend").await;
    // The clock starts Saturday 2026-11-21 12:00; week 0 began Monday 16th.
    add_domains(&app, key, list, &["a.com", "b.com"]).await;
    days_pass(&app, 3); // Tuesday 24th, next week.
    move_to(&app, key, list, "a.com", "contacted").await;
    add_domains(&app, key, list, &["c.com"]).await;
    days_pass(&app, 7); // Tuesday 1st December.
    move_to(&app, key, list, "a.com", "converted").await;
    let r = app
        .call(
            "DELETE",
            &format!("/v1/lists/{list}/items/b.com"),
            Some(key),
            None,
        )
        .await;
    assert_eq!(r.status, 204);

    let r = app.get("/v1/intelligence/funnel/trends", key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["lookback_weeks"], 12);
    let weeks = r.body["weeks"].as_array().unwrap();
    assert_eq!(weeks.len(), 12);
    assert_eq!(weeks[0]["week_start"], "2026-09-14");
    assert_eq!(weeks[8]["total"], 0);
    let w = &weeks[9];
    assert_eq!(w["week_start"], "2026-11-16");
    assert_eq!(w["as_of"], "2026-11-22T23:59:59Z");
    assert_eq!(
        w["stages"],
        json!({"discovered": 2, "contacted": 0, "qualified": 0, "converted": 0})
    );
    assert_eq!(w["entered"]["discovered"], 2);
    let w = &weeks[10];
    assert_eq!(w["week_start"], "2026-11-23");
    assert_eq!(
        w["stages"],
        json!({"discovered": 2, "contacted": 1, "qualified": 0, "converted": 0})
    );
    assert_eq!(w["stage_conversion_rates"]["discovered_to_contacted"], 50.0);
    assert_eq!(
        w["entered"],
        json!({"discovered": 1, "contacted": 1, "qualified": 0, "converted": 0})
    );
    // This week: b.com was removed, a.com converted; last week still shows b.com.
    let w = &weeks[11];
    assert_eq!(w["week_start"], "2026-11-30");
    assert_eq!(w["as_of"], "2026-12-01T12:00:00Z");
    assert_eq!(
        w["stages"],
        json!({"discovered": 1, "contacted": 0, "qualified": 0, "converted": 1})
    );
    assert_eq!(w["overall_conversion_rate"], 50.0);
    assert_eq!(w["total"], 2);
}
