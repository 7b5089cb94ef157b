//! Typed calls. Every call gets a fresh store from the plugin's cached
//! `InstancePre`, the manifest's memory cap, a CPU budget counted in epoch
//! ticks, and a wall-clock timeout that also covers time spent in host HTTP
//! (epochs do not interrupt a guest blocked in a host call).

use crate::allow::HostRule;
use crate::bindings::types::{
    CompletionRequest, KeyValidation, LlmKeyValidation, PluginError, VendorContext,
};
use crate::canonical::{
    self, ActionDescriptor, ActionOutput, Completion, EnrichmentResult, Template,
    VerificationResult,
};
use crate::engine::EPOCH_TICK;
use crate::error::CallError;
use crate::runtime::{KindPre, LoadedPlugin, PluginMetadata, PluginRuntime};
use crate::state::{CallSetup, CallState, STDERR_IN_ERROR};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::OwnedSemaphorePermit;
use wasmtime::{Store, Trap, UpdateDeadline};

pub(crate) type GuestResult<T> = wasmtime::Result<Result<T, PluginError>>;

/// A store with the pool slot its instance holds.
pub(crate) struct Session {
    pub store: Store<CallState>,
    slot: OwnedSemaphorePermit,
}

/// The call's extra host rule for an operator's base-URL override.
fn origin_rule(u: &str) -> Result<HostRule, CallError> {
    let url =
        url::Url::parse(u).map_err(|e| CallError::InvalidInput(format!("base_url {u:?}: {e}")))?;
    HostRule::for_origin(&url)
        .ok_or_else(|| CallError::InvalidInput(format!("base_url {u:?} has no host")))
}

/// How long a load-time metadata call may take.
const METADATA_TIMEOUT: Duration = Duration::from_secs(5);

impl PluginRuntime {
    pub(crate) fn plugin_of(
        &self,
        id: &str,
        expected: crate::manifest::PluginKind,
    ) -> Result<Arc<LoadedPlugin>, CallError> {
        let p = self
            .get(id)
            .ok_or_else(|| CallError::NotFound(id.to_string()))?;
        if p.manifest.kind != expected {
            return Err(CallError::WrongKind {
                id: id.into(),
                expected: expected.as_str(),
                actual: p.manifest.kind.as_str(),
            });
        }
        Ok(p)
    }

    fn new_store(
        &self,
        p: &LoadedPlugin,
        extra_rule: Option<HostRule>,
        timeout: Duration,
    ) -> Store<CallState> {
        let limits = p.manifest.limits;
        let ticks = cpu_ticks(p);
        let state = CallState::new(CallSetup {
            plugin: p.id.clone(),
            memory_bytes: limits.memory_bytes(),
            cpu_ticks: ticks,
            timeout,
            net: p.net.clone(),
            extra_rule,
        });
        let mut store = Store::new(&self.inner.engine, state);
        store.limiter(|s| &mut s.limiter);
        // Check in every tick: yield to the executor so one busy guest never
        // starves other tasks, and interrupt once the CPU budget is spent.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut ctx| {
            let s = ctx.data_mut();
            if s.cpu_ticks_left == 0 {
                s.cpu_exhausted = true;
                return Ok(UpdateDeadline::Interrupt);
            }
            s.cpu_ticks_left -= 1;
            Ok(UpdateDeadline::Yield(1))
        });
        store
    }

    /// Runs `f` in a fresh store under the plugin's limits and turns every
    /// way it can fail into a [`CallError`].
    pub(crate) async fn invoke<T, F, Fut>(
        &self,
        p: &LoadedPlugin,
        base_url: Option<&str>,
        record: bool,
        f: F,
    ) -> Result<T, CallError>
    where
        F: FnOnce(Store<CallState>) -> Fut,
        Fut: Future<Output = (Store<CallState>, GuestResult<T>)>,
    {
        self.invoke_calls(p, base_url, record, 1, f).await
    }

    /// [`invoke`](Self::invoke) for `f` making `calls` calls into one
    /// instance: the wall-clock timeout is the manifest's for each call, and
    /// `f` gives each call the manifest's CPU budget with
    /// [`CallState::start_call`].
    pub(crate) async fn invoke_calls<T, F, Fut>(
        &self,
        p: &LoadedPlugin,
        base_url: Option<&str>,
        record: bool,
        calls: u32,
        f: F,
    ) -> Result<T, CallError>
    where
        F: FnOnce(Store<CallState>) -> Fut,
        Fut: Future<Output = (Store<CallState>, GuestResult<T>)>,
    {
        self.invoke_session(p, base_url, record, calls, None, f)
            .await
            .0
    }

    /// [`invoke_calls`](Self::invoke_calls) in `session` when one is given
    /// (the store of a warm instance, see `warm.rs`), else in a fresh store
    /// with a pool slot of its own. The session comes back when the calls
    /// ended without a trap, a spent budget or a timeout, for the caller to
    /// keep or drop.
    pub(crate) async fn invoke_session<T, F, Fut>(
        &self,
        p: &LoadedPlugin,
        base_url: Option<&str>,
        record: bool,
        calls: u32,
        session: Option<Session>,
        f: F,
    ) -> (Result<T, CallError>, Option<Session>)
    where
        F: FnOnce(Store<CallState>) -> Fut,
        Fut: Future<Output = (Store<CallState>, GuestResult<T>)>,
    {
        let extra_rule = match base_url.map(origin_rule).transpose() {
            Ok(rule) => rule,
            Err(e) => return (Err(e), None),
        };
        let timeout = if record {
            p.manifest.limits.timeout() * calls.max(1)
        } else {
            METADATA_TIMEOUT
        };
        let started = Instant::now();
        let run = async {
            let (store, slot) = match session {
                Some(s) => (s.store, s.slot),
                None => {
                    let slot = (self.inner.slots.clone().acquire_owned().await)
                        .expect("the slot semaphore is never closed");
                    (self.new_store(p, extra_rule, timeout), slot)
                }
            };
            let (store, result) = f(store).await;
            (store, slot, result)
        };
        let (outcome, session) = match tokio::time::timeout(timeout, run).await {
            Err(_) => (
                Err(CallError::Timeout(format!(
                    "wall-clock timeout of {} ms exceeded",
                    timeout.as_millis()
                ))),
                None,
            ),
            Ok((store, slot, result)) => {
                let healthy = result.is_ok();
                let outcome = classify(&store, result, p);
                (outcome, healthy.then_some(Session { store, slot }))
            }
        };
        if record {
            let label = match &outcome {
                Ok(_) => "ok",
                Err(e) => e.label(),
            };
            p.stats.record(&p.manifest.id, label, started.elapsed());
            if let Err(e) = &outcome
                && matches!(
                    e,
                    CallError::Trap(_)
                        | CallError::OutOfMemory(_)
                        | CallError::Timeout(_)
                        | CallError::Denied(_)
                )
            {
                tracing::warn!(plugin = %p.manifest.id, "plugin call failed: {e}");
            }
        }
        (outcome, session)
    }

    pub(crate) async fn fetch_metadata(
        &self,
        p: &LoadedPlugin,
    ) -> Result<PluginMetadata, CallError> {
        macro_rules! meta {
            ($pre:expr, $iface:ident, $call:ident, $wrap:expr) => {{
                let pre = $pre;
                let v = self
                    .invoke(p, None, false, |mut store| async move {
                        let r = match pre.instantiate_async(&mut store).await {
                            Ok(i) => i.$iface().$call(&mut store).await.map(Ok),
                            Err(e) => Err(e),
                        };
                        (store, r)
                    })
                    .await?;
                $wrap(v)
            }};
        }
        Ok(match &p.pre {
            KindPre::Llm(pre) => meta!(
                pre,
                outreach_plugin_llm,
                call_metadata,
                PluginMetadata::LlmProvider
            ),
            KindPre::Verifier(pre) => meta!(
                pre,
                outreach_plugin_verifier,
                call_metadata,
                PluginMetadata::EmailVerifier
            ),
            KindPre::Enricher(pre) => meta!(
                pre,
                outreach_plugin_enricher,
                call_metadata,
                PluginMetadata::ContactEnricher
            ),
            KindPre::Action(pre) => {
                let d = meta!(pre, outreach_plugin_action, call_describe, |d| d);
                PluginMetadata::WorkflowAction(descriptor(d)?)
            }
            KindPre::Pack(pre) => meta!(
                pre,
                outreach_plugin_template_source,
                call_metadata,
                PluginMetadata::TemplatePack
            ),
            KindPre::Classifier(pre) => meta!(
                pre,
                outreach_plugin_classifier,
                call_metadata,
                PluginMetadata::ReplyClassifier
            ),
            KindPre::DomainClassifier(pre) => meta!(
                pre,
                outreach_plugin_domain_classification,
                call_metadata,
                PluginMetadata::DomainClassifier
            ),
        })
    }
}

fn descriptor(d: crate::bindings::types::ActionDescriptor) -> Result<ActionDescriptor, CallError> {
    Ok(ActionDescriptor {
        config_schema: serde_json::from_str(&d.config_schema)
            .map_err(|e| CallError::InvalidOutput(format!("config_schema is not JSON: {e}")))?,
        type_name: d.type_name,
        display_name: d.display_name,
        description: d.description,
    })
}

/// Maps a finished call to its outcome, using what the store saw: a refused
/// memory growth means out-of-memory, a spent CPU budget means timeout, an
/// HTTP denial explains a failure better than the guest's own wording.
/// A call's CPU budget in epoch ticks.
pub(crate) fn cpu_ticks(p: &LoadedPlugin) -> u64 {
    (p.manifest.limits.cpu_ms as u64)
        .div_ceil(EPOCH_TICK.as_millis() as u64)
        .max(1)
}

fn classify<T>(
    store: &Store<CallState>,
    result: GuestResult<T>,
    p: &LoadedPlugin,
) -> Result<T, CallError> {
    let s = store.data();
    match result {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => match s.denials.first() {
            Some(d) => Err(CallError::Denied(d.clone())),
            None => Err(e.into()),
        },
        Err(e) => {
            if s.cpu_exhausted {
                return Err(CallError::Timeout(format!(
                    "CPU deadline of {} ms exceeded",
                    p.manifest.limits.cpu_ms
                )));
            }
            if s.limiter.memory_refused {
                return Err(CallError::OutOfMemory(format!(
                    "memory cap of {} MiB reached",
                    p.manifest.limits.memory_mb
                )));
            }
            let mut reason = match e.downcast_ref::<Trap>() {
                Some(Trap::StackOverflow) => "stack overflow (deep recursion)".to_string(),
                Some(t) => t.to_string(),
                None => crate::engine::root_cause(&e),
            };
            let stderr = s.stderr_text();
            if !stderr.is_empty() {
                reason = format!(
                    "{reason}; guest stderr: {}",
                    stderr.chars().take(STDERR_IN_ERROR).collect::<String>()
                );
            }
            if reason.contains("instantiat")
                || reason.contains("pooling")
                || reason.contains("concurrency limit")
            {
                return Err(CallError::Instantiate(reason));
            }
            Err(CallError::Trap(reason))
        }
    }
}

/// Instantiates `$pre` in the store and calls `$iface().$call(args)`.
macro_rules! guest_call {
    ($self:ident, $p:ident, $pre:ident, $base:expr, $iface:ident . $call:ident ( $($arg:expr),* )) => {{
        $self
            .invoke(&$p, $base, true, |mut store| async move {
                let r = match $pre.instantiate_async(&mut store).await {
                    Ok(i) => i.$iface().$call(&mut store, $($arg),*).await,
                    Err(e) => Err(e),
                };
                (store, r)
            })
            .await
    }};
}

macro_rules! pre_of {
    ($p:ident, $variant:ident) => {
        match &$p.pre {
            KindPre::$variant(pre) => pre,
            _ => unreachable!("kind checked by plugin_of"),
        }
    };
}

fn vendor_ctx(api_key: &str, base_url: Option<&str>) -> VendorContext {
    VendorContext {
        api_key: api_key.to_string(),
        base_url: base_url.map(str::to_string),
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

impl PluginRuntime {
    /// One chat completion on an `llm-provider`. `base_url` is the operator's
    /// override (tests, the compatible kind's endpoint_url), allowed for this
    /// call only; pass `None` to use the vendor's public API.
    pub async fn llm_complete(
        &self,
        plugin_id: &str,
        api_key: &str,
        base_url: Option<&str>,
        request: CompletionRequest,
    ) -> Result<Completion, CallError> {
        let p = self.plugin_of(plugin_id, crate::manifest::PluginKind::LlmProvider)?;
        let pre = pre_of!(p, Llm);
        let ctx = vendor_ctx(api_key, base_url);
        let started = Instant::now();
        let r = guest_call!(
            self,
            p,
            pre,
            base_url,
            outreach_plugin_llm.call_complete(&ctx, &request)
        )?;
        Ok(Completion {
            model: r.model,
            content: r.content,
            prompt_tokens: r.prompt_tokens,
            completion_tokens: r.completion_tokens,
            finish_reason: r.finish_reason,
            latency_ms: ms(started.elapsed()),
        })
    }

    /// Validates an LLM key with a 1-token completion on `model` (the
    /// provider's default validation model when `None`).
    pub async fn llm_validate_key(
        &self,
        plugin_id: &str,
        api_key: &str,
        base_url: Option<&str>,
        model: Option<&str>,
    ) -> Result<LlmKeyValidation, CallError> {
        let p = self.plugin_of(plugin_id, crate::manifest::PluginKind::LlmProvider)?;
        let pre = pre_of!(p, Llm);
        let ctx = vendor_ctx(api_key, base_url);
        let model = model.map(str::to_string);
        guest_call!(
            self,
            p,
            pre,
            base_url,
            outreach_plugin_llm.call_validate_key(&ctx, model.as_deref())
        )
    }

    /// Verifies one email; the result carries latency and the list-rate cost.
    pub async fn verify_email(
        &self,
        plugin_id: &str,
        api_key: &str,
        base_url: Option<&str>,
        email: &str,
    ) -> Result<VerificationResult, CallError> {
        let p = self.plugin_of(plugin_id, crate::manifest::PluginKind::EmailVerifier)?;
        let pre = pre_of!(p, Verifier);
        let ctx = vendor_ctx(api_key, base_url);
        let started = Instant::now();
        let r = guest_call!(
            self,
            p,
            pre,
            base_url,
            outreach_plugin_verifier.call_verify(&ctx, email)
        )?;
        Ok(canonical::verification(
            r,
            ms(started.elapsed()),
            p.manifest.list_rate_usd.unwrap_or(0.0),
        ))
    }

    /// Enriches one domain (already normalised: no scheme, no path).
    pub async fn enrich_domain(
        &self,
        plugin_id: &str,
        api_key: &str,
        base_url: Option<&str>,
        domain: &str,
    ) -> Result<EnrichmentResult, CallError> {
        let p = self.plugin_of(plugin_id, crate::manifest::PluginKind::ContactEnricher)?;
        let pre = pre_of!(p, Enricher);
        let ctx = vendor_ctx(api_key, base_url);
        let started = Instant::now();
        let r = guest_call!(
            self,
            p,
            pre,
            base_url,
            outreach_plugin_enricher.call_enrich(&ctx, domain)
        )?;
        canonical::enrichment(
            r,
            ms(started.elapsed()),
            p.manifest.list_rate_usd.unwrap_or(0.0),
        )
        .map_err(CallError::InvalidOutput)
    }

    /// Validates an email-verifier or contact-enricher key (credits endpoint).
    pub async fn validate_key(
        &self,
        plugin_id: &str,
        api_key: &str,
        base_url: Option<&str>,
    ) -> Result<KeyValidation, CallError> {
        let p = self
            .get(plugin_id)
            .ok_or_else(|| CallError::NotFound(plugin_id.to_string()))?;
        let ctx = vendor_ctx(api_key, base_url);
        match &p.pre {
            KindPre::Verifier(pre) => {
                guest_call!(
                    self,
                    p,
                    pre,
                    base_url,
                    outreach_plugin_verifier.call_validate_key(&ctx)
                )
            }
            KindPre::Enricher(pre) => {
                guest_call!(
                    self,
                    p,
                    pre,
                    base_url,
                    outreach_plugin_enricher.call_validate_key(&ctx)
                )
            }
            KindPre::Llm(_) => self
                .llm_validate_key(plugin_id, api_key, base_url, None)
                .await
                .map(|_| KeyValidation {
                    credits_remaining: None,
                }),
            _ => Err(CallError::WrongKind {
                id: plugin_id.into(),
                expected: "vendor plugin",
                actual: p.manifest.kind.as_str(),
            }),
        }
    }

    /// The descriptor of a workflow action (cached at load time).
    pub fn workflow_action_describe(&self, plugin_id: &str) -> Result<ActionDescriptor, CallError> {
        let p = self.plugin_of(plugin_id, crate::manifest::PluginKind::WorkflowAction)?;
        match &p.metadata {
            Some(PluginMetadata::WorkflowAction(d)) => Ok(d.clone()),
            _ => Err(CallError::InvalidOutput("no descriptor".into())),
        }
    }

    /// The plugin id providing a workflow action type, if any.
    pub fn workflow_action_plugin(&self, type_name: &str) -> Option<String> {
        self.workflow_action_type(type_name).map(|t| t.plugin_id)
    }

    /// The loaded component of a workflow action type: looked up in the
    /// registry without listing every plugin or copying its descriptor,
    /// since a run asks for each component action it executes (the
    /// descriptor's schema is a JSON tree; copying it was a twentieth of a
    /// busy server's CPU).
    pub fn workflow_action_type(&self, type_name: &str) -> Option<WorkflowActionType> {
        let registry = self
            .inner
            .registry
            .read()
            .unwrap_or_else(|e| e.into_inner());
        registry.values().find_map(|p| match &p.metadata {
            Some(PluginMetadata::WorkflowAction(d)) if d.type_name == type_name => {
                Some(WorkflowActionType {
                    plugin_id: p.manifest.id.clone(),
                    sha256: p.sha256.clone(),
                    network: !p.manifest.allowed_hosts.is_empty(),
                })
            }
            _ => None,
        })
    }

    /// Runs a workflow action on the working items. The caller validates
    /// `config` against the descriptor's schema first.
    pub async fn workflow_action_execute(
        &self,
        plugin_id: &str,
        config: &serde_json::Value,
        items: &[serde_json::Value],
    ) -> Result<ActionOutput, CallError> {
        let p = self.plugin_of(plugin_id, crate::manifest::PluginKind::WorkflowAction)?;
        let pre = pre_of!(p, Action);
        let config = config.to_string();
        let items: Vec<String> = items.iter().map(|v| v.to_string()).collect();
        let out = guest_call!(
            self,
            p,
            pre,
            None,
            outreach_plugin_action.call_execute(&config, &items)
        )?;
        let parse = |s: &str| {
            serde_json::from_str(s)
                .map_err(|e| CallError::InvalidOutput(format!("output item is not JSON: {e}")))
        };
        Ok(ActionOutput {
            items: out
                .items
                .iter()
                .map(|s| parse(s))
                .collect::<Result<_, _>>()?,
            previous_result: out.previous_result.as_deref().map(parse).transpose()?,
        })
    }

    /// The templates of one pack.
    pub async fn template_pack_templates(
        &self,
        plugin_id: &str,
    ) -> Result<Vec<Template>, CallError> {
        let p = self.plugin_of(plugin_id, crate::manifest::PluginKind::TemplatePack)?;
        let pre = pre_of!(p, Pack);
        let list = self
            .invoke(&p, None, true, |mut store| async move {
                let r = match pre.instantiate_async(&mut store).await {
                    Ok(i) => i
                        .outreach_plugin_template_source()
                        .call_templates(&mut store)
                        .await
                        .map(Ok),
                    Err(e) => Err(e),
                };
                (store, r)
            })
            .await?;
        list.into_iter()
            .map(|t| canonical::template(t, plugin_id).map_err(CallError::InvalidOutput))
            .collect()
    }

    /// Templates of every loaded pack.
    pub async fn all_templates(&self) -> Vec<Template> {
        let mut out = Vec::new();
        for id in self.plugins_of_kind(crate::manifest::PluginKind::TemplatePack) {
            match self.template_pack_templates(&id).await {
                Ok(t) => out.extend(t),
                Err(e) => tracing::warn!(plugin = %id, "template pack failed: {e}"),
            }
        }
        out
    }
}

/// A workflow action type a loaded component provides.
#[derive(Debug, Clone)]
pub struct WorkflowActionType {
    pub plugin_id: String,
    /// The component's hash: a new version of the plugin is a new key.
    pub sha256: String,
    /// Whether its manifest allows any host: without one the component
    /// can reach nothing outside its sandbox, so running it again has no
    /// effect but its output.
    pub network: bool,
}
