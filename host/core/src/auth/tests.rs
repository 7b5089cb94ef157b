//! Dashboard sign-in through the router, on both backends.

use std::time::Duration;

use serde_json::{Value, json};

use super::totp;
use crate::accounts::plans::Plan;
use crate::platform::clock::Clock;
use crate::testing::TestApp;

async fn register_and_login(app: &TestApp, email: &str) -> String {
    let r = app
        .call(
            "POST",
            "/auth/register",
            None,
            Some(json!({"email": email, "password": "s3cret-pass"})),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = app
        .call(
            "POST",
            "/auth/login",
            None,
            Some(json!({"email": email, "password": "s3cret-pass"})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["token_type"], "bearer");
    r.body["access_token"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn register_login_and_session_expiry() {
    let app = TestApp::new().await;
    let jwt = register_and_login(&app, "Ann@Example.com").await;
    let me = app.call("GET", "/auth/me", Some(&jwt), None).await;
    assert_eq!(me.status, 200);
    assert_eq!(me.body["email"], "ann@example.com");
    assert_eq!(me.body["role"], "owner");

    // Duplicate registration, bad email, short password.
    let dup = app
        .call(
            "POST",
            "/auth/register",
            None,
            Some(json!({"email": "ann@example.com", "password": "another-pass"})),
        )
        .await;
    assert_eq!(dup.status, 409);
    for bad in [
        json!({"email": "nope", "password": "longenough"}),
        json!({"email": "b@example.com", "password": "short"}),
        json!({"email": "b@example.com"}),
    ] {
        let r = app.call("POST", "/auth/register", None, Some(bad)).await;
        assert_eq!(r.status, 400, "{:?}", r.body);
    }

    let wrong = app
        .call(
            "POST",
            "/auth/login",
            None,
            Some(json!({"email": "ann@example.com", "password": "wrong-pass"})),
        )
        .await;
    assert_eq!(wrong.status, 401);
    let unknown = app
        .call(
            "POST",
            "/auth/login",
            None,
            Some(json!({"email": "who@example.com", "password": "wrong-pass"})),
        )
        .await;
    assert_eq!(unknown.status, 401);
    assert_eq!(wrong.detail(), unknown.detail());

    // Tokens expire after 30 minutes; API keys are not dashboard tokens.
    app.clock.advance(Duration::from_secs(29 * 60));
    assert_eq!(
        app.call("GET", "/auth/me", Some(&jwt), None).await.status,
        200
    );
    app.clock.advance(Duration::from_secs(60));
    let expired = app.call("GET", "/auth/me", Some(&jwt), None).await;
    assert_eq!(expired.status, 401);
    assert_eq!(expired.detail(), "Not authenticated");
    let acct = app.account(Plan::Pro).await;
    assert_eq!(
        app.call("GET", "/auth/me", Some(&acct.api_key), None)
            .await
            .status,
        401
    );
    // And a JWT is not an API key.
    assert_eq!(app.get("/v1/account", &jwt).await.status, 401);
}

#[tokio::test]
async fn dashboard_manages_api_keys_of_its_own_account_only() {
    let app = TestApp::new().await;
    let jwt = register_and_login(&app, "owner@example.com").await;
    let created = app
        .call(
            "POST",
            "/auth/api-keys",
            Some(&jwt),
            Some(json!({"name": "ci", "allowed_endpoint_groups": ["usage"]})),
        )
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let key = created.body["api_key"].as_str().unwrap().to_string();
    let key_id = created.body["key"]["id"].as_i64().unwrap();
    assert!(
        created.body["key"]["key_preview"]
            .as_str()
            .unwrap()
            .ends_with(&key[key.len() - 4..])
    );
    assert_eq!(app.get("/v1/usage/rate-limits", &key).await.status, 200);

    let list = app.call("GET", "/auth/api-keys", Some(&jwt), None).await;
    let keys = list.body["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2, "the default key and the new one");
    // Listings never contain a key.
    assert!(!list.body.to_string().contains(&key));

    // Another account's key id answers 404 and stays valid.
    let other = app.account(Plan::Pro).await;
    let other_key_id = app.state.keys.list(other.account_id).await.unwrap()[0].id;
    let r = app
        .call(
            "DELETE",
            &format!("/auth/api-keys/{other_key_id}"),
            Some(&jwt),
            None,
        )
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(app.get("/v1/account", &other.api_key).await.status, 200);

    let r = app
        .call(
            "DELETE",
            &format!("/auth/api-keys/{key_id}"),
            Some(&jwt),
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(app.get("/v1/usage/rate-limits", &key).await.status, 401);
    let again = app
        .call(
            "DELETE",
            &format!("/auth/api-keys/{key_id}"),
            Some(&jwt),
            None,
        )
        .await;
    assert_eq!(again.status, 404);

    // Bad input: empty name, bad CIDR; nothing stored.
    for bad in [
        json!({"name": ""}),
        json!({"name": "x", "allowed_ips": ["10.0.0.0/33"]}),
    ] {
        let r = app
            .call("POST", "/auth/api-keys", Some(&jwt), Some(bad))
            .await;
        assert_eq!(r.status, 400);
    }
    let list = app.call("GET", "/auth/api-keys", Some(&jwt), None).await;
    assert_eq!(list.body["keys"].as_array().unwrap().len(), 2);

    // Free plan allows 2 active keys.
    let r = app
        .call(
            "POST",
            "/auth/api-keys",
            Some(&jwt),
            Some(json!({"name": "two"})),
        )
        .await;
    assert_eq!(r.status, 201);
    let r = app
        .call(
            "POST",
            "/auth/api-keys",
            Some(&jwt),
            Some(json!({"name": "three"})),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.detail().starts_with("Plan limit reached"));
}

fn current_code(app: &TestApp, secret: &str) -> String {
    let secret = totp::decode_secret(secret).unwrap();
    totp::code_at(&secret, (app.clock.now_ms() / 1000) as u64, totp::DIGITS)
}

#[tokio::test]
async fn totp_enrolment_and_single_use_codes() {
    let app = TestApp::new().await;
    let jwt = register_and_login(&app, "two@example.com").await;
    let setup = app.call("POST", "/auth/2fa/setup", Some(&jwt), None).await;
    assert_eq!(setup.status, 200);
    let secret = setup.body["secret"].as_str().unwrap().to_string();
    assert!(
        setup.body["otpauth_url"]
            .as_str()
            .unwrap()
            .starts_with("otpauth://totp/")
    );
    // The secret is stored encrypted.
    let stored: String = sqlx::query_scalar("SELECT totp_secret FROM users WHERE email = $1")
        .bind("two@example.com")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert!(!stored.contains(&secret));

    let wrong = app
        .call(
            "POST",
            "/auth/2fa/enable",
            Some(&jwt),
            Some(json!({"code": "000000"})),
        )
        .await;
    assert_eq!(wrong.status, 400);
    let code = current_code(&app, &secret);
    let ok = app
        .call(
            "POST",
            "/auth/2fa/enable",
            Some(&jwt),
            Some(json!({"code": code})),
        )
        .await;
    assert_eq!(ok.status, 200, "{:?}", ok.body);

    let login = |body: Value| app.call("POST", "/auth/login", None, Some(body));
    let creds = json!({"email": "two@example.com", "password": "s3cret-pass"});
    let r = login(creds.clone()).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.detail(), "Two-factor code required");

    app.clock.advance(Duration::from_secs(30));
    let code = current_code(&app, &secret);
    let with = |code: &str| {
        let mut b = creds.clone();
        b["totp_code"] = json!(code);
        b
    };
    assert_eq!(login(with(&code)).await.status, 200);
    // The same code again, still inside its window: refused.
    let replay = login(with(&code)).await;
    assert_eq!(replay.status, 401);
    assert_eq!(replay.detail(), "Invalid two-factor code");
    // Wrong password with a valid code: refused without revealing which.
    app.clock.advance(Duration::from_secs(30));
    let mut bad = with(&current_code(&app, &secret));
    bad["password"] = json!("wrong-pass");
    assert_eq!(login(bad).await.detail(), "Invalid email or password");
}

#[tokio::test]
async fn password_reset_by_token_is_single_use_and_expires() {
    let app = TestApp::new().await;
    register_and_login(&app, "reset@example.com").await;
    let r = app
        .call(
            "POST",
            "/auth/forgot-password",
            None,
            Some(json!({"email": "reset@example.com"})),
        )
        .await;
    assert_eq!(r.status, 200);
    let unknown = app
        .call(
            "POST",
            "/auth/forgot-password",
            None,
            Some(json!({"email": "nobody@example.com"})),
        )
        .await;
    assert_eq!(unknown.body, r.body, "no account enumeration");

    // The mail went to the log (no SMTP configured); issue a token directly
    // the same way to learn its value.
    let token = issue_reset_token(&app, "reset@example.com").await;
    let bad = app
        .call(
            "POST",
            "/auth/reset-password",
            None,
            Some(json!({"token": "nope", "new_password": "brand-new-pass"})),
        )
        .await;
    assert_eq!(bad.status, 400);
    let weak = app
        .call(
            "POST",
            "/auth/reset-password",
            None,
            Some(json!({"token": token, "new_password": "short"})),
        )
        .await;
    assert_eq!(weak.status, 400);
    let ok = app
        .call(
            "POST",
            "/auth/reset-password",
            None,
            Some(json!({"token": token, "new_password": "brand-new-pass"})),
        )
        .await;
    assert_eq!(ok.status, 200);
    let again = app
        .call(
            "POST",
            "/auth/reset-password",
            None,
            Some(json!({"token": token, "new_password": "another-pass1"})),
        )
        .await;
    assert_eq!(again.status, 400);
    let login = app
        .call(
            "POST",
            "/auth/login",
            None,
            Some(json!({"email": "reset@example.com", "password": "brand-new-pass"})),
        )
        .await;
    assert_eq!(login.status, 200);

    let late = issue_reset_token(&app, "reset@example.com").await;
    app.clock.advance(Duration::from_secs(3601));
    let expired = app
        .call(
            "POST",
            "/auth/reset-password",
            None,
            Some(json!({"token": late, "new_password": "brand-new-pass2"})),
        )
        .await;
    assert_eq!(expired.status, 400);
}

/// Inserts a reset token the way `forgot_password` does and returns it.
async fn issue_reset_token(app: &TestApp, email: &str) -> String {
    use sha2::Digest;
    let user = crate::accounts::store::user_by_email(&app.state.db, email)
        .await
        .unwrap()
        .unwrap();
    let token = uuid::Uuid::new_v4().simple().to_string();
    sqlx::query(
        "INSERT INTO password_resets (user_id, token_hash, expires_at) VALUES ($1, $2, $3)",
    )
    .bind(user.id)
    .bind(hex::encode(sha2::Sha256::digest(token.as_bytes())))
    .bind(app.clock.now_ms() + 3_600_000)
    .execute(&app.state.db.pool)
    .await
    .unwrap();
    token
}

#[tokio::test]
async fn sign_in_routes_are_limited_per_ip() {
    let app = TestApp::new().await;
    let body = json!({"email": "x@example.com", "password": "whatever1"});
    for _ in 0..10 {
        let r = app
            .call_from(
                "192.0.2.1:1",
                "POST",
                "/auth/login",
                None,
                Some(body.clone()),
            )
            .await;
        assert_eq!(r.status, 401);
    }
    let limited = app
        .call_from(
            "192.0.2.1:1",
            "POST",
            "/auth/login",
            None,
            Some(body.clone()),
        )
        .await;
    assert_eq!(limited.status, 429);
    assert!(limited.header("retry-after").is_some());
    assert!(
        limited
            .detail()
            .starts_with("Rate limit exceeded. Try again in ")
    );
    // Another IP is unaffected.
    let r = app
        .call_from(
            "192.0.2.2:1",
            "POST",
            "/auth/login",
            None,
            Some(body.clone()),
        )
        .await;
    assert_eq!(r.status, 401);

    for i in 0..3 {
        let r = app
            .call_from(
                "192.0.2.3:1",
                "POST",
                "/auth/forgot-password",
                None,
                Some(json!({"email": format!("{i}@example.com")})),
            )
            .await;
        assert_eq!(r.status, 200);
    }
    let r = app
        .call_from(
            "192.0.2.3:1",
            "POST",
            "/auth/forgot-password",
            None,
            Some(json!({"email": "z@example.com"})),
        )
        .await;
    assert_eq!(r.status, 429);
    // The forgot-password window is 5 minutes.
    app.clock.advance(Duration::from_secs(60));
    let r = app
        .call_from(
            "192.0.2.3:1",
            "POST",
            "/auth/forgot-password",
            None,
            Some(json!({"email": "z@example.com"})),
        )
        .await;
    assert_eq!(r.status, 429);
    app.clock.advance(Duration::from_secs(300));
    let r = app
        .call_from(
            "192.0.2.3:1",
            "POST",
            "/auth/forgot-password",
            None,
            Some(json!({"email": "z@example.com"})),
        )
        .await;
    assert_eq!(r.status, 200);

    for _ in 0..5 {
        let r = app
            .call_from(
                "192.0.2.4:1",
                "POST",
                "/auth/register",
                None,
                Some(json!({"email": "bad", "password": "x"})),
            )
            .await;
        assert_eq!(r.status, 400);
    }
    let r = app
        .call_from(
            "192.0.2.4:1",
            "POST",
            "/auth/register",
            None,
            Some(json!({"email": "ok@example.com", "password": "longenough"})),
        )
        .await;
    assert_eq!(r.status, 429);
}
