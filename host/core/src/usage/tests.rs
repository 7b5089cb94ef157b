//! The usage endpoints after real traffic.

use std::time::Duration;

use crate::accounts::plans::Plan;
use crate::testing::TestApp;

#[tokio::test]
async fn usage_endpoints_report_recorded_requests() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Pro).await;
    let other = app.account(Plan::Pro).await;
    for _ in 0..3 {
        assert_eq!(app.get("/v1/account", &acct.api_key).await.status, 200);
    }
    assert_eq!(
        app.get("/v1/account/members", &acct.api_key).await.status,
        200
    );
    assert_eq!(
        app.get("/v1/reseller/clients", &acct.api_key).await.status,
        403
    );
    assert_eq!(app.get("/v1/account", &other.api_key).await.status, 200);
    app.clock.advance(Duration::from_secs(3600));
    assert_eq!(
        app.get("/v1/usage/stats?days=7&x=1", &acct.api_key)
            .await
            .status,
        200
    );
    app.state.usage.flush().await;

    let stats = app.get("/v1/usage/stats?days=7", &acct.api_key).await;
    assert_eq!(stats.status, 200);
    let b = &stats.body;
    assert_eq!(b["total_queries"], 6, "{b}");
    assert_eq!(b["daily_breakdown"].as_array().unwrap().len(), 7);
    assert_eq!(b["daily_breakdown"][6]["date"], "2026-11-21");
    assert_eq!(b["daily_breakdown"][6]["queries"], 6);
    assert_eq!(b["endpoint_breakdown"]["/v1/account"], 3);
    assert_eq!(b["endpoint_breakdown"]["/v1/usage/stats"], 1);
    assert_eq!(b["top_categories"][0]["category"], "account");
    assert_eq!(b["top_categories"][0]["count"], 4);
    assert!(
        b["period_start"]
            .as_str()
            .unwrap()
            .starts_with("2026-11-15T00:00:00")
    );

    app.state.usage.flush().await;
    let limits = app.get("/v1/usage/rate-limits", &acct.api_key).await;
    let l = &limits.body;
    assert_eq!(l["plan"], "pro");
    assert_eq!(l["rate_limit"]["requests_per_minute"], 300);
    assert_eq!(l["current_usage"]["monthly_queries_limit"], 100_000);
    // The 403 was refused by the plan gate inside the handler, so it counts;
    // this call itself is the 8th.
    assert_eq!(l["current_usage"]["monthly_queries_used"], 8);
    assert_eq!(l["current_usage"]["minute_requests"], 3);
    assert_eq!(l["current_usage"]["daily_requests"], 7);
    assert_eq!(l["hourly_history"].as_array().unwrap().len(), 24);
    assert_eq!(l["hourly_history"][22]["requests"], 5);
    assert_eq!(l["hourly_history"][23]["requests"], 2);
    assert_eq!(l["top_endpoints"][0]["endpoint"], "/v1/account");
    assert_eq!(l["top_endpoints"][0]["requests"], 3);
    assert!(
        l["current_usage"]["reset_date"]
            .as_str()
            .unwrap()
            .starts_with("2026-12-")
    );

    app.state.usage.flush().await;
    let recent = app.get("/v1/usage/recent-activity", &acct.api_key).await;
    let items = recent.body["recent_requests"].as_array().unwrap();
    assert_eq!(items.len(), 8);
    assert_eq!(items[0]["endpoint"], "/v1/usage/rate-limits");
    let stats_call = items
        .iter()
        .find(|i| i["filters_summary"]["x"] == "1")
        .unwrap();
    assert_eq!(stats_call["method"], "GET");
    assert_eq!(stats_call["status"], 200);
    assert_eq!(stats_call["filters_summary"]["days"], "7");
    assert!(stats_call["id"].is_string());
    assert!(stats_call["response_time_ms"].is_i64());
    assert!(items.iter().any(|i| i["status"] == 403));
    // Tenant isolation: the other account's call is not here.
    assert!(items.iter().all(|i| i["timestamp"].is_string()));
    let other_recent = app.get("/v1/usage/recent-activity", &other.api_key).await;
    assert_eq!(
        other_recent.body["recent_requests"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // Per-key request counts are kept.
    app.state.usage.flush().await;
    let keys = app.state.keys.list(acct.account_id).await.unwrap();
    assert_eq!(keys[0].request_count, 9);
    assert!(keys[0].last_used_at.is_some());
}

#[tokio::test]
async fn days_is_validated() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Starter).await;
    for bad in ["0", "91", "-3", "1.5", "x"] {
        let r = app
            .get(&format!("/v1/usage/stats?days={bad}"), &acct.api_key)
            .await;
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.body["detail"].is_string());
    }
    let r = app.get("/v1/usage/stats?days=90", &acct.api_key).await;
    assert_eq!(r.body["daily_breakdown"].as_array().unwrap().len(), 90);
}
