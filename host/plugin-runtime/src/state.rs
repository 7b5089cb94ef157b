//! Per-call store state: a WASI context with no ambient authority, the
//! resource limiter, the CPU budget, and the host imports (guarded HTTP, log,
//! AI through the call's bridge).

use crate::ai::{AiBridge, MAX_AI_CALLS_PER_CALL, NO_AI_PROVIDER};
use crate::allow::{self, HostRule};
use crate::bindings::shared::outreach::plugin::{ai, http, log, types};
use outreach_ssrf::{GuardError, GuardedClient, GuardedRequest, Method, Url};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// How much of a panicking guest's WASI stderr is kept.
const STDERR_CAPTURE: usize = 4096;

/// How many characters of what the guest wrote to stderr a trap's error
/// shows; the guest's error-level log keeps its last this many, so a
/// panic's message after a long run of logged errors is still shown.
pub(crate) const STDERR_IN_ERROR: usize = 1000;

/// Network access of one plugin: the shared guarded client and its rules.
pub(crate) struct NetAccess {
    pub client: Arc<GuardedClient>,
    pub rules: Vec<HostRule>,
}

/// Memory and instance limits enforced by wasmtime on every allocation.
pub(crate) struct Limiter {
    memory_bytes: usize,
    pub(crate) memory_refused: bool,
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            // Refusing (not trapping) lets the guest's allocator fail the way
            // it does natively; the flag lets the host report out-of-memory
            // instead of a bare `unreachable` trap.
            self.memory_refused = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 200_000)
    }

    // Python components need about a dozen core instances; leave headroom
    // without letting a component multiply itself.
    fn instances(&self) -> usize {
        64
    }
    fn tables(&self) -> usize {
        64
    }
    fn memories(&self) -> usize {
        16
    }
}

pub(crate) struct CallState {
    /// Built on the guest's first WASI call: most calls of a small component
    /// make none, and a context (two random generators seeded, clocks,
    /// streams) was a tenth of a call's cost.
    wasi: Option<WasiCtx>,
    table: ResourceTable,
    pub(crate) limiter: Limiter,
    plugin: Arc<str>,
    net: Option<Arc<NetAccess>>,
    /// The base-URL override of this call, allowed for this call only.
    extra_rule: Option<HostRule>,
    pub(crate) cpu_ticks_left: u64,
    pub(crate) cpu_exhausted: bool,
    pub(crate) denials: Vec<String>,
    /// What the guest wrote to stderr, once it has a WASI context.
    stderr: Option<MemoryOutputPipe>,
    /// The guest's error-level log lines, the last `STDERR_IN_ERROR` chars:
    /// where the guest SDK sends stderr (so a panic's message) instead of
    /// WASI.
    logged_errors: String,
    deadline: Instant,
    /// The `ai` import's bridge for this call (reply classifiers), if any.
    pub(crate) ai: Option<Arc<dyn AiBridge>>,
    ai_calls: u32,
}

pub(crate) struct CallSetup {
    pub plugin: Arc<str>,
    pub memory_bytes: usize,
    pub cpu_ticks: u64,
    pub timeout: Duration,
    pub net: Option<Arc<NetAccess>>,
    pub extra_rule: Option<HostRule>,
}

impl CallState {
    /// Starts another call into the same instance (a batch): a full CPU
    /// budget, AI-call allowance and no denials carried over.
    pub(crate) fn start_call(&mut self, cpu_ticks: u64) {
        self.cpu_ticks_left = cpu_ticks;
        self.ai_calls = 0;
        self.denials.clear();
        self.logged_errors.clear();
    }

    pub(crate) fn new(setup: CallSetup) -> Self {
        CallState {
            wasi: None,
            table: ResourceTable::new(),
            limiter: Limiter {
                memory_bytes: setup.memory_bytes,
                memory_refused: false,
            },
            plugin: setup.plugin,
            net: setup.net,
            extra_rule: setup.extra_rule,
            cpu_ticks_left: setup.cpu_ticks,
            cpu_exhausted: false,
            denials: Vec::new(),
            stderr: None,
            logged_errors: String::new(),
            deadline: Instant::now() + setup.timeout,
            ai: None,
            ai_calls: 0,
        }
    }

    /// Text the guest wrote to stderr, through WASI or through its SDK (a
    /// Rust panic's message lands here).
    pub(crate) fn stderr_text(&self) -> String {
        let wasi = self
            .stderr
            .as_ref()
            .map(|pipe| String::from_utf8_lossy(&pipe.contents()).into_owned())
            .unwrap_or_default();
        // WASI stderr first: a guest that writes there shows it as before.
        format!("{wasi}{}", self.logged_errors).trim().to_string()
    }

    /// Keeps an error-level log line for the call's error, dropping the
    /// oldest text past `STDERR_IN_ERROR` characters.
    fn keep_logged_error(&mut self, message: &str) {
        let kept = &mut self.logged_errors;
        kept.push_str(message);
        kept.push('\n');
        let excess = kept.chars().count().saturating_sub(STDERR_IN_ERROR);
        if let Some((cut, _)) = kept.char_indices().nth(excess) {
            kept.drain(..cut);
        }
    }

    fn deny(&mut self, message: String) -> http::HttpError {
        tracing::warn!(plugin = %self.plugin, "plugin HTTP request denied: {message}");
        self.denials.push(message.clone());
        http::HttpError::Denied(message)
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let stderr = &mut self.stderr;
        let ctx = self.wasi.get_or_insert_with(|| {
            let pipe = MemoryOutputPipe::new(STDERR_CAPTURE);
            *stderr = Some(pipe.clone());
            // No preopened directories, no environment, no arguments, no
            // stdin, stdout discarded, sockets and name lookup switched off:
            // the guest's only way out is the `http` import below.
            WasiCtx::builder()
                .stderr(pipe)
                .allow_tcp(false)
                .allow_udp(false)
                .allow_ip_name_lookup(false)
                .build()
        });
        WasiCtxView {
            ctx,
            table: &mut self.table,
        }
    }
}

impl types::Host for CallState {}

impl log::Host for CallState {
    async fn log(&mut self, level: log::Level, message: String) {
        let message: String = message.chars().take(4096).collect();
        let plugin = &*self.plugin;
        match level {
            log::Level::Trace => tracing::trace!(plugin, "{message}"),
            log::Level::Debug => tracing::debug!(plugin, "{message}"),
            log::Level::Info => tracing::info!(plugin, "{message}"),
            log::Level::Warn => tracing::warn!(plugin, "{message}"),
            log::Level::Error => tracing::error!(plugin, "{message}"),
        }
        if level == log::Level::Error {
            self.keep_logged_error(&message);
        }
    }
}

impl ai::Host for CallState {
    async fn complete(
        &mut self,
        request: types::CompletionRequest,
    ) -> Result<types::CompletionResponse, types::PluginError> {
        let Some(bridge) = self.ai.clone() else {
            return Err(types::PluginError::Permanent(NO_AI_PROVIDER.into()));
        };
        if self.ai_calls >= MAX_AI_CALLS_PER_CALL {
            tracing::warn!(plugin = %self.plugin, "plugin AI completion refused: call cap reached");
            return Err(types::PluginError::Permanent(format!(
                "at most {MAX_AI_CALLS_PER_CALL} AI completions per plugin call"
            )));
        }
        self.ai_calls += 1;
        bridge.complete(request).await
    }
}

fn method(m: http::Method) -> Method {
    match m {
        http::Method::Get => Method::GET,
        http::Method::Head => Method::HEAD,
        http::Method::Post => Method::POST,
        http::Method::Put => Method::PUT,
        http::Method::Patch => Method::PATCH,
        http::Method::Delete => Method::DELETE,
    }
}

impl http::Host for CallState {
    async fn send(&mut self, req: http::Request) -> Result<http::Response, http::HttpError> {
        let Some(net) = self.net.clone() else {
            let msg = format!(
                "plugin {} has no network access (template packs and reply classifiers never do)",
                self.plugin
            );
            return Err(self.deny(msg));
        };
        let url = Url::parse(&req.url)
            .map_err(|e| http::HttpError::InvalidRequest(format!("bad URL {:?}: {e}", req.url)))?;
        let mut rules = net.rules.clone();
        rules.extend(self.extra_rule.clone());
        if let Err(msg) = allow::check(&self.plugin, &rules, &url) {
            return Err(self.deny(msg));
        }
        let remaining = self.deadline.saturating_duration_since(Instant::now());
        let timeout = req
            .timeout_ms
            .map(|ms| Duration::from_millis(ms as u64).min(remaining))
            .unwrap_or(remaining);
        let plugin = self.plugin.clone();
        // Redirect targets must satisfy the same rules, or an open redirector
        // on an allowed host would be a way out.
        let hop = move |u: &Url| allow::check(&plugin, &rules, u);
        let request = GuardedRequest {
            method: method(req.method),
            url,
            headers: req.headers,
            body: req.body,
            timeout: Some(timeout),
        };
        match net.client.send_with(request, &hop).await {
            Ok(r) => Ok(http::Response {
                status: r.status,
                headers: r.headers,
                body: r.body,
                final_url: r.final_url.to_string(),
            }),
            Err(e) => Err(match e {
                GuardError::Blocked(_) | GuardError::SchemeNotAllowed(_) => {
                    self.deny(e.to_string())
                }
                GuardError::NotAllowed(m) => self.deny(m),
                GuardError::Timeout => http::HttpError::Timeout(e.to_string()),
                GuardError::RequestTooLarge { .. } | GuardError::ResponseTooLarge { .. } => {
                    http::HttpError::TooLarge(e.to_string())
                }
                GuardError::InvalidUrl(_) | GuardError::InvalidRequest(_) => {
                    http::HttpError::InvalidRequest(e.to_string())
                }
                _ => http::HttpError::Network(e.to_string()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trap's error shows the first `STDERR_IN_ERROR` characters of the
    /// guest's stderr, so the logged errors kept are the last that many: a
    /// panic's message after a long run of logged errors is the part shown.
    #[test]
    fn the_panic_after_many_logged_errors_is_what_the_error_shows() {
        let mut state = CallState::new(CallSetup {
            plugin: Arc::from("p"),
            memory_bytes: 1 << 20,
            cpu_ticks: 1,
            timeout: Duration::from_secs(1),
            net: None,
            extra_rule: None,
        });
        for i in 0..100 {
            state.keep_logged_error(&format!("vendor answered 503 (attempt {i}), é"));
        }
        state.keep_logged_error("thread '<unnamed>' panicked at src/lib.rs:9:5:");
        state.keep_logged_error("no verdict");
        let text = state.stderr_text();
        assert!(text.chars().count() <= STDERR_IN_ERROR, "{text}");
        let shown: String = text.chars().take(STDERR_IN_ERROR).collect();
        assert!(
            shown.ends_with("panicked at src/lib.rs:9:5:\nno verdict"),
            "{shown}"
        );
        assert!(!shown.contains("attempt 0)"), "{shown}");
    }
}
