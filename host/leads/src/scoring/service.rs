//! Scoring rules: the account's own (`rule_<id>`, stored) and the
//! first-party defaults (read-only), their checks, the per-account cap, and
//! finding the rule a scoring request names.
//!
//! - Every plan may keep rules, up to `Quota::ScoringRules` (50 unless the
//!   operator says otherwise in `[limits.<plan>]`).
//! - An id that is not a default's and not `rule_<n>` of the caller's own,
//!   written exactly so, is 404 'Scoring rule not found': another account's
//!   rule is not told apart from one that does not exist.
//! - PUT changes the fields it is given (as PATCH would, like the other
//!   areas' PUTs); `description: null` clears it. A default rule answers
//!   PUT and DELETE with 400: it is not the account's to change.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::defaults::{self, DefaultRule};
use super::rules::{self, CompiledRule, MAX_DESCRIPTION_CHARS, ScoringCondition};
use super::store::{self, RuleFields, RuleRow};
use crate::lists::service::check_name;
use outreach_core::accounts::plans::{Quota, ensure_quota_after_insert};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::nullable;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

/// Prefix of the ids of an account's own rules.
const RULE_PREFIX: &str = "rule_";

/// The detail of a PUT or DELETE on a default rule.
pub const READ_ONLY: &str =
    "Default scoring rules are read-only; create a rule of your own to change its conditions";

/// A scoring rule as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ScoringRule {
    /// `default`, `default_intent`, ... for the first-party rules;
    /// `rule_<n>` for the account's own.
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub conditions: Vec<ScoringCondition>,
    /// A first-party rule: every account may use it, none may change it.
    pub is_default: bool,
    /// Null for default rules.
    pub created_at: Option<String>,
    /// Null for default rules.
    pub updated_at: Option<String>,
}

/// The default rules first (the one used by default leading), then the
/// account's own, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScoringRuleList {
    pub data: Vec<ScoringRule>,
    pub count: usize,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewScoringRule {
    /// 1-200 characters.
    pub name: String,
    /// Up to 1000 characters.
    #[serde(default)]
    pub description: Option<String>,
    /// 1-50 conditions.
    pub conditions: Vec<ScoringCondition>,
}

/// The fields to change; absent ones keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateScoringRule {
    pub name: Option<String>,
    /// Null clears it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
    pub conditions: Option<Vec<ScoringCondition>>,
}

/// What a rule id names.
enum RuleId {
    Default(&'static DefaultRule),
    Own(i64),
}

fn parse_id(id: &str) -> Option<RuleId> {
    if let Some(d) = defaults::find(id) {
        return Some(RuleId::Default(d));
    }
    let n: i64 = id.strip_prefix(RULE_PREFIX)?.parse().ok()?;
    // Only the spelling the API shows (no sign, no leading zeros).
    (n > 0 && own_id(n) == id).then_some(RuleId::Own(n))
}

fn own_id(n: i64) -> String {
    format!("{RULE_PREFIX}{n}")
}

fn not_found() -> ApiError {
    ApiError::NotFound(outreach_core::error::details::SCORING_RULE_NOT_FOUND.to_owned())
}

fn view(row: &RuleRow) -> ScoringRule {
    ScoringRule {
        id: own_id(row.id),
        name: row.name.clone(),
        description: (!row.description.is_empty()).then(|| row.description.clone()),
        conditions: row.conditions.clone(),
        is_default: false,
        created_at: Some(iso(row.created_at)),
        updated_at: Some(iso(row.updated_at)),
    }
}

fn default_view(d: &DefaultRule) -> ScoringRule {
    ScoringRule {
        id: d.id.to_owned(),
        name: d.name.to_owned(),
        description: Some(d.description.to_owned()),
        conditions: d.rule.conditions.clone(),
        is_default: true,
        created_at: None,
        updated_at: None,
    }
}

/// The description to store: empty when none.
fn check_description(description: Option<&str>) -> ApiResult<String> {
    let description = description.unwrap_or("").trim();
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(ApiError::bad_request(format!(
            "description must be at most {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    Ok(description.to_owned())
}

fn check_conditions(conditions: &[ScoringCondition]) -> ApiResult<CompiledRule> {
    rules::compile(conditions).map_err(ApiError::BadRequest)
}

/// `GET /v1/scoring/rules`.
pub async fn list(state: &AppState, caller: &Caller) -> ApiResult<ScoringRuleList> {
    let own = store::list(&state.db, caller.account_id).await?;
    let data: Vec<ScoringRule> = defaults::defaults()
        .iter()
        .map(default_view)
        .chain(own.iter().map(view))
        .collect();
    Ok(ScoringRuleList {
        count: data.len(),
        data,
    })
}

/// `POST /v1/scoring/rules`.
pub async fn create(
    state: &AppState,
    caller: &Caller,
    body: NewScoringRule,
) -> ApiResult<ScoringRule> {
    let name = check_name(&body.name)?;
    let description = check_description(body.description.as_deref())?;
    let compiled = check_conditions(&body.conditions)?;
    let limits = state.plan_limits(caller.plan);
    let fields = RuleFields {
        name: &name,
        description: &description,
        conditions: &compiled.conditions,
    };
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let id = store::insert(&mut tx, caller.account_id, &fields, now).await?;
    let quota = (Quota::ScoringRules, "scoring_rules");
    ensure_quota_after_insert(&mut tx, caller.plan, limits, quota, caller.account_id).await?;
    tx.commit().await?;
    let row = store::get(&state.db, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    Ok(view(&row))
}

/// `GET /v1/scoring/rules/{rule_id}`.
pub async fn get(state: &AppState, caller: &Caller, id: &str) -> ApiResult<ScoringRule> {
    match parse_id(id).ok_or_else(not_found)? {
        RuleId::Default(d) => Ok(default_view(d)),
        RuleId::Own(n) => store::get(&state.db, caller.account_id, n)
            .await?
            .map(|row| view(&row))
            .ok_or_else(not_found),
    }
}

/// The caller's own rule of this id: 404 when unknown, 400 for a default.
fn own(id: &str) -> ApiResult<i64> {
    match parse_id(id).ok_or_else(not_found)? {
        RuleId::Default(_) => Err(ApiError::bad_request(READ_ONLY)),
        RuleId::Own(n) => Ok(n),
    }
}

/// `PUT /v1/scoring/rules/{rule_id}`.
pub async fn update(
    state: &AppState,
    caller: &Caller,
    id: &str,
    body: UpdateScoringRule,
) -> ApiResult<ScoringRule> {
    let n = own(id)?;
    let row = store::get(&state.db, caller.account_id, n)
        .await?
        .ok_or_else(not_found)?;
    // Check everything before changing anything.
    let name = match &body.name {
        Some(name) => check_name(name)?,
        None => row.name.clone(),
    };
    let description = match &body.description {
        Some(d) => check_description(d.as_deref())?,
        None => row.description.clone(),
    };
    let conditions = match &body.conditions {
        Some(c) => check_conditions(c)?.conditions,
        None => row.conditions.clone(),
    };
    let fields = RuleFields {
        name: &name,
        description: &description,
        conditions: &conditions,
    };
    let now = state.clock.now_ms();
    store::update(&state.db, caller.account_id, n, &fields, now)
        .await?
        .map(|row| view(&row))
        .ok_or_else(not_found)
}

/// `DELETE /v1/scoring/rules/{rule_id}`.
pub async fn delete(state: &AppState, caller: &Caller, id: &str) -> ApiResult<()> {
    let n = own(id)?;
    if store::delete(&state.db, caller.account_id, n).await? {
        Ok(())
    } else {
        Err(not_found())
    }
}

/// The rule a scoring request uses, compiled.
#[derive(Debug, Clone)]
pub struct ResolvedRule {
    pub id: String,
    pub name: String,
    pub rule: Cow<'static, CompiledRule>,
}

/// The rule named by `rule_id` (the first default rule when `None`), as
/// `account_id` may use it.
pub async fn resolve(
    state: &AppState,
    account_id: i64,
    rule_id: Option<&str>,
) -> ApiResult<ResolvedRule> {
    let id = rule_id.unwrap_or(defaults::DEFAULT_RULE_ID);
    match parse_id(id).ok_or_else(not_found)? {
        RuleId::Default(d) => Ok(ResolvedRule {
            id: d.id.to_owned(),
            name: d.name.to_owned(),
            rule: Cow::Borrowed(&d.rule),
        }),
        RuleId::Own(n) => {
            let row = store::get(&state.db, account_id, n)
                .await?
                .ok_or_else(not_found)?;
            // Stored conditions were checked when written; one a later
            // version no longer accepts is the account's to fix with a PUT.
            let rule = rules::compile(&row.conditions).map_err(|e| {
                ApiError::bad_request(format!("Scoring rule {id} can no longer be used: {e}"))
            })?;
            Ok(ResolvedRule {
                id: own_id(row.id),
                name: row.name,
                rule: Cow::Owned(rule),
            })
        }
    }
}
