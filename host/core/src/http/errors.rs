//! Makes every error leave in the spec's shape, including the ones the
//! framework writes itself (unknown route, wrong method, body limits).

use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::error::error_response;

/// Rewrites any 4xx/5xx response that is not already JSON into `{"detail"}`.
pub async fn json_errors(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096)
        .await
        .ok()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .filter(|t| !t.is_empty());
    let detail = text.unwrap_or_else(|| {
        status
            .canonical_reason()
            .unwrap_or("Request failed")
            .to_string()
    });
    let mut rewritten = error_response(status, detail);
    // Keep headers such as Allow (405) and Retry-After.
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            rewritten.headers_mut().insert(name.clone(), value.clone());
        }
    }
    rewritten
}

/// The answer for paths no route matches.
pub async fn not_found() -> Response<Body> {
    error_response(StatusCode::NOT_FOUND, "Not Found".into())
}
