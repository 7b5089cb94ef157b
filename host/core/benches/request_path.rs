//! The API-key layer's own cost, in process: no sockets, no HTTP parsing,
//! no wrk sharing the cores.
//!
//! `cargo bench -p outreach -p outreach-core --bench request_path` (the
//! server named too, so the bench reuses the release build's features).
//!
//! `tests/bench/api.sh` measures the whole server, where the kernel's
//! socket work and hyper's parsing are most of a request's time and move
//! with the machine. This bench drives the same router with
//! `tower::ServiceExt::oneshot` on one thread, so what it prints is only
//! what the application does for a request: `/healthz` (routing, the
//! tracing, metrics and error layers, a JSON body) against `/v1/account`
//! (the same, plus key verification, the minute and day limits, the quota,
//! the rate-limit headers, usage recording and the account's JSON) and
//! `/v1/account/members` (the same layer and a database read). The
//! difference of the first two is the API-key layer's cost per request.
//!
//! Limits are raised so that no request is refused; the layer still takes
//! every limit's decision. `BENCH_REQUESTS` (default 200,000) per route;
//! `OUTREACH_TEST_BACKEND=postgres` runs it on PostgreSQL.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use http_body_util::BodyExt;
use outreach_core::accounts::limits::LimitSetting;
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::{TestApp, request_from};
use tower::ServiceExt;

struct Figures {
    p50: Duration,
    p99: Duration,
    mean: Duration,
}

/// Sends `n` requests one after another, each with the next of `keys`,
/// and reads each body whole, as the server would before writing it.
async fn measure(app: &TestApp, path: &str, keys: &[Option<String>], n: usize) -> Figures {
    let mut times = Vec::with_capacity(n);
    let started = Instant::now();
    for i in 0..n {
        let key = keys[i % keys.len()].as_deref();
        let req = request_from("127.0.0.1:40000", "GET", path, key, None);
        let t = Instant::now();
        let response = app.router.clone().oneshot(req).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        times.push(t.elapsed());
        assert_eq!(status, StatusCode::OK, "{path}: {body:?}");
        std::hint::black_box(body);
    }
    let total = started.elapsed();
    times.sort_unstable();
    Figures {
        p50: times[n / 2],
        p99: times[n * 99 / 100],
        mean: total / n as u32,
    }
}

fn main() {
    // Under `cargo test --benches` the harness passes `--bench` only when
    // benchmarking; a plain test run just checks that the bench builds.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n: usize = std::env::var("BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let app = TestApp::with(|c| {
            let enterprise = c.limits.entry("enterprise".into()).or_default();
            enterprise.insert(
                "requests_per_minute".into(),
                LimitSetting::Number(1_000_000_000),
            );
            enterprise.insert("monthly_quota".into(), LimitSetting::Number(1 << 40));
            // The server's default, not the tests' 20 ms.
            c.usage_flush_interval_ms = 1_000;
        })
        .await;
        // Several accounts, so the key cache, the limits and the usage
        // counters hold more than one entry, as they would on a server.
        let mut keys = Vec::new();
        for _ in 0..16 {
            keys.push(Some(app.account(Plan::Enterprise).await.api_key));
        }
        let anonymous = [None];
        let routes: [(&str, &[Option<String>]); 3] = [
            ("/healthz", &anonymous),
            ("/v1/account", &keys),
            ("/v1/account/members", &keys),
        ];
        // Warm-up: every key verified and cached, every window reserved.
        for (path, keys) in routes {
            measure(&app, path, keys, 2_000).await;
        }
        println!("In-process request path, {n} requests a route, one thread:");
        println!("{:<22} {:>10} {:>10} {:>10}", "route", "p50 µs", "p99 µs", "mean µs");
        let (mut p50s, mut means) = (Vec::new(), Vec::new());
        for (path, keys) in routes {
            let f = measure(&app, path, keys, n).await;
            println!(
                "{path:<22} {:>10.2} {:>10.2} {:>10.2}",
                f.p50.as_secs_f64() * 1e6,
                f.p99.as_secs_f64() * 1e6,
                f.mean.as_secs_f64() * 1e6
            );
            p50s.push(f.p50.as_secs_f64() * 1e6);
            means.push(f.mean.as_secs_f64() * 1e6);
        }
        println!(
            "API-key layer over /healthz: {:.2} µs at p50, {:.2} µs mean; /v1/account against /healthz: {:.2} (p50); the database read of /members: {:.2} µs more at p50",
            p50s[1] - p50s[0],
            means[1] - means[0],
            p50s[0] / p50s[1],
            p50s[2] - p50s[1],
        );
    });
}
