//! The operator's plugins folder: `name.wasm` + `name.toml` pairs, picked up
//! by a polling watcher without a restart, plus the CLI's `inspect` and
//! `validate`.

use crate::error::LoadError;
use crate::runtime::{PluginRuntime, PluginSource};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Size and modification time of a wasm/toml pair.
type Fingerprint = (u64, Option<SystemTime>, u64, Option<SystemTime>);

#[derive(Default)]
pub(crate) struct DirState {
    /// Last fingerprint seen per wasm path, and whether it has been acted on.
    seen: HashMap<PathBuf, (Fingerprint, bool)>,
}

fn fingerprint(wasm: &Path, toml: &Path) -> Option<Fingerprint> {
    let a = std::fs::metadata(wasm).ok()?;
    let b = std::fs::metadata(toml).ok();
    Some((
        a.len(),
        a.modified().ok(),
        b.as_ref().map(|m| m.len()).unwrap_or(0),
        b.and_then(|m| m.modified().ok()),
    ))
}

/// `name.wasm` files of a folder, sorted, each with its sibling `name.toml`.
fn pairs(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wasm") && p.is_file())
        .map(|p| {
            let t = p.with_extension("toml");
            (p, t)
        })
        .collect();
    out.sort();
    out
}

/// Reads and validates one pair without registering it.
async fn read_pair(
    rt: &PluginRuntime,
    wasm: &Path,
    toml: &Path,
) -> Result<crate::runtime::LoadedPlugin, LoadError> {
    let manifest = std::fs::read_to_string(toml).map_err(|e| {
        LoadError(format!(
            "missing or unreadable manifest {}: {e}",
            toml.display()
        ))
    })?;
    let bytes = std::fs::read(wasm)
        .map_err(|e| LoadError(format!("cannot read {}: {e}", wasm.display())))?;
    rt.prepare(&manifest, &bytes, PluginSource::File(wasm.to_path_buf()))
        .await
}

impl PluginRuntime {
    /// Scans the plugins folder now: loads new and changed pairs, unloads
    /// removed ones. Returns the number of changes applied.
    pub async fn rescan(&self) -> usize {
        self.rescan_inner(true).await
    }

    /// `immediate`: act on a changed file at once. The watcher passes false
    /// so that a file still being copied (its size or time still moving) is
    /// only loaded once it has been stable for one poll interval.
    pub(crate) async fn rescan_inner(&self, immediate: bool) -> usize {
        let Some(dir) = self.inner.config.plugins_dir.clone() else {
            return 0;
        };
        let found = pairs(&dir);
        let mut todo = Vec::new();
        {
            let mut st = self.inner.seen.lock().unwrap_or_else(|e| e.into_inner());
            for (wasm, toml) in &found {
                let Some(fp) = fingerprint(wasm, toml) else {
                    continue;
                };
                let due = match st.seen.get(wasm) {
                    Some((old, done)) if *old == fp => !*done,
                    _ => immediate,
                };
                if !due && st.seen.get(wasm).map(|(o, _)| *o) != Some(fp) {
                    st.seen.insert(wasm.clone(), (fp, false));
                }
                if due {
                    todo.push((wasm.clone(), toml.clone(), fp));
                }
            }
        }
        let mut changes = 0;
        for (wasm, toml, fp) in todo {
            match read_pair(self, &wasm, &toml).await {
                Ok(plugin) => {
                    let id = plugin.manifest.id.clone();
                    // A file that changed its id replaces its old registration.
                    self.unload_source(&PluginSource::File(wasm.clone()), Some(&id));
                    match self.register(plugin) {
                        Ok(()) => changes += 1,
                        Err(e) => tracing::error!(file = %wasm.display(), "refused plugin: {e}"),
                    }
                }
                Err(e) => {
                    let kept = self.id_from_source(&PluginSource::File(wasm.clone()));
                    match kept {
                        Some(id) => tracing::error!(
                            file = %wasm.display(),
                            "refused plugin: {e}; the previously loaded version of {id} keeps serving"
                        ),
                        None => tracing::error!(file = %wasm.display(), "refused plugin: {e}"),
                    }
                }
            }
            let mut st = self.inner.seen.lock().unwrap_or_else(|e| e.into_inner());
            st.seen.insert(wasm, (fp, true));
        }
        // Files that disappeared are unloaded.
        let gone: Vec<PathBuf> = {
            let mut st = self.inner.seen.lock().unwrap_or_else(|e| e.into_inner());
            let gone: Vec<PathBuf> = st
                .seen
                .keys()
                .filter(|p| !found.iter().any(|(w, _)| w == *p))
                .cloned()
                .collect();
            for g in &gone {
                st.seen.remove(g);
            }
            gone
        };
        for g in gone {
            if self.unload_source(&PluginSource::File(g.clone()), None) {
                tracing::info!(file = %g.display(), "plugin file removed; unloaded");
                changes += 1;
            }
        }
        changes
    }

    fn id_from_source(&self, source: &PluginSource) -> Option<String> {
        let reg = self
            .inner
            .registry
            .read()
            .unwrap_or_else(|e| e.into_inner());
        reg.values()
            .find(|p| &p.source == source)
            .map(|p| p.manifest.id.clone())
    }

    /// Removes the registration of `source`, except under `keep_id`.
    fn unload_source(&self, source: &PluginSource, keep_id: Option<&str>) -> bool {
        let mut reg = self
            .inner
            .registry
            .write()
            .unwrap_or_else(|e| e.into_inner());
        let before = reg.len();
        reg.retain(|id, p| &p.source != source || Some(id.as_str()) == keep_id);
        before != reg.len()
    }

    /// Validates every pair of a folder without loading anything into the
    /// registry (`outreach plugins validate DIR`).
    pub async fn validate_dir(&self, dir: &Path) -> Vec<ValidationReport> {
        let mut out = Vec::new();
        for (wasm, toml) in pairs(dir) {
            let result = read_pair(self, &wasm, &toml)
                .await
                .map(|p| p.manifest.id.clone())
                .map_err(|e| e.0);
            out.push(ValidationReport { file: wasm, result });
        }
        out
    }

    /// Describes one component file (`outreach plugins inspect FILE`): its
    /// hash, size, imports and exports, and its manifest and validation
    /// result when a sibling `.toml` exists.
    pub async fn inspect(&self, wasm: &Path) -> Result<InspectReport, LoadError> {
        let bytes = std::fs::read(wasm)
            .map_err(|e| LoadError(format!("cannot read {}: {e}", wasm.display())))?;
        let sha256 = crate::engine::sha256_hex(&bytes);
        crate::engine::check_component_header(&bytes)?;
        let component =
            wasmtime::component::Component::new(&self.inner.engine, &bytes).map_err(|e| {
                LoadError(format!(
                    "not a valid component: {}",
                    crate::engine::root_cause(&e)
                ))
            })?;
        let ty = component.component_type();
        let engine = &self.inner.engine;
        let imports = ty.imports(engine).map(|(n, _)| n.to_string()).collect();
        let exports = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
        let toml = wasm.with_extension("toml");
        let (manifest, validation) = if toml.exists() {
            let text = std::fs::read_to_string(&toml).unwrap_or_default();
            let v = read_pair(self, wasm, &toml).await;
            (
                Some(text),
                Some(match v {
                    Ok(p) => Ok(serde_json::to_value(&p.metadata).unwrap_or_default()),
                    Err(e) => Err(e.0),
                }),
            )
        } else {
            (None, None)
        };
        Ok(InspectReport {
            file: wasm.to_path_buf(),
            size_bytes: bytes.len(),
            sha256,
            imports,
            exports,
            manifest,
            validation,
        })
    }
}

/// One line of `outreach plugins validate DIR`.
#[derive(Debug, Clone, Serialize)]
pub struct ValidationReport {
    pub file: PathBuf,
    /// The plugin id when valid, else the reason it would be refused.
    pub result: Result<String, String>,
}

/// Output of `outreach plugins inspect FILE`.
#[derive(Debug, Clone, Serialize)]
pub struct InspectReport {
    pub file: PathBuf,
    pub size_bytes: usize,
    pub sha256: String,
    pub imports: Vec<String>,
    pub exports: Vec<String>,
    /// Text of the sibling `name.toml`, when present.
    pub manifest: Option<String>,
    /// Metadata reported by the component, or why it would be refused.
    pub validation: Option<Result<serde_json::Value, String>>,
}

pub(crate) fn spawn_watcher(rt: &PluginRuntime, every: Duration, handle: &tokio::runtime::Handle) {
    // The watcher holds a weak reference so dropping the last runtime handle
    // stops it.
    let weak = std::sync::Arc::downgrade(&rt.inner);
    handle.spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            let Some(inner) = weak.upgrade() else { break };
            PluginRuntime { inner }.rescan_inner(false).await;
        }
    });
}
