//! API-key authentication for `/v1`, with everything that hangs off a key:
//! suspension and reseller checks, IP and endpoint-group restrictions, the
//! per-minute limit with burst, the monthly quota, the rate-limit headers and
//! usage recording.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::{FromRequestParts, MatchedPath, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use tower::{Layer, Service, ServiceExt};

use super::client_ip::{client_ip, contains};
use crate::accounts::plans::{Plan, require_plan};
use crate::api_keys::VerifiedKey;
use crate::error::details::NOT_AUTHENTICATED;
use crate::error::{ApiError, ApiResult, INVALID_API_KEY};
use crate::platform::limiter::Decision;
use crate::state::AppState;
use crate::usage::recorder::{ResultsCount, UsageEvent, interned};

/// The authenticated caller of a `/v1` route.
#[derive(Debug, Clone)]
pub struct Caller {
    pub account_id: i64,
    /// The key's creator; `None` for keys made by an operator on the CLI.
    pub user_id: Option<i64>,
    pub plan: Plan,
    pub api_key_id: i64,
    pub reseller_client_id: Option<i64>,
    /// What authentication loaded about the key and its account (cached up
    /// to 30 s, see docs/decisions/platform.md, "Verification cache"), for
    /// handlers that need no fresher view.
    pub key: Arc<VerifiedKey>,
}

impl Caller {
    /// 403 unless the account's plan is at least `need` ("Starter+").
    pub fn require(&self, need: Plan) -> ApiResult<()> {
        require_plan(self.plan, need)
    }

    /// The identity "per user" limits count against: the key's user, or the
    /// key itself when it has none.
    pub fn user_key(&self) -> String {
        match self.user_id {
            Some(u) => format!("u{u}"),
            None => format!("k{}", self.api_key_id),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or(ApiError::Unauthorized(INVALID_API_KEY))
    }
}

pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Route layer of every authenticated `/v1` route.
///
/// Written as a tower layer rather than with `axum::middleware::from_fn`,
/// which boxes and clones the inner route once more per request and runs
/// the extractor machinery for its state: about 0.2 µs of the layer's
/// 3 µs (`cargo bench -p outreach -p outreach-core --bench request_path`),
/// on the path every API call takes.
#[derive(Clone)]
pub struct RequireApiKey {
    state: AppState,
}

impl RequireApiKey {
    pub fn new(state: AppState) -> Self {
        RequireApiKey { state }
    }
}

impl<S> Layer<S> for RequireApiKey {
    type Service = RequireApiKeyService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequireApiKeyService {
            state: self.state.clone(),
            inner,
        }
    }
}

/// [`RequireApiKey`] around one route.
#[derive(Clone)]
pub struct RequireApiKeyService<S> {
    state: AppState,
    inner: S,
}

impl<S> Service<Request> for RequireApiKeyService<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        // The service that was polled ready goes with this request; its
        // clone stays for the next (tower's usual swap).
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let state = self.state.clone();
        Box::pin(async move { Ok(require_api_key(state, req, inner).await) })
    }
}

async fn require_api_key<S>(state: AppState, mut req: Request, inner: S) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let started = Instant::now();
    let endpoint = interned(
        req.extensions()
            .get::<MatchedPath>()
            .map_or_else(|| req.uri().path(), |m| m.as_str()),
    );
    // spec/2's integrations answer a missing or bad key with their own text.
    let unauthenticated = match endpoint_group(endpoint) {
        "zapier" | "sheets" => NOT_AUTHENTICATED,
        _ => INVALID_API_KEY,
    };
    let Some(token) = bearer(req.headers()) else {
        return ApiError::Unauthorized(unauthenticated).into_response();
    };
    let key = match state.keys.verify(token).await {
        Ok(Some(key)) => key,
        Ok(None) => return ApiError::Unauthorized(unauthenticated).into_response(),
        Err(e) => return ApiError::Internal(e).into_response(),
    };
    let group = endpoint_group(endpoint);
    let ip = client_ip(&req, &state.trusted_proxies);

    let caller = Caller {
        account_id: key.account_id,
        user_id: key.user_id,
        plan: key.plan,
        api_key_id: key.key_id,
        reseller_client_id: key.reseller.as_ref().map(|c| c.id),
        key: key.clone(),
    };
    let method = interned(req.method().as_str());
    let filters = req.uri().query().map(crate::usage::recorder::query_summary);

    let (mut response, decision, quota_pct, admitted) = match admit(&state, &key, group, ip).await {
        Err((err, decision)) => (err.into_response(), decision, None, false),
        Ok((decision, quota_pct)) => {
            req.extensions_mut().insert(caller.clone());
            let Ok(response) = inner.oneshot(req).await;
            (response, decision, quota_pct, true)
        }
    };

    // An unlimited minute window has no limit to report; the quota share
    // is still reported.
    rate_headers(response.headers_mut(), decision.as_ref(), quota_pct);
    let results_count = response
        .extensions()
        .get::<ResultsCount>()
        .map_or(0, |r| r.0);
    state.usage.record(UsageEvent {
        account_id: caller.account_id,
        api_key_id: Some(caller.api_key_id),
        reseller_client_id: caller.reseller_client_id,
        ts_ms: state.clock.now_ms(),
        method,
        category: interned(group),
        endpoint,
        status: response.status().as_u16(),
        response_time_ms: started.elapsed().as_millis() as i64,
        filters_summary: filters,
        results_count,
        billable: admitted,
    });
    response
}

/// Decides whether an authenticated key may make this request. On refusal,
/// the minute-window decision (when one was taken) still goes into headers.
async fn admit(
    state: &AppState,
    key: &Arc<VerifiedKey>,
    group: &str,
    ip: std::net::IpAddr,
) -> Result<(Option<Decision>, Option<u64>), (ApiError, Option<Decision>)> {
    let reseller_disabled = key.reseller.as_ref().is_some_and(|c| c.disabled);
    if key.account_suspended || reseller_disabled {
        return Err((ApiError::Forbidden, None));
    }
    if !key.allowed_ips.is_empty() && !contains(&key.allowed_ips, ip) {
        return Err((ApiError::Forbidden, None));
    }
    if !key.allowed_groups.is_empty() && !key.allowed_groups.iter().any(|g| g == group) {
        return Err((ApiError::Forbidden, None));
    }
    let refused = |decision: Decision| ApiError::RateLimited {
        retry_after: decision.retry_after_secs,
    };
    let minute = crate::usage::limits::minute(state, key)
        .await
        .map_err(|e| (e, None))?;
    if let Some(d) = minute.filter(|d| !d.allowed) {
        return Err((refused(d), Some(d)));
    }
    if let Some(d) = crate::usage::limits::day(state, key)
        .await
        .map_err(|e| (e, minute))?
        .filter(|d| !d.allowed)
    {
        return Err((refused(d), minute));
    }
    match state.quota.consume(state, key).await {
        Ok(pct) => Ok((minute, pct)),
        Err(err) => Err((err, minute)),
    }
}

static RATE_LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
static RATE_REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
static RATE_RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");
static QUOTA_PCT: HeaderName = HeaderName::from_static("x-quota-pct");

fn rate_headers(headers: &mut HeaderMap, d: Option<&Decision>, quota_pct: Option<u64>) {
    // A handler that refused on a limit of its own (a daily cap) has set
    // these already; they describe the refusal, so they stay.
    if let Some(d) = d.filter(|_| !headers.contains_key(&RATE_LIMIT)) {
        headers.insert(RATE_LIMIT.clone(), HeaderValue::from(d.limit));
        headers.insert(RATE_REMAINING.clone(), HeaderValue::from(d.remaining));
        headers.insert(RATE_RESET.clone(), HeaderValue::from(d.reset_at_ms / 1000));
    }
    if let Some(pct) = quota_pct {
        headers.insert(QUOTA_PCT.clone(), HeaderValue::from(pct));
    }
}

/// The endpoint group of a route: its first path segment after `/v1/`.
pub fn endpoint_group(endpoint: &str) -> &str {
    endpoint
        .strip_prefix("/v1/")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_the_first_segment() {
        assert_eq!(endpoint_group("/v1/usage/stats"), "usage");
        assert_eq!(
            endpoint_group("/v1/sequences/{sequence_id}/steps"),
            "sequences"
        );
        assert_eq!(endpoint_group("/healthz"), "");
    }

    #[test]
    fn bearer_parsing() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "bearer  xyz ".parse().unwrap());
        assert_eq!(bearer(&h), Some("xyz"));
        h.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&h), None);
    }
}
