//! Usage at scale: rollups, retention, operator limits, limits shared by
//! two servers, restarts, and the backfill of existing rows. On both backends.

use std::time::Duration;

use serde_json::json;
use sqlx::Row;

use crate::accounts::limits::LimitSetting;
use crate::accounts::plans::Plan;
use crate::store::Backend;
use crate::testing::TestApp;

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn rollups_count_everything_while_raw_rows_keep_only_the_newest() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Pro).await;
    for i in 0..25 {
        let path = if i % 5 == 0 {
            "/v1/account/members"
        } else {
            "/v1/account"
        };
        assert_eq!(app.get(path, &acct.api_key).await.status, 200);
    }
    app.state.usage.flush().await;
    let raw = count(&app, "SELECT COUNT(*) FROM usage_events").await;
    assert!(raw <= 25, "{raw}");
    let pruned = super::housekeeping::prune(&app.state).await.unwrap();
    assert_eq!(count(&app, "SELECT COUNT(*) FROM usage_events").await, 10);
    assert_eq!(pruned.raw_usage as i64, raw - 10);

    let stats = app.get("/v1/usage/stats?days=1", &acct.api_key).await.body;
    assert_eq!(stats["total_queries"], 25, "{stats}");
    assert_eq!(stats["endpoint_breakdown"]["/v1/account"], 20);
    assert_eq!(stats["endpoint_breakdown"]["/v1/account/members"], 5);
    assert_eq!(
        stats["top_categories"][0],
        json!({"category": "account", "count": 25})
    );
    app.state.usage.flush().await;
    let recent = app
        .get("/v1/usage/recent-activity", &acct.api_key)
        .await
        .body;
    let items = recent["recent_requests"].as_array().unwrap();
    assert_eq!(items.len(), 10);
    assert_eq!(items[0]["endpoint"], "/v1/usage/stats");
    let limits = app.get("/v1/usage/rate-limits", &acct.api_key).await.body;
    // The quota counter: 25 + stats + recent-activity + this call. The
    // rollups hold what the writer has flushed: 25 + stats, and the
    // recent-activity call too when the writer's timer (20 ms in tests)
    // fired in between, which a loaded machine makes likely.
    assert_eq!(
        limits["current_usage"]["monthly_queries_used"], 28,
        "{limits}"
    );
    let daily = limits["current_usage"]["daily_requests"].as_i64().unwrap();
    assert!((26..=27).contains(&daily), "{limits}");
    // The handler reads the day and the hours separately, and the writer's
    // timer may flush the recent-activity call between the two reads.
    let hour = limits["hourly_history"][23]["requests"].as_i64().unwrap();
    assert!((26..=daily).contains(&hour), "{limits}");

    // Monthly billable totals, hour and day rollups.
    app.state.usage.flush().await;
    let month = sqlx::query(
        "SELECT month, billable_requests FROM usage_monthly_totals WHERE account_id = $1",
    )
    .bind(acct.account_id)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap();
    assert_eq!(month.get::<String, _>("month"), "2026-11");
    assert_eq!(month.get::<i64, _>("billable_requests"), 28);

    // Hourly rollups go after 48 hours, daily ones stay; counts survive.
    app.clock.advance(Duration::from_secs(49 * 3600));
    super::housekeeping::prune(&app.state).await.unwrap();
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM usage_rollups WHERE grain = 'hour'"
        )
        .await,
        0
    );
    let stats = app.get("/v1/usage/stats?days=7", &acct.api_key).await.body;
    assert_eq!(stats["total_queries"], 28, "{stats}");
}

#[tokio::test]
async fn the_quota_counter_after_a_restart_equals_the_rollups() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Free).await;
    for _ in 0..7 {
        assert_eq!(app.get("/v1/account", &acct.api_key).await.status, 200);
    }
    app.state.usage.flush().await;
    // A stopping server returns its unused reservations (PostgreSQL); on
    // SQLite the counter lives in the process and is rebuilt from rollups.
    if let Some(shared) = &app.state.limits.shared {
        shared.release().await.unwrap();
    }
    let restarted = app.another_server().await;
    let l = restarted
        .get("/v1/usage/rate-limits", &acct.api_key)
        .await
        .body;
    assert_eq!(l["current_usage"]["monthly_queries_used"], 8, "{l}");
    // The counter seeded from the rollups stops at the Free quota of 100.
    app.clock.advance(Duration::from_secs(60));
    let mut ok = 8;
    for i in 0..100 {
        if i % 9 == 0 {
            app.clock.advance(Duration::from_secs(60));
        }
        if restarted.get("/v1/account", &acct.api_key).await.status == 200 {
            ok += 1;
        }
    }
    assert_eq!(ok, 100);
}

#[tokio::test]
async fn operator_limits_apply_and_are_reported() {
    let app = TestApp::with(|c| {
        c.limits.insert(
            "pro".into(),
            [
                (
                    "requests_per_minute".to_string(),
                    LimitSetting::Text("unlimited".into()),
                ),
                ("monthly_quota".to_string(), LimitSetting::Number(30)),
                ("api_keys".to_string(), LimitSetting::Number(1)),
            ]
            .into(),
        );
        c.limits.insert(
            "starter".into(),
            [("requests_per_day".to_string(), LimitSetting::Number(3))].into(),
        );
    })
    .await;
    let pro = app.account(Plan::Pro).await;
    let mut statuses = Vec::new();
    for _ in 0..31 {
        let r = app.get("/v1/account", &pro.api_key).await;
        // Unlimited minute window: nothing to report in the headers.
        assert!(r.header("x-ratelimit-limit").is_none());
        statuses.push(r.status.as_u16());
    }
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 30);
    assert_eq!(statuses[30], 429);

    let starter = app.account(Plan::Starter).await;
    for _ in 0..3 {
        let r = app.get("/v1/usage/rate-limits", &starter.api_key).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("x-ratelimit-limit"), Some("60"));
        assert_eq!(
            r.body["rate_limit"],
            json!({"requests_per_minute": 60, "requests_per_day": 3})
        );
    }
    let over = app.get("/v1/account", &starter.api_key).await;
    assert_eq!(over.status, 429);
    assert!(
        over.detail().starts_with("Rate limit exceeded"),
        "{}",
        over.detail()
    );

    // A fresh Pro account reports the effective values.
    let pro2 = app.account(Plan::Pro).await;
    let l = app.get("/v1/usage/rate-limits", &pro2.api_key).await.body;
    assert_eq!(
        l["rate_limit"]["requests_per_minute"],
        serde_json::Value::Null
    );
    assert_eq!(l["current_usage"]["monthly_queries_limit"], 30);
}

/// Sends `requests` calls of `GET /v1/account` with `key`, alternating
/// between `servers`, and says how many were answered 200.
async fn granted(servers: [&TestApp; 2], key: &str, requests: usize) -> usize {
    let mut ok = 0;
    for i in 0..requests {
        if servers[i % 2].get("/v1/account", key).await.status == 200 {
            ok += 1;
        }
    }
    ok
}

/// Two servers on one database, when the tests run on PostgreSQL (on
/// SQLite one process enforces limits, so the shared-limit tests skip).
async fn two_servers_on_postgres() -> Option<(TestApp, TestApp)> {
    let a = TestApp::new().await;
    if a.state.db.backend != Backend::Postgres {
        return None;
    }
    let b = a.another_server().await;
    Some((a, b))
}

/// Two servers on one PostgreSQL database, taking alternate requests for one
/// key, grant exactly what one server grants: the minute limit with its
/// burst, then the monthly quota. (On SQLite one process enforces limits.)
#[tokio::test]
async fn two_servers_grant_exactly_what_one_grants() {
    let Some((a, b)) = two_servers_on_postgres().await else {
        return;
    };
    let acct = a.account(Plan::Free).await;
    let servers = [&a, &b];
    let mut ok = granted(servers, &acct.api_key, 40).await;
    // 10 per minute plus the burst to 2x within five seconds.
    assert_eq!(ok, 20);
    // The rest of the Free quota of 100, over later minutes.
    for _ in 0..20 {
        a.clock.advance(Duration::from_secs(60));
        ok += granted(servers, &acct.api_key, 10).await;
    }
    assert_eq!(ok, 100);
}

/// With a limit large enough for blocks, each server reserves its next
/// block ahead while the current one serves; the two still grant exactly
/// the limit and its burst.
#[tokio::test]
async fn blocks_reserved_ahead_keep_the_grant_exact() {
    let Some((a, b)) = two_servers_on_postgres().await else {
        return;
    };
    let acct = a.account(Plan::Enterprise).await;
    let servers = [&a, &b];
    let mut ok = 0;
    for _ in 0..21 {
        ok += granted(servers, &acct.api_key, 100).await;
        // Let the reservations ahead run.
        tokio::task::yield_now().await;
    }
    // 1,000 a minute plus the burst to 2x within five seconds (the clock
    // stands still).
    assert_eq!(ok, 2_000);
    let ahead: u64 = servers
        .iter()
        .map(|s| s.state.limits.shared.as_ref().unwrap().reserved_ahead())
        .sum();
    assert!(ahead > 0, "no block was reserved ahead");
}

/// Blocks reserved ahead for many windows at once go in few statements,
/// and two servers doing so over the same windows (their batches lock the
/// rows in one order, so they never deadlock) still grant each window
/// exactly its limit.
#[tokio::test]
async fn blocks_ahead_of_many_windows_are_reserved_together_and_exactly() {
    let Some((a, b)) = two_servers_on_postgres().await else {
        return;
    };
    const WINDOWS: usize = 40;
    const LIMIT: u64 = 1_000;
    let start = a.state.clock.now_ms();
    let scopes: Vec<String> = (0..WINDOWS).map(|i| format!("minute:test:{i}")).collect();
    let limiters = [&a, &b].map(|s| s.state.limits.shared.as_ref().unwrap());
    // Each server asks for the whole limit, so a block one of them holds
    // when the row runs out is still served by its own requests.
    let rounds = LIMIT as usize;
    let (from_a, from_b) = tokio::join!(
        take_rounds(limiters[0], &scopes, start, LIMIT, rounds, Takes::InTurn),
        take_rounds(limiters[1], &scopes, start, LIMIT, rounds, Takes::InTurn)
    );
    for i in 0..WINDOWS {
        assert_eq!(from_a[i] + from_b[i], LIMIT, "window {i}");
    }
    let ahead: u64 = limiters.iter().map(|l| l.reserved_ahead()).sum();
    let statements: u64 = limiters.iter().map(|l| l.ahead_statements()).sum();
    assert!(ahead >= WINDOWS as u64, "{ahead} blocks reserved ahead");
    assert!(
        statements * 4 <= ahead,
        "{ahead} blocks ahead took {statements} statements"
    );
}

/// When a minute begins, the requests of many windows wait for their first
/// block at the same moment: they go to the database in few statements,
/// and two servers doing so over the same windows (their inserts and
/// updates take rows in one order) still grant each window exactly its
/// limit, down to the one-request blocks at the end.
#[tokio::test]
async fn first_blocks_of_many_windows_are_reserved_together_and_exactly() {
    let Some((a, b)) = two_servers_on_postgres().await else {
        return;
    };
    const WINDOWS: usize = 100;
    const LIMIT: u64 = 1_000;
    let start = a.state.clock.now_ms();
    let scopes: Vec<String> = (0..WINDOWS).map(|i| format!("minute:first:{i}")).collect();
    let limiters = [&a, &b].map(|s| s.state.limits.shared.as_ref().unwrap());
    let takes = |rounds| {
        let scopes = &scopes;
        async move {
            tokio::join!(
                take_rounds(limiters[0], scopes, start, LIMIT, rounds, Takes::AtOnce),
                take_rounds(limiters[1], scopes, start, LIMIT, rounds, Takes::AtOnce)
            )
        }
    };
    let (first_a, first_b) = takes(1).await;
    assert!(first_a.iter().chain(&first_b).all(|&n| n == 1));
    let statements: u64 = limiters.iter().map(|l| l.waiting_statements()).sum();
    assert!(
        statements <= 10,
        "{} first blocks took {statements} statements",
        2 * WINDOWS
    );
    let rows = count(
        &a,
        "SELECT COUNT(*) FROM limit_windows WHERE scope LIKE 'minute:first:%' AND used = 234",
    )
    .await;
    assert_eq!(
        rows, WINDOWS as i64,
        "each window holds both servers' first blocks, 125 and 109"
    );
    // Each server asks for the whole limit (see the test above).
    let (rest_a, rest_b) = takes(LIMIT as usize - 1).await;
    for i in 0..WINDOWS {
        assert_eq!(1 + rest_a[i] + 1 + rest_b[i], LIMIT, "window {i}");
    }
}

/// A stopping server gives back, in batches, exactly what it holds of each
/// window and has not served.
#[tokio::test]
async fn a_stopping_server_gives_back_what_it_holds_of_each_window() {
    let app = TestApp::new().await;
    let Some(limiter) = app.state.limits.shared.as_ref() else {
        return;
    };
    const WINDOWS: usize = 600;
    let start = app.state.clock.now_ms();
    let scopes: Vec<String> = (0..WINDOWS).map(|i| format!("minute:held:{i}")).collect();
    let (limit_1000, limit_10) = scopes.split_at(WINDOWS / 2);
    take_rounds(limiter, limit_1000, start, 1_000, 3, Takes::AtOnce).await;
    take_rounds(limiter, limit_10, start, 10, 3, Takes::AtOnce).await;
    limiter.release().await.unwrap();
    let served_only = count(
        &app,
        "SELECT COUNT(*) FROM limit_windows WHERE scope LIKE 'minute:held:%' AND used = 3",
    )
    .await;
    assert_eq!(
        served_only, WINDOWS as i64,
        "rows count the 3 served and nothing held"
    );
}

/// How [`take_rounds`] takes from its windows in a round.
#[derive(Clone, Copy)]
enum Takes {
    /// One after another, yielding after each round, so the blocks ahead
    /// of many windows fall due within the same few milliseconds.
    InTurn,
    /// All at the same moment, so many requests wait for a block at once.
    AtOnce,
}

/// Takes from each window `rounds` times; returns what each window
/// granted.
async fn take_rounds(
    limiter: &crate::platform::shared_limiter::SharedLimiter,
    scopes: &[String],
    start: i64,
    limit: u64,
    rounds: usize,
    how: Takes,
) -> Vec<u64> {
    let window = |scope| crate::platform::shared_limiter::Window {
        scope,
        start,
        ends_at: start + 60_000,
        limit,
        burst: None,
    };
    let mut granted = vec![0u64; scopes.len()];
    for _ in 0..rounds {
        match how {
            Takes::InTurn => {
                for (i, scope) in scopes.iter().enumerate() {
                    if limiter.take(window(scope)).await.unwrap().allowed {
                        granted[i] += 1;
                    }
                }
                tokio::task::yield_now().await;
            }
            Takes::AtOnce => {
                let takes = scopes.iter().map(|scope| limiter.take(window(scope)));
                for (i, grant) in futures::future::join_all(takes)
                    .await
                    .into_iter()
                    .enumerate()
                {
                    if grant.unwrap().allowed {
                        granted[i] += 1;
                    }
                }
            }
        }
    }
    granted
}

/// A server serves the requests after a reservation from its block in
/// memory: 50 requests of one key reserve one block of the minute window
/// and at most one ahead (125 and 109 of the 1,000), not a block each.
#[tokio::test]
async fn requests_after_a_reservation_are_served_from_the_block() {
    let a = TestApp::new().await;
    if a.state.db.backend != Backend::Postgres {
        return;
    }
    let acct = a.account(Plan::Enterprise).await;
    for _ in 0..50 {
        assert_eq!(a.get("/v1/account", &acct.api_key).await.status, 200);
        tokio::task::yield_now().await;
    }
    let reserved = count(
        &a,
        "SELECT COALESCE(MAX(used), 0) FROM limit_windows WHERE scope LIKE 'minute:key:%'",
    )
    .await;
    assert!(
        (125..=234).contains(&reserved),
        "the minute row counts {reserved}: requests were not served from the block"
    );
}

/// The migration's backfill turns existing raw rows into rollups and
/// monthly totals (run again here on rows inserted after the migration).
#[tokio::test]
async fn the_backfill_rolls_up_existing_rows() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Pro).await;
    let day = 1_763_683_200_000_i64; // 2025-11-21T00:00:00Z
    for (ts, client, billable) in [
        (day + 1_000, None, 1),
        (day + 2_000, None, 0),
        (day + 3_600_000, Some(7_i64), 1),
        (day + 86_400_000, None, 1),
    ] {
        sqlx::query(
            "INSERT INTO usage_events (request_id, account_id, reseller_client_id, ts, method, endpoint, \
             category, status, response_time_ms, billable) VALUES ($1, $2, $3, $4, 'GET', '/v1/account', \
             'account', 200, 1, $5)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(acct.account_id)
        .bind(client)
        .bind(ts)
        .bind(billable)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    }
    let file = match app.state.db.backend {
        Backend::Sqlite => include_str!("../../../../migrations/sqlite/0004_usage_rollups.sql"),
        Backend::Postgres => include_str!("../../../../migrations/postgres/0004_usage_rollups.sql"),
    };
    let backfill = file
        .split("-- Backfill from the raw rows recorded so far.")
        .nth(1)
        .unwrap()
        .split("-- Limits shared")
        .next()
        .unwrap();
    for statement in backfill.split(';').filter(|s| !s.trim().is_empty()) {
        sqlx::query(sqlx::AssertSqlSafe(statement.to_string()))
            .execute(&app.state.db.pool)
            .await
            .unwrap();
    }
    let rows = sqlx::query(
        "SELECT grain, bucket, client_id, billable, requests FROM usage_rollups \
         WHERE account_id = $1 ORDER BY grain, bucket, client_id, billable",
    )
    .bind(acct.account_id)
    .fetch_all(&app.state.db.pool)
    .await
    .unwrap();
    let got: Vec<(String, i64, i64, i64, i64)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect();
    let h = 3_600_000;
    assert_eq!(
        got,
        [
            ("day".into(), day, 0, 0, 1),
            ("day".into(), day, 0, 1, 1),
            ("day".into(), day, 7, 1, 1),
            ("day".into(), day + 24 * h, 0, 1, 1),
            ("hour".into(), day, 0, 0, 1),
            ("hour".into(), day, 0, 1, 1),
            ("hour".into(), day + h, 7, 1, 1),
            ("hour".into(), day + 24 * h, 0, 1, 1),
        ]
    );
    let months: Vec<(i64, String, i64)> = sqlx::query(
        "SELECT client_id, month, billable_requests FROM usage_monthly_totals WHERE account_id = $1 \
         ORDER BY client_id",
    )
    .bind(acct.account_id)
    .fetch_all(&app.state.db.pool)
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2)))
    .collect();
    assert_eq!(
        months,
        [(0, "2025-11".to_string(), 2), (7, "2025-11".to_string(), 1)]
    );
}
