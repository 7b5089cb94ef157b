//! Rules of spec/2 "Bulk operations" (see the module docs).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::export::{self, DEFAULT_FIELDS, MORE_FIELDS};
use crate::csv_out::{self, CsvFile};
use crate::domains::service::normalise;
use crate::domains::store as pool;
use crate::lists::store::{self as lists, Pick};
use crate::lists::{history, list_not_found, service as list_service};
use outreach_core::accounts::plans::Quota;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;

/// The most domains one delete or archive names.
pub const MAX_BULK_DOMAINS: usize = 500;
/// The most domains one export names.
pub const MAX_EXPORT_DOMAINS: usize = 1_000;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkDeleteRequest {
    pub list_id: i64,
    /// 1-500 domain names.
    pub domain_ids: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BulkDeleteResult {
    pub removed: usize,
    /// Items left in the list.
    pub remaining: i64,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkArchiveRequest {
    pub source_list_id: i64,
    /// 1-500 domain names.
    pub domain_ids: Vec<String>,
    /// Default "Archived"; created when the account has no list of that name.
    pub archive_list_name: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BulkArchiveResult {
    pub archived: usize,
    pub archive_list_id: i64,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkExportRequest {
    /// 1-1,000 domains.
    pub domains: Vec<String>,
    /// Columns, in order; spec/2's eleven default fields when omitted.
    pub fields: Option<Vec<String>>,
}

/// Distinct normalised domains, 1 to `max` of them, or 400.
fn domains(given: &[String], field: &str, max: usize) -> ApiResult<Vec<String>> {
    if given.is_empty() || given.len() > max {
        return Err(ApiError::bad_request(format!(
            "{field} must hold 1 to {max} domains"
        )));
    }
    let mut out: Vec<String> = Vec::with_capacity(given.len());
    for d in given {
        let d = normalise(d)?;
        if !out.contains(&d) {
            out.push(d);
        }
    }
    Ok(out)
}

/// `POST /v1/bulk/delete`.
pub async fn delete(
    state: &AppState,
    caller: &Caller,
    body: BulkDeleteRequest,
) -> ApiResult<BulkDeleteResult> {
    let domains = domains(&body.domain_ids, "domain_ids", MAX_BULK_DOMAINS)?;
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    lists::touch_list(&mut tx, caller.account_id, body.list_id, now)
        .await?
        .ok_or_else(list_not_found)?;
    let removed = list_service::remove_in(
        &mut tx,
        state,
        caller.account_id,
        body.list_id,
        &domains,
        now,
    )
    .await?;
    let remaining = lists::count_items(&mut tx, body.list_id).await?;
    tx.commit().await?;
    Ok(BulkDeleteResult { removed, remaining })
}

/// `POST /v1/bulk/archive`.
pub async fn archive(
    state: &AppState,
    caller: &Caller,
    body: BulkArchiveRequest,
) -> ApiResult<BulkArchiveResult> {
    let domains = domains(&body.domain_ids, "domain_ids", MAX_BULK_DOMAINS)?;
    let name = list_service::check_name(body.archive_list_name.as_deref().unwrap_or("Archived"))?;
    let now = state.clock.now_ms();
    let backend = state.db.backend;
    let mut tx = state.db.pool.begin().await?;
    let source = body.source_list_id;
    lists::touch_list(&mut tx, caller.account_id, source, now)
        .await?
        .ok_or_else(list_not_found)?;
    let archive_id = match lists::list_named(&mut tx, caller.account_id, &name).await? {
        Some(id) if id == source => {
            return Err(ApiError::bad_request(
                "The archive list must not be the source list",
            ));
        }
        Some(id) => {
            lists::touch_list(&mut tx, caller.account_id, id, now).await?;
            id
        }
        None => list_service::create_in(&mut tx, state, caller, &name, "", None).await?,
    };
    let picked = lists::picked_items(&mut tx, backend, source, Pick::Domains(&domains)).await?;
    let picked_domains: Vec<String> = picked.iter().map(|i| i.domain.clone()).collect();
    let held =
        lists::picked_items(&mut tx, backend, archive_id, Pick::Domains(&picked_domains)).await?;
    let (duplicates, moving): (Vec<_>, Vec<_>) = picked
        .iter()
        .partition(|i| held.iter().any(|h| h.domain == i.domain));
    // Items the archive holds already leave the source; the rest move with
    // their stage and history.
    let gone: Vec<i64> = duplicates.iter().map(|i| i.id).collect();
    let stages: Vec<history::StageRow> = gone.iter().map(|id| (source, *id, None)).collect();
    history::record(&mut tx, backend, caller.account_id, &stages, now).await?;
    lists::delete_items(&mut tx, &gone).await?;
    let moved: Vec<(i64, String)> = moving.iter().map(|i| (i.id, i.domain.clone())).collect();
    let ids: Vec<i64> = moved.iter().map(|m| m.0).collect();
    lists::move_items(&mut tx, &ids, archive_id).await?;
    let count = lists::count_items(&mut tx, archive_id).await? as u64;
    if let Some(cap) = state.plan_limits(caller.plan).quota(Quota::ListItems)
        && count > cap
    {
        return Err(ApiError::BadRequest(format!(
            "Plan limit reached: a lead list holds at most {cap} items, and the archive list would hold {count}"
        )));
    }
    list_service::record_added(
        &mut tx,
        state,
        caller.account_id,
        (archive_id, &name),
        &moved,
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(BulkArchiveResult {
        archived: picked.len(),
        archive_list_id: archive_id,
    })
}

/// `POST /v1/bulk/export`: one row per distinct domain, in request order.
pub async fn export(state: &AppState, body: BulkExportRequest) -> ApiResult<CsvFile> {
    let domains = domains(&body.domains, "domains", MAX_EXPORT_DOMAINS)?;
    let fields: Vec<String> = match body.fields {
        None => DEFAULT_FIELDS.iter().map(|f| f.to_string()).collect(),
        Some(fields) if fields.is_empty() => {
            return Err(ApiError::bad_request("fields must name at least one field"));
        }
        Some(fields) => {
            if let Some(unknown) = fields.iter().find(|f| !export::is_field(f)) {
                return Err(ApiError::bad_request(format!(
                    "Unknown export field '{}' (known: {}, {})",
                    unknown.chars().take(60).collect::<String>(),
                    DEFAULT_FIELDS.join(", "),
                    MORE_FIELDS.join(", ")
                )));
            }
            fields
        }
    };
    let found = pool::find_many(&state.db, &domains).await?;
    let records: HashMap<&str, _> = found
        .iter()
        .map(|r| (r.record.domain.as_str(), &r.record))
        .collect();
    let rows = domains.iter().map(|d| {
        let record = records.get(d.as_str()).copied();
        fields.iter().map(|f| export::cell(record, d, f)).collect()
    });
    let header: Vec<&str> = fields.iter().map(String::as_str).collect();
    csv_out::file("domains.csv", &header, rows)
}
