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

/// The SDK defines libc's `write`, `writev` and `getenv` (`sdk-guest/src/
/// stdio.rs`), so a component built with it imports no WASI interface for
/// stderr or the environment: each import costs every call, because every
/// call instantiates the component afresh. The one WASI import left in some
/// is the seed of Rust's hash maps, which the standard library asks WASI for
/// directly; the benchmark's trivial guest has none at all.
#[test]
fn sdk_built_components_import_no_wasi_but_the_hash_map_seed() {
    let trivial = std::fs::read(
        Path::new(outreach_plugin_runtime::fixtures::TEST_GUESTS_DIR).join("trivial.wasm"),
    )
    .expect("the trivial test guest is built");
    let mut imports = component_imports(&trivial);
    imports.sort();
    assert_eq!(
        imports,
        ["outreach:plugin/log@0.1.0", "outreach:plugin/types@0.1.0"]
    );
    assert!(!outreach_plugin_runtime::FIRST_PARTY.is_empty());
    for p in outreach_plugin_runtime::FIRST_PARTY {
        let wasi: Vec<String> = component_imports(p.wasm)
            .into_iter()
            .filter(|name| {
                name.starts_with("wasi:") && !name.starts_with("wasi:random/insecure-seed@")
            })
            .collect();
        assert!(wasi.is_empty(), "{} imports {wasi:?}", p.name);
    }
}

/// The names a component imports at its top level.
fn component_imports(wasm: &[u8]) -> Vec<String> {
    use wasmparser::{Parser, Payload};
    let mut names = Vec::new();
    // Nested modules and components have sections of their own; count them
    // so only the outer component's imports are read.
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.expect("a valid component") {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(imports) if depth == 0 => {
                for import in imports {
                    names.push(import.expect("an import").name.name.to_string());
                }
            }
            _ => {}
        }
    }
    names
}
