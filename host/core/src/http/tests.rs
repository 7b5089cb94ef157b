//! The request pipeline through the real router: error shapes, API-key
//! authentication and restrictions, rate limits and quotas.

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use serde_json::json;

use crate::accounts::plans::Plan;
use crate::error::{INVALID_API_KEY, NO_ACCESS};
use crate::testing::TestApp;

#[tokio::test]
async fn missing_malformed_unknown_and_revoked_keys_answer_401() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Pro).await;
    let no_key = app.call("GET", "/v1/account", None, None).await;
    assert_eq!(no_key.status, 401);
    assert_eq!(no_key.detail(), INVALID_API_KEY);
    for bad in [
        "nope",
        "otr_short",
        &format!("{}x", acct.api_key),
        &acct.api_key.replace("otr_", "xyz_"),
    ] {
        let r = app.get("/v1/account", bad).await;
        assert_eq!(r.status, 401, "{bad}");
        assert_eq!(r.detail(), INVALID_API_KEY);
    }
    // A well-formed key that was never issued.
    let (forged, _) = crate::api_keys::format::generate("otr", None);
    assert_eq!(app.get("/v1/account", &forged).await.status, 401);

    let ok = app.get("/v1/account", &acct.api_key).await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body["plan"], "pro");

    let keys = app.state.keys.list(acct.account_id).await.unwrap();
    app.state
        .keys
        .revoke(acct.account_id, keys[0].id)
        .await
        .unwrap();
    let revoked = app.get("/v1/account", &acct.api_key).await;
    assert_eq!(revoked.status, 401);
    assert_eq!(revoked.detail(), INVALID_API_KEY);
}

#[tokio::test]
async fn framework_errors_use_the_detail_shape() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Enterprise).await;
    let unknown = app.get("/v1/no-such-thing", &acct.api_key).await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.detail(), "Not Found");
    let unknown_root = app.call("GET", "/nowhere", None, None).await;
    assert_eq!(unknown_root.status, 404);
    assert!(unknown_root.body["detail"].is_string());

    let wrong_method = app
        .call("DELETE", "/v1/usage/stats", Some(&acct.api_key), None)
        .await;
    assert_eq!(wrong_method.status, 405);
    assert!(wrong_method.body["detail"].is_string());

    // Malformed JSON, wrong types, unknown fields, missing content type.
    let req = Request::post("/v1/account/members")
        .header("authorization", format!("Bearer {}", acct.api_key))
        .header("content-type", "application/json")
        .body(Body::from("{not json"))
        .unwrap();
    let malformed = app.send(req).await;
    assert_eq!(malformed.status, 400);
    assert!(malformed.body["detail"].is_string());
    let wrong_type = app
        .post("/v1/account/members", &acct.api_key, json!({"email": 5}))
        .await;
    assert_eq!(wrong_type.status, 400);
    let unknown_field = app
        .post(
            "/v1/account/members",
            &acct.api_key,
            json!({"email": "a@b.co", "bogus": 1}),
        )
        .await;
    assert_eq!(unknown_field.status, 400);
    let req = Request::post("/v1/account/members")
        .header("authorization", format!("Bearer {}", acct.api_key))
        .body(Body::from("{}"))
        .unwrap();
    assert_eq!(app.send(req).await.status, 400);

    // Oversize bodies.
    let huge = "x".repeat(3 * 1024 * 1024);
    let big = app
        .post("/v1/account/members", &acct.api_key, json!({"email": huge}))
        .await;
    assert_eq!(big.status, 413);
    assert!(big.body["detail"].is_string());

    // Bad query values and path ids.
    let bad_days = app.get("/v1/usage/stats?days=abc", &acct.api_key).await;
    assert_eq!(bad_days.status, 400);
    let out_of_range = app.get("/v1/usage/stats?days=91", &acct.api_key).await;
    assert_eq!(out_of_range.status, 400);
    let negative = app.get("/v1/usage/stats?days=-1", &acct.api_key).await;
    assert_eq!(negative.status, 400);
    // Nothing was added by any of the refused requests.
    let members = app.get("/v1/account/members", &acct.api_key).await;
    assert_eq!(members.body["members"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn every_response_carries_rate_limit_headers_and_429_follows_the_burst() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Free).await;
    let first = app.get("/v1/account", &acct.api_key).await;
    assert_eq!(first.header("x-ratelimit-limit"), Some("10"));
    assert_eq!(first.header("x-ratelimit-remaining"), Some("9"));
    let reset: i64 = first.header("x-ratelimit-reset").unwrap().parse().unwrap();
    assert_eq!(reset * 1000 % 60_000, 0);
    // An error answer carries them too.
    let not_found = app
        .get("/v1/reseller/clients/999/keys", &acct.api_key)
        .await;
    assert_eq!(not_found.status, 405);
    assert!(not_found.header("x-ratelimit-limit").is_some());

    // Free: 10/min, a burst to 20 within 5 s passes, the 21st does not.
    // Two requests so far (the 405 counted too).
    for _ in 3..=20 {
        assert_eq!(app.get("/v1/account", &acct.api_key).await.status, 200);
    }
    let limited = app.get("/v1/account", &acct.api_key).await;
    assert_eq!(limited.status, 429);
    let retry: u64 = limited.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry));
    assert_eq!(
        limited.detail(),
        format!("Rate limit exceeded. Try again in {retry} seconds.")
    );
    assert_eq!(limited.header("x-ratelimit-remaining"), Some("0"));
}

#[tokio::test]
async fn a_burst_lasting_five_seconds_or_more_is_refused() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Free).await;
    for _ in 0..11 {
        assert_eq!(app.get("/v1/account", &acct.api_key).await.status, 200);
    }
    app.clock.advance(Duration::from_secs(5));
    assert_eq!(app.get("/v1/account", &acct.api_key).await.status, 429);
}

#[tokio::test]
async fn monthly_quota_is_independent_of_the_minute_window() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Free).await;
    // Free: 100 per month. Spread calls over minutes so the window never bites.
    for i in 0..100 {
        if i % 10 == 0 {
            app.clock.advance(Duration::from_secs(61));
        }
        let r = app.get("/v1/account", &acct.api_key).await;
        assert_eq!(r.status, 200, "call {i}");
        if i == 79 {
            assert_eq!(r.header("x-quota-pct"), Some("80"));
        }
        if i == 10 {
            assert_eq!(r.header("x-quota-pct"), None);
        }
    }
    app.clock.advance(Duration::from_secs(61));
    let over = app.get("/v1/account", &acct.api_key).await;
    assert_eq!(over.status, 429);
    assert!(
        over.detail()
            .starts_with("Rate limit exceeded. Try again in ")
    );
    // A new process (fresh counters) still sees the quota as used up.
    app.state.usage.flush().await;
    let fresh = crate::usage::quota::QuotaCounters::default();
    let key = app.state.keys.verify(&acct.api_key).await.unwrap().unwrap();
    assert!(fresh.consume(&app.state, &key).await.is_err());
    // The next billing period starts afresh.
    app.clock.advance(Duration::from_secs(32 * 86_400));
    assert_eq!(app.get("/v1/account", &acct.api_key).await.status, 200);
}

#[tokio::test]
async fn suspended_accounts_get_403() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Pro).await;
    crate::accounts::service::set_suspended(&app.state, acct.account_id, true)
        .await
        .unwrap();
    let r = app.get("/v1/account", &acct.api_key).await;
    assert_eq!(r.status, 403);
    assert_eq!(r.detail(), NO_ACCESS);
    crate::accounts::service::set_suspended(&app.state, acct.account_id, false)
        .await
        .unwrap();
    assert_eq!(app.get("/v1/account", &acct.api_key).await.status, 200);
}

#[tokio::test]
async fn ip_allowlists_match_ipv4_clients_on_a_dual_stack_listener() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Pro).await;
    let (_, key) = app
        .state
        .keys
        .create(
            acct.account_id,
            None,
            None,
            serde_json::from_value(json!({"name": "office", "allowed_ips": ["203.0.113.0/24"]}))
                .unwrap(),
        )
        .await
        .unwrap();
    let inside = app
        .call_from(
            "[::ffff:203.0.113.7]:5555",
            "GET",
            "/v1/account",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(inside.status, 200);
    let outside = app
        .call_from("198.51.100.1:5555", "GET", "/v1/account", Some(&key), None)
        .await;
    assert_eq!(outside.status, 403);
    assert_eq!(outside.detail(), NO_ACCESS);
    // X-Forwarded-For from an untrusted peer changes nothing.
    let mut req = Request::get("/v1/account")
        .header("authorization", format!("Bearer {key}"))
        .header("x-forwarded-for", "203.0.113.7")
        .body(Body::empty())
        .unwrap();
    req.extensions_mut().insert(axum::extract::ConnectInfo(
        "198.51.100.1:1".parse::<std::net::SocketAddr>().unwrap(),
    ));
    assert_eq!(app.send(req).await.status, 403);
}

#[tokio::test]
async fn endpoint_group_restrictions() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Pro).await;
    let (_, key) = app
        .state
        .keys
        .create(
            acct.account_id,
            None,
            None,
            serde_json::from_value(
                json!({"name": "usage only", "allowed_endpoint_groups": ["usage"]}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(app.get("/v1/usage/rate-limits", &key).await.status, 200);
    let denied = app.get("/v1/account", &key).await;
    assert_eq!(denied.status, 403);
    assert_eq!(denied.detail(), NO_ACCESS);
    let bad = app
        .state
        .keys
        .create(
            acct.account_id,
            None,
            None,
            serde_json::from_value(json!({"name": "x", "allowed_endpoint_groups": ["nope"]}))
                .unwrap(),
        )
        .await;
    assert_eq!(bad.unwrap_err().status(), 400);
}

#[tokio::test]
async fn reseller_client_keys_use_the_client_quota_and_stop_when_disabled() {
    let app = TestApp::new().await;
    let reseller = app.account(Plan::Enterprise).await;
    let created = app
        .post(
            "/v1/reseller/clients",
            &reseller.api_key,
            json!({"name": "Client A", "monthly_quota": 4}),
        )
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let client_id = created.body["id"].as_i64().unwrap();
    let key = app
        .post(
            &format!("/v1/reseller/clients/{client_id}/keys"),
            &reseller.api_key,
            json!({"name": "a"}),
        )
        .await;
    assert_eq!(key.status, 201);
    let client_key = key.body["api_key"].as_str().unwrap().to_string();
    assert!(client_key.starts_with(&format!("otr_r_{client_id}_")));

    // A client key cannot manage reseller clients (this call uses 1 of 4).
    assert_eq!(
        app.get("/v1/reseller/clients", &client_key).await.status,
        403
    );
    for _ in 0..3 {
        let r = app.get("/v1/account", &client_key).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.body["id"], reseller.account_id);
    }
    assert_eq!(app.get("/v1/account", &client_key).await.status, 429);
    // The reseller's own key is unaffected by the client's quota.
    assert_eq!(app.get("/v1/account", &reseller.api_key).await.status, 200);

    let disabled = app
        .call(
            "PATCH",
            &format!("/v1/reseller/clients/{client_id}"),
            Some(&reseller.api_key),
            Some(json!({"disabled": true, "monthly_quota": 100})),
        )
        .await;
    assert_eq!(disabled.status, 200);
    let r = app.get("/v1/account", &client_key).await;
    assert_eq!(r.status, 403);
    assert_eq!(r.detail(), NO_ACCESS);

    // Another account cannot see or touch the client: 404, never 403.
    let other = app.account(Plan::Enterprise).await;
    let r = app
        .call(
            "PATCH",
            &format!("/v1/reseller/clients/{client_id}"),
            Some(&other.api_key),
            Some(json!({"disabled": false})),
        )
        .await;
    assert_eq!(r.status, 404);
    // Plans below Enterprise cannot create clients.
    let pro = app.account(Plan::Pro).await;
    let r = app
        .post(
            "/v1/reseller/clients",
            &pro.api_key,
            json!({"name": "x", "monthly_quota": 1}),
        )
        .await;
    assert_eq!(r.status, 403);
    // Bad input changes nothing.
    for bad in [
        json!({"name": "", "monthly_quota": 5}),
        json!({"name": "x", "monthly_quota": -1}),
        json!({"name": "x"}),
    ] {
        let r = app
            .post("/v1/reseller/clients", &reseller.api_key, bad)
            .await;
        assert_eq!(r.status, 400);
    }
    let list = app.get("/v1/reseller/clients", &reseller.api_key).await;
    assert_eq!(list.body["clients"].as_array().unwrap().len(), 1);
}

/// Two handlers of one name in different modules: utoipa gives both the
/// operationId `twin`.
mod twins {
    pub mod a {
        #[utoipa::path(get, path = "/twin/a", responses((status = 200, description = "A")))]
        pub async fn twin() {}
    }
    pub mod b {
        #[utoipa::path(post, path = "/twin/b", responses((status = 200, description = "B")))]
        pub async fn twin() {}
    }
}

#[test]
#[should_panic(expected = "operationId \"twin\" names GET /twin/a and POST /twin/b")]
fn the_document_refuses_two_operations_with_one_id() {
    use utoipa_axum::router::OpenApiRouter;
    use utoipa_axum::routes;
    let area = crate::area::Area {
        v1: || OpenApiRouter::new().routes(routes!(twins::a::twin)),
        public: || OpenApiRouter::new().routes(routes!(twins::b::twin)),
        ..crate::area::Area::empty("twins")
    };
    crate::http::app::openapi(&[area]);
}

#[test]
fn operations_without_an_id_are_reported() {
    let doc = json!({"paths": {"/x": {"get": {"responses": {}}, "post": {"operationId": "x"}}}});
    assert_eq!(
        crate::http::openapi::operation_id_problems(&doc),
        vec!["GET /x has no operationId".to_owned()]
    );
}
