//! The rules of spec/3 "Template": ownership (free, plan perk or grant),
//! install as a paused workflow under the workflow cap, ratings,
//! statistics and suggestions (docs/decisions/templates.md).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::catalog::{CatalogTemplate, TemplateCatalog, perk_covers, price_display};
use super::model::*;
use super::store::{self, RatingRow};
use crate::workflows::{definition, placeholders, service as workflows, store as workflow_store};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::ports::{SharedOutboundPort, SharedPoolPort};
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

/// Longest review, in characters.
pub const MAX_REVIEW_CHARS: usize = 2000;
/// Suggestions answered at most.
pub const MAX_SUGGESTIONS: usize = 10;

pub fn not_found() -> ApiError {
    ApiError::NotFound("Template not found".to_owned())
}

/// How an account comes to own a template (spec/3 `owned`).
struct Ownership {
    grants: HashSet<String>,
}

impl Ownership {
    async fn of(state: &AppState, caller: &Caller) -> ApiResult<Ownership> {
        let grants = store::grants(&state.db, caller.account_id).await?;
        Ok(Ownership {
            grants: grants.into_iter().map(|(id, _)| id).collect(),
        })
    }

    /// Bought (granted), a perk of the plan, or free.
    fn owns(&self, caller: &Caller, t: &CatalogTemplate) -> bool {
        t.is_free() || perk_covers(caller.plan, &t.tag) || self.grants.contains(&t.id)
    }
}

pub fn placeholder_list(d: &crate::workflows::model::WorkflowDefinition) -> Vec<Placeholder> {
    placeholders::unfilled(d)
        .into_iter()
        .map(|(path, name)| Placeholder { path, name })
        .collect()
}

fn view(t: &CatalogTemplate, owned: bool, full: bool) -> Template {
    let d = &t.definition;
    Template {
        id: t.id.clone(),
        name: t.name.clone(),
        tag: t.tag.clone(),
        price_cents: t.price_cents,
        price_display: price_display(t.price_cents),
        is_free: t.is_free(),
        owned,
        industries: t.industries.clone(),
        pack: t.pack.clone(),
        description: full.then(|| d.description.clone()),
        trigger_type: full.then(|| d.trigger_type.clone()),
        trigger_config: full.then(|| d.trigger_config.clone()),
        conditions: full.then(|| d.conditions.clone()),
        actions: full.then(|| d.actions.clone()),
        placeholders: full.then(|| placeholder_list(d)),
    }
}

fn catalog(state: &AppState) -> &TemplateCatalog {
    state.ext::<TemplateCatalog>()
}

/// `GET /v1/workflows/templates`: every plan may browse the catalogue
/// (a Free account sees what an upgrade brings); installing needs
/// Starter+.
pub async fn list(
    state: &AppState,
    caller: &Caller,
    detail: Option<&str>,
) -> ApiResult<TemplateList> {
    let full = match detail.unwrap_or("summary") {
        "summary" => false,
        "full" => true,
        other => {
            return Err(ApiError::bad_request(format!(
                "detail must be summary or full (got '{other}')"
            )));
        }
    };
    let owner = Ownership::of(state, caller).await?;
    let templates = catalog(state).templates(state).await;
    Ok(TemplateList {
        templates: templates
            .iter()
            .map(|t| view(t, owner.owns(caller, t), full))
            .collect(),
    })
}

/// `POST /v1/workflows/install-template`: a paused workflow under the
/// cap, or 402 for a paid template the account does not own.
pub async fn install(
    state: &AppState,
    caller: &Caller,
    template_id: &str,
) -> ApiResult<InstalledWorkflow> {
    let t = catalog(state)
        .find(state, template_id)
        .await
        .ok_or_else(not_found)?;
    workflows::gate(caller)?;
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let owned = t.is_free()
        || perk_covers(caller.plan, &t.tag)
        || store::granted(&mut tx, caller.account_id, &t.id).await?;
    if !owned {
        return Err(ApiError::PaymentRequired(format!(
            "Template '{}' costs {} and is not owned by this account",
            t.id,
            price_display(t.price_cents)
        )));
    }
    let row = workflows::create_in(state, caller, &mut tx, &t.definition, None).await?;
    store::record_install(
        &mut tx,
        caller.account_id,
        &t.id,
        row.id,
        state.clock.now_ms(),
    )
    .await?;
    tx.commit().await?;
    Ok(InstalledWorkflow {
        placeholders: placeholder_list(&row.definition),
        workflow: workflows::view(state, &row),
    })
}

/// `GET /v1/workflows/template-stats`: public.
pub async fn stats(state: &AppState) -> ApiResult<TemplateStats> {
    let installs = store::install_counts(&state.db).await?;
    let totals = store::rating_totals(&state.db).await?;
    let templates = catalog(state).templates(state).await;
    let mut out = TemplateStats {
        install_counts: Default::default(),
        ratings: Default::default(),
    };
    for t in &templates {
        out.install_counts
            .insert(t.id.clone(), installs.get(&t.id).copied().unwrap_or(0));
        if let Some((sum, count)) = totals.get(&t.id).filter(|(_, n)| *n > 0) {
            out.ratings.insert(
                t.id.clone(),
                TemplateRatingSummary {
                    avg: average(*sum, *count),
                    count: *count,
                },
            );
        }
    }
    Ok(out)
}

/// The mean of `count` ratings summing to `sum`, two decimals; 0 for none.
pub fn average(sum: i64, count: i64) -> f64 {
    if count == 0 {
        return 0.0;
    }
    (sum as f64 / count as f64 * 100.0).round() / 100.0
}

/// A rating: a JSON integer from 1 to 5 ("5", 4.5 and 0 are refused).
pub fn check_rating(value: &Value) -> ApiResult<i64> {
    value
        .as_i64()
        .filter(|r| (1..=5).contains(r))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "rating must be an integer from 1 to 5 (got {value})"
            ))
        })
}

pub fn check_review(review: Option<&str>) -> ApiResult<String> {
    let review = review.unwrap_or("").trim();
    let n = review.chars().count();
    if n > MAX_REVIEW_CHARS {
        return Err(ApiError::bad_request(format!(
            "review must be at most {MAX_REVIEW_CHARS} characters (it has {n})"
        )));
    }
    Ok(review.to_owned())
}

/// `POST /v1/workflows/rate-template`: the caller must have installed the
/// template or own it by a grant or a plan perk; a template that is free
/// to everyone must be installed first (docs/decisions/templates.md).
pub async fn rate(
    state: &AppState,
    caller: &Caller,
    input: RateTemplateInput,
) -> ApiResult<TemplateRating> {
    workflows::gate(caller)?;
    let template_type = input.template_type.as_deref().unwrap_or("first_party");
    if template_type != "first_party" {
        return Err(ApiError::bad_request(format!(
            "template_type must be first_party (got '{template_type}'); rate marketplace entries \
             with POST /v1/workflows/marketplace/{{id}}/rate"
        )));
    }
    let rating = check_rating(&input.rating)?;
    let review = check_review(input.review.as_deref())?;
    let t = catalog(state)
        .find(state, &input.template_id)
        .await
        .ok_or_else(not_found)?;
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let may = store::installed(&mut tx, caller.account_id, &t.id).await?
        || (!t.is_free() && perk_covers(caller.plan, &t.tag))
        || store::granted(&mut tx, caller.account_id, &t.id).await?;
    if !may {
        return Err(ApiError::ForbiddenDetail(
            "Install or own this template before rating it".to_owned(),
        ));
    }
    let mut row = RatingRow {
        template_id: t.id.clone(),
        template_type: template_type.to_owned(),
        rating,
        review,
        created_at: now,
        updated_at: now,
    };
    row.created_at = store::rate(&mut tx, caller.account_id, &row).await?;
    tx.commit().await?;
    Ok(rating_view(row))
}

fn rating_view(r: RatingRow) -> TemplateRating {
    TemplateRating {
        template_id: r.template_id,
        template_type: r.template_type,
        rating: r.rating,
        review: r.review,
        created_at: iso(r.created_at),
        updated_at: iso(r.updated_at),
    }
}

/// `GET /v1/workflows/my-ratings`: the caller's template and marketplace
/// ratings, newest change first.
pub async fn my_ratings(state: &AppState, caller: &Caller) -> ApiResult<MyRatings> {
    workflows::gate(caller)?;
    let ratings = store::ratings_of(&state.db, caller.account_id).await?;
    let marketplace = crate::marketplace::store::ratings_of(&state.db, caller.account_id).await?;
    Ok(MyRatings {
        ratings: ratings.into_iter().map(rating_view).collect(),
        marketplace_ratings: marketplace,
    })
}

/// `GET /v1/workflows/suggest-templates`: the rule of
/// docs/decisions/templates.md, "Suggestions".
pub async fn suggest(state: &AppState, caller: &Caller) -> ApiResult<SuggestedTemplates> {
    workflows::gate(caller)?;
    let actor = workflows::actor(caller);
    let industries: Vec<String> = state
        .ext::<SharedPoolPort>()
        .account_industries(state, actor)
        .await?;
    let sequences = state
        .ext::<SharedOutboundPort>()
        .sequence_ids(state, actor)
        .await?;
    let rows = workflow_store::list(&state.db, caller.account_id).await?;
    let used_triggers: HashSet<&str> = rows
        .iter()
        .map(|r| r.definition.trigger_type.as_str())
        .collect();
    let enrolled: HashSet<i64> = rows
        .iter()
        .flat_map(|r| definition::sequence_ids(&r.definition.actions))
        .collect();
    let idle_sequences = sequences.iter().filter(|s| !enrolled.contains(s)).count();
    let installed: HashSet<String> = store::installed_ids(&state.db, caller.account_id)
        .await?
        .into_iter()
        .collect();
    let owner = Ownership::of(state, caller).await?;
    let rank: HashMap<&str, usize> = [("beginner", 0), ("intermediate", 1), ("advanced", 2)].into();
    let mut out: Vec<SuggestedTemplate> = Vec::new();
    for t in catalog(state).templates(state).await {
        if installed.contains(&t.id) {
            continue;
        }
        let mut score = 0;
        let mut reasons = Vec::new();
        let matched: Vec<&String> = t
            .industries
            .iter()
            .filter(|i| industries.iter().any(|a| a.eq_ignore_ascii_case(i)))
            .collect();
        if !matched.is_empty() {
            score += 3 * matched.len() as i64;
            reasons.push(format!(
                "matches industries in your lists and audiences: {}",
                matched
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !used_triggers.contains(t.definition.trigger_type.as_str()) {
            score += 2;
            reasons.push(format!(
                "uses the {} trigger, which none of your workflows uses yet",
                t.definition.trigger_type
            ));
        }
        if idle_sequences > 0 && definition::uses_type(&t.definition.actions, "enroll_in_sequence")
        {
            score += 2;
            reasons.push(format!(
                "enrols domains in a sequence: {idle_sequences} of your sequences have no workflow"
            ));
        }
        if score == 0 {
            continue;
        }
        let owned = owner.owns(caller, &t);
        if owned && !t.is_free() {
            score += 1;
            reasons.push("you own it".to_owned());
        }
        out.push(SuggestedTemplate {
            template: view(&t, owned, false),
            score,
            reasons,
        });
    }
    out.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then_with(|| {
                rank.get(a.template.tag.as_str())
                    .cmp(&rank.get(b.template.tag.as_str()))
            })
            .then_with(|| a.template.id.cmp(&b.template.id))
    });
    out.truncate(MAX_SUGGESTIONS);
    Ok(SuggestedTemplates { templates: out })
}
