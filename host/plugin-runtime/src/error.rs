//! Typed call errors: the plugin's own (from WIT) and the host's.

use crate::bindings::types::PluginError;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// Network failure, timeout or 5xx upstream; fallback chains move on.
    #[error("transient upstream error: {0}")]
    Transient(String),
    /// Upstream rate limit; fallback chains move on.
    #[error("rate limited upstream{}: {message}", retry_after.map(|d| format!(" (retry after {} ms)", d.as_millis())).unwrap_or_default())]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("upstream refused the key: {0}")]
    Auth(String),
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("permanent upstream error: {0}")]
    Permanent(String),
    /// The CPU deadline or the wall-clock timeout of the manifest ran out.
    #[error("plugin timed out: {0}")]
    Timeout(String),
    /// The guest trapped (panic, stack overflow, unreachable, ...).
    #[error("plugin trapped: {0}")]
    Trap(String),
    /// The guest hit its memory cap.
    #[error("plugin ran out of memory: {0}")]
    OutOfMemory(String),
    /// A host rule refused the guest's outbound request; the text names it.
    #[error("plugin request denied: {0}")]
    Denied(String),
    /// The guest answered something the host cannot use (bad JSON, ...).
    #[error("plugin returned invalid output: {0}")]
    InvalidOutput(String),
    #[error("no loaded plugin {0}")]
    NotFound(String),
    #[error("plugin {id} is a {actual}, not a {expected}")]
    WrongKind {
        id: String,
        expected: &'static str,
        actual: &'static str,
    },
    /// Instantiation failed for a host-side reason (pool exhausted, ...).
    #[error("plugin could not start: {0}")]
    Instantiate(String),
}

impl CallError {
    /// Whether the spec/3 fallback chain moves to the next vendor: only on
    /// transient and rate-limited errors, and on a wall-clock timeout, which
    /// is almost always a slow upstream.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            CallError::Transient(_) | CallError::RateLimited { .. }
        ) || matches!(self, CallError::Timeout(m) if m.starts_with("wall-clock"))
    }

    /// Short label used in metrics and counters.
    pub fn label(&self) -> &'static str {
        match self {
            CallError::Transient(_) => "transient",
            CallError::RateLimited { .. } => "rate_limited",
            CallError::Auth(_) => "auth",
            CallError::InvalidInput(_) => "invalid_input",
            CallError::Permanent(_) => "permanent",
            CallError::Timeout(_) => "timeout",
            CallError::Trap(_) => "trap",
            CallError::OutOfMemory(_) => "out_of_memory",
            CallError::Denied(_) => "denied",
            CallError::InvalidOutput(_) => "invalid_output",
            CallError::NotFound(_) => "not_found",
            CallError::WrongKind { .. } => "wrong_kind",
            CallError::Instantiate(_) => "instantiate",
        }
    }
}

impl From<PluginError> for CallError {
    fn from(e: PluginError) -> Self {
        match e {
            PluginError::Transient(m) => CallError::Transient(m),
            PluginError::RateLimited(r) => CallError::RateLimited {
                retry_after: r.retry_after_ms.map(Duration::from_millis),
                message: r.message,
            },
            PluginError::Auth(m) => CallError::Auth(m),
            PluginError::InvalidInput(m) => CallError::InvalidInput(m),
            PluginError::Permanent(m) => CallError::Permanent(m),
        }
    }
}

/// Why a component or manifest was refused at load time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LoadError(pub String);
