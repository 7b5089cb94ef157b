//! SSRF-guarded outbound HTTP client.
//!
//! Every outbound request the platform makes on behalf of a user (webhooks, the
//! workflow `http_request` step, vendor calls, and the plugins' only HTTP import)
//! goes through [`GuardedClient`], so that a user-supplied URL can never reach the
//! platform's own network: loopback, private ranges, link-local, cloud metadata
//! endpoints, and the IPv6 forms that smuggle those in.
//!
//! How the guarantee is kept:
//!
//! * IP-literal hosts are checked by [`check_url`] before each request, on the
//!   host the `url` crate parsed (the same one reqwest connects to), because
//!   reqwest never asks a resolver about literals.
//! * Domain names are resolved by [`GuardedResolver`], which reqwest uses for
//!   every connection; it refuses the name if *any* of its addresses is blocked.
//!   The addresses checked are the addresses connected to, so there is no window
//!   between check and connect for DNS rebinding.
//! * Redirects are followed by hand, re-checking every hop, and proxies from the
//!   environment are ignored (a proxy would make the connection elsewhere).

mod client;
pub mod dns;
mod ip;
mod outbound;
mod resolver;

pub use client::{ClientOptions, GuardedClient, GuardedRequest, GuardedResponse};
pub use ip::{check_ip, check_url};
pub use outbound::{connect_checked, resolve_checked};
pub use reqwest::Method;
pub use resolver::GuardedResolver;
pub use url::Url;

/// What outbound requests may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardPolicy {
    /// URL schemes that may be requested, compared case-insensitively.
    /// [`GuardPolicy::strict`] allows `http` and `https`.
    pub allowed_schemes: Vec<String>,
    /// **For tests only.** Allows 127.0.0.0/8 and `::1` (and `::ffff:127.0.0.0/104`,
    /// which is the same IPv4 loopback), so tests can talk to servers they start
    /// locally. It opens nothing else: private ranges, link-local, metadata
    /// endpoints and NAT64/6to4 encodings of loopback stay blocked. Never set it
    /// from configuration in production.
    pub allow_loopback: bool,
    /// The operator's allowlist: networks that may be reached although the
    /// deny lists cover them (a self-hosted mail server or LLM gateway on a
    /// private network). Cloud metadata endpoints stay refused whatever is
    /// listed, because reaching them hands out the host's credentials.
    pub allow_nets: Vec<ipnet::IpNet>,
    /// The operator's `dns_nameservers`: names are resolved there instead
    /// of by the system resolver (which also reads the hosts file) when set.
    pub nameservers: Vec<std::net::SocketAddr>,
}

impl GuardPolicy {
    /// The production policy: `http` and `https` only, every special address blocked.
    pub fn strict() -> Self {
        Self {
            allowed_schemes: vec!["http".to_owned(), "https".to_owned()],
            allow_loopback: false,
            allow_nets: Vec::new(),
            nameservers: Vec::new(),
        }
    }

    /// [`GuardPolicy::strict`] plus the loopback allowance. For tests only; see
    /// [`GuardPolicy::allow_loopback`].
    pub fn allow_loopback_for_tests() -> Self {
        Self {
            allow_loopback: true,
            ..Self::strict()
        }
    }
}

impl Default for GuardPolicy {
    /// Defaults to [`GuardPolicy::strict`] so forgetting to configure is safe.
    fn default() -> Self {
        Self::strict()
    }
}

/// Why a guarded request failed.
///
/// The enum is `Clone` so the resolver's refusal can be recovered intact from
/// inside reqwest's error chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    /// The destination address is not allowed. The Display text always starts
    /// with `Blocked by SSRF guard`, which callers and logs can rely on.
    #[error("Blocked by SSRF guard: {0}")]
    Blocked(String),
    /// A caller-supplied per-hop check (see [`GuardedClient::send_with`]) refused the URL.
    #[error("Request not allowed: {0}")]
    NotAllowed(String),
    /// The URL (or a redirect's `Location`) could not be used.
    #[error("Invalid URL: {0}")]
    InvalidUrl(String),
    /// The URL's scheme is not in [`GuardPolicy::allowed_schemes`].
    #[error("URL scheme not allowed: {0}")]
    SchemeNotAllowed(String),
    /// A header name or value was not valid HTTP.
    #[error("Invalid request: {0}")]
    InvalidRequest(String),
    /// The whole exchange (all hops and the body) took longer than the timeout,
    /// or the connection attempt exceeded the connect timeout.
    #[error("Request timed out")]
    Timeout,
    /// The connection could not be established (DNS failure, refused, reset).
    #[error("Connection failed: {0}")]
    Connect(String),
    /// The connection was made but the HTTP exchange failed.
    #[error("HTTP transport error: {0}")]
    Transport(String),
    /// The request body exceeds [`ClientOptions::max_request_bytes`].
    #[error("Request body too large (limit {limit} bytes)")]
    RequestTooLarge { limit: usize },
    /// The response body exceeds [`ClientOptions::max_response_bytes`].
    #[error("Response body too large (limit {limit} bytes)")]
    ResponseTooLarge { limit: usize },
    /// More than [`ClientOptions::max_redirects`] redirects.
    #[error("Too many redirects (limit {max})")]
    TooManyRedirects { max: usize },
    /// The underlying HTTP client could not be built.
    #[error("Could not build HTTP client: {0}")]
    Client(String),
}

impl GuardError {
    /// Whether retrying the same request later may succeed: timeouts and
    /// connection failures. Policy refusals, size limits and bad input will fail
    /// the same way again, and transport errors after the request was sent are
    /// not retried because the server may already have acted on it.
    pub fn is_transient(&self) -> bool {
        matches!(self, GuardError::Timeout | GuardError::Connect(_))
    }

    /// Whether this is a refusal by the address guard.
    pub fn is_blocked(&self) -> bool {
        matches!(self, GuardError::Blocked(_))
    }
}
