//! Writes the export macros with the absolute path of the WIT package baked in.
//!
//! `wit_bindgen::generate!` resolves relative paths against the manifest of the
//! crate that expands it, which is the plugin crate, not this SDK. Baking the
//! absolute path of the SDK's WIT folder into the macros lets a plugin say
//! `export_email_verifier!(MyType)` without vendoring any WIT files.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    // In the repository the WIT package lives next to the SDK; a published
    // SDK carries a copy in its own `wit/` folder.
    let own = manifest.join("wit");
    let wit = if own.join("worlds.wit").exists() {
        own
    } else {
        manifest.join("../wit")
    };
    let wit = wit
        .canonicalize()
        .expect("the WIT package of outreach:plugin must exist");
    println!("cargo:rerun-if-changed={}", wit.display());
    let template = include_str!("src/export_macros.rs.in");
    let out = template.replace("@WIT_PATH@", &wit.display().to_string().replace('\\', "/"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("export_macros.rs"), out).unwrap();
}
