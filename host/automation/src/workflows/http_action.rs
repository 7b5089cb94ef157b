//! The network part of the `http_request` workflow action (spec/3 "Action
//! types"): reading its config, sending the request through the SSRF guard,
//! and turning the answer into what the run record keeps and the next
//! action sees.
//!
//! Templating (`{{variable}}`, `{{ai_memory_recall:KEY}}`) is the caller's:
//! [`HttpActionClient::send`] gets the final URL, headers and body. So
//! [`HttpRequestConfig::from_config`] checks only the shape of the config,
//! not that the URL parses, because a saved config still holds the
//! placeholders.
//!
//! Every request goes through [`outreach_ssrf::GuardedClient`]: literal
//! addresses are checked before connecting, names are checked on the
//! addresses they resolve to (the ones connected to), and each redirect hop
//! is checked again. A refusal is [`HttpFailure::Blocked`], whose text is
//! the spec's `Blocked by SSRF guard`, and no connection is made.
//!
//! A config may name a saved connection (`connection_id`); the engine
//! merges its base URL and headers in (`crate::connections::apply`) before
//! sending, and [`HttpRequestConfig::connection`] then says which headers
//! came from it (redacted in records whatever their names) and the one
//! origin they may reach.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use outreach_core::error::details::BLOCKED_BY_SSRF_GUARD;
use outreach_ssrf::{
    ClientOptions, GuardError, GuardPolicy, GuardedClient, GuardedRequest, Method, Url,
};
use serde_json::{Map, Value, json};

// What run records show of the headers (`redact.rs`).
mod redact;
pub use redact::*;

/// The methods the action may use (spec/3).
pub const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// spec/3 "Limits": the timeout when the config names none.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 30;

/// The longest timeout a config may ask for: a workflow run holds a worker
/// for the whole request, so one step may not hold it for more than five
/// minutes.
pub const MAX_TIMEOUT_SECONDS: u64 = 300;

/// The largest response body read. The answer is kept in the run record
/// and handed to the next action as JSON, so a larger one is refused
/// rather than buffered; the guarded client stops reading at this size.
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// The largest request body sent, for the same reason in the other
/// direction: a templated body that grew past this is a mistake.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// How much of an error response's body [`HttpFailure::Status`] keeps, in
/// characters: enough to show the receiver's message in a run record.
const EXCERPT_CHARS: usize = 200;

/// The config keys, in the order the schema lists them.
const FIELDS: [&str; 9] = [
    "method",
    "url",
    "connection_id",
    "headers",
    "body",
    "timeout_seconds",
    "capture_field",
    "iterate_into_domains",
    "per_domain",
];

/// The `http_request` action's config, with defaults applied.
#[derive(Clone, PartialEq)]
pub struct HttpRequestConfig {
    /// One of [`METHODS`]; GET when the config names none.
    pub method: String,
    /// Absolute, or (with `connection_id`) relative to the connection's
    /// base URL, or empty for the base URL itself.
    pub url: String,
    /// The saved connection the config names.
    pub connection_id: Option<i64>,
    pub headers: BTreeMap<String, String>,
    /// The JSON body, sent for POST, PUT and PATCH only (spec/3); a body
    /// left in the config of a GET or DELETE is ignored, so switching the
    /// method in an editor does not make the config invalid.
    pub body: Option<Value>,
    /// Covers the whole exchange: connecting, every redirect and the body.
    pub timeout_seconds: u64,
    /// Dot-path into the response JSON (see [`capture`]).
    pub capture_field: Option<String>,
    /// When the captured value is a list, it replaces the working domain
    /// set (see [`iterate_items`]).
    pub iterate_into_domains: bool,
    /// Whether the caller sends the request once per domain of the working
    /// set (templated per domain) instead of once per run.
    pub per_domain: bool,
    /// Set once a saved connection's base URL and headers are merged in.
    pub connection: Option<MergedConnection>,
}

/// Header values can be credentials, and configs end up in logs through
/// `{:?}`; the derived Debug would print them.
impl fmt::Debug for HttpRequestConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRequestConfig")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("connection_id", &self.connection_id)
            .field("headers", &self.recorded_headers())
            .field("body", &self.body.as_ref().map(|_| "..."))
            .field("timeout_seconds", &self.timeout_seconds)
            .field("capture_field", &self.capture_field)
            .field("iterate_into_domains", &self.iterate_into_domains)
            .field("per_domain", &self.per_domain)
            .finish()
    }
}

impl HttpRequestConfig {
    /// Reads an action's `config` object. Err is a sentence for a 400
    /// detail naming the field ("config.timeout_seconds: ..."). Unknown
    /// keys are refused, as the schema's `additionalProperties: false`
    /// says, so a misspelt `capture_feild` is caught at save time instead
    /// of being silently ignored. `null` for an optional field is the same
    /// as leaving it out.
    pub fn from_config(config: &Value) -> Result<Self, String> {
        let Some(map) = config.as_object() else {
            return Err("config: must be a JSON object".to_owned());
        };
        if let Some(key) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(format!(
                "config.{key}: unknown field; the http_request config has {}",
                FIELDS.join(", ")
            ));
        }
        let present = |key: &str| map.get(key).filter(|v| !v.is_null());

        let method = match present("method") {
            None => "GET".to_owned(),
            Some(Value::String(m)) if METHODS.contains(&m.as_str()) => m.clone(),
            Some(_) => {
                return Err(format!(
                    "config.method: must be one of {}",
                    METHODS.join(", ")
                ));
            }
        };

        let connection_id = match present("connection_id") {
            None => None,
            Some(id) => match id.as_i64() {
                Some(id) if id >= 1 => Some(id),
                _ => {
                    return Err(
                        "config.connection_id: must be the id of a saved connection".to_owned()
                    );
                }
            },
        };

        // With a connection the URL may be relative to its base URL, or
        // left out for the base URL itself.
        let url = match (present("url"), connection_id) {
            (Some(Value::String(u)), _) if !u.trim().is_empty() => u.clone(),
            (None, Some(_)) => String::new(),
            (Some(Value::String(_)), Some(_)) => String::new(),
            _ => {
                return Err(
                    "config.url: is required and must be a non-empty string (or name a connection_id)"
                        .to_owned(),
                );
            }
        };

        let mut headers = BTreeMap::new();
        match present("headers") {
            None => {}
            Some(Value::Object(h)) => {
                for (name, value) in h {
                    let Value::String(value) = value else {
                        return Err(format!("config.headers.{name}: must be a string"));
                    };
                    check_header(name, value, "config.headers")?;
                    headers.insert(name.clone(), value.clone());
                }
            }
            Some(_) => {
                return Err(
                    "config.headers: must be an object of header names to string values".to_owned(),
                );
            }
        }

        let body = match present("body") {
            None => None,
            Some(b @ Value::Object(_)) => Some(b.clone()),
            Some(_) => return Err("config.body: must be a JSON object".to_owned()),
        };

        let timeout_seconds = match present("timeout_seconds") {
            None => DEFAULT_TIMEOUT_SECONDS,
            Some(t) => match t.as_u64() {
                Some(t) if (1..=MAX_TIMEOUT_SECONDS).contains(&t) => t,
                _ => {
                    return Err(format!(
                        "config.timeout_seconds: must be an integer from 1 to {MAX_TIMEOUT_SECONDS}"
                    ));
                }
            },
        };

        let capture_field = match present("capture_field") {
            None => None,
            // An empty path captures nothing: editors send "" for a
            // cleared field.
            Some(Value::String(p)) if p.is_empty() => None,
            Some(Value::String(p)) => Some(p.clone()),
            Some(_) => return Err("config.capture_field: must be a string".to_owned()),
        };

        let flag = |key: &str| match present(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("config.{key}: must be true or false")),
        };

        Ok(HttpRequestConfig {
            method,
            url,
            connection_id,
            headers,
            body,
            timeout_seconds,
            capture_field,
            iterate_into_domains: flag("iterate_into_domains")?,
            per_domain: flag("per_domain")?,
            connection: None,
        })
    }
}

/// A header name must be an HTTP token and a value must not hold line
/// breaks or NUL. Values may still hold `{{placeholders}}`, which are valid
/// text; what templating puts there is checked again when sending. `at`
/// names the headers object in the error ("config.headers").
pub(crate) fn check_header(name: &str, value: &str, at: &str) -> Result<(), String> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(format!("{at}: {name:?} is not a valid header name"));
    }
    if value.chars().any(|c| matches!(c, '\r' | '\n' | '\0')) {
        return Err(format!("{at}.{name}: must not contain line breaks"));
    }
    Ok(())
}

/// The JSON Schema (draft 2020-12) of the `http_request` config, for the
/// action catalogue and editors. It says what
/// [`HttpRequestConfig::from_config`] accepts.
pub fn config_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "http_request",
        "description": "Calls an HTTP endpoint. Private, loopback, link-local and cloud metadata addresses are refused ('Blocked by SSRF guard').",
        "type": "object",
        "properties": {
            "method": {
                "type": "string",
                "enum": METHODS,
                "default": "GET"
            },
            "url": {
                "type": "string",
                "description": "http or https URL; templated ({{variable}}, {{ai_memory_recall:KEY}}). With connection_id, a path relative to the connection's base URL (or empty for the base URL); an absolute URL must have the connection's origin."
            },
            "connection_id": {
                "type": "integer",
                "minimum": 1,
                "description": "A saved connection (GET /v1/connections): its base URL and headers merge under the action's own, the action's headers winning."
            },
            "headers": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Header names to values; secret values are redacted in stored run records."
            },
            "body": {
                "type": "object",
                "description": "JSON body for POST, PUT and PATCH; templated."
            },
            "timeout_seconds": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT_SECONDS,
                "default": DEFAULT_TIMEOUT_SECONDS
            },
            "capture_field": {
                "type": "string",
                "description": "Dot-path into the response JSON (numeric segments index arrays, e.g. data.items.0.domain); the value is exposed downstream as {{previous_result}}."
            },
            "iterate_into_domains": {
                "type": "boolean",
                "default": false,
                "description": "When the captured value is a list, it replaces the working domain set: strings become {domain: string}, objects pass unchanged."
            },
            "per_domain": {
                "type": "boolean",
                "default": false,
                "description": "Send the request once per domain of the working set."
            }
        },
        // A URL is required unless a connection gives the base URL.
        "if": {"not": {"required": ["connection_id"]}},
        "then": {"required": ["url"], "properties": {"url": {"minLength": 1}}},
        "additionalProperties": false
    })
}

/// A successful (2xx) answer.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpOutcome {
    pub status: u16,
    /// The body parsed as JSON, else its text (lossy UTF-8) as a string;
    /// `null` when the body is empty (a 204).
    pub body: Value,
    /// The value at `capture_field`, when the config has one and the body
    /// holds it.
    pub captured: Option<Value>,
    /// From the start of the request to the end of the body.
    pub elapsed_ms: u64,
}

/// Why a request produced no [`HttpOutcome`]. `Display` is the error text
/// the run record keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpFailure {
    /// The SSRF guard refused the target or a redirect's target; no
    /// connection was made to it. Displays exactly as the spec's
    /// `Blocked by SSRF guard` (the reason is logged, not shown).
    Blocked,
    /// No complete answer within the config's `timeout_seconds` (the number).
    Timeout(u64),
    /// A status outside 2xx, with a short excerpt of the body.
    Status(u16, String),
    /// The response body is larger than the limit (the number, in bytes).
    TooLarge(usize),
    /// The connection failed or broke, or redirects did not end.
    Transport(String),
    /// The URL (after templating) or a redirect's `Location` is unusable,
    /// or its scheme is not http or https.
    InvalidUrl(String),
    /// The request itself cannot be sent as given: a header that templating
    /// made invalid, an unsupported method, a body over
    /// [`MAX_REQUEST_BYTES`].
    InvalidRequest(String),
    /// A redirect to another origin than the saved connection's, which
    /// would carry the connection's headers there.
    CrossOriginRedirect(String),
}

impl fmt::Display for HttpFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpFailure::Blocked => f.write_str(BLOCKED_BY_SSRF_GUARD),
            HttpFailure::Timeout(seconds) => {
                write!(f, "No answer within {seconds} second")?;
                if *seconds != 1 {
                    f.write_str("s")?;
                }
                Ok(())
            }
            HttpFailure::Status(status, excerpt) if excerpt.is_empty() => {
                write!(f, "HTTP {status}")
            }
            HttpFailure::Status(status, excerpt) => write!(f, "HTTP {status}: {excerpt}"),
            HttpFailure::TooLarge(limit) => {
                write!(f, "Response body larger than {limit} bytes")
            }
            HttpFailure::Transport(message) => f.write_str(message),
            HttpFailure::InvalidUrl(message) => write!(f, "Invalid URL: {message}"),
            HttpFailure::InvalidRequest(message) => write!(f, "Invalid request: {message}"),
            HttpFailure::CrossOriginRedirect(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for HttpFailure {}

impl HttpFailure {
    /// Whether the action's retry block should try again. Timeouts,
    /// broken connections and the statuses that mean "later" (408, 429,
    /// 5xx) may go differently next time. A refused address, an unusable
    /// URL or request, a too-large body and the other 4xx answers come
    /// from the config or the receiver's fixed verdict and would fail the
    /// same way, so retrying only delays the error.
    pub fn is_retryable(&self) -> bool {
        match self {
            HttpFailure::Timeout(_) | HttpFailure::Transport(_) => true,
            HttpFailure::Status(status, _) => matches!(status, 408 | 429 | 500..=599),
            HttpFailure::Blocked
            | HttpFailure::TooLarge(_)
            | HttpFailure::InvalidUrl(_)
            | HttpFailure::InvalidRequest(_)
            | HttpFailure::CrossOriginRedirect(_) => false,
        }
    }
}

/// Sends `http_request` actions. Built once (a state extension) and cloned
/// freely: clones share one connection pool.
#[derive(Debug, Clone)]
pub struct HttpActionClient {
    client: GuardedClient,
}

impl HttpActionClient {
    /// A client enforcing `policy`: the server's `state.outbound` in
    /// production, [`GuardPolicy::allow_loopback_for_tests`] in tests that
    /// talk to a local server.
    pub fn new(policy: GuardPolicy) -> HttpActionClient {
        let options = ClientOptions {
            max_response_bytes: MAX_RESPONSE_BYTES,
            max_request_bytes: MAX_REQUEST_BYTES,
            follow_redirects: true,
            truncate_response: false,
            ..ClientOptions::default()
        };
        let client = GuardedClient::new(policy, options)
            .expect("the http_request client builds with static options");
        HttpActionClient { client }
    }

    /// Sends the request `config` describes (already templated) and reads
    /// the answer. Redirects are followed (up to five), each hop checked by
    /// the guard; credentials are dropped on a redirect to another origin.
    pub async fn send(&self, config: &HttpRequestConfig) -> Result<HttpOutcome, HttpFailure> {
        let started = Instant::now();
        let method = match config.method.as_str() {
            "GET" => Method::GET,
            "POST" => Method::POST,
            "PUT" => Method::PUT,
            "PATCH" => Method::PATCH,
            "DELETE" => Method::DELETE,
            other => {
                return Err(HttpFailure::InvalidRequest(format!(
                    "method {other:?} is not one of {}",
                    METHODS.join(", ")
                )));
            }
        };
        let url = Url::parse(config.url.trim())
            .map_err(|e| HttpFailure::InvalidUrl(format!("{:?}: {e}", config.url)))?;

        let mut request = GuardedRequest::new(method.clone(), url);
        request.headers = config
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        let sends_body = matches!(method, Method::POST | Method::PUT | Method::PATCH);
        if let Some(body) = config.body.as_ref().filter(|_| sends_body) {
            let has_type = config
                .headers
                .keys()
                .any(|name| name.eq_ignore_ascii_case("content-type"));
            if !has_type {
                request
                    .headers
                    .push(("content-type".to_owned(), "application/json".to_owned()));
            }
            // Serialising a Value cannot fail: its keys are strings.
            request.body = Some(serde_json::to_vec(body).unwrap_or_default());
        }
        // 0 would time out before connecting; from_config never gives it,
        // but the fields are public.
        let timeout_seconds = config.timeout_seconds.clamp(1, MAX_TIMEOUT_SECONDS);
        request.timeout = Some(Duration::from_secs(timeout_seconds));

        // A connection's headers are for its origin only: the guard drops
        // Authorization and Cookie on a redirect elsewhere, but not an
        // X-Api-Key, so such a redirect is refused instead.
        let pinned = config.connection.as_ref().map(|c| c.origin.clone());
        let hop_check = move |url: &Url| match &pinned {
            Some(origin) if url.origin().ascii_serialization() != *origin => Err(format!(
                "Redirect to {} refused: the saved connection's headers are sent only to {origin}",
                url.origin().ascii_serialization()
            )),
            _ => Ok(()),
        };
        let response = self
            .client
            .send_with(request, &hop_check)
            .await
            .map_err(|e| {
                let failure = failure_from(e.clone(), timeout_seconds);
                if failure == HttpFailure::Blocked {
                    // The record says only what the spec quotes; the operator
                    // sees which address it was.
                    tracing::info!(url = %config.url, reason = %e, "http_request action blocked");
                }
                failure
            })?;
        let elapsed_ms = started.elapsed().as_millis() as u64;

        if !(200..300).contains(&response.status) {
            return Err(HttpFailure::Status(
                response.status,
                excerpt(&response.body),
            ));
        }
        let body = parse_body(&response.body);
        let captured = config
            .capture_field
            .as_deref()
            .and_then(|path| capture(&body, path));
        Ok(HttpOutcome {
            status: response.status,
            body,
            captured,
            elapsed_ms,
        })
    }
}

/// Every guard error named, so a new one is a compile error here rather
/// than a silent `Transport`.
fn failure_from(error: GuardError, timeout_seconds: u64) -> HttpFailure {
    match error {
        GuardError::Blocked(_) => HttpFailure::Blocked,
        // The only per-hop check is the saved connection's origin.
        GuardError::NotAllowed(message) => HttpFailure::CrossOriginRedirect(message),
        GuardError::Timeout => HttpFailure::Timeout(timeout_seconds),
        GuardError::ResponseTooLarge { limit } => HttpFailure::TooLarge(limit),
        GuardError::InvalidUrl(message) => HttpFailure::InvalidUrl(message),
        GuardError::SchemeNotAllowed(scheme) => HttpFailure::InvalidUrl(format!(
            "scheme {scheme:?} is not allowed; use http or https"
        )),
        e @ (GuardError::InvalidRequest(_) | GuardError::RequestTooLarge { .. }) => {
            HttpFailure::InvalidRequest(e.to_string())
        }
        e @ (GuardError::Connect(_)
        | GuardError::Transport(_)
        | GuardError::TooManyRedirects { .. }
        | GuardError::Client(_)) => HttpFailure::Transport(e.to_string()),
    }
}

/// JSON when the body parses as JSON, whatever the Content-Type says
/// (APIs often label JSON as text/plain), else the text.
fn parse_body(bytes: &[u8]) -> Value {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Value::Null;
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// The start of an error body for the run record, on one line.
fn excerpt(bytes: &[u8]) -> String {
    // Decoding at most four bytes per kept character bounds the work on a
    // 1 MiB body.
    let head = &bytes[..bytes.len().min(EXCERPT_CHARS * 4)];
    let text = String::from_utf8_lossy(head);
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = collapsed.chars().take(EXCERPT_CHARS).collect();
    if out.len() < collapsed.len() || head.len() < bytes.len() {
        out.push('…');
    }
    out
}

/// The value at a dot-path in `body` (`data.items.0.domain`). A segment
/// is an object key, or an array index when the value there is an array.
/// An empty path is the whole body. `None` when a segment is missing, an
/// index is out of range or not a number, or the path has an empty
/// segment (`a..b`).
pub fn capture(body: &Value, path: &str) -> Option<Value> {
    if path.is_empty() {
        return Some(body.clone());
    }
    let mut at = body;
    for segment in path.split('.') {
        if segment.is_empty() {
            return None;
        }
        at = match at {
            Value::Object(map) => map.get(segment)?,
            // Only plain digits: "+1" or " 1" are not indexes.
            Value::Array(items) if segment.bytes().all(|b| b.is_ascii_digit()) => {
                items.get(segment.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(at.clone())
}

/// The working domain set a captured list becomes (spec/3
/// `iterate_into_domains`): strings become `{"domain": string}`, objects
/// pass unchanged, other elements (numbers, nulls, nested lists) are
/// skipped. `None` when the captured value is not a list.
pub fn iterate_items(captured: &Value) -> Option<Vec<Value>> {
    let items = captured.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|item| match item {
                Value::String(domain) => {
                    let mut object = Map::new();
                    object.insert("domain".to_owned(), Value::String(domain.clone()));
                    Some(Value::Object(object))
                }
                Value::Object(_) => Some(item.clone()),
                _ => None,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests;
