//! First-party components compiled by `build.rs` and embedded in the binary.

/// One embedded first-party plugin.
pub struct EmbeddedPlugin {
    /// Folder name under `plugins/` or `marketplace/`.
    pub name: &'static str,
    /// Text of its `plugin.toml`.
    pub manifest: &'static str,
    /// The component.
    pub wasm: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
