//! Python (componentize-py) and JavaScript (componentize-js) email-verifier
//! plugins, built from the same WIT by tests/plugins/build.sh, loaded into
//! the host and called, through the guarded HTTP import as well.
//!
//! The build needs the toolchains from tests/plugins/setup.sh (run here when
//! missing). Set OUTREACH_SKIP_LANG_TESTS=1 to skip on machines without
//! Python or Node.

mod common;

use common::*;
use outreach_plugin_runtime::{CallError, GuardPolicy, PluginRuntime, RuntimeConfig};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn build() -> Option<(PathBuf, PathBuf)> {
    if std::env::var_os("OUTREACH_SKIP_LANG_TESTS").is_some() {
        eprintln!("OUTREACH_SKIP_LANG_TESTS set: skipping the Python and JavaScript plugin tests");
        return None;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/plugins");
    let status = Command::new(dir.join("setup.sh"))
        .status()
        .expect("run tests/plugins/setup.sh");
    assert!(status.success(), "tests/plugins/setup.sh failed");
    let out = Command::new(dir.join("build.sh"))
        .output()
        .expect("run tests/plugins/build.sh");
    assert!(
        out.status.success(),
        "build.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines().map(PathBuf::from);
    Some((lines.next().unwrap(), lines.next().unwrap()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_and_javascript_verifiers_load_and_answer() {
    let Some((py, js)) = build() else { return };
    let plugins = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/plugins");
    std::fs::copy(&py, plugins.path().join("py-verifier.wasm")).unwrap();
    std::fs::copy(
        src.join("python/plugin.toml"),
        plugins.path().join("py-verifier.toml"),
    )
    .unwrap();
    std::fs::copy(&js, plugins.path().join("js-verifier.wasm")).unwrap();
    std::fs::copy(
        src.join("js/plugin.toml"),
        plugins.path().join("js-verifier.toml"),
    )
    .unwrap();

    let (base, hits) = stub(|_, path, _, head| {
        if !head.contains("authorization: bearer good") {
            return json(401, "{}");
        }
        if path.starts_with("/v1/verify?email=jane%40acme.com") {
            json(200, r#"{"result":"deliverable"}"#)
        } else if path == "/v1/credits" {
            json(200, r#"{"credits":77}"#)
        } else {
            json(200, r#"{"result":"undeliverable"}"#)
        }
    })
    .await;
    let t = Instant::now();
    // Compiling 30 MB of Python and JS components takes many seconds in a
    // debug build; the artifact cache (keyed by content and engine hash)
    // makes later runs load them in milliseconds.
    let rt = PluginRuntime::new(RuntimeConfig {
        plugins_dir: Some(plugins.path().to_path_buf()),
        cache_dir: Some(src.join(".build-cache/compiled")),
        guard_policy: GuardPolicy::allow_loopback_for_tests(),
        load_first_party: false,
        watch_interval: None,
        ..RuntimeConfig::default()
    })
    .await
    .unwrap();
    eprintln!("loaded Python and JS components in {:?}", t.elapsed());

    for id in ["py-verifier", "js-verifier"] {
        let info = rt.plugin(id).unwrap_or_else(|| panic!("{id} not loaded"));
        eprintln!("{id}: {} bytes", info.size_bytes);
        let b = Some(base.as_str());
        let r = rt
            .verify_email(id, "good", b, "jane@acme.com")
            .await
            .unwrap();
        assert_eq!((r.status.as_str(), r.provider.as_str()), ("valid", id));
        let r = rt
            .verify_email(id, "good", b, "bob@acme.com")
            .await
            .unwrap();
        assert_eq!(r.deliverability, "undeliverable");
        let e = rt
            .verify_email(id, "bad", b, "jane@acme.com")
            .await
            .unwrap_err();
        assert!(matches!(e, CallError::Auth(_)), "{id}: {e}");
        let e = rt.verify_email(id, "good", b, "nope").await.unwrap_err();
        assert!(matches!(e, CallError::InvalidInput(_)), "{id}: {e}");
        let k = rt.validate_key(id, "good", b).await.unwrap();
        assert_eq!(k.credits_remaining, Some(77), "{id}");
        // The allowlist applies to other languages too: the vendor default
        // host does not resolve here, and nothing else is reachable.
        let e = rt
            .verify_email(id, "good", Some("http://10.0.0.1"), "jane@acme.com")
            .await
            .unwrap_err();
        assert!(
            matches!(e, CallError::Denied(ref m) if m.starts_with("Blocked by SSRF guard")),
            "{id}: {e}"
        );

        // Per-call cost of a fresh instance (pure logic, no HTTP).
        let n = 50;
        let t = Instant::now();
        for _ in 0..n {
            rt.verify_email(id, "k", None, "jane@acme.com")
                .await
                .unwrap();
        }
        eprintln!(
            "{id}: {:.2} ms per isolated call",
            t.elapsed().as_secs_f64() * 1e3 / n as f64
        );
    }
    assert!(hits.load(std::sync::atomic::Ordering::SeqCst) >= 8);
}
