//! The one wasmtime `Engine`, its epoch ticker, and the precompiled-artifact
//! cache keyed by content hash and engine compatibility hash.

use crate::error::LoadError;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use wasmtime::component::Component;
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// One epoch tick. CPU deadlines are counted in ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

fn base_config() -> Config {
    let mut c = Config::new();
    c.wasm_component_model(true);
    c.epoch_interruption(true);
    // The plugin API has no async WIT functions, so stores need none of the
    // component-model-async machinery; without it a call runs on a plain
    // fiber and a store is cheaper to create and drop.
    c.concurrency_support(false);
    // Deep recursion must end in a trap, well before the fiber stack runs out.
    c.max_wasm_stack(1 << 20);
    c.async_stack_size(2 << 20);
    c
}

/// Component instances the pool holds at once; calls beyond wait.
pub(crate) const MAX_CONCURRENT_CALLS: usize = 128;

/// Sized for a small machine: up to 128 concurrent instances, each memory
/// reserved up to the largest per-plugin cap a manifest may ask for.
fn pooling() -> PoolingAllocationConfig {
    let mut p = PoolingAllocationConfig::default();
    p.total_component_instances(MAX_CONCURRENT_CALLS as u32);
    p.total_core_instances(1024);
    p.total_memories(256);
    p.total_tables(512);
    p.max_memories_per_module(2);
    p.max_tables_per_module(4);
    p.max_core_instances_per_component(32);
    p.max_memories_per_component(16);
    p.max_tables_per_component(32);
    p.table_elements(100_000);
    p.max_memory_size(crate::manifest::Limits::MAX_MEMORY_MB as usize * 1024 * 1024);
    p.max_component_instance_size(1 << 20);
    p.max_core_instance_size(1 << 20);
    // A fresh store per call must not pay for page faults and `madvise` on
    // every call. With PAGEMAP_SCAN (Linux 6.7+) wasmtime resets only the
    // pages the guest dirtied, up to this many bytes, and keeps them mapped;
    // without it, this is the prefix that is reset with memset instead.
    p.pagemap_scan(Enabled::Auto);
    p.linear_memory_keep_resident(if PoolingAllocationConfig::is_pagemap_scan_available() {
        4 << 20
    } else {
        64 << 10
    });
    p.table_keep_resident(64 << 10);
    p
}

/// Builds the engine: pooling allocator first, on-demand when the machine
/// refuses the pool's virtual-memory reservation.
pub(crate) fn build_engine(pooling_enabled: bool) -> Result<(Engine, bool), LoadError> {
    if pooling_enabled {
        let mut c = base_config();
        c.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling()));
        match Engine::new(&c) {
            Ok(e) => return Ok((e, true)),
            Err(e) => {
                tracing::warn!("pooling allocator unavailable, using on-demand allocation: {e:#}")
            }
        }
    }
    let c = base_config();
    Engine::new(&c)
        .map(|e| (e, false))
        .map_err(|e| LoadError(format!("cannot create wasmtime engine: {e:#}")))
}

/// Ticks the engine's epoch until dropped.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    pub(crate) fn start(engine: Engine) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("plugin-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .expect("spawn epoch thread");
        EpochTicker { stop }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Refuses bytes that are not a component before handing them to the
/// compiler, so the operator gets a message that says what the file is.
pub(crate) fn check_component_header(bytes: &[u8]) -> Result<(), LoadError> {
    if bytes.len() < 8 || &bytes[0..4] != b"\0asm" {
        return Err(LoadError(format!(
            "not a WebAssembly file ({} bytes, no \\0asm header; truncated or wrong file?)",
            bytes.len()
        )));
    }
    match &bytes[4..8] {
        [0x0d, 0x00, 0x01, 0x00] => Ok(()),
        [0x01, 0x00, 0x00, 0x00] => Err(LoadError(
            "a core WebAssembly module, not a component: build for wasm32-wasip2 (or run `wasm-tools component new`)"
                .into(),
        )),
        other => Err(LoadError(format!("unsupported WebAssembly version/layer {other:02x?}"))),
    }
}

/// Compiles a component, or loads its precompiled artifact from the cache.
pub(crate) struct Compiler {
    engine: Engine,
    cache_dir: Option<PathBuf>,
    compat: String,
}

impl Compiler {
    pub(crate) fn new(engine: Engine, cache_dir: Option<PathBuf>) -> Self {
        let mut h = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        let compat = format!("{:016x}", h.finish());
        if let Some(d) = &cache_dir
            && let Err(e) = std::fs::create_dir_all(d)
        {
            tracing::warn!(
                "plugin cache dir {} unusable, compiling in memory: {e}",
                d.display()
            );
        }
        Compiler {
            engine,
            cache_dir,
            compat,
        }
    }

    fn cache_path(&self, hash: &str) -> Option<PathBuf> {
        self.cache_dir
            .as_ref()
            .map(|d| d.join(format!("{hash}-{}.cwasm", self.compat)))
    }

    pub(crate) fn load(&self, bytes: &[u8], hash: &str) -> Result<Component, LoadError> {
        check_component_header(bytes)?;
        if let Some(path) = self.cache_path(hash)
            && path.exists()
        {
            match deserialize(&self.engine, &path) {
                Ok(c) => return Ok(c),
                Err(e) => tracing::warn!(
                    "discarding unusable cached artifact {}: {e:#}",
                    path.display()
                ),
            }
        }
        let component = Component::new(&self.engine, bytes)
            .map_err(|e| LoadError(format!("not a valid component: {}", root_cause(&e))))?;
        if let Some(path) = self.cache_path(hash) {
            // Write-then-rename so a concurrent reader never sees half a file.
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            let written = component
                .serialize()
                .map_err(|e| e.to_string())
                .and_then(|b| std::fs::write(&tmp, b).map_err(|e| e.to_string()))
                .and_then(|_| std::fs::rename(&tmp, &path).map_err(|e| e.to_string()));
            if let Err(e) = written {
                tracing::warn!("could not cache compiled plugin at {}: {e}", path.display());
            }
        }
        Ok(component)
    }
}

/// Loads a precompiled artifact.
///
/// The artifact is native code, so this is only sound for files this
/// process (or an earlier run of it) wrote into the cache directory; the
/// directory must not be writable by anyone else. The file name carries the
/// source hash and the engine compatibility hash, and wasmtime re-checks the
/// header, so a stale or foreign-engine artifact is refused, not run.
#[allow(unsafe_code)]
fn deserialize(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    // SAFETY: see the function documentation; the cache is private to us.
    unsafe { Component::deserialize_file(engine, path) }
}

pub(crate) fn root_cause(e: &wasmtime::Error) -> String {
    let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
    chain.join(": ")
}
