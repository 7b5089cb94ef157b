//! The dashboard sign-in flow and usage recording, end to end.

use std::time::{Duration, Instant};

use outreach_e2e::{Deployment, Reply, client, get, post_json};
use serde_json::json;

#[tokio::test]
async fn register_login_me_key_use_revoke() {
    let deployment = Deployment::new();
    let server = deployment.start();
    let http = client();
    let email = "Founder@Example.com";
    let password = "a long enough password";

    let r = post_json(
        &http,
        &server.url("/auth/register"),
        None,
        &json!({"email": email, "password": password}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["email"], "founder@example.com");
    assert_eq!(r.json["plan"], "free");
    let account_id = r.json["account_id"].as_i64().unwrap();

    let again = post_json(
        &http,
        &server.url("/auth/register"),
        None,
        &json!({"email": email, "password": password}),
    )
    .await;
    assert_eq!(again.status, 409, "{}", again.text);
    again.detail();

    let wrong = post_json(
        &http,
        &server.url("/auth/login"),
        None,
        &json!({"email": email, "password": "not the password"}),
    )
    .await;
    assert_eq!(wrong.status, 401, "{}", wrong.text);
    wrong.detail();

    let login = post_json(
        &http,
        &server.url("/auth/login"),
        None,
        &json!({"email": email, "password": password}),
    )
    .await;
    assert_eq!(login.status, 200, "{}", login.text);
    assert_eq!(login.json["token_type"], "bearer");
    let jwt = login.json["access_token"].as_str().unwrap().to_string();

    let me = get(&http, &server.url("/auth/me"), Some(&jwt)).await;
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!(me.json["email"], "founder@example.com");
    assert_eq!(me.json["account_id"], account_id);
    assert_eq!(me.json["role"], "owner");
    let no_session = get(&http, &server.url("/auth/me"), None).await;
    assert_eq!(no_session.status, 401);
    no_session.detail();

    // A JWT is not an API key, and an API key is not a JWT.
    let r = get(&http, &server.url("/v1/account"), Some(&jwt)).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.detail(), "Invalid API key");

    let created = post_json(
        &http,
        &server.url("/auth/api-keys"),
        Some(&jwt),
        &json!({"name": "e2e"}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let api_key = created.json["api_key"].as_str().unwrap().to_string();
    let key_id = created.json["key"]["id"].as_i64().unwrap();
    assert!(api_key.starts_with("otr_"));
    assert_eq!(created.json["key"]["name"], "e2e");

    let account = get(&http, &server.url("/v1/account"), Some(&api_key)).await;
    assert_eq!(account.status, 200, "{}", account.text);
    assert_eq!(account.json["id"], account_id);
    assert_eq!(account.json["plan"], "free");
    let r = get(&http, &server.url("/auth/me"), Some(&api_key)).await;
    assert_eq!(r.status, 401, "an API key opened a dashboard route");

    let listed = get(&http, &server.url("/auth/api-keys"), Some(&jwt)).await;
    assert_eq!(listed.status, 200);
    assert!(
        listed.json["keys"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["id"] == key_id)
    );
    assert!(!listed.text.contains(&api_key), "a listing showed a key");

    let revoked = Reply::read(
        http.delete(server.url(&format!("/auth/api-keys/{key_id}")))
            .bearer_auth(&jwt)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(revoked.status, 204, "{}", revoked.text);
    // Revoked in the serving process, so at once.
    let r = get(&http, &server.url("/v1/account"), Some(&api_key)).await;
    assert_eq!(r.status, 401, "{}", r.text);
    assert_eq!(r.detail(), "Invalid API key");
}

#[tokio::test]
async fn usage_is_recorded_and_visible_within_seconds() {
    let deployment = Deployment::new();
    let server = deployment.start();
    let http = client();
    let account = deployment.create_account("usage@example.com", "enterprise");
    let key = account.api_key;

    let missing = get(
        &http,
        &server.url("/v1/account/members?probe=1&limit=5"),
        Some(&key),
    )
    .await;
    assert_eq!(missing.status, 200, "{}", missing.text);

    // Usage rows are written in batches (default: at most 1 s apart), so the
    // request shows up after a short while, not necessarily at once.
    let deadline = Instant::now() + Duration::from_secs(5);
    let found = loop {
        let r = get(&http, &server.url("/v1/usage/recent-activity"), Some(&key)).await;
        assert_eq!(r.status, 200, "{}", r.text);
        let entry = r.json["recent_requests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["endpoint"] == "/v1/account/members")
            .cloned();
        if let Some(entry) = entry {
            break entry;
        }
        assert!(
            Instant::now() < deadline,
            "no usage row after 5 s: {}",
            r.text
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(found["id"].is_string(), "{found}");
    assert_eq!(found["method"], "GET");
    assert_eq!(found["status"], 200);
    assert!(found["response_time_ms"].is_i64());
    assert!(found["results_count"].is_i64());
    assert!(found["timestamp"].is_string());
    assert!(
        found["filters_summary"].is_object(),
        "query parameters are summarised: {found}"
    );

    let stats = get(&http, &server.url("/v1/usage/stats?days=7"), Some(&key)).await;
    assert_eq!(stats.status, 200, "{}", stats.text);
    assert!(
        stats.json["total_queries"].as_i64().unwrap() >= 1,
        "{}",
        stats.text
    );
    let limits = get(&http, &server.url("/v1/usage/rate-limits"), Some(&key)).await;
    assert_eq!(limits.status, 200);
    assert!(
        limits.json["current_usage"]["monthly_queries_used"]
            .as_i64()
            .unwrap()
            >= 1
    );
    assert_eq!(
        limits.json["current_usage"]["monthly_queries_limit"],
        999_999
    );
}

/// A SIGKILL loses at most the last flush interval of usage: requests
/// flushed before it are all in the rollups after a restart, and the quota
/// counter restarts from them (exactly on SQLite; on PostgreSQL the killed
/// server's unserved reservation stays counted, at most one block).
#[tokio::test]
async fn usage_survives_a_sigkill() {
    let deployment = Deployment::new().with_env("OUTREACH_USAGE_FLUSH_INTERVAL_MS", "100");
    let account = deployment.create_account("killed@example.com", "free");
    let server = deployment.start();
    let http = client();
    for _ in 0..7 {
        let r = get(&http, &server.url("/v1/account"), Some(&account.api_key)).await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;
    drop(server); // SIGKILL: no graceful flush, no returned reservations
    let server = deployment.start();
    let r = get(
        &http,
        &server.url("/v1/usage/rate-limits"),
        Some(&account.api_key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let used = r.json["current_usage"]["monthly_queries_used"]
        .as_u64()
        .unwrap();
    match outreach_e2e::backend() {
        outreach_e2e::Backend::Sqlite => assert_eq!(used, 8, "{}", r.text),
        // Free's 100 requests are reserved in blocks of 12 at first.
        outreach_e2e::Backend::Postgres => assert!((8..=8 + 12).contains(&used), "{}", r.text),
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stats = get(
        &http,
        &server.url("/v1/usage/stats?days=1"),
        Some(&account.api_key),
    )
    .await;
    assert_eq!(stats.json["total_queries"], 8, "{}", stats.text);
}
