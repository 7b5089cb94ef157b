//! Funnel stage changes: one item by domain (`PUT .../status`), one by id
//! (`PATCH`), many at once (`POST .../bulk-status`). Each change stamps
//! `status_changed_at`, writes a history row and records
//! `list.status_changed`, all in one transaction; an item already at the
//! stage asked for is left as it is.

use serde_json::json;
use sqlx::AnyConnection;

use super::model::*;
use super::store::{self, Pick};
use super::{history, item_not_found, list_not_found, stage};
use crate::domains::service::normalise;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::events::{self, EventType};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;

/// The most items one bulk status change may name.
pub const MAX_BULK_STATUS: usize = 500;

/// Moves `items` (of `list_id`, read in this transaction) to `status`;
/// returns how many changed. The items are updated in place.
async fn apply(
    conn: &mut AnyConnection,
    state: &AppState,
    account_id: i64,
    list_id: i64,
    items: &mut [ListItem],
    status: &str,
) -> sqlx::Result<usize> {
    let now = state.clock.now_ms();
    let changing: Vec<&mut ListItem> = items.iter_mut().filter(|i| i.status != status).collect();
    if changing.is_empty() {
        return Ok(0);
    }
    let ids: Vec<i64> = changing.iter().map(|i| i.id).collect();
    store::set_status(conn, &ids, status, now).await?;
    let stages: Vec<history::StageRow> =
        ids.iter().map(|id| (list_id, *id, Some(status))).collect();
    history::record(conn, state.db.backend, account_id, &stages, now).await?;
    let mut changed_events = Vec::with_capacity(changing.len());
    for item in changing {
        let data = json!({
            "list_id": list_id, "item_id": item.id, "domain": item.domain,
            "old_status": item.status, "new_status": status,
        });
        changed_events.push((account_id, data, now));
        item.status = status.to_string();
        item.status_changed_at = Some(outreach_core::platform::clock::iso(now));
    }
    events::record_many(
        conn,
        state.db.backend,
        EventType::ListStatusChanged,
        &changed_events,
    )
    .await?;
    Ok(ids.len())
}

/// Changes the one item `pick` names in a list of the caller's: its
/// notes, its stage, or both, in one transaction.
async fn change_one(
    state: &AppState,
    caller: &Caller,
    list_id: i64,
    pick: Pick<'_>,
    status: Option<&str>,
    notes: Option<&str>,
) -> ApiResult<ListItem> {
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    store::touch_list(&mut tx, caller.account_id, list_id, now)
        .await?
        .ok_or_else(list_not_found)?;
    let mut found = store::picked_items(&mut tx, state.db.backend, list_id, pick).await?;
    let mut item = found.pop().ok_or_else(item_not_found)?;
    if let Some(notes) = notes {
        store::set_notes(&mut tx, item.id, notes).await?;
        item.notes = notes.to_string();
    }
    if let Some(status) = status {
        let one = std::slice::from_mut(&mut item);
        apply(&mut tx, state, caller.account_id, list_id, one, status).await?;
    }
    tx.commit().await?;
    Ok(item)
}

/// `PUT /v1/lists/{list_id}/items/{domain}/status`.
pub async fn set_by_domain(
    state: &AppState,
    caller: &Caller,
    list_id: i64,
    domain: &str,
    body: ListItemStatus,
) -> ApiResult<ListItem> {
    let status = stage(&body.status)?;
    let domain = [normalise(domain)?];
    change_one(
        state,
        caller,
        list_id,
        Pick::Domains(&domain),
        Some(status),
        None,
    )
    .await
}

/// `PATCH /v1/lists/{list_id}/items/{item_id}`: status, notes or both.
pub async fn patch(
    state: &AppState,
    caller: &Caller,
    list_id: i64,
    item_id: i64,
    body: ListItemPatch,
) -> ApiResult<ListItem> {
    let status = body.status.as_deref().map(stage).transpose()?;
    if let Some(notes) = &body.notes {
        super::service::check_notes(notes)?;
    }
    if status.is_none() && body.notes.is_none() {
        return Err(ApiError::bad_request("Give a status, notes or both"));
    }
    let ids = [item_id];
    change_one(
        state,
        caller,
        list_id,
        Pick::Ids(&ids),
        status,
        body.notes.as_deref(),
    )
    .await
}

/// `POST /v1/lists/{id}/bulk-status`.
pub async fn bulk(
    state: &AppState,
    caller: &Caller,
    list_id: i64,
    body: BulkStatusRequest,
) -> ApiResult<BulkStatusResult> {
    let status = stage(&body.status)?;
    let bounds = |n: usize| {
        if n == 0 || n > MAX_BULK_STATUS {
            Err(ApiError::bad_request(format!(
                "name 1 to {MAX_BULK_STATUS} items"
            )))
        } else {
            Ok(())
        }
    };
    // Asked-for names as given, with what they are looked up by.
    let (asked, domains, ids): (Vec<String>, Vec<String>, Vec<i64>) =
        match (body.domains, body.item_ids) {
            (Some(domains), None) => {
                bounds(domains.len())?;
                let normalised = domains
                    .iter()
                    .map(|d| normalise(d))
                    .collect::<ApiResult<Vec<_>>>()?;
                (domains, normalised, Vec::new())
            }
            (None, Some(ids)) => {
                bounds(ids.len())?;
                (ids.iter().map(i64::to_string).collect(), Vec::new(), ids)
            }
            _ => {
                return Err(ApiError::bad_request(
                    "Give either domains or item_ids, not both",
                ));
            }
        };
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    store::touch_list(&mut tx, caller.account_id, list_id, now)
        .await?
        .ok_or_else(list_not_found)?;
    let pick = if ids.is_empty() {
        Pick::Domains(&domains)
    } else {
        Pick::Ids(&ids)
    };
    let mut items = store::picked_items(&mut tx, state.db.backend, list_id, pick).await?;
    let held = items.len();
    let updated = apply(
        &mut tx,
        state,
        caller.account_id,
        list_id,
        &mut items,
        status,
    )
    .await?;
    tx.commit().await?;
    let not_found = asked
        .into_iter()
        .enumerate()
        .filter(|(i, _)| {
            !items.iter().any(|item| match domains.get(*i) {
                Some(d) => &item.domain == d,
                None => item.id == ids[*i],
            })
        })
        .map(|(_, a)| a)
        .collect();
    Ok(BulkStatusResult {
        updated,
        unchanged: held - updated,
        not_found,
    })
}
