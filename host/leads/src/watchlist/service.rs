//! Rules of the watchlist's endpoints.
//!
//! - Starter+ (403 on Free); the plan's cap (`watchlist` in
//!   `[limits.<plan>]`) answers 400 and writes nothing, a bulk add
//!   included (all or nothing).
//! - Domains are normalised as the pool normalises them (URLs accepted);
//!   a domain the pool lacks is added and its enrichment queued, and the
//!   account is told when it lands (`domain.enriched`), as for list items.
//! - Watching a domain twice answers 409 for one domain; a bulk add skips
//!   domains already watched or repeated.

use std::collections::{HashMap, HashSet};

use sqlx::AnyConnection;

use super::model::*;
use super::observe::observe;
use super::store::{self, NewRow, WatchRow};
use super::{Preferences, watch_not_found, worker};
use crate::domains::pipeline;
use crate::domains::service::normalise;
use outreach_core::accounts::plans::{Plan, Quota, ensure_quota, quota_view};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::within;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

/// The most domains one bulk add may carry (spec/2 "Limits").
pub const MAX_BULK: usize = 50;
/// Change records a watched domain shows in `recent_changes`.
const RECENT: i64 = 5;
/// The 409 of a domain the account watches already.
pub const ALREADY_WATCHED: &str = "Domain already on the watchlist";

fn watched(row: WatchRow, recent_changes: Vec<ChangeRecord>) -> WatchedDomain {
    WatchedDomain {
        id: row.id,
        domain: row.domain,
        last_snapshot: row.snapshot.as_ref().map(Snapshot::from),
        alert_on_industry_change: row.preferences.industry,
        alert_on_email_change: row.preferences.email,
        alert_on_tech_change: row.preferences.tech,
        alert_on_status_change: row.preferences.status,
        last_checked_at: row.last_checked_at.map(iso),
        last_changed_at: row.last_changed_at.map(iso),
        created_at: iso(row.created_at),
        recent_changes,
        total_changes: row.total_changes,
    }
}

/// `GET /v1/watchlist`.
pub async fn list(state: &AppState, caller: &Caller) -> ApiResult<WatchlistPage> {
    caller.require(Plan::Starter)?;
    let rows = store::watches(&state.db, caller.account_id).await?;
    let mut recent: HashMap<i64, Vec<ChangeRecord>> = HashMap::new();
    for change in store::recent_changes(&state.db, caller.account_id, RECENT).await? {
        recent.entry(change.watchlist_id).or_default().push(change);
    }
    let limits = state.plan_limits(caller.plan);
    let (limit, remaining) = quota_view(limits, Quota::WatchlistEntries, rows.len() as u64);
    let domains = rows
        .into_iter()
        .map(|row| {
            let changes = recent.remove(&row.id).unwrap_or_default();
            watched(row, changes)
        })
        .collect();
    Ok(WatchlistPage {
        domains,
        limit,
        remaining,
    })
}

/// One watch of the caller's, or 404.
async fn get(state: &AppState, caller: &Caller, id: i64) -> ApiResult<WatchedDomain> {
    let mut conn = state.db.pool.acquire().await?;
    let row = store::watch(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(watch_not_found)?;
    drop(conn);
    let (recent, _) = store::history(&state.db, caller.account_id, id, None, (RECENT, 0)).await?;
    Ok(watched(row, recent))
}

/// `POST /v1/watchlist`.
pub async fn add(state: &AppState, caller: &Caller, body: NewWatch) -> ApiResult<WatchedDomain> {
    caller.require(Plan::Starter)?;
    let domain = normalise(&body.domain)?;
    let defaults = Preferences::default();
    let preferences = Preferences {
        industry: body.alert_on_industry_change.unwrap_or(defaults.industry),
        email: body.alert_on_email_change.unwrap_or(defaults.email),
        tech: body.alert_on_tech_change.unwrap_or(defaults.tech),
        status: body.alert_on_status_change.unwrap_or(defaults.status),
    };
    let mut tx = state.db.pool.begin().await?;
    let ids = add_in(&mut tx, state, caller, &[domain], preferences).await?;
    let Some(id) = ids.first().copied() else {
        return Err(ApiError::Conflict(ALREADY_WATCHED.into()));
    };
    check_cap(&mut tx, state, caller, 1).await?;
    tx.commit().await?;
    get(state, caller, id).await
}

/// `POST /v1/watchlist/bulk`.
pub async fn add_bulk(
    state: &AppState,
    caller: &Caller,
    body: BulkWatch,
) -> ApiResult<BulkWatchResult> {
    caller.require(Plan::Starter)?;
    if body.domains.is_empty() || body.domains.len() > MAX_BULK {
        return Err(ApiError::bad_request(format!(
            "domains must hold 1 to {MAX_BULK} entries"
        )));
    }
    let requested = body.domains.len();
    let mut seen = HashSet::new();
    let mut domains = Vec::with_capacity(requested);
    // Every domain is checked before anything is written.
    for input in &body.domains {
        let domain = normalise(input)?;
        if seen.insert(domain.clone()) {
            domains.push(domain);
        }
    }
    let mut tx = state.db.pool.begin().await?;
    let ids = add_in(&mut tx, state, caller, &domains, Preferences::default()).await?;
    let total = check_cap(&mut tx, state, caller, ids.len() as u64).await?;
    tx.commit().await?;
    Ok(BulkWatchResult {
        added: ids.len(),
        skipped: requested - ids.len(),
        total,
        limit: state
            .plan_limits(caller.plan)
            .quota(Quota::WatchlistEntries),
    })
}

/// Watches `domains` (normalised, distinct) on `conn`, a transaction:
/// adds those the pool lacks and queues their enrichment, snapshots the
/// records that carry facts, and skips the domains the account watches
/// already. Returns the new watches' ids.
async fn add_in(
    conn: &mut AnyConnection,
    state: &AppState,
    caller: &Caller,
    domains: &[String],
    preferences: Preferences,
) -> ApiResult<Vec<i64>> {
    let backend = state.db.backend;
    let account_id = caller.account_id;
    let now = state.clock.now_ms();
    lock_account(conn, backend, account_id).await?;
    // A write first (see `ensure_quota_after_insert` on SQLite's locks).
    pipeline::submit_in(conn, backend, domains, "watchlist", Some(account_id), now).await?;
    let records = store::records_for_watch(conn, backend, domains).await?;
    let rows: Vec<NewRow> = records
        .iter()
        .map(|record| NewRow {
            record,
            preferences,
        })
        .collect();
    let next_check_at = now + worker::interval(caller.plan);
    Ok(store::insert(conn, backend, account_id, &rows, now, next_check_at).await?)
}

/// 400 when the `added` watches just inserted took the account past its
/// plan's cap (the transaction is then dropped); else how many it has.
async fn check_cap(
    conn: &mut AnyConnection,
    state: &AppState,
    caller: &Caller,
    added: u64,
) -> ApiResult<u64> {
    let total = store::count(conn, caller.account_id).await?;
    if added > 0 {
        let limits = state.plan_limits(caller.plan);
        ensure_quota(caller.plan, limits, Quota::WatchlistEntries, total - 1)?;
    }
    Ok(total)
}

/// `PUT /v1/watchlist/{watch_id}`: the preferences given change.
pub async fn update(
    state: &AppState,
    caller: &Caller,
    id: i64,
    body: WatchUpdate,
) -> ApiResult<WatchedDomain> {
    caller.require(Plan::Starter)?;
    let mut conn = state.db.pool.acquire().await?;
    let row = store::watch(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(watch_not_found)?;
    drop(conn);
    let p = row.preferences;
    let preferences = Preferences {
        industry: body.alert_on_industry_change.unwrap_or(p.industry),
        email: body.alert_on_email_change.unwrap_or(p.email),
        tech: body.alert_on_tech_change.unwrap_or(p.tech),
        status: body.alert_on_status_change.unwrap_or(p.status),
    };
    if !store::set_preferences(&state.db, caller.account_id, id, preferences).await? {
        return Err(watch_not_found());
    }
    get(state, caller, id).await
}

/// `DELETE /v1/watchlist/{watch_id}`: the watch and its change records.
pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    caller.require(Plan::Starter)?;
    if !store::delete(&state.db, caller.account_id, id).await? {
        return Err(watch_not_found());
    }
    Ok(())
}

/// `GET /v1/watchlist/{watch_id}/history`.
pub async fn history(
    state: &AppState,
    caller: &Caller,
    id: i64,
    query: HistoryQuery,
) -> ApiResult<History> {
    caller.require(Plan::Starter)?;
    let limit = within("limit", query.limit.unwrap_or(50), 1..=200)?;
    let offset = within("offset", query.offset.unwrap_or(0), 0..=i64::MAX)?;
    let field = query.field.as_deref().map(super::field).transpose()?;
    let mut conn = state.db.pool.acquire().await?;
    let row = store::watch(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(watch_not_found)?;
    drop(conn);
    let (changes, total) =
        store::history(&state.db, caller.account_id, id, field, (limit, offset)).await?;
    Ok(History {
        domain: row.domain,
        watchlist_id: row.id,
        total,
        changes,
    })
}

/// `GET /v1/watchlist/changes`.
pub async fn changes(
    state: &AppState,
    caller: &Caller,
    query: ChangesQuery,
) -> ApiResult<AccountChanges> {
    caller.require(Plan::Starter)?;
    let limit = within("limit", query.limit.unwrap_or(50), 1..=200)?;
    let (changes, total) = store::account_changes(&state.db, caller.account_id, limit).await?;
    Ok(AccountChanges { total, changes })
}

/// `GET /v1/watchlist/{watch_id}/check`: compares the record as it stands
/// with the snapshot now, as the pool evaluation does after each save.
pub async fn check(state: &AppState, caller: &Caller, id: i64) -> ApiResult<CheckResult> {
    caller.require(Plan::Starter)?;
    let backend = state.db.backend;
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    let mut watch = store::touch_watch(&mut tx, caller.account_id, id, now)
        .await?
        .ok_or_else(watch_not_found)?;
    let record = store::record(&mut tx, watch.domain_id).await?;
    let mut changes = Vec::new();
    let mut current = Current {
        domain: watch.domain.clone(),
        industry: None,
        website_email: None,
        confidence: None,
    };
    // A record without facts (its enrichment has not landed) has nothing
    // to compare yet.
    if let Some(r) = record.filter(|r| r.has_facts) {
        changes = observe(&mut tx, backend, &mut watch, &r.monitored, r.revision, now).await?;
        current.industry = r.monitored.industry;
        current.website_email = r.monitored.website_email;
        current.confidence = Some(r.confidence);
    }
    tx.commit().await?;
    Ok(CheckResult {
        domain: watch.domain,
        has_changes: !changes.is_empty(),
        changes,
        current,
    })
}
