//! The rules of spec/2 "Audiences": checks, the plan cap, exact counts,
//! the view that resets `new_since_viewed`, and the preview.
//!
//! - `match_count` is counted exactly over `pool_facets` when an audience
//!   is created or changed, and then moved by the evaluation worker as
//!   records start or stop matching (`evaluate.rs`); the count and the
//!   id of the last pool event it reflects are taken together under
//!   `store::lock_pool_events`, so no event is counted twice or missed.
//! - A PUT recounts; a PUT that changes the filters also zeroes
//!   `new_since_viewed`, which counted matches of the old filters.
//! - An inactive audience is not evaluated; making it active recounts.

use super::model::*;
use super::store::{self, AudienceRow, Fields};
use crate::domains::facet_filter::{SampleOrder, sample_country};
use crate::lists::service::check_name;
use outreach_core::accounts::plans::{Quota, ensure_quota_after_insert, quota_view};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;
use outreach_domain_analysis::signals::AUDIENCE_SIGNALS;
use sqlx::Row;

pub const MAX_DESCRIPTION_CHARS: usize = 1000;
/// Sample domains a preview shows.
const SAMPLE: i64 = 10;

fn not_found() -> ApiError {
    ApiError::NotFound("Audience not found".to_owned())
}

fn view(row: &AudienceRow) -> Audience {
    Audience {
        id: row.id,
        name: row.name.clone(),
        description: row.description.clone(),
        filters: row.filters.clone(),
        match_count: row.match_count,
        new_since_viewed: row.new_since_viewed,
        is_active: row.is_active,
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
    }
}

fn check_description(description: &str) -> ApiResult<String> {
    let description = description.trim();
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(ApiError::bad_request(format!(
            "description must be at most {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    Ok(description.to_owned())
}

/// `GET /v1/audiences`: no view, so `new_since_viewed` stays.
pub async fn list(state: &AppState, caller: &Caller) -> ApiResult<AudienceList> {
    let rows = store::list(&state.db, caller.account_id).await?;
    let (limit, remaining) = quota_view(
        state.plan_limits(caller.plan),
        Quota::Audiences,
        rows.len() as u64,
    );
    Ok(AudienceList {
        audiences: rows.iter().map(view).collect(),
        count: rows.len(),
        limit,
        remaining,
    })
}

/// Counts the audience `id` exactly, on `conn` (its writing transaction).
async fn recount(
    state: &AppState,
    conn: &mut sqlx::AnyConnection,
    id: i64,
    filters: &AudienceFilters,
) -> ApiResult<()> {
    let through = store::lock_pool_events(conn, state.db.backend).await?;
    let count = filters.compile().count_on(conn).await?;
    store::set_count(conn, id, count, through).await?;
    Ok(())
}

/// `POST /v1/audiences`.
pub async fn create(state: &AppState, caller: &Caller, body: NewAudience) -> ApiResult<Audience> {
    let name = check_name(&body.name)?;
    let description = check_description(body.description.as_deref().unwrap_or(""))?;
    let filters = body.filters.checked()?;
    let fields = Fields {
        name: &name,
        description: &description,
        filters: &filters,
        is_active: body.is_active.unwrap_or(true),
    };
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let id = store::insert(&mut tx, caller.account_id, &fields, now).await?;
    let quota = (Quota::Audiences, "audiences");
    ensure_quota_after_insert(
        &mut tx,
        caller.plan,
        state.plan_limits(caller.plan),
        quota,
        caller.account_id,
    )
    .await?;
    recount(state, &mut tx, id, &filters).await?;
    let row = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    tx.commit().await?;
    Ok(view(&row))
}

/// `GET /v1/audiences/{id}`: shows `new_since_viewed`, then takes what it
/// showed off the counter.
pub async fn get(state: &AppState, caller: &Caller, id: i64) -> ApiResult<Audience> {
    let mut conn = state.db.pool.acquire().await?;
    let row = store::get(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    drop(conn);
    if row.new_since_viewed > 0 {
        store::viewed(&state.db, caller.account_id, id, row.new_since_viewed).await?;
    }
    Ok(view(&row))
}

/// `PUT /v1/audiences/{id}`: the fields sent change; recounts.
pub async fn update(
    state: &AppState,
    caller: &Caller,
    id: i64,
    body: UpdateAudience,
) -> ApiResult<Audience> {
    let name = body.name.as_deref().map(check_name).transpose()?;
    let description = body
        .description
        .as_deref()
        .map(check_description)
        .transpose()?;
    let filters = body
        .filters
        .as_ref()
        .map(AudienceFilters::checked)
        .transpose()?;
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let old = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    let filters = filters.unwrap_or_else(|| old.filters.clone());
    let reset_new = filters != old.filters;
    let fields = Fields {
        name: name.as_deref().unwrap_or(&old.name),
        description: description.as_deref().unwrap_or(&old.description),
        filters: &filters,
        is_active: body.is_active.unwrap_or(old.is_active),
    };
    store::update(&mut tx, caller.account_id, id, &fields, reset_new, now).await?;
    recount(state, &mut tx, id, &filters).await?;
    let row = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    tx.commit().await?;
    Ok(view(&row))
}

/// `DELETE /v1/audiences/{id}`.
pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    if store::delete(&state.db, caller.account_id, id).await? {
        Ok(())
    } else {
        Err(not_found())
    }
}

/// `POST /v1/audiences/preview`: the count and a sample, nothing written.
pub async fn preview(state: &AppState, body: AudiencePreviewRequest) -> ApiResult<AudiencePreview> {
    let filter = body.filters.checked()?.compile();
    let match_count = filter.count(&state.db).await?;
    let rows = filter
        .sample(
            &state.db,
            "d.domain, d.industry, d.confidence",
            SampleOrder::Newest,
            match_count,
            SAMPLE,
        )
        .await?;
    let sample_domains = rows
        .iter()
        .map(|r| {
            Ok(AudienceSample {
                domain: r.try_get("domain")?,
                industry: r.try_get("industry")?,
                confidence: r.try_get("confidence")?,
                country: sample_country(r)?,
            })
        })
        .collect::<sqlx::Result<_>>()?;
    Ok(AudiencePreview {
        match_count,
        sample_domains,
    })
}

/// `GET /v1/audiences/signals`.
pub fn signals() -> AudienceSignalList {
    AudienceSignalList {
        signals: AUDIENCE_SIGNALS.to_vec(),
    }
}
