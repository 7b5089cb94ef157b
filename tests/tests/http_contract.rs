//! The cross-cutting HTTP contract of spec/1 "Authentication", "Errors" and
//! "Limits", checked over a real socket.

use std::time::{SystemTime, UNIX_EPOCH};

use outreach_e2e::{Deployment, Reply, client, get, post_json};
use serde_json::json;

#[tokio::test]
async fn framework_errors_come_back_as_detail_json() {
    let deployment = Deployment::new();
    let server = deployment.start();
    let http = client();
    let key = server.admin_key.clone().unwrap();

    // Unknown route, with and without a key.
    for bearer in [None, Some(key.as_str())] {
        let r = get(&http, &server.url("/no/such/route"), bearer).await;
        assert_eq!(r.status, 404);
        assert_eq!(r.detail(), "Not Found");
    }
    let r = get(&http, &server.url("/v1/no-such-thing"), Some(&key)).await;
    assert_eq!(r.status, 404);
    r.detail();

    // Known route, wrong method: 405 keeps its Allow header.
    let r = Reply::read(http.delete(server.url("/healthz")).send().await.unwrap()).await;
    assert_eq!(r.status, 405, "{}", r.text);
    r.detail();
    assert!(r.header("allow").is_some_and(|a| a.contains("GET")));
    let r = Reply::read(
        http.put(server.url("/v1/account"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 405, "{}", r.text);
    r.detail();

    // Malformed JSON on a public and on an authenticated route.
    let r = Reply::read(
        http.post(server.url("/auth/login"))
            .header("content-type", "application/json")
            .body("{\"email\": ")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(!r.detail().is_empty());
    let r = Reply::read(
        http.post(server.url("/v1/account/members"))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body("not json")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    r.detail();

    // Wrong field types and unknown fields are malformed requests too.
    let r = post_json(
        &http,
        &server.url("/v1/account/members"),
        Some(&key),
        &json!({"email": 5}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    r.detail();

    // No content type at all.
    let r = Reply::read(
        http.post(server.url("/auth/register"))
            .body("{}")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(r.status == 400 || r.status == 415, "{}", r.text);
    r.detail();

    // Bodies over max_body_bytes.
    let big = "x".repeat(3 * 1024 * 1024);
    let r = Reply::read(
        http.post(server.url("/v1/account/members"))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body(format!("{{\"email\":\"{big}\"}}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 413, "{}", &r.text[..r.text.len().min(200)]);
    r.detail();
}

#[tokio::test]
async fn bad_keys_get_401_invalid_api_key() {
    let deployment = Deployment::new();
    let server = deployment.start();
    let http = client();
    let url = server.url("/v1/account");
    let key = server.admin_key.clone().unwrap();
    let mut wrong_secret = key.clone();
    let last = wrong_secret.pop().unwrap();
    wrong_secret.push(if last == 'a' { 'b' } else { 'a' });

    for bearer in [
        None,
        Some(""),
        Some("garbage"),
        Some("otr_"),
        Some("zzz_0123456789abcdef"),
        Some(wrong_secret.as_str()),
    ] {
        let r = get(&http, &url, bearer).await;
        assert_eq!(r.status, 401, "{bearer:?}: {}", r.text);
        assert_eq!(r.detail(), "Invalid API key", "{bearer:?}");
    }
    // A scheme other than Bearer is no key either.
    let r = Reply::read(
        http.get(&url)
            .header("authorization", format!("Basic {key}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 401);
    assert_eq!(r.detail(), "Invalid API key");
    // And the right key passes.
    assert_eq!(get(&http, &url, Some(&key)).await.status, 200);
}

fn header_u64(r: &Reply, name: &str) -> u64 {
    r.header(name)
        .unwrap_or_else(|| panic!("missing {name}: {:?}", r.headers))
        .parse()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[tokio::test]
async fn rate_limit_headers_and_429() {
    let deployment = Deployment::new();
    let server = deployment.start();
    let http = client();
    let enterprise = server.admin_key.clone().unwrap();

    let first = get(&http, &server.url("/v1/account"), Some(&enterprise)).await;
    assert_eq!(first.status, 200);
    assert_eq!(header_u64(&first, "x-ratelimit-limit"), 1000);
    let remaining = header_u64(&first, "x-ratelimit-remaining");
    assert!(remaining < 1000, "{remaining}");
    let reset = header_u64(&first, "x-ratelimit-reset");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        reset > now.saturating_sub(1) && reset <= now + 61,
        "reset {reset}, now {now}"
    );
    let second = get(
        &http,
        &server.url("/v1/usage/rate-limits"),
        Some(&enterprise),
    )
    .await;
    assert_eq!(second.status, 200, "{}", second.text);
    // Same window unless a minute boundary passed between the two calls.
    if header_u64(&second, "x-ratelimit-reset") == reset {
        assert_eq!(header_u64(&second, "x-ratelimit-remaining"), remaining - 1);
    }
    assert_eq!(second.json["plan"], "enterprise");
    assert_eq!(second.json["rate_limit"]["requests_per_minute"], 1000);

    // A Free key (10 per minute, bursts to 2x tolerated) runs into 429. The
    // window is aligned to the minute, so allow for one boundary in between.
    let free = deployment.create_account("free@example.com", "free");
    let mut limited = None;
    for i in 0..45 {
        let r = get(&http, &server.url("/v1/account"), Some(&free.api_key)).await;
        assert_eq!(header_u64(&r, "x-ratelimit-limit"), 10, "request {i}");
        if r.status == 429 {
            limited = Some((i, r));
            break;
        }
        assert_eq!(r.status, 200, "request {i}: {}", r.text);
    }
    let (i, r) = limited.expect("no 429 from a Free key after 45 requests");
    assert!(i >= 10, "limited after only {i} requests");
    let retry_after = header_u64(&r, "retry-after");
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    assert_eq!(
        r.detail(),
        format!("Rate limit exceeded. Try again in {retry_after} seconds.")
    );
    assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 0);
}
