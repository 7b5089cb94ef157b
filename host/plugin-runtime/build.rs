//! Builds the guest workspace (`plugins/Cargo.toml`: the SDK, first-party
//! plugins, marketplace packs and the Rust test components of
//! `tests/plugins/rust` and `host/plugin-runtime/tests/guests`) for
//! wasm32-wasip2 and embeds the first-party components, so a clean clone
//! needs no extra step before `cargo run`.
//!
//! The nested cargo uses its own target directory: sharing the outer one
//! would wait forever on the lock the outer build holds. Variables that
//! describe the outer build (flags, wrappers such as clippy-driver) are
//! removed so they do not leak into the wasm build.
//!
//! `OUTREACH_SKIP_GUEST_BUILD=1` embeds nothing (for environments without
//! the wasm32-wasip2 target); the runtime then has no first-party plugins.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.join("../..").canonicalize().unwrap();
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let test_dir = out.join("test-guests");
    std::fs::create_dir_all(&test_dir).unwrap();
    println!(
        "cargo:rustc-env=OUTREACH_TEST_GUESTS={}",
        test_dir.display()
    );
    println!("cargo:rerun-if-env-changed=OUTREACH_SKIP_GUEST_BUILD");
    for p in [
        "wit",
        "sdk-guest/src",
        "sdk-guest/Cargo.toml",
        "sdk-guest/build.rs",
        "plugins",
        "marketplace",
        "tests/plugins/rust",
        "host/plugin-runtime/tests/guests",
        "plugins/.cargo/config.toml",
        // Host crates the first-party plugins build in (the rules
        // classifiers), so a change to them rebuilds the components.
        "host/mail-analysis/src",
        "host/domain-analysis/src",
        "host/domain-analysis/data",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }

    if std::env::var_os("OUTREACH_SKIP_GUEST_BUILD").is_some() {
        std::fs::write(
            out.join("embedded.rs"),
            "pub static FIRST_PARTY: &[EmbeddedPlugin] = &[];\n",
        )
        .unwrap();
        return;
    }

    let guest_target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d).join("guest-wasm"),
        None => out.ancestors().nth(4).unwrap_or(&out).join("guest-wasm"),
    };
    ensure_wasm_target();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    // Run from the guest workspace so its .cargo/config.toml applies.
    cmd.current_dir(root.join("plugins"));
    cmd.args([
        "build",
        "--release",
        "--target",
        "wasm32-wasip2",
        "--manifest-path",
    ])
    .arg(root.join("plugins/Cargo.toml"))
    .arg("--target-dir")
    .arg(&guest_target);
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_PKG_NAME",
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "OUT_DIR",
        "TARGET",
        "HOST",
        "PROFILE",
        "OPT_LEVEL",
        "DEBUG",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .expect("failed to run cargo for the guest workspace");
    if !status.success() {
        panic!(
            "building the plugin components (plugins/Cargo.toml for wasm32-wasip2) failed; \
             install the target with `rustup target add wasm32-wasip2` or set OUTREACH_SKIP_GUEST_BUILD=1"
        );
    }
    let wasm_dir = guest_target.join("wasm32-wasip2/release");

    let mut embedded = String::from("pub static FIRST_PARTY: &[EmbeddedPlugin] = &[\n");
    for folder in ["plugins", "marketplace"] {
        for dir in plugin_dirs(&root.join(folder)) {
            let (name, wasm) = copy_component(&dir, &wasm_dir, &out);
            let manifest = dir.join("plugin.toml");
            writeln!(
                embedded,
                "    EmbeddedPlugin {{ name: {name:?}, manifest: include_str!({:?}), wasm: include_bytes!({:?}) }},",
                manifest.display().to_string(),
                wasm.display().to_string()
            )
            .unwrap();
        }
    }
    embedded.push_str("];\n");
    std::fs::write(out.join("embedded.rs"), embedded).unwrap();

    // Test components: the shared ones, and this crate's own fixtures.
    let fixtures = plugin_dirs(&root.join("tests/plugins/rust"))
        .into_iter()
        .chain(plugin_dirs(&manifest_dir.join("tests/guests")));
    for dir in fixtures {
        let (name, wasm) = copy_component(&dir, &wasm_dir, &out);
        std::fs::copy(&wasm, test_dir.join(format!("{name}.wasm"))).unwrap();
        std::fs::copy(
            dir.join("plugin.toml"),
            test_dir.join(format!("{name}.toml")),
        )
        .unwrap();
    }
}

/// Adds the wasm32-wasip2 standard library through rustup when the active
/// toolchain lacks it. rustup installs the targets of `rust-toolchain.toml`
/// only when it installs the toolchain itself, so a machine that already had
/// 1.95.0 (or links it to stable) would otherwise fail with "can't find crate
/// for std". Without rustup we leave the error to the nested build.
fn ensure_wasm_target() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let Some(sysroot) = sysroot else { return };
    if sysroot.join("lib/rustlib/wasm32-wasip2/lib").is_dir() {
        return;
    }
    println!(
        "cargo:warning=the wasm32-wasip2 target is missing from {}; installing it with `rustup target add wasm32-wasip2`",
        sysroot.display()
    );
    let mut rustup = Command::new("rustup");
    rustup.args(["target", "add", "wasm32-wasip2"]);
    // Cargo run through rustup names the active toolchain; add the target to that one.
    if let Ok(toolchain) = std::env::var("RUSTUP_TOOLCHAIN") {
        rustup.args(["--toolchain", &toolchain]);
    }
    match rustup.status() {
        Ok(s) if s.success() => {}
        Ok(s) => println!("cargo:warning=`rustup target add wasm32-wasip2` failed ({s})"),
        Err(e) => println!(
            "cargo:warning=could not run rustup ({e}); install the wasm32-wasip2 target by hand"
        ),
    }
}

/// Sub-folders holding both a `Cargo.toml` and a `plugin.toml`, sorted.
fn plugin_dirs(folder: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    dirs.retain(|d| d.join("Cargo.toml").is_file() && d.join("plugin.toml").is_file());
    dirs.sort();
    dirs
}

/// Copies the built component of the crate in `dir` into OUT_DIR.
fn copy_component(dir: &Path, wasm_dir: &Path, out: &Path) -> (String, PathBuf) {
    let cargo_toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let name = cargo_toml
        .lines()
        .find_map(|l| {
            let l = l.trim();
            let v = l
                .strip_prefix("name")?
                .trim_start()
                .strip_prefix('=')?
                .trim();
            Some(v.trim_matches('"').to_string())
        })
        .expect("package name in Cargo.toml");
    let built = wasm_dir.join(format!("{}.wasm", name.replace('-', "_")));
    let dest = out.join(format!("{name}.wasm"));
    std::fs::copy(&built, &dest)
        .unwrap_or_else(|e| panic!("missing component {}: {e}", built.display()));
    (name, dest)
}
