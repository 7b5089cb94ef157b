//! Extractors that reject bad input with `{"detail"}` and status 400 (413 for
//! oversize bodies) instead of axum's plain-text rejections.

use axum::extract::FromRequest;
use axum::extract::FromRequestParts;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;

use crate::error::ApiError;

#[derive(Debug, Clone, Copy, Default, FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub struct Json<T>(pub T);

impl<T: serde::Serialize> axum::response::IntoResponse for Json<T> {
    fn into_response(self) -> axum::response::Response {
        axum::Json(self.0).into_response()
    }
}

#[derive(Debug, Clone, Copy, Default, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct Query<T>(pub T);

#[derive(Debug, Clone, Copy, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct Path<T>(pub T);

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return ApiError::PayloadTooLarge("Request body too large".into());
        }
        ApiError::BadRequest(rejection.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        ApiError::BadRequest(rejection.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        // A path id that is not a number can name no resource of the caller.
        ApiError::NotFound(rejection.body_text())
    }
}

/// A numeric parameter checked against its range: the value, or 400
/// "`field` must be between `low` and `high`".
pub fn within(
    field: &str,
    value: i64,
    range: std::ops::RangeInclusive<i64>,
) -> crate::error::ApiResult<i64> {
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(ApiError::bad_request(format!(
            "{field} must be between {} and {}",
            range.start(),
            range.end()
        )))
    }
}

/// An enumerated parameter checked against its values: 400 "`field` must
/// be one of: a, b, c" otherwise.
pub fn one_of(field: &str, value: &str, allowed: &[&str]) -> crate::error::ApiResult<()> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "{field} must be one of: {}",
            allowed.join(", ")
        )))
    }
}

/// For `#[serde(default, deserialize_with = "nullable")]` on an
/// `Option<Option<T>>` field of an update body: absent stays `None` (keep
/// the stored value), `null` becomes `Some(None)` (clear it) and a value
/// `Some(Some(v))`. Plain serde cannot tell absent from null.
pub fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}
