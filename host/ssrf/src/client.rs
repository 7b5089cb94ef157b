//! The guarded client: reqwest configured so that every connection goes through
//! [`GuardedResolver`], with redirects followed by hand and bodies capped.

use std::error::Error as _;
use std::sync::{Arc, Once};
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, redirect};
use url::Url;

use crate::{GuardError, GuardPolicy, GuardedResolver, check_url};

/// Limits and identity for a [`GuardedClient`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// Budget for the whole exchange: every redirect hop plus reading the body.
    /// A request can override it with [`GuardedRequest::timeout`].
    pub timeout: Duration,
    /// Budget for establishing each connection.
    pub connect_timeout: Duration,
    /// How many redirects are followed; one more is [`GuardError::TooManyRedirects`],
    /// so 0 refuses any redirect.
    pub max_redirects: usize,
    /// Largest response body accepted; a larger one is [`GuardError::ResponseTooLarge`].
    pub max_response_bytes: usize,
    /// Largest request body accepted; a larger one is [`GuardError::RequestTooLarge`].
    pub max_request_bytes: usize,
    /// `User-Agent` sent unless the request sets its own.
    pub user_agent: String,
    /// When false, a 3xx answer is returned to the caller as it is instead of
    /// being followed (webhook receivers are not redirected).
    pub follow_redirects: bool,
    /// When true, a body over [`max_response_bytes`](Self::max_response_bytes)
    /// is cut there instead of failing, and the timeout bounds the answer's
    /// status line and headers: the body is read only within what is left
    /// of it, and whatever arrived by then is kept. For callers that judge
    /// the status and keep an excerpt (webhook deliveries).
    pub truncate_response: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            max_redirects: 5,
            max_response_bytes: 10 * 1024 * 1024,
            max_request_bytes: 10 * 1024 * 1024,
            user_agent: concat!("Outreach/", env!("CARGO_PKG_VERSION")).to_owned(),
            follow_redirects: true,
            truncate_response: false,
        }
    }
}

/// One outbound request.
#[derive(Debug, Clone)]
pub struct GuardedRequest {
    pub method: Method,
    pub url: Url,
    /// Header names and values; repeated names are sent repeatedly.
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// Overrides [`ClientOptions::timeout`] for this request.
    pub timeout: Option<Duration>,
}

impl GuardedRequest {
    /// A request with no headers, no body and the client's default timeout.
    pub fn new(method: Method, url: Url) -> Self {
        Self {
            method,
            url,
            headers: Vec::new(),
            body: None,
            timeout: None,
        }
    }

    /// A `GET` of `url`.
    pub fn get(url: Url) -> Self {
        Self::new(Method::GET, url)
    }
}

/// A fully read response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardedResponse {
    pub status: u16,
    /// Lower-case header names in received order; values that are not UTF-8 are
    /// decoded lossily.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The URL that produced this response, after redirects.
    pub final_url: Url,
    /// Whether `body` was cut (see [`ClientOptions::truncate_response`]).
    pub truncated: bool,
}

impl GuardedResponse {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The SSRF-guarded HTTP client. Cheap to clone; clones share the connection pool.
#[derive(Debug, Clone)]
pub struct GuardedClient {
    inner: reqwest::Client,
    policy: Arc<GuardPolicy>,
    options: Arc<ClientOptions>,
}

static INSTALL_CRYPTO_PROVIDER: Once = Once::new();

/// reqwest is built with `rustls-no-provider`, so TLS fails until a process-wide
/// rustls provider exists. Installing it here means no caller has to remember.
fn install_crypto_provider() {
    INSTALL_CRYPTO_PROVIDER.call_once(|| {
        // An error only means another part of the process installed a provider
        // first, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A per-hop check that accepts everything, for [`GuardedClient::send`].
fn accept_all(_: &Url) -> Result<(), String> {
    Ok(())
}

impl GuardedClient {
    /// Builds a client enforcing `policy`.
    pub fn new(policy: GuardPolicy, options: ClientOptions) -> Result<Self, GuardError> {
        install_crypto_provider();
        let policy = Arc::new(policy);
        let inner = reqwest::Client::builder()
            .dns_resolver(GuardedResolver::from_shared(policy.clone()))
            // A proxy from the environment would make the real connection from
            // somewhere our resolver never sees.
            .no_proxy()
            // Redirects are followed in `send_with` so each hop is re-checked.
            .redirect(redirect::Policy::none())
            .connect_timeout(options.connect_timeout)
            .user_agent(options.user_agent.clone())
            .build()
            .map_err(|e| GuardError::Client(error_chain(&e)))?;
        Ok(Self {
            inner,
            policy,
            options: Arc::new(options),
        })
    }

    /// The policy this client enforces.
    pub fn policy(&self) -> &GuardPolicy {
        &self.policy
    }

    /// The limits this client applies.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// Sends the request, following redirects manually with re-checks, and
    /// reads the body under the cap.
    pub async fn send(&self, req: GuardedRequest) -> Result<GuardedResponse, GuardError> {
        self.send_with(req, &accept_all).await
    }

    /// Like [`send`](Self::send), but also runs `hop_check` on the URL of every
    /// hop, the first one and each redirect target, before connecting. A refusal
    /// becomes [`GuardError::NotAllowed`] with the returned message. The plugin
    /// runtime uses this for a plugin's allowed-hosts list, which must hold for
    /// redirects too or a plugin could escape it via any open redirector.
    pub async fn send_with(
        &self,
        req: GuardedRequest,
        hop_check: &(dyn Fn(&Url) -> Result<(), String> + Sync),
    ) -> Result<GuardedResponse, GuardError> {
        if let Some(body) = &req.body
            && body.len() > self.options.max_request_bytes
        {
            return Err(GuardError::RequestTooLarge {
                limit: self.options.max_request_bytes,
            });
        }
        let headers = header_map(&req.headers)?;
        let timeout = req.timeout.unwrap_or(self.options.timeout);
        // One deadline over all hops and the body read, so that a slow drip of
        // redirects or body bytes cannot hold a worker longer than the budget.
        let deadline = tokio::time::Instant::now() + timeout;
        let exchange = self.exchange(req.method.clone(), req.url, headers, req.body, hop_check);
        let (response, final_url) = match tokio::time::timeout_at(deadline, exchange).await {
            Ok(result) => result?,
            Err(_) => return Err(GuardError::Timeout),
        };
        if self.options.truncate_response {
            return Ok(self.read_excerpt(response, final_url, deadline).await);
        }
        match tokio::time::timeout_at(
            deadline,
            self.read_response(response, &req.method, final_url),
        )
        .await
        {
            Ok(result) => result,
            Err(_) => Err(GuardError::Timeout),
        }
    }

    async fn exchange(
        &self,
        mut method: Method,
        mut url: Url,
        mut headers: HeaderMap,
        mut body: Option<Vec<u8>>,
        hop_check: &(dyn Fn(&Url) -> Result<(), String> + Sync),
    ) -> Result<(reqwest::Response, Url), GuardError> {
        let mut redirects = 0;
        loop {
            // Literal addresses never reach the resolver, so they are checked
            // here on every hop; domain names are checked by the resolver.
            check_url(&url, &self.policy)?;
            hop_check(&url).map_err(GuardError::NotAllowed)?;

            let mut builder = self
                .inner
                .request(method.clone(), url.clone())
                .headers(headers.clone());
            if let Some(body) = &body {
                builder = builder.body(body.clone());
            }
            let response = builder.send().await.map_err(map_reqwest_error)?;

            let status = response.status();
            let location = response.headers().get(header::LOCATION).cloned();
            let follow = self.options.follow_redirects && is_followed_redirect(status);
            let Some(location) = location.filter(|_| follow) else {
                return Ok((response, url));
            };
            if redirects >= self.options.max_redirects {
                return Err(GuardError::TooManyRedirects {
                    max: self.options.max_redirects,
                });
            }
            redirects += 1;

            let location = location.to_str().map_err(|_| {
                GuardError::InvalidUrl("redirect Location is not valid text".to_owned())
            })?;
            let next = url.join(location).map_err(|e| {
                GuardError::InvalidUrl(format!("redirect Location {location:?}: {e}"))
            })?;
            tracing::debug!(from = %url, to = %next, status = status.as_u16(), "following redirect");

            // Same rewriting as browsers and reqwest: 301/302/303 turn a non-GET
            // into a body-less GET, 307/308 repeat the request as it was.
            if matches!(
                status,
                StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND | StatusCode::SEE_OTHER
            ) {
                if method != Method::GET && method != Method::HEAD {
                    method = Method::GET;
                }
                body = None;
                for name in [
                    header::CONTENT_TYPE,
                    header::CONTENT_LENGTH,
                    header::CONTENT_ENCODING,
                    header::TRANSFER_ENCODING,
                ] {
                    headers.remove(name);
                }
            }
            // Credentials were meant for the origin the caller named; a redirect
            // must not carry them to somebody else.
            if next.origin() != url.origin() {
                for name in [
                    header::AUTHORIZATION,
                    header::PROXY_AUTHORIZATION,
                    header::COOKIE,
                ] {
                    headers.remove(name);
                }
            }
            // The redirect's own body is never read: dropping the response
            // closes the connection, so a huge body cannot get past the cap.
            drop(response);
            url = next;
        }
    }

    async fn read_response(
        &self,
        mut response: reqwest::Response,
        method: &Method,
        final_url: Url,
    ) -> Result<GuardedResponse, GuardError> {
        let limit = self.options.max_response_bytes;
        // A declared length over the cap fails before any byte is read. HEAD
        // responses declare the length of a body they do not send.
        let declared = response
            .content_length()
            .filter(|_| *method != Method::HEAD);
        if declared.is_some_and(|len| len > limit as u64) {
            return Err(GuardError::ResponseTooLarge { limit });
        }
        let status = response.status().as_u16();
        let headers = header_list(response.headers());
        // The declared length is only trusted as a capacity hint, never as a limit.
        let mut body = Vec::with_capacity(declared.map_or(0, |len| len as usize));
        while let Some(chunk) = response.chunk().await.map_err(map_reqwest_error)? {
            if body.len() + chunk.len() > limit {
                return Err(GuardError::ResponseTooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(GuardedResponse {
            status,
            headers,
            body,
            final_url,
            truncated: false,
        })
    }

    /// Reads at most `max_response_bytes` of the body until `deadline`, then
    /// stops; a transport error or the deadline ends the excerpt early. The
    /// rest is never read: dropping the response closes the connection.
    async fn read_excerpt(
        &self,
        mut response: reqwest::Response,
        final_url: Url,
        deadline: tokio::time::Instant,
    ) -> GuardedResponse {
        let limit = self.options.max_response_bytes;
        let status = response.status().as_u16();
        let headers = header_list(response.headers());
        let mut body = Vec::new();
        let mut truncated = false;
        loop {
            match tokio::time::timeout_at(deadline, response.chunk()).await {
                Ok(Ok(Some(chunk))) => {
                    let room = limit - body.len();
                    if chunk.len() > room {
                        body.extend_from_slice(&chunk[..room]);
                        truncated = true;
                        break;
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(Ok(None)) => break,
                Ok(Err(_)) | Err(_) => {
                    truncated = true;
                    break;
                }
            }
        }
        GuardedResponse {
            status,
            headers,
            body,
            final_url,
            truncated,
        }
    }
}

/// Lower-case names and lossily decoded values, in received order.
fn header_list(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// 300 (no single target) and 304 (not a move) are returned to the caller.
fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}

fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, GuardError> {
    let mut map = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| GuardError::InvalidRequest(format!("invalid header name {name:?}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| GuardError::InvalidRequest(format!("invalid value for header {name}")))?;
        map.append(name, value);
    }
    Ok(map)
}

/// Maps a reqwest error, preferring a [`GuardError`] raised by our resolver
/// somewhere in its source chain so a refusal is reported as `Blocked`.
fn map_reqwest_error(err: reqwest::Error) -> GuardError {
    let mut source = err.source();
    while let Some(inner) = source {
        if let Some(guard) = inner.downcast_ref::<GuardError>() {
            return guard.clone();
        }
        source = inner.source();
    }
    if err.is_timeout() {
        GuardError::Timeout
    } else if err.is_connect() {
        GuardError::Connect(error_chain(&err))
    } else if err.is_builder() {
        GuardError::InvalidRequest(error_chain(&err))
    } else {
        GuardError::Transport(error_chain(&err))
    }
}

/// reqwest's own Display hides the cause ("error sending request"), so the
/// whole chain is joined to keep messages useful in logs and API errors.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}
