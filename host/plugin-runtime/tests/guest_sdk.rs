//! Runs the guest workspace's native tests (plugin unit tests with mocked
//! HTTP, and the SDK's rustdoc examples, one per kind) so that `cargo test`
//! of the runtime also proves plugin logic is testable without wasm.

use std::path::Path;
use std::process::Command;

#[test]
fn guest_workspace_native_tests_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(|d| Path::new(&d).join("guest-native"))
        .unwrap_or_else(|| root.join("target/guest-native"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root.join("plugins"))
        // The SDK and the reference plugins; vendor adapters have their own tests.
        .args([
            "test",
            "-p",
            "outreach-plugin-sdk",
            "-p",
            "example-verifier",
            "-p",
            "example-enricher",
            "-p",
            "action-dedup",
            "-p",
            "action-filter",
            "-p",
            "action-transform",
            "-p",
            "starter-pack",
            "--target-dir",
        ])
        .arg(&target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .output()
        .expect("run cargo test in plugins/");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "guest workspace tests failed:\n{text}"
    );
    assert!(
        text.contains("kinds::LlmProvider"),
        "SDK doctests did not run:\n{text}"
    );
}
