//! `PluginRuntime`: the engine, the linker, and the registry of loaded plugins.

use crate::bindings::{
    contact_enricher, domain_classifier, email_verifier, llm_provider, reply_classifier, shared,
    template_pack, workflow_action,
};
use crate::engine::{self, Compiler, EpochTicker};
use crate::error::LoadError;
use crate::manifest::{Manifest, PluginKind};
use crate::state::{CallState, NetAccess};
use crate::stats::{PluginStats, Stats};
use outreach_ssrf::{ClientOptions, GuardPolicy, GuardedClient};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use wasmtime::Engine;
use wasmtime::component::{HasSelf, Linker};

/// Configuration of the runtime.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Folder watched for dropped-in `name.wasm` + `name.toml` pairs
    /// (`OUTREACH_PLUGINS_DIR`, default `<data dir>/plugins`). `None`: only
    /// the embedded first-party plugins.
    pub plugins_dir: Option<PathBuf>,
    /// Where precompiled artifacts are cached (e.g. `<data dir>/cache/plugins`).
    /// `None` compiles in memory at every start.
    pub cache_dir: Option<PathBuf>,
    /// Address policy of the guarded client. Production: `GuardPolicy::strict()`;
    /// tests talking to local stubs: `GuardPolicy::allow_loopback_for_tests()`.
    pub guard_policy: GuardPolicy,
    /// Limits of the guarded client (sizes, redirects, timeouts).
    pub http_options: ClientOptions,
    /// Load the first-party plugins embedded at build time.
    pub load_first_party: bool,
    /// Poll interval of the plugins folder; `None` disables the watcher
    /// (call [`PluginRuntime::rescan`] yourself).
    pub watch_interval: Option<Duration>,
    /// Use the pooling allocator (falls back to on-demand when unavailable).
    pub pooling: bool,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            plugins_dir: None,
            cache_dir: None,
            guard_policy: GuardPolicy::strict(),
            http_options: ClientOptions {
                max_response_bytes: 4 * 1024 * 1024,
                max_request_bytes: 1024 * 1024,
                max_redirects: 3,
                ..ClientOptions::default()
            },
            load_first_party: true,
            watch_interval: Some(Duration::from_secs(2)),
            pooling: true,
        }
    }
}

/// Where a loaded plugin came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", content = "path", rename_all = "snake_case")]
pub enum PluginSource {
    FirstParty,
    File(PathBuf),
}

/// What a component says about itself at load time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PluginMetadata {
    LlmProvider(shared::outreach::plugin::types::LlmMetadata),
    EmailVerifier(shared::outreach::plugin::types::VendorMetadata),
    ContactEnricher(shared::outreach::plugin::types::VendorMetadata),
    WorkflowAction(crate::canonical::ActionDescriptor),
    TemplatePack(shared::outreach::plugin::types::PackMetadata),
    ReplyClassifier(shared::outreach::plugin::types::ClassifierMetadata),
    DomainClassifier(shared::outreach::plugin::types::ClassifierMetadata),
}

pub(crate) enum KindPre {
    Llm(llm_provider::LlmProviderPre<CallState>),
    Verifier(email_verifier::EmailVerifierPre<CallState>),
    Enricher(contact_enricher::ContactEnricherPre<CallState>),
    Action(workflow_action::WorkflowActionPre<CallState>),
    Pack(template_pack::TemplatePackPre<CallState>),
    Classifier(reply_classifier::ReplyClassifierPre<CallState>),
    DomainClassifier(domain_classifier::DomainClassifierPre<CallState>),
}

pub(crate) struct LoadedPlugin {
    /// The manifest's id, shared with every call's store.
    pub id: Arc<str>,
    pub manifest: Manifest,
    pub source: PluginSource,
    pub sha256: String,
    pub size: usize,
    pub pre: KindPre,
    pub metadata: Option<PluginMetadata>,
    pub net: Option<Arc<NetAccess>>,
    pub stats: Arc<Stats>,
    pub loaded_at: std::time::SystemTime,
}

/// One row of `outreach plugins list`.
#[derive(Debug, Clone, Serialize)]
pub struct PluginInfo {
    pub id: String,
    pub kind: PluginKind,
    pub version: String,
    pub api_version: String,
    pub vendor: Option<String>,
    pub list_rate_usd: Option<f64>,
    pub fallback_rank: Option<u32>,
    /// An SDK example (`example = true` in its manifest).
    pub example: bool,
    pub allowed_hosts: Vec<String>,
    pub limits: crate::manifest::Limits,
    pub source: PluginSource,
    pub sha256: String,
    pub size_bytes: usize,
    pub metadata: Option<PluginMetadata>,
    /// When this version was loaded (seconds since the Unix epoch).
    pub loaded_at_unix: u64,
    pub stats: PluginStats,
}

pub(crate) struct Inner {
    pub engine: Engine,
    pub linker: Linker<CallState>,
    pub compiler: Compiler,
    pub client: Arc<GuardedClient>,
    pub config: RuntimeConfig,
    pub pooling: bool,
    pub registry: RwLock<HashMap<String, Arc<LoadedPlugin>>>,
    /// Fingerprints of files seen in the plugins folder, for the watcher.
    pub seen: Mutex<crate::dir::DirState>,
    /// Calls in flight are bounded by the pool's instance slots, so a burst
    /// waits for a slot (within its timeout) instead of failing.
    pub slots: Arc<tokio::sync::Semaphore>,
    /// Calls that wait on nested plugin calls while holding a slot (reply and
    /// domain classifiers whose `ai` bridge runs an LLM plugin) may hold at most
    /// half of the slots, so the calls they wait for always find one.
    pub nesting_slots: tokio::sync::Semaphore,
    /// Instances of AI-free reply classifiers kept between one account's
    /// batches (`warm.rs`).
    pub warm: crate::warm::WarmInstances,
    _ticker: EpochTicker,
}

/// The plugin runtime. Cheap to clone; all clones share one engine and registry.
#[derive(Clone)]
pub struct PluginRuntime {
    pub(crate) inner: Arc<Inner>,
}

impl PluginRuntime {
    /// Creates the engine, loads the first-party plugins and the plugins
    /// folder, and starts the folder watcher when a Tokio runtime is current.
    /// Invalid dropped-in plugins are logged and skipped, never fatal; an
    /// invalid first-party plugin is a build bug and fails here.
    pub async fn new(config: RuntimeConfig) -> Result<Self, LoadError> {
        let (engine, pooling) = engine::build_engine(config.pooling)?;
        let mut linker: Linker<CallState> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| LoadError(format!("cannot link WASI: {e:#}")))?;
        shared::Imports::add_to_linker::<CallState, HasSelf<CallState>>(&mut linker, |s| s)
            .map_err(|e| LoadError(format!("cannot link host imports: {e:#}")))?;
        let client =
            GuardedClient::new(config.guard_policy.clone(), config.http_options.clone())
                .map_err(|e| LoadError(format!("cannot build the guarded HTTP client: {e}")))?;
        let inner = Inner {
            compiler: Compiler::new(engine.clone(), config.cache_dir.clone()),
            _ticker: EpochTicker::start(engine.clone()),
            engine,
            linker,
            client: Arc::new(client),
            config,
            pooling,
            registry: RwLock::new(HashMap::new()),
            seen: Mutex::new(Default::default()),
            slots: Arc::new(tokio::sync::Semaphore::new(engine::MAX_CONCURRENT_CALLS)),
            warm: crate::warm::WarmInstances::default(),
            nesting_slots: tokio::sync::Semaphore::new(engine::MAX_CONCURRENT_CALLS / 2),
        };
        let rt = PluginRuntime {
            inner: Arc::new(inner),
        };
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            crate::warm::spawn_sweeper(Arc::downgrade(&rt.inner), &handle);
        }
        if rt.inner.config.load_first_party {
            rt.load_first_party().await?;
        }
        if rt.inner.config.plugins_dir.is_some() {
            rt.rescan_inner(true).await;
            if let (Some(every), Ok(handle)) = (
                rt.inner.config.watch_interval,
                tokio::runtime::Handle::try_current(),
            ) {
                crate::dir::spawn_watcher(&rt, every, &handle);
            }
        }
        Ok(rt)
    }

    /// Reply-classifier instances kept warm between an account's batches
    /// (see [`classify_account_replies`](Self::classify_account_replies)).
    pub fn warm_instances(&self) -> usize {
        self.inner.warm.len()
    }

    /// Whether the pooling allocator is in use (false after a fallback).
    pub fn uses_pooling_allocator(&self) -> bool {
        self.inner.pooling
    }

    /// The engine every plugin runs in, for the call benchmark's reference:
    /// wasmtime's own cost of a fresh instance under the same configuration.
    #[doc(hidden)]
    pub fn engine(&self) -> &wasmtime::Engine {
        &self.inner.engine
    }

    async fn load_first_party(&self) -> Result<(), LoadError> {
        let started = Instant::now();
        for p in crate::embedded::FIRST_PARTY {
            let plugin = self
                .prepare(p.manifest, p.wasm, PluginSource::FirstParty)
                .await
                .map_err(|e| LoadError(format!("first-party plugin {}: {e}", p.name)))?;
            self.register(plugin)
                .map_err(|e| LoadError(format!("first-party plugin {}: {e}", p.name)))?;
        }
        tracing::info!(
            count = crate::embedded::FIRST_PARTY.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "loaded first-party plugins"
        );
        Ok(())
    }

    /// Validates and prepares a component without registering it.
    pub(crate) async fn prepare(
        &self,
        manifest_text: &str,
        wasm: &[u8],
        source: PluginSource,
    ) -> Result<LoadedPlugin, LoadError> {
        let manifest = Manifest::parse(manifest_text).map_err(|e| LoadError(e.to_string()))?;
        let sha256 = engine::sha256_hex(wasm);
        let component = self.inner.compiler.load(wasm, &sha256)?;
        let pre = self.inner.linker.instantiate_pre(&component).map_err(|e| {
            LoadError(format!(
                "component needs imports this host does not provide (only outreach:plugin/http, outreach:plugin/log, outreach:plugin/ai and sandboxed WASI are offered): {}",
                engine::root_cause(&e)
            ))
        })?;
        let world_err = |e: wasmtime::Error| {
            LoadError(format!(
                "component does not implement the world {} of outreach:plugin@{}: {}",
                manifest.kind,
                crate::manifest::WIT_API_VERSION,
                engine::root_cause(&e)
            ))
        };
        let pre = match manifest.kind {
            PluginKind::LlmProvider => {
                KindPre::Llm(llm_provider::LlmProviderPre::new(pre).map_err(world_err)?)
            }
            PluginKind::EmailVerifier => {
                KindPre::Verifier(email_verifier::EmailVerifierPre::new(pre).map_err(world_err)?)
            }
            PluginKind::ContactEnricher => KindPre::Enricher(
                contact_enricher::ContactEnricherPre::new(pre).map_err(world_err)?,
            ),
            PluginKind::WorkflowAction => {
                KindPre::Action(workflow_action::WorkflowActionPre::new(pre).map_err(world_err)?)
            }
            PluginKind::TemplatePack => {
                KindPre::Pack(template_pack::TemplatePackPre::new(pre).map_err(world_err)?)
            }
            PluginKind::ReplyClassifier => KindPre::Classifier(
                reply_classifier::ReplyClassifierPre::new(pre).map_err(world_err)?,
            ),
            PluginKind::DomainClassifier => KindPre::DomainClassifier(
                domain_classifier::DomainClassifierPre::new(pre).map_err(world_err)?,
            ),
        };
        let net = manifest.kind.has_network().then(|| {
            Arc::new(NetAccess {
                client: self.inner.client.clone(),
                rules: manifest.allowed_hosts.clone(),
            })
        });
        let mut plugin = LoadedPlugin {
            id: Arc::from(manifest.id.as_str()),
            manifest,
            source,
            sha256,
            size: wasm.len(),
            pre,
            metadata: None,
            net,
            stats: Arc::new(Stats::default()),
            loaded_at: std::time::SystemTime::now(),
        };
        let metadata = self
            .fetch_metadata(&plugin)
            .await
            .map_err(|e| LoadError(format!("metadata call failed: {e}")))?;
        check_metadata(&plugin.manifest, &metadata)?;
        plugin.metadata = Some(metadata);
        Ok(plugin)
    }

    /// Adds a prepared plugin, refusing id and action-type collisions with
    /// plugins from another source.
    pub(crate) fn register(&self, plugin: LoadedPlugin) -> Result<(), LoadError> {
        let mut reg = self
            .inner
            .registry
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(existing) = reg.get(&plugin.manifest.id)
            && existing.source != plugin.source
        {
            return Err(LoadError(format!(
                "plugin id {:?} is already used by {}",
                plugin.manifest.id,
                describe_source(&existing.source)
            )));
        }
        if let Some(PluginMetadata::WorkflowAction(d)) = &plugin.metadata {
            let clash = reg.values().find(|p| {
                p.manifest.id != plugin.manifest.id
                    && matches!(&p.metadata, Some(PluginMetadata::WorkflowAction(o)) if o.type_name == d.type_name)
            });
            if let Some(other) = clash {
                return Err(LoadError(format!(
                    "action type {:?} is already provided by plugin {}",
                    d.type_name, other.manifest.id
                )));
            }
        }
        tracing::info!(
            plugin = %plugin.manifest.id,
            kind = %plugin.manifest.kind,
            version = %plugin.manifest.version,
            source = %describe_source(&plugin.source),
            "plugin loaded"
        );
        reg.insert(plugin.manifest.id.clone(), Arc::new(plugin));
        Ok(())
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<LoadedPlugin>> {
        self.inner
            .registry
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    /// Loaded plugins with their manifests and counters, sorted by kind,
    /// fallback rank and id.
    pub fn list(&self) -> Vec<PluginInfo> {
        let reg = self
            .inner
            .registry
            .read()
            .unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<PluginInfo> = reg.values().map(|p| info(p)).collect();
        out.sort_by(|a, b| {
            (a.kind.as_str(), a.fallback_rank.unwrap_or(u32::MAX), &a.id).cmp(&(
                b.kind.as_str(),
                b.fallback_rank.unwrap_or(u32::MAX),
                &b.id,
            ))
        });
        out
    }

    /// Ids of loaded plugins of one kind in fallback order (rank, then id).
    pub fn plugins_of_kind(&self, kind: PluginKind) -> Vec<String> {
        self.list()
            .into_iter()
            .filter(|p| p.kind == kind)
            .map(|p| p.id)
            .collect()
    }

    /// One plugin's info.
    pub fn plugin(&self, id: &str) -> Option<PluginInfo> {
        self.get(id).map(|p| info(&p))
    }
}

fn info(p: &LoadedPlugin) -> PluginInfo {
    let m = &p.manifest;
    PluginInfo {
        id: m.id.clone(),
        kind: m.kind,
        version: m.version.clone(),
        api_version: m.api_version.clone(),
        vendor: m.vendor.clone(),
        list_rate_usd: m.list_rate_usd,
        fallback_rank: m.fallback_rank,
        example: m.example,
        allowed_hosts: m.allowed_hosts.iter().map(|r| r.to_string()).collect(),
        limits: m.limits,
        source: p.source.clone(),
        sha256: p.sha256.clone(),
        size_bytes: p.size,
        metadata: p.metadata.clone(),
        loaded_at_unix: p
            .loaded_at
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        stats: p.stats.snapshot(),
    }
}

pub(crate) fn describe_source(s: &PluginSource) -> String {
    match s {
        PluginSource::FirstParty => "a first-party plugin".into(),
        PluginSource::File(p) => p.display().to_string(),
    }
}

/// The manifest is authoritative for pricing and rank, but a component that
/// claims another vendor identity is refused: it would be billed and keyed
/// as the wrong vendor.
fn check_metadata(m: &Manifest, meta: &PluginMetadata) -> Result<(), LoadError> {
    let claimed = match meta {
        PluginMetadata::LlmProvider(x) => Some(&x.identifier),
        PluginMetadata::EmailVerifier(x) | PluginMetadata::ContactEnricher(x) => {
            Some(&x.identifier)
        }
        PluginMetadata::WorkflowAction(d) => {
            let ok = !d.type_name.is_empty()
                && d.type_name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == ':');
            if !ok {
                return Err(LoadError(format!(
                    "action type name {:?} must be lower_snake_case",
                    d.type_name
                )));
            }
            if !d.config_schema.is_object() {
                return Err(LoadError(
                    "config_schema must be a JSON Schema object".into(),
                ));
            }
            None
        }
        PluginMetadata::TemplatePack(_) => None,
        PluginMetadata::ReplyClassifier(c) | PluginMetadata::DomainClassifier(c) => {
            if c.name.trim().is_empty() || c.model.trim().is_empty() {
                return Err(LoadError(
                    "classifier metadata must name the classifier and its model".into(),
                ));
            }
            None
        }
    };
    if let (Some(claimed), Some(vendor)) = (claimed, &m.vendor)
        && claimed != vendor
    {
        return Err(LoadError(format!(
            "component reports vendor identifier {claimed:?} but plugin.toml says vendor = {vendor:?}"
        )));
    }
    Ok(())
}
