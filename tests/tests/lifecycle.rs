//! First start, restart, the operator CLI and the metrics listener, as an
//! operator meets them.

use std::os::unix::fs::PermissionsExt;

use outreach_e2e::{CROSS_PROCESS_CACHE, Deployment, client, eventually_status, get};

#[tokio::test]
async fn first_start_prints_the_admin_key_once_and_it_works() {
    let deployment = Deployment::new();
    let server = deployment.start();
    let admin_key = server
        .admin_key
        .clone()
        .unwrap_or_else(|| panic!("no admin key line in {:?}", server.stdout));
    assert!(admin_key.starts_with("otr_"), "{admin_key}");
    assert!(
        server.metrics_url.ends_with("/metrics"),
        "{:?}",
        server.stdout
    );

    let key_file = deployment.outreach_data_dir().join("master.key");
    let mode = std::fs::metadata(&key_file)
        .expect("master.key exists")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "master.key mode {mode:o}");

    let http = client();
    let account = get(&http, &server.url("/v1/account"), Some(&admin_key)).await;
    assert_eq!(account.status, 200, "{}", account.text);
    assert_eq!(account.json["plan"], "enterprise");
    assert_eq!(account.json["status"], "active");

    // A restart on the same data directory and database keeps the admin
    // account and its key, and prints no new key.
    let status = server.stop();
    assert!(status.success(), "graceful stop: {status}");
    let mut again = deployment.start();
    assert_eq!(
        again.admin_key, None,
        "second start printed {:?}",
        again.stdout
    );
    assert!(
        again
            .more_stdout()
            .iter()
            .chain(&again.stdout)
            .all(|l| !l.contains("admin API key")),
        "{:?}",
        again.stdout
    );
    let account = get(&http, &again.url("/v1/account"), Some(&admin_key)).await;
    assert_eq!(account.status, 200, "{}", account.text);
    assert_eq!(account.json["plan"], "enterprise");
}

#[tokio::test]
async fn accounts_create_json_contract_and_the_key_works() {
    let deployment = Deployment::new();
    let server = deployment.start();
    // The server and the CLI share the database while the server runs.
    let out = deployment.cli_ok(&[
        "accounts",
        "create",
        "--email",
        "ops@example.com",
        "--plan",
        "pro",
        "--json",
    ]);
    // Exactly one line of JSON with exactly these three fields.
    assert_eq!(out.lines().count(), 1, "{out:?}");
    let value: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let obj = value.as_object().unwrap();
    let mut fields: Vec<&str> = obj.keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(fields, ["account_id", "api_key", "user_id"]);
    assert!(obj["account_id"].is_i64() && obj["user_id"].is_i64());
    let key = obj["api_key"].as_str().unwrap();
    assert!(key.starts_with("otr_"), "{key}");

    let http = client();
    let account = get(&http, &server.url("/v1/account"), Some(key)).await;
    assert_eq!(account.status, 200, "{}", account.text);
    assert_eq!(account.json["plan"], "pro");
    assert_eq!(account.json["id"], obj["account_id"]);

    // A second account with the same email is refused, with a message.
    let dup = deployment.cli(&[
        "accounts",
        "create",
        "--email",
        "ops@example.com",
        "--plan",
        "free",
        "--json",
    ]);
    assert!(!dup.status.success());
    assert!(String::from_utf8_lossy(&dup.stderr).contains("error"));

    // Suspension from the CLI takes effect on the running server.
    let account_id = obj["account_id"].to_string();
    deployment.cli_ok(&["accounts", "suspend", "--account-id", &account_id]);
    // Another process made the change, so the server sees it once its key
    // cache entry expires.
    let r = eventually_status(
        &http,
        &server.url("/v1/account"),
        Some(key),
        403,
        CROSS_PROCESS_CACHE,
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.text);
    assert_eq!(r.detail(), "API key does not have access to this resource");
}

#[tokio::test]
async fn keys_cli_creates_lists_and_revokes() {
    let deployment = Deployment::new();
    let server = deployment.start();
    let account = deployment.create_account("keys@example.com", "enterprise");
    let id = account.account_id.to_string();
    let out = deployment.cli_ok(&[
        "keys",
        "create",
        "--account-id",
        &id,
        "--name",
        "ci",
        "--json",
    ]);
    let created: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let key = created["api_key"].as_str().unwrap().to_string();
    let key_id = created["key_id"].to_string();

    let http = client();
    assert_eq!(
        get(&http, &server.url("/v1/account"), Some(&key))
            .await
            .status,
        200
    );
    let listed = deployment.cli_ok(&["keys", "list", "--account-id", &id, "--json"]);
    let listed: serde_json::Value = serde_json::from_str(listed.trim()).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"ci"), "{names:?}");
    // Listings never carry the key itself.
    assert!(!listed.to_string().contains(&key));

    deployment.cli_ok(&["keys", "revoke", "--account-id", &id, "--key-id", &key_id]);
    // Revocation from another process reaches the server once its key cache
    // entry expires; the dashboard path (same process) is immediate and is
    // checked in dashboard.rs.
    let r = eventually_status(
        &http,
        &server.url("/v1/account"),
        Some(&key),
        401,
        CROSS_PROCESS_CACHE,
    )
    .await;
    assert_eq!(r.status, 401, "a CLI-revoked key kept working: {}", r.text);
    assert_eq!(r.detail(), "Invalid API key");
}

#[tokio::test]
async fn metrics_endpoint_serves_prometheus_text() {
    let deployment = Deployment::new();
    let server = deployment.start();
    let http = client();
    let key = server.admin_key.clone().unwrap();
    for _ in 0..3 {
        get(&http, &server.url("/v1/account"), Some(&key)).await;
        get(&http, &server.url("/healthz"), None).await;
    }
    let response = http.get(&server.metrics_url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = response.text().await.unwrap();
    assert!(
        content_type.is_empty() || content_type.starts_with("text/plain"),
        "{content_type}"
    );
    assert!(
        body.contains("# TYPE outreach_http_requests_total counter"),
        "{body}"
    );
    let account_line = body
        .lines()
        .find(|l| {
            l.starts_with("outreach_http_requests_total{")
                && l.contains("route=\"/v1/account\"")
                && l.contains("status=\"200\"")
        })
        .unwrap_or_else(|| panic!("no /v1/account counter in:\n{body}"));
    let count: f64 = account_line
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .expect("counter value");
    assert!(count >= 3.0, "{account_line}");
    assert!(body.contains("outreach_http_request_duration_seconds"));
    // The metrics listener is separate from the API listener.
    assert!(!server.metrics_url.starts_with(&server.base_url));
}

#[tokio::test]
async fn readyz_and_openapi_answer() {
    let deployment = Deployment::new();
    let server = deployment.start();
    let http = client();
    let ready = get(&http, &server.url("/readyz"), None).await;
    assert_eq!(ready.status, 200, "{}", ready.text);
    assert_eq!(ready.json["status"], "ready");
    let doc = get(&http, &server.url("/openapi.json"), None).await;
    assert_eq!(doc.status, 200);
    assert!(doc.json["openapi"].as_str().unwrap().starts_with("3."));
    for path in ["/v1/account", "/v1/usage/recent-activity", "/auth/login"] {
        assert!(doc.json["paths"][path].is_object(), "{path} missing");
    }
}
