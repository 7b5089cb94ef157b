//! The rules of spec/3 "Marketplace entry": publishing a scrubbed copy of a
//! workflow, search, install as a paused workflow under the cap, ratings
//! by installers, deletion by the author.

use super::model::*;
use super::scrub::scrub;
use super::store::{self, EntryRow, NewEntry};
use crate::templates::service::{average, check_rating, check_review, placeholder_list};
use crate::workflows::definition::{self, plan_execution_limits};
use crate::workflows::model::WorkflowDefinition;
use crate::workflows::{service as workflows, store as workflow_store};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

pub fn not_found() -> ApiError {
    ApiError::NotFound("Marketplace entry not found".to_owned())
}

fn bad(detail: String) -> ApiError {
    ApiError::bad_request(detail)
}

fn one_of(field: &str, value: &str, allowed: &[&str]) -> ApiResult<()> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(bad(format!(
            "{field} must be one of {} (got '{value}')",
            allowed.join(", ")
        )))
    }
}

fn definition_of(e: &EntryRow) -> WorkflowDefinition {
    let p = &e.definition;
    WorkflowDefinition {
        name: e.name.clone(),
        description: e.description.clone(),
        trigger_type: e.trigger_type.clone(),
        trigger_config: p.trigger_config.clone(),
        conditions: p.conditions.clone(),
        actions: p.actions.clone(),
        execution_limits: p.execution_limits.clone(),
        retry_failed: p.retry_failed,
        is_active: false,
    }
}

pub fn view(e: &EntryRow) -> MarketplaceEntry {
    let d = definition_of(e);
    MarketplaceEntry {
        id: e.id,
        name: e.name.clone(),
        description: e.description.clone(),
        category: e.category.clone(),
        tags: e.tags.clone(),
        difficulty: e.difficulty.clone(),
        trigger_type: e.trigger_type.clone(),
        placeholders: placeholder_list(&d),
        trigger_config: d.trigger_config,
        conditions: d.conditions,
        actions: d.actions,
        user_id: e.user_id,
        author_handle: e.author_handle.clone(),
        install_count: e.install_count,
        rating_sum: e.rating_sum,
        rating_count: e.rating_count,
        average_rating: average(e.rating_sum, e.rating_count),
        is_public: e.is_public,
        created_at: iso(e.created_at),
    }
}

fn check_tags(tags: Option<Vec<String>>) -> ApiResult<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags.unwrap_or_default() {
        let tag = tag.trim().to_lowercase();
        let n = tag.chars().count();
        if n == 0 || n > MAX_TAG_CHARS {
            return Err(bad(format!(
                "each tag must be 1-{MAX_TAG_CHARS} characters (got '{tag}')"
            )));
        }
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    if out.len() > MAX_TAGS {
        return Err(bad(format!(
            "tags holds at most {MAX_TAGS} (got {})",
            out.len()
        )));
    }
    Ok(out)
}

/// The default difficulty: by how many actions the workflow has, nested
/// ones included.
fn difficulty_of(d: &WorkflowDefinition) -> &'static str {
    fn count(actions: &[crate::workflows::model::WorkflowAction]) -> usize {
        actions
            .iter()
            .map(|a| {
                1 + definition::nested_lists(a)
                    .into_iter()
                    .filter_map(|(_, l)| serde_json::from_value::<Vec<_>>(l.clone()).ok())
                    .map(|l: Vec<crate::workflows::model::WorkflowAction>| count(&l))
                    .sum::<usize>()
            })
            .sum()
    }
    match count(&d.actions) {
        0..=3 => "beginner",
        4..=8 => "intermediate",
        _ => "advanced",
    }
}

/// `POST /v1/workflows/{id}/publish`.
pub async fn publish(
    state: &AppState,
    caller: &Caller,
    workflow_id: i64,
    input: PublishInput,
) -> ApiResult<MarketplaceEntry> {
    workflows::gate(caller)?;
    one_of("category", &input.category, CATEGORIES)?;
    if let Some(d) = &input.difficulty {
        one_of("difficulty", d, DIFFICULTIES)?;
    }
    let tags = check_tags(input.tags)?;
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let row = workflow_store::get(&mut tx, caller.account_id, workflow_id)
        .await?
        .ok_or_else(workflows::not_found)?;
    let source = &row.definition;
    let name = definition::check_name(input.name.as_deref().unwrap_or(&source.name))?;
    let description =
        definition::check_description(input.description.as_deref().unwrap_or(&source.description))?;
    let published = scrub(source);
    let stored = PublishedDefinition {
        trigger_config: published.trigger_config.clone(),
        conditions: published.conditions.clone(),
        actions: published.actions.clone(),
        execution_limits: published.execution_limits.clone(),
        retry_failed: published.retry_failed,
    };
    store::handle(&mut tx, caller.account_id).await?;
    let entry = NewEntry {
        account_id: caller.account_id,
        user_id: caller.user_id,
        name: &name,
        description: &description,
        category: &input.category,
        tags: &tags,
        difficulty: input.difficulty.as_deref().unwrap_or(difficulty_of(source)),
        trigger_type: &source.trigger_type,
        definition: &stored,
        is_public: input.is_public.unwrap_or(true),
    };
    let id = store::insert(&mut tx, &entry, state.clock.now_ms())
        .await?
        .ok_or_else(|| {
            bad(format!(
                "You already have a marketplace entry named '{name}'"
            ))
        })?;
    let saved = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    tx.commit().await?;
    Ok(view(&saved))
}

/// A checked search: (sort, page, limit), 400 naming a bad parameter.
fn checked(q: &MarketplaceQuery) -> ApiResult<(&str, i64, i64)> {
    let sort = q.sort.as_deref().unwrap_or("popular");
    one_of("sort", sort, SORTS)?;
    if let Some(c) = &q.category {
        one_of("category", c, CATEGORIES)?;
    }
    if let Some(d) = &q.difficulty {
        one_of("difficulty", d, DIFFICULTIES)?;
    }
    let page = q.page.unwrap_or(1);
    if page < 1 {
        return Err(bad(format!("page must be 1 or more (got {page})")));
    }
    let limit = q.limit.unwrap_or(DEFAULT_PAGE_SIZE);
    if !(1..=MAX_PAGE_SIZE).contains(&limit) {
        return Err(bad(format!(
            "limit must be 1-{MAX_PAGE_SIZE} (got {limit})"
        )));
    }
    if q.q.as_deref().is_some_and(|t| t.chars().count() > 200) {
        return Err(bad("q must be at most 200 characters".to_owned()));
    }
    Ok((sort, page, limit))
}

/// `GET /v1/workflows/marketplace`: public entries, and the caller's own
/// private ones.
pub async fn search(
    state: &AppState,
    caller: &Caller,
    q: MarketplaceQuery,
) -> ApiResult<MarketplacePage> {
    workflows::gate(caller)?;
    let (sort, page, limit) = checked(&q)?;
    let offset = (page - 1).saturating_mul(limit);
    let (rows, total) =
        store::search(&state.db, caller.account_id, &q, sort, limit, offset).await?;
    Ok(MarketplacePage {
        items: rows.iter().map(view).collect(),
        total,
        page,
        pages: (total + limit - 1) / limit,
    })
}

pub async fn get(state: &AppState, caller: &Caller, id: i64) -> ApiResult<MarketplaceEntry> {
    workflows::gate(caller)?;
    let mut conn = state.db.pool.acquire().await?;
    let e = store::get(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    Ok(view(&e))
}

/// `POST .../marketplace/{id}/install`: a paused workflow under the cap;
/// the entry's execution limits are kept only where the installer's plan
/// allows them.
pub async fn install(
    state: &AppState,
    caller: &Caller,
    id: i64,
) -> ApiResult<crate::templates::model::InstalledWorkflow> {
    workflows::gate(caller)?;
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let e = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    let mut d = definition_of(&e);
    let (domains, runtime) = plan_execution_limits(caller.plan);
    let limits = &mut d.execution_limits;
    limits.max_domains_per_run = limits.max_domains_per_run.filter(|v| *v <= domains);
    limits.max_runtime_seconds = limits.max_runtime_seconds.filter(|v| *v <= runtime);
    let row = workflows::create_in(state, caller, &mut tx, &d, None).await?;
    store::record_install(
        &mut tx,
        e.id,
        caller.account_id,
        row.id,
        state.clock.now_ms(),
    )
    .await?;
    tx.commit().await?;
    Ok(crate::templates::model::InstalledWorkflow {
        placeholders: placeholder_list(&row.definition),
        workflow: workflows::view(state, &row),
    })
}

/// `POST .../marketplace/{id}/rate`: installers only (403), never the
/// author (400); a second rating replaces the first in the sums.
pub async fn rate(
    state: &AppState,
    caller: &Caller,
    id: i64,
    input: RateEntryInput,
) -> ApiResult<MarketplaceEntry> {
    workflows::gate(caller)?;
    let rating = check_rating(&input.rating)?;
    let review = check_review(input.review.as_deref())?;
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let e = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    if e.account_id == caller.account_id {
        return Err(bad("You cannot rate your own marketplace entry".to_owned()));
    }
    if !store::installed(&mut tx, id, caller.account_id).await? {
        return Err(ApiError::ForbiddenDetail(
            "Install this marketplace entry before rating it".to_owned(),
        ));
    }
    store::rate(
        &mut tx,
        id,
        caller.account_id,
        rating,
        &review,
        state.clock.now_ms(),
    )
    .await?;
    let saved = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    tx.commit().await?;
    Ok(view(&saved))
}

/// `DELETE /v1/workflows/marketplace/{id}`: the author's own entries
/// only; workflows installed from it stay.
pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    workflows::gate(caller)?;
    if !store::delete(&state.db, caller.account_id, id).await? {
        return Err(not_found());
    }
    Ok(())
}
