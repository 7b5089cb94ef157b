//! Typed HTTP over the host's guarded `http.send` import.
//!
//! The host refuses any URL outside the plugin's `allowed_hosts` (and the
//! call's base-url override), resolves DNS itself and refuses private,
//! loopback, link-local and metadata addresses. A refusal comes back as
//! [`HttpError::Denied`] with the rule that refused it.

use crate::bindings::outreach::plugin::http as wit;
use crate::types::{PluginError, RateLimit};

pub use wit::{HttpError, Method};

/// An outgoing request, built fluently.
#[derive(Clone, Debug)]
pub struct Request {
    /// HTTP method.
    pub method: Method,
    /// Absolute URL, query included.
    pub url: String,
    /// Header name and value pairs.
    pub headers: Vec<(String, String)>,
    /// Request body, if any.
    pub body: Option<Vec<u8>>,
    /// Per-request timeout in milliseconds; the host caps it.
    pub timeout_ms: Option<u32>,
}

/// A response from the host.
#[derive(Clone, Debug)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// Header name and value pairs (names in lower case).
    pub headers: Vec<(String, String)>,
    /// Response body (size-capped by the host).
    pub body: Vec<u8>,
    /// URL after redirects.
    pub final_url: String,
}

impl Request {
    /// A request with the given method and URL.
    pub fn new(method: Method, url: &str) -> Self {
        Request {
            method,
            url: url.to_string(),
            headers: Vec::new(),
            body: None,
            timeout_ms: None,
        }
    }
    /// A GET request.
    pub fn get(url: &str) -> Self {
        Self::new(Method::Get, url)
    }
    /// A POST request.
    pub fn post(url: &str) -> Self {
        Self::new(Method::Post, url)
    }
    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
    /// Adds `Authorization: Bearer <token>`.
    pub fn bearer(self, token: &str) -> Self {
        let value = format!("Bearer {token}");
        self.header("authorization", &value)
    }
    /// Appends a percent-encoded query parameter to the URL.
    pub fn query(mut self, name: &str, value: &str) -> Self {
        let sep = if self.url.contains('?') { '&' } else { '?' };
        self.url = format!("{}{sep}{}={}", self.url, encode(name), encode(value));
        self
    }
    /// Sets a JSON body and the matching content type.
    pub fn json<T: serde::Serialize + ?Sized>(mut self, value: &T) -> Self {
        self.body = Some(serde_json::to_vec(value).unwrap_or_default());
        self.header("content-type", "application/json")
    }
    /// Sets a raw body.
    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = Some(body);
        self
    }
    /// Sets the per-request timeout.
    pub fn timeout_ms(mut self, ms: u32) -> Self {
        self.timeout_ms = Some(ms);
        self
    }
    /// Sends the request through the host. Transport failures become
    /// [`PluginError`]s: network and timeout errors are transient, a denial by
    /// a host rule is permanent.
    pub fn send(self) -> Result<Response, PluginError> {
        send(self).map_err(http_error_to_plugin_error)
    }
}

impl Response {
    /// The first header with this (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    /// Parses the body as JSON; a malformed body is a permanent error.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, PluginError> {
        serde_json::from_slice(&self.body)
            .map_err(|e| PluginError::Permanent(format!("vendor answered malformed JSON: {e}")))
    }
    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    /// Classifies the status the way fallback chains need it: 2xx passes,
    /// 429 is rate-limited (with `Retry-After` seconds when given), 401 and
    /// 403 are auth errors, 5xx and 408 are transient, other 4xx are
    /// invalid input.
    pub fn check(self) -> Result<Response, PluginError> {
        let status = self.status;
        let snippet: String = self.text().chars().take(300).collect();
        let message = format!("vendor answered HTTP {status}: {snippet}");
        match status {
            200..=299 => Ok(self),
            429 => {
                let retry_after_ms = self
                    .header("retry-after")
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(|s| s.saturating_mul(1000));
                Err(PluginError::RateLimited(RateLimit {
                    retry_after_ms,
                    message,
                }))
            }
            401 | 403 => Err(PluginError::Auth(message)),
            408 | 500..=599 => Err(PluginError::Transient(message)),
            400..=499 => Err(PluginError::InvalidInput(message)),
            _ => Err(PluginError::Permanent(message)),
        }
    }
}

/// Maps a transport error to the error taxonomy of the plugin API.
pub fn http_error_to_plugin_error(e: HttpError) -> PluginError {
    match e {
        HttpError::Network(m) => PluginError::Transient(format!("network error: {m}")),
        HttpError::Timeout(m) => PluginError::Transient(format!("timeout: {m}")),
        HttpError::Denied(m) => PluginError::Permanent(format!("denied by host: {m}")),
        HttpError::TooLarge(m) => PluginError::Permanent(format!("too large: {m}")),
        HttpError::InvalidRequest(m) => PluginError::InvalidInput(format!("invalid request: {m}")),
    }
}

/// Sends a request through the host import (or the native test mock).
pub fn send(req: Request) -> Result<Response, HttpError> {
    #[cfg(target_arch = "wasm32")]
    {
        let r = wit::send(&wit::Request {
            method: req.method,
            url: req.url,
            headers: req.headers,
            body: req.body,
            timeout_ms: req.timeout_ms,
        })?;
        Ok(Response {
            status: r.status,
            headers: r.headers,
            body: r.body,
            final_url: r.final_url,
        })
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        crate::testing::dispatch_http(req)
    }
}

/// Percent-encodes a query component (RFC 3986 unreserved characters pass).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
