//! Handlers of spec/1 "Enrollment".

use axum::extract::{DefaultBodyLimit, Multipart, State};
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::csv_file::{self, MAX_FILE_BYTES};
use super::model::{EnrollRequest, EnrollResult, Enrollment, EnrollmentList, EnrollmentQuery};
use super::service;
use outreach_core::error::{ApiError, ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::http::upload::read_upload;
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    // The CSV route takes bodies past the global limit; the handler stops
    // reading at 5 MB, and the layer bounds what a client can push at it.
    let csv = OpenApiRouter::new()
        .routes(routes!(enroll_csv))
        .layer(DefaultBodyLimit::max(MAX_FILE_BYTES + 1024 * 1024));
    OpenApiRouter::new()
        .routes(routes!(enroll))
        .routes(routes!(list))
        .routes(routes!(pause))
        .routes(routes!(resume))
        .routes(routes!(delete))
        .merge(csv)
}

/// Enrolls up to 1,000 contacts; skipped ones are listed, not errors.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/enroll", tag = "enrollment", operation_id = "enroll_contacts",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    request_body = EnrollRequest,
    responses(
        (status = 200, description = "Counts and skipped addresses", body = EnrollResult),
        (status = 400, description = "No contacts, or more than 1,000", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
        (status = 429, description = "More than 10 enroll requests per minute", body = ErrorBody),
    ))]
async fn enroll(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
    Json(body): Json<EnrollRequest>,
) -> ApiResult<Json<EnrollResult>> {
    Ok(Json(
        service::enroll(&state, &caller, sequence_id, body).await?,
    ))
}

/// The CSV upload as multipart form data: its `file` part.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct EnrollCsvForm {
    /// CSV or TSV, up to 5 MB, with a header row naming an email column.
    #[schema(format = Binary, value_type = String)]
    file: Vec<u8>,
}

/// Enrolls the contacts of a CSV or TSV file (multipart field `file`).
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/enroll-csv", tag = "enrollment", operation_id = "enroll_csv",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    request_body(content = EnrollCsvForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "Counts, skipped addresses and total_in_file", body = EnrollResult),
        (status = 400, description = "No file, no email column, or over 5 MB", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
        (status = 429, description = "More than 10 enroll requests per minute", body = ErrorBody),
    ))]
async fn enroll_csv(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
    form: Multipart,
) -> ApiResult<Json<EnrollResult>> {
    let sequence = service::enroll_target(&state, &caller, sequence_id).await?;
    let upload = read_upload(form, "file", MAX_FILE_BYTES).await?;
    let file = upload
        .file
        .ok_or_else(|| ApiError::bad_request("The form needs a file field"))?;
    let parsed = tokio::task::spawn_blocking(move || csv_file::parse(&file))
        .await
        .map_err(anyhow::Error::from)?
        .map_err(ApiError::BadRequest)?;
    let mut result = service::enroll_candidates(
        &state,
        &outreach_vendors::Actor::from(&caller),
        &sequence,
        parsed.contacts,
    )
    .await?;
    result.total_in_file = Some(parsed.total_in_file);
    Ok(Json(result))
}

/// The sequence's enrollments, newest first.
#[utoipa::path(get, path = "/v1/sequences/{sequence_id}/enrollments", tag = "enrollment", operation_id = "list_enrollments",
    security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"), EnrollmentQuery),
    responses(
        (status = 200, description = "A page and the total", body = EnrollmentList),
        (status = 400, description = "Invalid status or paging", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
    Query(q): Query<EnrollmentQuery>,
) -> ApiResult<Json<EnrollmentList>> {
    Ok(Json(service::list(&state, &caller, sequence_id, q).await?))
}

/// Halts sends for this contact.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/enrollments/{enrollment_id}/pause", tag = "enrollment",
    operation_id = "pause_enrollment", security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"), ("enrollment_id" = i64, Path, description = "Enrollment id")),
    responses(
        (status = 200, description = "Paused", body = Enrollment),
        (status = 400, description = "Not active", body = ErrorBody),
        (status = 404, description = "No such enrollment", body = ErrorBody),
    ))]
async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    Path((sequence_id, id)): Path<(i64, i64)>,
) -> ApiResult<Json<Enrollment>> {
    Ok(Json(
        service::pause(&state, &caller, sequence_id, id).await?,
    ))
}

/// Resumes from where the contact stopped.
#[utoipa::path(post, path = "/v1/sequences/{sequence_id}/enrollments/{enrollment_id}/resume", tag = "enrollment",
    operation_id = "resume_enrollment", security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"), ("enrollment_id" = i64, Path, description = "Enrollment id")),
    responses(
        (status = 200, description = "Active again", body = Enrollment),
        (status = 400, description = "Not paused", body = ErrorBody),
        (status = 404, description = "No such enrollment", body = ErrorBody),
    ))]
async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    Path((sequence_id, id)): Path<(i64, i64)>,
) -> ApiResult<Json<Enrollment>> {
    Ok(Json(
        service::resume(&state, &caller, sequence_id, id).await?,
    ))
}

/// Drops the enrollment.
#[utoipa::path(delete, path = "/v1/sequences/{sequence_id}/enrollments/{enrollment_id}", tag = "enrollment",
    operation_id = "delete_enrollment", security(("api_key" = [])),
    params(("sequence_id" = i64, Path, description = "Sequence id"), ("enrollment_id" = i64, Path, description = "Enrollment id")),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "No such enrollment", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path((sequence_id, id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, sequence_id, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
