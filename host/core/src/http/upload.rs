//! Multipart uploads (`enroll-csv`, `lists/import-csv`): one file field read
//! up to a cap while it streams in, and the form's small text fields.

use std::collections::BTreeMap;

use axum::extract::Multipart;
use axum::extract::multipart::MultipartError;
use axum::http::StatusCode;

use crate::error::{ApiError, ApiResult};

/// The longest text field kept; longer ones are refused, not cut.
const MAX_TEXT_FIELD: usize = 4096;

/// What a form held.
#[derive(Debug, Default)]
pub struct Upload {
    /// The file field's bytes, if the form had one.
    pub file: Option<Vec<u8>>,
    /// The file's name as the client gave it.
    pub file_name: Option<String>,
    /// Every other field, by name (the last one wins on repeats).
    pub fields: BTreeMap<String, String>,
}

/// The 400 of a file over `max_bytes`.
pub fn too_large(max_bytes: usize) -> ApiError {
    ApiError::bad_request(format!(
        "file must be at most {} MB",
        max_bytes / (1024 * 1024)
    ))
}

fn multipart_error(e: MultipartError, max_bytes: usize) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        too_large(max_bytes)
    } else {
        ApiError::bad_request(format!("Invalid multipart body: {}", e.body_text()))
    }
}

/// Reads `form`: the field named `file_field` up to `max_bytes` (refused
/// with 400 past it, without reading the rest), other fields as text.
pub async fn read_upload(
    mut form: Multipart,
    file_field: &str,
    max_bytes: usize,
) -> ApiResult<Upload> {
    let mut upload = Upload::default();
    while let Some(mut field) = form
        .next_field()
        .await
        .map_err(|e| multipart_error(e, max_bytes))?
    {
        let name = field.name().unwrap_or_default().to_string();
        let is_file = name == file_field;
        let cap = if is_file { max_bytes } else { MAX_TEXT_FIELD };
        if is_file {
            upload.file_name = field.file_name().map(str::to_string);
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = field
            .chunk()
            .await
            .map_err(|e| multipart_error(e, max_bytes))?
        {
            if bytes.len() + chunk.len() > cap {
                return Err(if is_file {
                    too_large(max_bytes)
                } else {
                    ApiError::bad_request(format!(
                        "form field {name} must be at most {MAX_TEXT_FIELD} bytes"
                    ))
                });
            }
            bytes.extend_from_slice(&chunk);
        }
        if is_file {
            upload.file = Some(bytes);
        } else {
            let text = String::from_utf8(bytes)
                .map_err(|_| ApiError::bad_request(format!("form field {name} is not UTF-8")))?;
            upload.fields.insert(name, text);
        }
    }
    Ok(upload)
}
