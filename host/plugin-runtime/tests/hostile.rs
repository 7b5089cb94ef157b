//! Hostile components are contained, reported with their reason, and do not
//! disturb well-behaved calls running at the same time.

mod common;

use common::*;
use outreach_plugin_runtime::{CallError, GuardPolicy, PluginRuntime};
use std::time::{Duration, Instant};

async fn call(rt: &PluginRuntime, email: &str) -> Result<String, CallError> {
    rt.verify_email("hostile", "key", None, email)
        .await
        .map(|r| r.raw_status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_behaviours_are_contained_with_reasons() {
    let dir = guest_dir(&["hostile", "trivial"]);
    let rt = runtime(Some(dir.path()), GuardPolicy::strict(), false).await;

    let t = Instant::now();
    let e = call(&rt, "loop@x.com").await.unwrap_err();
    assert!(
        matches!(&e, CallError::Timeout(m) if m.contains("CPU deadline of 300 ms")),
        "{e}"
    );
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "loop stopped late: {:?}",
        t.elapsed()
    );

    let e = call(&rt, "oom@x.com").await.unwrap_err();
    assert!(
        matches!(&e, CallError::OutOfMemory(m) if m.contains("32 MiB")),
        "{e}"
    );

    let e = call(&rt, "recurse@x.com").await.unwrap_err();
    assert!(
        matches!(&e, CallError::Trap(m) if m.contains("stack overflow")),
        "{e}"
    );
    let e = call(&rt, "recurse-shadow@x.com").await.unwrap_err();
    assert!(
        matches!(&e, CallError::Trap(m) if m.contains("out of bounds memory access")),
        "{e}"
    );

    let e = call(&rt, "panic@x.com").await.unwrap_err();
    assert!(
        matches!(&e, CallError::Trap(m) if m.contains("hostile plugin panicked on purpose")),
        "{e}"
    );

    // No files, no environment, no sockets: the guest sees failures, and
    // nothing it could have read leaks into a result.
    for probe in ["file", "dir", "env", "socket"] {
        let r = call(&rt, &format!("{probe}@x.com")).await;
        match r {
            Err(CallError::Permanent(m)) => assert!(!m.contains("LEAK"), "{probe}: {m}"),
            other => panic!("{probe}: expected a contained failure, got {other:?}"),
        }
    }

    // The runtime is still healthy afterwards.
    assert_eq!(call(&rt, "jane@x.com").await.unwrap(), "fine");
    let stats = rt.plugin("hostile").unwrap().stats;
    assert_eq!(stats.timeouts, 1);
    assert_eq!(stats.traps, 4, "{stats:?}");
    assert!(stats.errors["permanent"] >= 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_escapes_are_denied_with_the_rule() {
    let dir = guest_dir(&["hostile"]);
    let rt = runtime(Some(dir.path()), GuardPolicy::strict(), false).await;

    let e = call(&rt, "disallowed@x.com").await.unwrap_err();
    assert!(
        matches!(&e, CallError::Denied(m) if m.contains("allowed_hosts of plugin hostile: https://evil.example.net matches none of")),
        "{e}"
    );
    // Allowed by the allowlist, refused by the SSRF guard after resolution.
    for target in [
        "localhost:9",
        "127.0.0.1:9",
        "169.254.169.254",
        "10.0.0.1:80",
    ] {
        let e = call(&rt, &format!("fetch@{target}")).await.unwrap_err();
        assert!(
            matches!(&e, CallError::Denied(m) if m.starts_with("Blocked by SSRF guard")),
            "{target}: {e}"
        );
    }
    // An IP literal that is not in the allowlist never reaches the guard.
    let e = call(&rt, "fetch@192.168.1.1").await.unwrap_err();
    assert!(
        matches!(&e, CallError::Denied(m) if m.contains("allowed_hosts")),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_rechecked_and_overrides_are_per_call() {
    let (base, hits) = stub(|_, path, _, _| {
        if path.starts_with("/redirect") {
            (
                302,
                vec![("location".into(), "http://evil.example.net/".into())],
                vec![],
            )
        } else {
            json(200, "{}")
        }
    })
    .await;
    let dir = guest_dir(&["hostile"]);
    let rt = runtime(
        Some(dir.path()),
        GuardPolicy::allow_loopback_for_tests(),
        false,
    )
    .await;
    let host = base.trim_start_matches("http://");

    let e = call(&rt, &format!("fetch@{host}/redirect"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::Denied(m) if m.contains("https://evil.example.net") || m.contains("http://evil.example.net")),
        "{e}"
    );

    // Without an override the plugin's default vendor host is used (and
    // does not resolve here); with one, exactly that origin is allowed.
    let r = rt
        .verify_email("hostile", "k", Some(&base), "base@x.com")
        .await
        .unwrap();
    assert_eq!(r.raw_status, "fetched 200");
    assert!(hits.load(std::sync::atomic::Ordering::SeqCst) >= 1);
    let e = rt
        .verify_email("hostile", "k", None, "base@x.com")
        .await
        .unwrap_err();
    assert!(e.is_transient(), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn well_behaved_calls_are_unaffected_by_concurrent_hostile_ones() {
    let dir = guest_dir(&["hostile", "trivial"]);
    let rt = runtime(Some(dir.path()), GuardPolicy::strict(), false).await;
    let mut hostile = Vec::new();
    for email in [
        "loop@x",
        "oom@x",
        "recurse@x",
        "panic@x",
        "loop@y",
        "disallowed@x",
    ] {
        let rt = rt.clone();
        hostile.push(tokio::spawn(async move { call(&rt, email).await }));
    }
    let mut worst = Duration::ZERO;
    for i in 0..200 {
        let t = Instant::now();
        let r = rt
            .verify_email("trivial", "k", None, &format!("user{i}@example.com"))
            .await
            .unwrap();
        worst = worst.max(t.elapsed());
        assert_eq!(r.status, "valid");
    }
    for h in hostile {
        assert!(h.await.unwrap().is_err());
    }
    // A busy guest yields every epoch tick, so a neighbour waits at most a
    // few ticks even with both worker threads occupied.
    assert!(
        worst < Duration::from_millis(250),
        "slowest well-behaved call took {worst:?}"
    );
    assert_eq!(rt.plugin("trivial").unwrap().stats.ok, 200);
}
