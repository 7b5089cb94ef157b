//! The one error type of the API and its mapping to spec/1 "Errors":
//! every failure leaves as `{"detail": "..."}` with the spec's status.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

pub mod details;

pub use details::{INVALID_API_KEY, NO_ACCESS};

/// The error body of every failed request.
#[derive(Debug, Serialize, serde::Deserialize, ToSchema)]
pub struct ErrorBody {
    pub detail: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: malformed request, failed validation, plan limit reached.
    #[error("{0}")]
    BadRequest(String),
    /// 401 with the given detail (`Invalid API key` or `Not authenticated`).
    #[error("{0}")]
    Unauthorized(&'static str),
    /// 402: payment required (paid template not owned).
    #[error("{0}")]
    PaymentRequired(String),
    /// 403 with the spec's fixed detail.
    #[error("{NO_ACCESS}")]
    Forbidden,
    /// 403 with a specific detail, for the few 403s that are not about the key
    /// (for example rating a template that was never installed).
    #[error("{0}")]
    ForbiddenDetail(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    Unprocessable(String),
    /// 429; the detail names the wait and `Retry-After` carries it.
    #[error("Rate limit exceeded. Try again in {retry_after} seconds.")]
    RateLimited { retry_after: u64 },
    /// 429 with spec/2's fixed detail 'Rate limit exceeded': a daily cap of
    /// the automation-platform routes, or the spreadsheet service's own
    /// limit. `limit` and `reset_at_ms` go into the `X-RateLimit-*`
    /// headers when known.
    #[error("{}", details::RATE_LIMIT_EXCEEDED)]
    RateLimitExceeded {
        retry_after: u64,
        limit: Option<u64>,
        reset_at_ms: Option<i64>,
    },
    /// 502: every upstream vendor failed.
    #[error("{0}")]
    BadGateway(String),
    /// 500 with a detail the spec quotes: an external service's failure
    /// the caller can act on (spec/2's 'Google API error: <text>'). The
    /// text must hold no secret.
    #[error("{0}")]
    ServiceError(String),
    /// 500: the cause is logged, never sent.
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    pub fn bad_request(detail: impl Into<String>) -> Self {
        ApiError::BadRequest(detail.into())
    }
    pub fn not_found(what: &str) -> Self {
        ApiError::NotFound(format!("{what} not found"))
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::PaymentRequired(_) => StatusCode::PAYMENT_REQUIRED,
            ApiError::Forbidden | ApiError::ForbiddenDetail(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::RateLimited { .. } | ApiError::RateLimitExceeded { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::BadGateway(_) => StatusCode::BAD_GATEWAY,
            ApiError::ServiceError(_) | ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// Store errors are internal unless an area maps them first (for example a
/// unique violation to 409).
impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        ApiError::Internal(err.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let detail = match &self {
            ApiError::Internal(cause) => {
                tracing::error!(error = ?cause, "internal error");
                "Internal server error".to_string()
            }
            other => other.to_string(),
        };
        let mut response = error_response(status, detail);
        let num = |n: u64| HeaderValue::from_str(&n.to_string()).unwrap();
        let headers = response.headers_mut();
        match self {
            ApiError::RateLimited { retry_after } => {
                headers.insert(header::RETRY_AFTER, num(retry_after));
            }
            ApiError::RateLimitExceeded {
                retry_after,
                limit,
                reset_at_ms,
            } => {
                headers.insert(header::RETRY_AFTER, num(retry_after));
                // The API-key layer keeps these rather than writing the
                // minute window's over them: this limit is the one refused.
                if let (Some(limit), Some(reset)) = (limit, reset_at_ms) {
                    headers.insert("x-ratelimit-limit", num(limit));
                    headers.insert("x-ratelimit-remaining", num(0));
                    headers.insert("x-ratelimit-reset", num((reset / 1000) as u64));
                }
            }
            _ => {}
        }
        response
    }
}

/// Builds a `{"detail"}` response; also used by the middleware that rewrites
/// framework-generated errors into this shape.
pub fn error_response(status: StatusCode, detail: String) -> Response {
    (status, axum::Json(ErrorBody { detail })).into_response()
}

pub type ApiResult<T> = Result<T, ApiError>;
