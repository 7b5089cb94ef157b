//! `POST /v1/lists/import-csv`: a CSV or TSV file of domains into a new
//! list (`list_name`) or an existing one (`list_id`).
//!
//! - The file is read as `crate::domain_csv` reads every domain file
//!   (delimiter sniffed, byte-order mark and quoted fields handled, the
//!   named column or the first). Malformed cells, repeats in the file and
//!   domains the list already holds are skipped and counted.
//! - Refused with 400, writing nothing: a file over 5 MB, one that is not
//!   text (a NUL byte in its first 8 KB), one without a single usable
//!   domain, both or a malformed `list_id`/`list_name`, or more items than
//!   the list's cap allows.
//! - Without `list_id` or `list_name`, the new list is named after the
//!   file (`leads.csv` gives "leads"), or "CSV import" when it has no name.

use super::model::CsvImportResult;
use super::{list_not_found, service, store};
use crate::domain_csv::{DomainCell, DomainRows, sniff_delimiter};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::upload::Upload;
use outreach_core::state::AppState;

/// The largest file accepted (spec/2 "Limits").
pub const MAX_FILE_BYTES: usize = 5 * 1024 * 1024;

/// The domains of a file.
#[derive(Debug, Default)]
pub struct DomainFile {
    /// Distinct, normalised, in file order.
    pub domains: Vec<String>,
    /// Malformed cells and repeats.
    pub skipped: usize,
    /// Data rows (not the header, not blank lines).
    pub total: usize,
}

/// Reads the file; the error is the 400 detail.
pub fn read(bytes: &[u8]) -> Result<DomainFile, String> {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err("The file is not CSV or TSV text".into());
    }
    let mut rows = DomainRows::new(bytes, sniff_delimiter(bytes));
    let mut file = DomainFile::default();
    let mut seen = std::collections::HashSet::new();
    while let Some((_, cell)) = rows
        .next_row()
        .map_err(|e| format!("The file is not valid CSV: {e}"))?
    {
        match cell {
            DomainCell::Skip => continue,
            DomainCell::Domain(d) => {
                if seen.insert(d.clone()) {
                    file.domains.push(d);
                } else {
                    file.skipped += 1;
                }
            }
            DomainCell::Malformed => file.skipped += 1,
        }
        file.total += 1;
    }
    if file.domains.is_empty() {
        return Err(format!(
            "The file has no usable domain column: name it {} or put domains in the first column",
            crate::domain_csv::DOMAIN_COLUMNS.join(", ")
        ));
    }
    Ok(file)
}

/// Where the domains go.
enum Target {
    Existing(i64),
    New(String),
}

fn target(upload: &Upload) -> ApiResult<Target> {
    let field = |name: &str| {
        upload
            .fields
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    };
    match (field("list_id"), field("list_name")) {
        (Some(_), Some(_)) => Err(ApiError::bad_request(
            "Give list_id (add to a list) or list_name (create one), not both",
        )),
        (Some(id), None) => id
            .parse::<i64>()
            .map(Target::Existing)
            .map_err(|_| ApiError::bad_request("list_id must be an integer")),
        (None, Some(name)) => Ok(Target::New(service::check_name(name)?)),
        (None, None) => {
            let stem = upload
                .file_name
                .as_deref()
                .and_then(|n| std::path::Path::new(n).file_stem())
                .and_then(|s| s.to_str())
                .and_then(|s| service::check_name(s).ok());
            Ok(Target::New(stem.unwrap_or_else(|| "CSV import".into())))
        }
    }
}

/// Imports the uploaded file.
pub async fn import(
    state: &AppState,
    caller: &Caller,
    upload: Upload,
) -> ApiResult<CsvImportResult> {
    let target = target(&upload)?;
    let bytes = upload
        .file
        .ok_or_else(|| ApiError::bad_request("The form needs a file field"))?;
    let file = tokio::task::spawn_blocking(move || read(&bytes))
        .await
        .map_err(anyhow::Error::from)?
        .map_err(ApiError::BadRequest)?;
    let items: Vec<(String, String)> = file
        .domains
        .iter()
        .map(|d| (d.clone(), String::new()))
        .collect();
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    let (list_id, list_name) = match target {
        Target::Existing(id) => {
            let name = store::touch_list(&mut tx, caller.account_id, id, now)
                .await?
                .ok_or_else(list_not_found)?;
            (id, name)
        }
        Target::New(name) => {
            let id = service::create_in(&mut tx, state, caller, &name, "", None).await?;
            (id, name)
        }
    };
    let added = service::add_in(
        &mut tx,
        state,
        service::actor(caller),
        (list_id, &list_name),
        &items,
    )
    .await?;
    tx.commit().await?;
    Ok(CsvImportResult {
        list_id,
        list_name,
        domains_added: added,
        domains_skipped: file.skipped + (file.domains.len() - added),
        total_in_file: file.total,
    })
}
