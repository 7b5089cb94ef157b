//! Handlers of spec/2 "Bulk operations".

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, *};
use crate::csv_out::CsvFile;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::Json;
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(bulk_delete))
        .routes(routes!(bulk_archive))
        .routes(routes!(bulk_export))
}

/// Removes 1-500 domains from a list.
#[utoipa::path(post, path = "/v1/bulk/delete", tag = "bulk", operation_id = "bulk_delete",
    security(("api_key" = [])), request_body = BulkDeleteRequest,
    responses(
        (status = 200, description = "How many were removed and remain", body = BulkDeleteResult),
        (status = 400, description = "Not 1-500 domains, or one not usable", body = ErrorBody),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn bulk_delete(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<BulkDeleteRequest>,
) -> ApiResult<Json<BulkDeleteResult>> {
    Ok(Json(service::delete(&state, &caller, body).await?))
}

/// Moves 1-500 domains of a list to an archive list, created when missing.
#[utoipa::path(post, path = "/v1/bulk/archive", tag = "bulk", operation_id = "bulk_archive",
    security(("api_key" = [])), request_body = BulkArchiveRequest,
    responses(
        (status = 200, description = "How many were archived, and where", body = BulkArchiveResult),
        (status = 400, description = "Not 1-500 domains, a bad archive name, or a cap reached", body = ErrorBody),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn bulk_archive(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<BulkArchiveRequest>,
) -> ApiResult<Json<BulkArchiveResult>> {
    Ok(Json(service::archive(&state, &caller, body).await?))
}

/// The pool's records of 1-1,000 domains as CSV.
#[utoipa::path(post, path = "/v1/bulk/export", tag = "bulk", operation_id = "bulk_export",
    security(("api_key" = [])), request_body = BulkExportRequest,
    responses(
        (status = 200, description = "The CSV file", content_type = "text/csv", body = String),
        (status = 400, description = "Not 1-1,000 domains, or an unknown field", body = ErrorBody),
    ))]
async fn bulk_export(
    State(state): State<AppState>,
    _caller: Caller,
    Json(body): Json<BulkExportRequest>,
) -> ApiResult<CsvFile> {
    service::export(&state, body).await
}
