//! Rules of the suppression list: the plan gate, reasons, paging, import.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::address::{self, Target};
use super::store::{self, EntryRow};
use outreach_core::accounts::plans::Plan;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{one_of, within};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// The reasons of spec/1; `manual` is the default.
pub const REASONS: [&str; 5] = ["manual", "bounce", "unsubscribe", "complaint", "invalid"];

/// Addresses one import may carry.
pub const MAX_IMPORT: usize = 10_000;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SuppressionEntry {
    pub id: i64,
    /// Lowercased address, or `@domain` for a whole domain.
    pub email: String,
    pub reason: String,
    pub domain: String,
    pub created_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SuppressionList {
    pub entries: Vec<SuppressionEntry>,
    /// Entries of the account, ignoring limit and offset.
    pub total: i64,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddEntry {
    /// An address, or `@domain` to suppress a whole domain.
    pub email: String,
    /// manual (default), bounce, unsubscribe, complaint, invalid.
    pub reason: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportEntries {
    /// Up to 10,000 addresses (or `@domain`s).
    pub emails: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ImportResult {
    pub added: u64,
    /// Duplicates (in the request or already listed) and malformed addresses.
    pub skipped: u64,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct Page {
    /// 1-200, default 50.
    pub limit: Option<i64>,
    /// 0-10000, default 0.
    pub offset: Option<i64>,
}

fn view(r: EntryRow) -> SuppressionEntry {
    SuppressionEntry {
        id: r.id,
        email: r.email,
        reason: r.reason,
        domain: r.domain,
        created_at: iso(r.created_at),
    }
}

/// The suppression list belongs to sequences, which are Starter+.
fn gate(caller: &Caller) -> ApiResult<()> {
    caller.require(Plan::Starter)
}

pub async fn list(state: &AppState, caller: &Caller, page: Page) -> ApiResult<SuppressionList> {
    gate(caller)?;
    let limit = within("limit", page.limit.unwrap_or(50), 1..=200)?;
    let offset = within("offset", page.offset.unwrap_or(0), 0..=10_000)?;
    let (rows, total) = store::list(&state.db, caller.account_id, limit, offset).await?;
    Ok(SuppressionList {
        entries: rows.into_iter().map(view).collect(),
        total,
    })
}

/// Adds an entry; the existing one comes back when it is listed already
/// (`created` false).
pub async fn add(
    state: &AppState,
    caller: &Caller,
    body: AddEntry,
) -> ApiResult<(SuppressionEntry, bool)> {
    gate(caller)?;
    let reason = body.reason.as_deref().unwrap_or("manual");
    one_of("reason", reason, &REASONS)?;
    let target = address::parse(&body.email)
        .ok_or_else(|| ApiError::bad_request("email must be a valid address or @domain"))?;
    let (row, created) = store::insert_one(
        &state.db,
        caller.account_id,
        &target,
        reason,
        state.clock.now_ms(),
    )
    .await?;
    Ok((view(row), created))
}

pub async fn import(
    state: &AppState,
    caller: &Caller,
    body: ImportEntries,
) -> ApiResult<ImportResult> {
    gate(caller)?;
    if body.emails.len() > MAX_IMPORT {
        return Err(ApiError::bad_request(format!(
            "emails may list at most {MAX_IMPORT} addresses"
        )));
    }
    let mut targets: Vec<Target> = body
        .emails
        .iter()
        .filter_map(|e| address::parse(e))
        .collect();
    targets.sort_by(|a, b| a.email.cmp(&b.email));
    targets.dedup_by(|a, b| a.email == b.email);
    let added = store::insert_many(
        &state.db,
        caller.account_id,
        &targets,
        "manual",
        state.clock.now_ms(),
    )
    .await?;
    Ok(ImportResult {
        added,
        skipped: body.emails.len() as u64 - added,
    })
}

pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    gate(caller)?;
    if store::delete(&state.db, caller.account_id, id).await? {
        Ok(())
    } else {
        Err(ApiError::not_found("Suppression entry"))
    }
}
