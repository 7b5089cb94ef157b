//! Rules of spec/1 "Sequences": fields and ranges, the plan quota, the
//! sender address, and the status operations.

use serde_json::Value;

use super::model::{GOAL_TYPES, Sequence, SequenceDetail, SequenceInput, SequenceList};
use super::settings;
use super::store::{self, SequenceRow};
use crate::enrollment;
use crate::send_accounts::store as send_accounts;
use crate::steps;
use outreach_core::accounts::plans::{
    Plan, Quota, ensure_quota_after_insert, quota_view, require_plan,
};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{one_of, within};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

/// Sequences, enrollment and send accounts are Starter+ (spec/1).
pub fn gate(caller: &Caller) -> ApiResult<()> {
    caller.require(Plan::Starter)
}

pub fn view(r: SequenceRow) -> Sequence {
    Sequence {
        id: r.id,
        name: r.name,
        description: r.description,
        from_name: r.from_name,
        from_email: r.from_email,
        status: r.status,
        daily_send_limit: r.daily_send_limit,
        warmup_enabled: r.warmup_enabled,
        warmup_start_volume: r.warmup_start_volume,
        warmup_increment: r.warmup_increment,
        warmup_started_at: r.warmup_started_at.map(iso),
        goal_type: r.goal_type,
        goal_url: r.goal_url,
        auto_pause_bounce_rate: r.auto_pause_bounce_rate,
        enable_unsubscribe: r.enable_unsubscribe,
        step_count: r.step_count,
        enrollment_count: r.enrollment_count,
        settings: serde_json::from_str(&r.settings).unwrap_or(Value::Null),
        send_account_id: r.send_account_id,
        paused_reason: r.paused_reason,
        warmup_paused_at: r.warmup_paused_at.map(iso),
        warmup_preset: r.warmup_preset,
        created_at: iso(r.created_at),
        updated_at: iso(r.updated_at),
    }
}

/// The caller's sequence `id`, or 404 (also for other accounts' ids).
pub async fn owned(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SequenceRow> {
    owned_by(state, caller.account_id, caller.plan, id).await
}

/// [`owned`] for an account and its plan (a workflow acting for it).
pub async fn owned_by(
    state: &AppState,
    account_id: i64,
    plan: Plan,
    id: i64,
) -> ApiResult<SequenceRow> {
    require_plan(plan, Plan::Starter)?;
    let mut conn = state.db.pool.acquire().await?;
    store::get(&mut conn, account_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("Sequence"))
}

fn chars(field: &str, value: &str, range: std::ops::RangeInclusive<usize>) -> ApiResult<()> {
    let n = value.chars().count();
    if range.contains(&n) {
        Ok(())
    } else if *range.start() == 0 {
        Err(ApiError::bad_request(format!(
            "{field} must be at most {} characters",
            range.end()
        )))
    } else {
        Err(ApiError::bad_request(format!(
            "{field} must be {}-{} characters",
            range.start(),
            range.end()
        )))
    }
}

/// Applies `input` onto `row`, checking every field; the sender address is
/// resolved against the account's send accounts.
async fn apply(state: &AppState, row: &mut SequenceRow, input: SequenceInput) -> ApiResult<()> {
    if let Some(name) = input.name {
        chars("name", name.trim(), 1..=200)?;
        row.name = name.trim().to_owned();
    }
    if let Some(d) = input.description {
        if let Some(d) = &d {
            chars("description", d, 0..=1000)?;
        }
        row.description = d;
    }
    if let Some(n) = input.from_name {
        if let Some(n) = &n {
            chars("from_name", n, 0..=200)?;
        }
        row.from_name = n;
    }
    if let Some(v) = input.daily_send_limit {
        row.daily_send_limit = within("daily_send_limit", v, 1..=10_000)?;
    }
    if let Some(v) = input.warmup_enabled {
        row.warmup_enabled = v;
    }
    if let Some(v) = input.warmup_start_volume {
        row.warmup_start_volume = within("warmup_start_volume", v, 1..=1000)?;
    }
    if let Some(v) = input.warmup_increment {
        row.warmup_increment = within("warmup_increment", v, 1..=100)?;
    }
    if let Some(g) = input.goal_type {
        one_of("goal_type", &g, &GOAL_TYPES)?;
        row.goal_type = g;
    }
    if let Some(u) = input.goal_url {
        if let Some(u) = &u {
            let ok = u.len() <= 2048
                && outreach_ssrf::Url::parse(u)
                    .is_ok_and(|p| matches!(p.scheme(), "http" | "https") && p.host().is_some());
            if !ok {
                return Err(ApiError::bad_request(
                    "goal_url must be an http or https URL of at most 2048 characters",
                ));
            }
        }
        row.goal_url = u;
    }
    if row.goal_type == "url_click" && row.goal_url.is_none() {
        return Err(ApiError::bad_request(
            "goal_type url_click needs a goal_url",
        ));
    }
    if let Some(r) = input.auto_pause_bounce_rate {
        if !(0.0..=100.0).contains(&r) {
            return Err(ApiError::bad_request(
                "auto_pause_bounce_rate must be between 0 and 100",
            ));
        }
        row.auto_pause_bounce_rate = r;
    }
    if let Some(v) = input.enable_unsubscribe {
        row.enable_unsubscribe = v;
    }
    if let Some(s) = input.settings {
        settings::parse(&s).map_err(ApiError::BadRequest)?;
        row.settings = s.to_string();
    }
    resolve_sender(state, row, input.from_email, input.send_account_id).await
}

/// `from_email` must be a connected send account of the account; naming
/// only one of `from_email` and `send_account_id` fills in the other.
async fn resolve_sender(
    state: &AppState,
    row: &mut SequenceRow,
    from_email: Option<Option<String>>,
    send_account_id: Option<Option<i64>>,
) -> ApiResult<()> {
    let by_id = match send_account_id {
        Some(Some(id)) => Some(
            send_accounts::get(&state.db, row.account_id, id)
                .await?
                .ok_or_else(|| {
                    ApiError::bad_request("send_account_id must be a send account of this account")
                })?,
        ),
        Some(None) => {
            row.send_account_id = None;
            None
        }
        None => None,
    };
    match from_email {
        Some(Some(email)) => {
            let found = send_accounts::find_by_email(&state.db, row.account_id, &email)
                .await?
                .ok_or_else(|| {
                    ApiError::bad_request(
                        "from_email must be the address of a connected send account",
                    )
                })?;
            if by_id.as_ref().is_some_and(|a| a.id != found.id) {
                return Err(ApiError::bad_request(
                    "from_email and send_account_id name different send accounts",
                ));
            }
            row.from_email = Some(found.email.clone());
            row.send_account_id = Some(found.id);
        }
        Some(None) => row.from_email = None,
        None => {
            if let Some(a) = &by_id {
                row.from_email = Some(a.email.clone());
            }
        }
    }
    if let Some(a) = by_id {
        row.send_account_id = Some(a.id);
        if row.from_name.is_none() {
            row.from_name = a.display_name;
        }
    }
    Ok(())
}

fn new_row(account_id: i64) -> SequenceRow {
    SequenceRow {
        id: 0,
        account_id,
        name: String::new(),
        description: None,
        from_name: None,
        from_email: None,
        status: "draft".into(),
        daily_send_limit: 50,
        warmup_enabled: false,
        warmup_start_volume: 10,
        warmup_increment: 5,
        warmup_started_at: None,
        goal_type: "none".into(),
        goal_url: None,
        auto_pause_bounce_rate: 5.0,
        enable_unsubscribe: true,
        settings: "{}".into(),
        send_account_id: None,
        paused_reason: None,
        warmup_paused_at: None,
        warmup_preset: None,
        created_at: 0,
        updated_at: 0,
        step_count: 0,
        enrollment_count: 0,
    }
}

/// Inserts a draft under the plan's sequence quota; `copy_from` also
/// copies that sequence's steps and mailbox pool (clone).
async fn insert(
    state: &AppState,
    caller: &Caller,
    row: &SequenceRow,
    copy_from: Option<i64>,
) -> ApiResult<i64> {
    let limits = state.plan_limits(caller.plan);
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let id = store::insert(&mut tx, row, now).await?;
    let quota = (Quota::Sequences, "sequences");
    ensure_quota_after_insert(&mut tx, caller.plan, limits, quota, caller.account_id).await?;
    if let Some(from) = copy_from {
        steps::store::copy_all(&mut tx, from, id, now).await?;
        store::copy_pool(&mut tx, from, id).await?;
    }
    tx.commit().await?;
    Ok(id)
}

async fn reload(state: &AppState, caller: &Caller, id: i64) -> ApiResult<Sequence> {
    Ok(view(owned(state, caller, id).await?))
}

pub async fn create(
    state: &AppState,
    caller: &Caller,
    input: SequenceInput,
) -> ApiResult<Sequence> {
    gate(caller)?;
    if input.name.is_none() {
        return Err(ApiError::bad_request("name is required"));
    }
    let mut row = new_row(caller.account_id);
    apply(state, &mut row, input).await?;
    let id = insert(state, caller, &row, None).await?;
    reload(state, caller, id).await
}

pub async fn list(state: &AppState, caller: &Caller) -> ApiResult<SequenceList> {
    gate(caller)?;
    let rows = store::list(&state.db, caller.account_id).await?;
    let count = rows.len() as i64;
    let (limit, remaining) = quota_view(
        state.plan_limits(caller.plan),
        Quota::Sequences,
        count as u64,
    );
    Ok(SequenceList {
        sequences: rows.into_iter().map(view).collect(),
        count,
        limit,
        remaining,
    })
}

pub async fn detail(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SequenceDetail> {
    let row = owned(state, caller, id).await?;
    let steps = steps::service::list_of(state, &row).await?;
    let enrollments = enrollment::service::recent(state, &row, 100).await?;
    Ok(SequenceDetail {
        sequence: view(row),
        steps,
        enrollments,
    })
}

pub async fn update(
    state: &AppState,
    caller: &Caller,
    id: i64,
    input: SequenceInput,
) -> ApiResult<Sequence> {
    let mut row = owned(state, caller, id).await?;
    apply(state, &mut row, input).await?;
    let now = state.clock.now_ms();
    if row.status == "active" && row.warmup_enabled && row.warmup_started_at.is_none() {
        row.warmup_started_at = Some(now);
    }
    let mut conn = state.db.pool.acquire().await?;
    store::update(&mut conn, &row, now).await?;
    reload(state, caller, id).await
}

pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    gate(caller)?;
    if store::delete(&state.db, caller.account_id, id).await? {
        Ok(())
    } else {
        Err(ApiError::not_found("Sequence"))
    }
}

/// draft or paused -> active, when at least one step is actionable. An
/// active sequence stays active (idempotent).
pub async fn activate(state: &AppState, caller: &Caller, id: i64) -> ApiResult<Sequence> {
    let mut row = owned(state, caller, id).await?;
    steps::service::check_activatable(state, id).await?;
    let now = state.clock.now_ms();
    row.status = "active".into();
    // Resuming clears the engine's reason for an auto-pause.
    row.paused_reason = None;
    if row.warmup_enabled && row.warmup_started_at.is_none() {
        row.warmup_started_at = Some(now);
    }
    let mut conn = state.db.pool.acquire().await?;
    store::update(&mut conn, &row, now).await?;
    reload(state, caller, id).await
}

/// active -> paused; 400 from any other status.
pub async fn pause(state: &AppState, caller: &Caller, id: i64) -> ApiResult<Sequence> {
    let mut row = owned(state, caller, id).await?;
    if row.status != "active" {
        return Err(ApiError::bad_request(format!(
            "Only an active sequence can be paused (this one is {})",
            row.status
        )));
    }
    row.status = "paused".into();
    let mut conn = state.db.pool.acquire().await?;
    store::update(&mut conn, &row, state.clock.now_ms()).await?;
    reload(state, caller, id).await
}

/// A draft copy named `Copy of <name>` with the steps (conditions remapped
/// to the new ids) and the mailbox pool; enrollments stay behind.
pub async fn clone(state: &AppState, caller: &Caller, id: i64) -> ApiResult<Sequence> {
    let source = owned(state, caller, id).await?;
    let mut copy = source.clone();
    copy.name = format!("Copy of {}", source.name)
        .chars()
        .take(200)
        .collect();
    copy.status = "draft".into();
    copy.warmup_started_at = None;
    let new_id = insert(state, caller, &copy, Some(id)).await?;
    reload(state, caller, new_id).await
}
