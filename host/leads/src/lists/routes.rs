//! Handlers of spec/2 "Lead lists". The spec writes the list's path
//! parameter as `{id}` on some paths and `{list_id}` on others; the router
//! needs one name per position, so every path says `{list_id}`, and the
//! item segment is `{item}`: a domain where spec/2 addresses items by
//! domain (DELETE, PUT status), the item id where it does by id (PATCH).

use axum::extract::{DefaultBodyLimit, Multipart, State};
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::funnel::{self, Funnel};
use super::import::{self, MAX_FILE_BYTES};
use super::model::*;
use super::{service, status};
use crate::csv_out::CsvFile;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::http::upload::read_upload;
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    // The import takes bodies past the global limit; the handler stops
    // reading at 5 MB, and the layer bounds what a client can push at it.
    let csv = OpenApiRouter::new()
        .routes(routes!(import_csv))
        .layer(DefaultBodyLimit::max(MAX_FILE_BYTES + 1024 * 1024));
    OpenApiRouter::new()
        .routes(routes!(list_lists, create_list))
        .routes(routes!(get_list, update_list, delete_list))
        .routes(routes!(enriched_list))
        .routes(routes!(add_items))
        .routes(routes!(remove_item, patch_item))
        .routes(routes!(set_item_status))
        .routes(routes!(bulk_status))
        .routes(routes!(list_funnel))
        .routes(routes!(export_funnel))
        .merge(csv)
}

const LIST_ID: &str = "Lead list id";

/// The account's lead lists, oldest first.
#[utoipa::path(get, path = "/v1/lists", tag = "lists", operation_id = "list_lead_lists",
    security(("api_key" = [])),
    responses((status = 200, description = "Every list with its item count", body = LeadListPage)))]
async fn list_lists(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<LeadListPage>> {
    Ok(Json(service::lists(&state, &caller).await?))
}

/// Creates a lead list (50 per account).
#[utoipa::path(post, path = "/v1/lists", tag = "lists", operation_id = "create_lead_list",
    security(("api_key" = [])), request_body = NewLeadList,
    responses(
        (status = 201, description = "The list", body = LeadList),
        (status = 400, description = "Invalid fields, or 50 lists already", body = ErrorBody),
    ))]
async fn create_list(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewLeadList>,
) -> ApiResult<(StatusCode, Json<LeadList>)> {
    Ok((
        StatusCode::CREATED,
        Json(service::create(&state, &caller, body).await?),
    ))
}

/// A list with its items (a page of up to 1,000 by default).
#[utoipa::path(get, path = "/v1/lists/{list_id}", tag = "lists", operation_id = "get_lead_list",
    security(("api_key" = [])), params(("list_id" = i64, Path, description = LIST_ID), ItemPage),
    responses(
        (status = 200, description = "The list and its items", body = LeadListDetail),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn get_list(
    State(state): State<AppState>,
    caller: Caller,
    Path(list_id): Path<i64>,
    Query(page): Query<ItemPage>,
) -> ApiResult<Json<LeadListDetail>> {
    Ok(Json(service::detail(&state, &caller, list_id, page).await?))
}

/// Renames a list, or changes its description or conversion goal.
#[utoipa::path(put, path = "/v1/lists/{list_id}", tag = "lists", operation_id = "update_lead_list",
    security(("api_key" = [])), params(("list_id" = i64, Path, description = LIST_ID)),
    request_body = LeadListUpdate,
    responses(
        (status = 200, description = "The list", body = LeadList),
        (status = 400, description = "Invalid fields", body = ErrorBody),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn update_list(
    State(state): State<AppState>,
    caller: Caller,
    Path(list_id): Path<i64>,
    Json(body): Json<LeadListUpdate>,
) -> ApiResult<Json<LeadList>> {
    Ok(Json(service::update(&state, &caller, list_id, body).await?))
}

/// Deletes a list and its items.
#[utoipa::path(delete, path = "/v1/lists/{list_id}", tag = "lists", operation_id = "delete_lead_list",
    security(("api_key" = [])), params(("list_id" = i64, Path, description = LIST_ID)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn delete_list(
    State(state): State<AppState>,
    caller: Caller,
    Path(list_id): Path<i64>,
) -> ApiResult<StatusCode> {
    service::delete(&state, &caller, list_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A list's items, each with what the pool knows of its domain.
#[utoipa::path(get, path = "/v1/lists/{list_id}/enriched", tag = "lists", operation_id = "get_enriched_lead_list",
    security(("api_key" = [])), params(("list_id" = i64, Path, description = LIST_ID), ItemPage),
    responses(
        (status = 200, description = "The items with their lead", body = EnrichedLeadList),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn enriched_list(
    State(state): State<AppState>,
    caller: Caller,
    Path(list_id): Path<i64>,
    Query(page): Query<ItemPage>,
) -> ApiResult<Json<EnrichedLeadList>> {
    Ok(Json(
        service::enriched(&state, &caller, list_id, page).await?,
    ))
}

/// Adds domains (1-1,000 a request); duplicates are skipped, unknown
/// domains join the pool and are queued for enrichment.
#[utoipa::path(post, path = "/v1/lists/{list_id}/items", tag = "lists", operation_id = "add_lead_list_items",
    security(("api_key" = [])), params(("list_id" = i64, Path, description = LIST_ID)),
    request_body = NewListItems,
    responses(
        (status = 201, description = "How many were added", body = ListItemsAdded),
        (status = 400, description = "A domain not usable, or the list would pass its cap", body = ErrorBody),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn add_items(
    State(state): State<AppState>,
    caller: Caller,
    Path(list_id): Path<i64>,
    Json(body): Json<NewListItems>,
) -> ApiResult<(StatusCode, Json<ListItemsAdded>)> {
    let added = service::add_items(&state, &caller, list_id, body).await?;
    Ok((StatusCode::CREATED, Json(added)))
}

/// Removes the item of a domain.
#[utoipa::path(delete, path = "/v1/lists/{list_id}/items/{item}", tag = "lists", operation_id = "remove_lead_list_item",
    security(("api_key" = [])),
    params(("list_id" = i64, Path, description = LIST_ID), ("item" = String, Path, description = "The item's domain")),
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "Not a usable domain", body = ErrorBody),
        (status = 404, description = "Lead list or list item not found", body = ErrorBody),
    ))]
async fn remove_item(
    State(state): State<AppState>,
    caller: Caller,
    Path((list_id, domain)): Path<(i64, String)>,
) -> ApiResult<StatusCode> {
    service::remove_item(&state, &caller, list_id, &domain).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Changes an item's stage or notes, addressing it by id.
#[utoipa::path(patch, path = "/v1/lists/{list_id}/items/{item}", tag = "lists", operation_id = "patch_lead_list_item",
    security(("api_key" = [])),
    params(("list_id" = i64, Path, description = LIST_ID), ("item" = i64, Path, description = "The item's id")),
    request_body = ListItemPatch,
    responses(
        (status = 200, description = "The item", body = ListItem),
        (status = 400, description = "Unknown stage, or nothing to change", body = ErrorBody),
        (status = 404, description = "Lead list or list item not found", body = ErrorBody),
    ))]
async fn patch_item(
    State(state): State<AppState>,
    caller: Caller,
    Path((list_id, item_id)): Path<(i64, i64)>,
    Json(body): Json<ListItemPatch>,
) -> ApiResult<Json<ListItem>> {
    Ok(Json(
        status::patch(&state, &caller, list_id, item_id, body).await?,
    ))
}

/// Moves the item of a domain to a funnel stage.
#[utoipa::path(put, path = "/v1/lists/{list_id}/items/{item}/status", tag = "lists", operation_id = "set_lead_list_item_status",
    security(("api_key" = [])),
    params(("list_id" = i64, Path, description = LIST_ID), ("item" = String, Path, description = "The item's domain")),
    request_body = ListItemStatus,
    responses(
        (status = 200, description = "The item", body = ListItem),
        (status = 400, description = "Unknown stage", body = ErrorBody),
        (status = 404, description = "Lead list or list item not found", body = ErrorBody),
    ))]
async fn set_item_status(
    State(state): State<AppState>,
    caller: Caller,
    Path((list_id, domain)): Path<(i64, String)>,
    Json(body): Json<ListItemStatus>,
) -> ApiResult<Json<ListItem>> {
    Ok(Json(
        status::set_by_domain(&state, &caller, list_id, &domain, body).await?,
    ))
}

/// Moves 1-500 items, by domain or by id, to one stage.
#[utoipa::path(post, path = "/v1/lists/{list_id}/bulk-status", tag = "lists", operation_id = "bulk_lead_list_status",
    security(("api_key" = [])), params(("list_id" = i64, Path, description = LIST_ID)),
    request_body = BulkStatusRequest,
    responses(
        (status = 200, description = "What changed, and what the list does not hold", body = BulkStatusResult),
        (status = 400, description = "Unknown stage, or not 1-500 items", body = ErrorBody),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn bulk_status(
    State(state): State<AppState>,
    caller: Caller,
    Path(list_id): Path<i64>,
    Json(body): Json<BulkStatusRequest>,
) -> ApiResult<Json<BulkStatusResult>> {
    Ok(Json(status::bulk(&state, &caller, list_id, body).await?))
}

/// The list's funnel: counts, shares, conversions and time in stage.
#[utoipa::path(get, path = "/v1/lists/{list_id}/funnel", tag = "lists", operation_id = "lead_list_funnel",
    security(("api_key" = [])), params(("list_id" = i64, Path, description = LIST_ID)),
    responses(
        (status = 200, description = "The funnel", body = Funnel),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn list_funnel(
    State(state): State<AppState>,
    caller: Caller,
    Path(list_id): Path<i64>,
) -> ApiResult<Json<Funnel>> {
    Ok(Json(funnel::funnel(&state, &caller, list_id).await?))
}

/// The list's items as CSV: Domain, Status, Notes, Added At, Status Changed At.
#[utoipa::path(get, path = "/v1/lists/{list_id}/funnel/export", tag = "lists", operation_id = "export_lead_list_funnel",
    security(("api_key" = [])), params(("list_id" = i64, Path, description = LIST_ID)),
    responses(
        (status = 200, description = "The CSV file", content_type = "text/csv", body = String),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn export_funnel(
    State(state): State<AppState>,
    caller: Caller,
    Path(list_id): Path<i64>,
) -> ApiResult<CsvFile> {
    funnel::export(&state, &caller, list_id).await
}

/// The upload of `import-csv` as multipart form data.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct ListImportForm {
    /// CSV or TSV, up to 5 MB.
    #[schema(format = Binary, value_type = String)]
    file: Vec<u8>,
    /// Add to this list.
    list_id: Option<i64>,
    /// Create a list of this name.
    list_name: Option<String>,
}

/// Imports the domains of a CSV or TSV file into a new or existing list.
#[utoipa::path(post, path = "/v1/lists/import-csv", tag = "lists", operation_id = "import_lead_list_csv",
    security(("api_key" = [])),
    request_body(content = ListImportForm, content_type = "multipart/form-data"),
    responses(
        (status = 201, description = "Counts of the import", body = CsvImportResult),
        (status = 400, description = "No usable file, over 5 MB, or the list would pass its cap", body = ErrorBody),
        (status = 404, description = "Lead list not found", body = ErrorBody),
    ))]
async fn import_csv(
    State(state): State<AppState>,
    caller: Caller,
    form: Multipart,
) -> ApiResult<(StatusCode, Json<CsvImportResult>)> {
    let upload = read_upload(form, "file", MAX_FILE_BYTES).await?;
    let result = import::import(&state, &caller, upload).await?;
    Ok((StatusCode::CREATED, Json(result)))
}
