//! Refusing bad components and manifests, hot reload, inspect and validate.

mod common;

use common::*;
use outreach_plugin_runtime::{
    GuardPolicy, PluginRuntime, RuntimeConfig, fixtures::TEST_GUESTS_DIR,
};
use std::path::Path;
use std::time::Duration;

fn trivial_manifest() -> String {
    std::fs::read_to_string(Path::new(TEST_GUESTS_DIR).join("trivial.toml")).unwrap()
}

fn trivial_wasm() -> Vec<u8> {
    std::fs::read(Path::new(TEST_GUESTS_DIR).join("trivial.wasm")).unwrap()
}

fn write_pair(dir: &Path, name: &str, wasm: &[u8], manifest: &str) {
    std::fs::write(dir.join(format!("{name}.wasm")), wasm).unwrap();
    std::fs::write(dir.join(format!("{name}.toml")), manifest).unwrap();
}

#[tokio::test]
async fn invalid_components_and_manifests_are_refused_with_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let wasm = trivial_wasm();
    let m = trivial_manifest();
    write_pair(
        d,
        "a-truncated",
        &wasm[..wasm.len() / 2],
        &m.replace("\"trivial\"\nkind", "\"t1\"\nkind"),
    );
    write_pair(d, "b-core-module", b"\0asm\x01\0\0\0", &m);
    write_pair(d, "c-not-wasm", b"hello", &m);
    write_pair(
        d,
        "d-unknown-kind",
        &wasm,
        &m.replace("email-verifier", "mail-robot"),
    );
    write_pair(
        d,
        "e-wrong-api",
        &wasm,
        &m.replace("api_version = \"0.1.0\"", "api_version = \"0.2.0\""),
    );
    write_pair(
        d,
        "f-wrong-world",
        &wasm,
        &m.replace("email-verifier", "contact-enricher"),
    );
    write_pair(
        d,
        "g-wrong-vendor",
        &wasm,
        &m.replace("vendor = \"trivial\"", "vendor = \"someone-else\""),
    );
    std::fs::write(d.join("h-no-manifest.wasm"), &wasm).unwrap();
    write_pair(d, "z-good", &wasm, &m);

    let rt = runtime(None, GuardPolicy::strict(), false).await;
    let reports = rt.validate_dir(d).await;
    let msg = |name: &str| {
        let r = reports
            .iter()
            .find(|r| r.file.ends_with(format!("{name}.wasm")))
            .unwrap();
        r.result.clone().err().unwrap_or_default()
    };
    assert!(
        msg("a-truncated").contains("not a valid component"),
        "{}",
        msg("a-truncated")
    );
    assert!(msg("b-core-module").contains("core WebAssembly module, not a component"));
    assert!(msg("c-not-wasm").contains("not a WebAssembly file"));
    assert!(msg("d-unknown-kind").contains("unknown kind \"mail-robot\""));
    assert!(msg("e-wrong-api").contains("api_version \"0.2.0\" is not compatible"));
    assert!(
        msg("f-wrong-world").contains("does not implement the world contact-enricher"),
        "{}",
        msg("f-wrong-world")
    );
    assert!(msg("g-wrong-vendor").contains("reports vendor identifier \"trivial\""));
    assert!(msg("h-no-manifest").contains("missing or unreadable manifest"));
    let good = reports
        .iter()
        .find(|r| r.file.ends_with("z-good.wasm"))
        .unwrap();
    assert_eq!(good.result.as_deref(), Ok("trivial"));

    // Loading the same folder keeps only the good one; nothing else breaks.
    let rt = runtime(Some(d), GuardPolicy::strict(), true).await;
    let ids: Vec<String> = rt.list().into_iter().map(|p| p.id).collect();
    assert!(ids.contains(&"trivial".to_string()) && ids.contains(&"example-verifier".to_string()));
    assert!(!ids.contains(&"t1".to_string()));

    let report = rt.inspect(&d.join("z-good.wasm")).await.unwrap();
    assert!(
        report
            .exports
            .iter()
            .any(|e| e == "outreach:plugin/verifier@0.1.0"),
        "{:?}",
        report.exports
    );
    assert!(matches!(report.validation, Some(Ok(_))));
}

#[tokio::test]
async fn dropped_in_plugins_are_picked_up_without_restart() {
    let dir = tempfile::tempdir().unwrap();
    let rt = PluginRuntime::new(RuntimeConfig {
        plugins_dir: Some(dir.path().to_path_buf()),
        cache_dir: Some(dir.path().join("cache")),
        guard_policy: GuardPolicy::strict(),
        load_first_party: false,
        watch_interval: Some(Duration::from_millis(50)),
        ..RuntimeConfig::default()
    })
    .await
    .unwrap();
    assert!(rt.list().is_empty());

    copy_guest("trivial", dir.path(), "trivial");
    // A bad neighbour arrives at the same time and is refused on its own.
    write_pair(
        dir.path(),
        "broken",
        b"\0asm\x01\0\0\0",
        &trivial_manifest().replace("trivial", "broken"),
    );
    let wait_for = |want: bool| {
        let rt = rt.clone();
        async move {
            for _ in 0..100 {
                if rt.plugin("trivial").is_some() == want {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            false
        }
    };
    assert!(wait_for(true).await, "trivial was not picked up");
    assert!(rt.plugin("broken").is_none());
    let r = rt
        .verify_email("trivial", "k", None, "a@b.co")
        .await
        .unwrap();
    assert_eq!(r.status, "valid");

    // The precompiled artifact was cached by content hash.
    let cached = std::fs::read_dir(dir.path().join("cache")).unwrap().count();
    assert_eq!(cached, 1);

    std::fs::remove_file(dir.path().join("trivial.wasm")).unwrap();
    assert!(wait_for(false).await, "trivial was not unloaded");
}
