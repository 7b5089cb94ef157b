//! Rules of lead lists and their items.
//!
//! - 50 lists an account and 1,000 items a list by default (`lead_lists`
//!   and `list_items` in `[limits.<plan>]`); a change that would pass a cap
//!   answers 400 and writes nothing.
//! - Domains are normalised as the pool normalises them; an item whose
//!   domain the pool lacks adds it to the pool and queues its enrichment,
//!   in the transaction that adds the item.
//! - Each new item records `list.item_added` and its first history row in
//!   that same transaction.

use std::collections::{HashMap, HashSet};

use serde_json::json;
use sqlx::AnyConnection;

use super::history;
use super::model::*;
use super::store;
use super::{DISCOVERED, list_not_found};
use crate::domains::pipeline;
use crate::domains::record::DomainRecord;
use crate::domains::service::normalise;
use crate::domains::store as pool;
use outreach_core::accounts::plans::{Quota, ensure_quota_after_insert};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::events::{self, EventType};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::within;
use outreach_core::ports::Actor;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

/// The most items one `POST .../items` may carry.
pub const MAX_ITEMS_PER_REQUEST: usize = 1_000;
/// The longest item note.
const MAX_NOTES: usize = 2_000;

/// A list name, trimmed, 1-200 characters.
pub fn check_name(name: &str) -> ApiResult<String> {
    let name = name.trim();
    let len = name.chars().count();
    if !(1..=200).contains(&len) {
        return Err(ApiError::bad_request("name must be 1 to 200 characters"));
    }
    Ok(name.to_string())
}

fn check_description(description: &str) -> ApiResult<()> {
    if description.chars().count() > 1_000 {
        return Err(ApiError::bad_request(
            "description must be at most 1000 characters",
        ));
    }
    Ok(())
}

fn check_goal(goal: Option<f64>) -> ApiResult<Option<f64>> {
    match goal {
        Some(g) if !(0.0..=100.0).contains(&g) => Err(ApiError::bad_request(
            "conversion_goal must be a percentage between 0 and 100",
        )),
        other => Ok(other),
    }
}

/// Item notes, at most 2000 characters.
pub fn check_notes(notes: &str) -> ApiResult<()> {
    if notes.chars().count() > MAX_NOTES {
        return Err(ApiError::bad_request(format!(
            "notes must be at most {MAX_NOTES} characters"
        )));
    }
    Ok(())
}

/// `GET /v1/lists`.
pub async fn lists(state: &AppState, caller: &Caller) -> ApiResult<LeadListPage> {
    let data = store::lists(&state.db, caller.account_id).await?;
    Ok(LeadListPage {
        count: data.len(),
        data,
    })
}

/// One list of the caller's, or 404.
pub async fn get(state: &AppState, caller: &Caller, id: i64) -> ApiResult<LeadList> {
    let mut conn = state.db.pool.acquire().await?;
    store::list(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(list_not_found)
}

/// `POST /v1/lists`.
pub async fn create(state: &AppState, caller: &Caller, body: NewLeadList) -> ApiResult<LeadList> {
    let name = check_name(&body.name)?;
    let description = body.description.unwrap_or_default();
    check_description(&description)?;
    let goal = check_goal(body.conversion_goal)?;
    let mut tx = state.db.pool.begin().await?;
    let id = create_in(&mut tx, state, caller, &name, &description, goal).await?;
    tx.commit().await?;
    get(state, caller, id).await
}

/// Creates a list on `conn` (a transaction), within the caller's cap.
pub async fn create_in(
    conn: &mut AnyConnection,
    state: &AppState,
    caller: &Caller,
    name: &str,
    description: &str,
    goal: Option<f64>,
) -> ApiResult<i64> {
    lock_account(conn, state.db.backend, caller.account_id).await?;
    let now = state.clock.now_ms();
    let id = store::insert_list(conn, caller.account_id, name, description, goal, now).await?;
    let limits = state.plan_limits(caller.plan);
    let quota = (Quota::LeadLists, "lead_lists");
    ensure_quota_after_insert(conn, caller.plan, limits, quota, caller.account_id).await?;
    Ok(id)
}

/// `PUT /v1/lists/{id}`.
pub async fn update(
    state: &AppState,
    caller: &Caller,
    id: i64,
    body: LeadListUpdate,
) -> ApiResult<LeadList> {
    let current = get(state, caller, id).await?;
    let name = match &body.name {
        Some(n) => check_name(n)?,
        None => current.name,
    };
    let description = body.description.unwrap_or(current.description);
    check_description(&description)?;
    let goal = match body.conversion_goal {
        Some(g) => check_goal(g)?,
        None => current.conversion_goal,
    };
    let now = state.clock.now_ms();
    if !store::update_list(
        &state.db,
        caller.account_id,
        id,
        (&name, &description, goal),
        now,
    )
    .await?
    {
        return Err(list_not_found());
    }
    get(state, caller, id).await
}

/// `DELETE /v1/lists/{id}`: the list, its items, and a history row for
/// each item saying it left.
pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    store::touch_list(&mut tx, caller.account_id, id, now)
        .await?
        .ok_or_else(list_not_found)?;
    history::record_list_removed(&mut tx, caller.account_id, id, now).await?;
    store::delete_list(&mut tx, caller.account_id, id).await?;
    tx.commit().await?;
    Ok(())
}

fn page(query: &ItemPage) -> ApiResult<(i64, i64)> {
    let limit = within("limit", query.limit.unwrap_or(1_000), 1..=10_000)?;
    let offset = within("offset", query.offset.unwrap_or(0), 0..=i64::MAX)?;
    Ok((limit, offset))
}

/// `GET /v1/lists/{id}`.
pub async fn detail(
    state: &AppState,
    caller: &Caller,
    id: i64,
    query: ItemPage,
) -> ApiResult<LeadListDetail> {
    let (limit, offset) = page(&query)?;
    let list = get(state, caller, id).await?;
    let items = store::items(&state.db, id, limit, offset).await?;
    Ok(LeadListDetail {
        id: list.id,
        name: list.name,
        description: list.description,
        leads_count: list.leads_count,
        conversion_goal: list.conversion_goal,
        created_at: list.created_at,
        updated_at: list.updated_at,
        items,
    })
}

/// `GET /v1/lists/{id}/enriched`: each item with what the pool knows.
pub async fn enriched(
    state: &AppState,
    caller: &Caller,
    id: i64,
    query: ItemPage,
) -> ApiResult<EnrichedLeadList> {
    let (limit, offset) = page(&query)?;
    let list = get(state, caller, id).await?;
    let items = store::items(&state.db, id, limit, offset).await?;
    let domains: Vec<String> = items.iter().map(|i| i.domain.clone()).collect();
    let found = pool::find_many(&state.db, &domains).await?;
    // By domain: a page may hold 10,000 items.
    let records: HashMap<&str, _> = found
        .iter()
        .map(|r| (r.record.domain.as_str(), r))
        .collect();
    let items = items
        .into_iter()
        .map(|item| {
            let record = records.get(item.domain.as_str());
            let lead = match record {
                Some(r) => lead_of(&r.record),
                None => Lead {
                    domain: item.domain.clone(),
                    industry: None,
                    business_type: None,
                    confidence: None,
                    website_email: None,
                    registrant_country: None,
                },
            };
            EnrichedListItem { item, lead }
        })
        .collect();
    Ok(EnrichedLeadList {
        id: list.id,
        name: list.name,
        items,
    })
}

/// `POST /v1/lists/{list_id}/items`.
pub async fn add_items(
    state: &AppState,
    caller: &Caller,
    list_id: i64,
    body: NewListItems,
) -> ApiResult<ListItemsAdded> {
    if body.items.is_empty() || body.items.len() > MAX_ITEMS_PER_REQUEST {
        return Err(ApiError::bad_request(format!(
            "items must hold 1 to {MAX_ITEMS_PER_REQUEST} entries"
        )));
    }
    let requested = body.items.len();
    let mut seen = HashSet::new();
    let mut items = Vec::with_capacity(requested);
    for item in body.items {
        let domain = normalise(&item.domain)?;
        let notes = item.notes.unwrap_or_default();
        check_notes(&notes)?;
        if seen.insert(domain.clone()) {
            items.push((domain, notes));
        }
    }
    let (added, leads_count) = add_to(state, actor(caller), list_id, &items).await?;
    Ok(ListItemsAdded {
        added,
        skipped: requested - added,
        leads_count,
    })
}

/// Adds `items` (distinct, normalised domains with notes) to the
/// account's list `list_id` in one transaction, as `POST .../items` does
/// (404 'Lead list not found' for a list the account does not have; the
/// list's cap). Returns how many were new to the list and how many items
/// it holds now.
pub async fn add_to(
    state: &AppState,
    actor: Actor,
    list_id: i64,
    items: &[(String, String)],
) -> ApiResult<(usize, i64)> {
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    let name = store::touch_list(&mut tx, actor.account_id, list_id, now)
        .await?
        .ok_or_else(list_not_found)?;
    let added = add_in(&mut tx, state, actor, (list_id, &name), items).await?;
    let leads_count = store::count_items(&mut tx, list_id).await?;
    tx.commit().await?;
    Ok((added, leads_count))
}

/// The account and plan a request acts for.
pub fn actor(caller: &Caller) -> Actor {
    Actor {
        account_id: caller.account_id,
        plan: caller.plan,
    }
}

/// Adds `items` (distinct, normalised domains with notes) to a list the
/// account has already touched in this transaction: the rows within the
/// list's cap, their history, their events, and the pool's new domains
/// queued. Returns how many were new to the list.
pub async fn add_in(
    conn: &mut AnyConnection,
    state: &AppState,
    actor: Actor,
    (list_id, list_name): (i64, &str),
    items: &[(String, String)],
) -> ApiResult<usize> {
    let backend = state.db.backend;
    let now = state.clock.now_ms();
    let added = store::insert_items(conn, backend, actor.account_id, list_id, items, now).await?;
    if added.is_empty() {
        return Ok(0);
    }
    let count = store::count_items(conn, list_id).await? as u64;
    let limits = state.plan_limits(actor.plan);
    if let Some(cap) = limits.quota(Quota::ListItems)
        && count > cap
    {
        return Err(ApiError::BadRequest(format!(
            "Plan limit reached: a lead list holds at most {cap} items (it has {}, this adds {})",
            count - added.len() as u64,
            added.len()
        )));
    }
    // The rest a thousand items at a time, so a large import never holds
    // every event's JSON and every job at once.
    for chunk in added.chunks(1_000) {
        let stages: Vec<history::StageRow> = chunk
            .iter()
            .map(|(id, _)| (list_id, *id, Some(DISCOVERED)))
            .collect();
        history::record(conn, backend, actor.account_id, &stages, now).await?;
        let account = actor.account_id;
        record_added(conn, state, account, (list_id, list_name), chunk, now).await?;
        let domains: Vec<String> = chunk.iter().map(|(_, d)| d.clone()).collect();
        pipeline::submit_in(conn, backend, &domains, "list", Some(account), now).await?;
    }
    Ok(added.len())
}

/// `list.item_added` for each of `added` (`(item_id, domain)`).
pub async fn record_added(
    conn: &mut AnyConnection,
    state: &AppState,
    account_id: i64,
    (list_id, list_name): (i64, &str),
    added: &[(i64, String)],
    now: i64,
) -> sqlx::Result<()> {
    let events: Vec<_> = added
        .iter()
        .map(|(item_id, domain)| {
            let data = json!({
                "list_id": list_id, "list_name": list_name, "item_id": item_id, "domain": domain,
            });
            (account_id, data, now)
        })
        .collect();
    events::record_many(conn, state.db.backend, EventType::ListItemAdded, &events).await
}

/// `DELETE /v1/lists/{id}/items/{domain}`.
pub async fn remove_item(
    state: &AppState,
    caller: &Caller,
    list_id: i64,
    domain: &str,
) -> ApiResult<()> {
    let domain = normalise(domain)?;
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    store::touch_list(&mut tx, caller.account_id, list_id, now)
        .await?
        .ok_or_else(list_not_found)?;
    let removed = remove_in(&mut tx, state, caller.account_id, list_id, &[domain], now).await?;
    if removed == 0 {
        return Err(super::item_not_found());
    }
    tx.commit().await?;
    Ok(())
}

/// Removes the items of `domains` from a touched list, with a history row
/// each saying it left; returns how many the list held.
pub async fn remove_in(
    conn: &mut AnyConnection,
    state: &AppState,
    account_id: i64,
    list_id: i64,
    domains: &[String],
    now: i64,
) -> sqlx::Result<usize> {
    let backend = state.db.backend;
    let found = store::picked_items(conn, backend, list_id, store::Pick::Domains(domains)).await?;
    let ids: Vec<i64> = found.iter().map(|i| i.id).collect();
    let stages: Vec<history::StageRow> = ids.iter().map(|id| (list_id, *id, None)).collect();
    history::record(conn, backend, account_id, &stages, now).await?;
    store::delete_items(conn, &ids).await?;
    Ok(ids.len())
}

/// The fields the record has, whatever its status (ARCHITECTURE.md
/// "Imported records"). `business_type` and `confidence` are columns with
/// defaults (`unknown`, 0), so before a first enrichment only values an
/// import set count: a placeholder's defaults would read as findings.
fn lead_of(r: &DomainRecord) -> Lead {
    Lead {
        domain: r.domain.clone(),
        industry: r.industry.clone(),
        business_type: r.known_business_type().map(str::to_owned),
        confidence: r.known_confidence(),
        website_email: r.website_email.clone(),
        registrant_country: r.registrant_country.clone(),
    }
}
