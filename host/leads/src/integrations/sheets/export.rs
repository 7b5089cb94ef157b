//! The two exports: a spreadsheet is created, the template's header and
//! one row per domain are written (`api::write_rows`), the export is
//! recorded and `export.completed` written in one transaction.

use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

use super::templates::{self, FULL, Template};
use super::{api, oauth, store};
use crate::domains::service::normalise;
use crate::domains::store as pool;
use crate::lists::service as lists;
use outreach_core::error::details::EXPORT_TOO_LARGE;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::events::{self, EventType};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;

/// spec/2 "Limits": domains per export.
pub const MAX_DOMAINS: usize = 500;
/// The sheet the rows go to.
const SHEET: &str = "Domains";

/// `POST /v1/sheets/export`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportRequest {
    /// 1-500 domains or URLs; repeats are exported once.
    pub domains: Vec<String>,
    /// full (default), compact or contacts.
    pub template: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ExportAnswer {
    pub spreadsheet_id: String,
    pub spreadsheet_url: String,
    /// Rows below the header: one per distinct domain.
    pub rows_exported: usize,
    pub template: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ListExportAnswer {
    pub spreadsheet_id: String,
    pub spreadsheet_url: String,
    pub rows_exported: usize,
    pub list_name: String,
}

/// What one export writes, and where it came from.
struct Job<'a> {
    title: String,
    template: &'a Template,
    domains: Vec<String>,
    list_id: Option<i64>,
}

/// `POST /v1/sheets/export`.
pub async fn export(
    state: &AppState,
    caller: &Caller,
    body: ExportRequest,
) -> ApiResult<ExportAnswer> {
    let id = body.template.as_deref().unwrap_or(FULL.id);
    let template = templates::named(id)
        .ok_or_else(|| ApiError::bad_request("template must be one of full, compact, contacts"))?;
    if body.domains.is_empty() {
        return Err(ApiError::bad_request(
            "domains must name at least one domain",
        ));
    }
    if body.domains.len() > MAX_DOMAINS {
        return Err(ApiError::bad_request(EXPORT_TOO_LARGE));
    }
    let mut domains: Vec<String> = Vec::with_capacity(body.domains.len());
    for d in &body.domains {
        let d = normalise(d)?;
        if !domains.contains(&d) {
            domains.push(d);
        }
    }
    let today = chrono::DateTime::from_timestamp_millis(state.clock.now_ms())
        .unwrap_or_default()
        .format("%Y-%m-%d");
    let job = Job {
        title: format!("Outreach export {today} ({})", template.name),
        template,
        domains,
        list_id: None,
    };
    let (sheet, rows) = run(state, caller, job).await?;
    Ok(ExportAnswer {
        spreadsheet_id: sheet.id,
        spreadsheet_url: sheet.url,
        rows_exported: rows,
        template: template.id.into(),
    })
}

/// `POST /v1/sheets/export-list/{list_id}`: every item of the list, in the
/// order they were added, with the full template.
pub async fn export_list(
    state: &AppState,
    caller: &Caller,
    list_id: i64,
) -> ApiResult<ListExportAnswer> {
    let list = lists::get(state, caller, list_id).await?;
    let domains: Vec<String> = sqlx::query_scalar(
        "SELECT domain FROM list_items WHERE account_id = $1 AND list_id = $2 ORDER BY id",
    )
    .bind(caller.account_id)
    .bind(list_id)
    .fetch_all(&state.db.pool)
    .await?;
    let job = Job {
        title: format!("Outreach: {}", list.name),
        template: &FULL,
        domains,
        list_id: Some(list_id),
    };
    let (sheet, rows) = run(state, caller, job).await?;
    Ok(ListExportAnswer {
        spreadsheet_id: sheet.id,
        spreadsheet_url: sheet.url,
        rows_exported: rows,
        list_name: list.name,
    })
}

async fn run(
    state: &AppState,
    caller: &Caller,
    job: Job<'_>,
) -> ApiResult<(api::Spreadsheet, usize)> {
    // Not connected (or broken) answers before anything is created.
    oauth::access_token(state, caller.account_id, false).await?;
    let found = pool::find_many(&state.db, &job.domains).await?;
    let by_domain = pool::by_domain(&found);
    let mut rows = Vec::with_capacity(job.domains.len() + 1);
    rows.push(templates::header(job.template));
    for d in &job.domains {
        rows.push(templates::row(
            job.template,
            d,
            by_domain.get(d.as_str()).copied(),
        ));
    }
    let sheet = api::create(state, caller.account_id, &job.title, SHEET).await?;
    api::write_rows(state, caller.account_id, &sheet.id, SHEET, &rows).await?;
    let exported = job.domains.len();
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    let export = store::NewExport {
        account_id: caller.account_id,
        spreadsheet_id: &sheet.id,
        spreadsheet_url: &sheet.url,
        template: job.template.id,
        list_id: job.list_id,
        row_count: exported as i64,
        now,
    };
    let export_id = store::insert_export(&mut tx, export).await?;
    let data = json!({
        "export_id": export_id,
        "format": "google_sheets",
        "row_count": exported,
        "url": sheet.url,
        "spreadsheet_id": sheet.id,
    });
    events::record(
        &mut tx,
        caller.account_id,
        EventType::ExportCompleted,
        &data,
        now,
    )
    .await?;
    tx.commit().await?;
    Ok((sheet, exported))
}
