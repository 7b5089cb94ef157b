//! The rules of spec/3 "Workflow" and "Versioning": the plan gate and
//! cap, definition checks that need the database (trigger targets,
//! referenced workflows, `sub_workflow` cycles), versions on every PUT,
//! rollback, and the webhook token.

use rand::RngCore;

use super::action_types::ActionCatalog;
use super::cron::CronSchedule;
use super::definition::{self, TargetRef};
use super::model::*;
use super::store::{self, Fields, WorkflowRow};
use outreach_core::accounts::Plan;
use outreach_core::accounts::plans::{Quota, ensure_quota_after_insert, quota_view};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::ports::{Actor, SharedPoolPort, TriggerTarget};
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

/// Versions `GET .../versions` lists (spec/3 "Limits").
pub const VERSIONS_LISTED: i64 = 50;

pub fn not_found() -> ApiError {
    ApiError::NotFound("Workflow not found".to_owned())
}

pub fn actor(caller: &Caller) -> Actor {
    Actor {
        account_id: caller.account_id,
        plan: caller.plan,
    }
}

/// The public URL of a webhook trigger's token.
pub fn webhook_url(state: &AppState, token: &str) -> String {
    format!(
        "{}/v1/workflows/incoming/{token}",
        state.config.public_base_url.trim_end_matches('/')
    )
}

pub fn view(state: &AppState, row: &WorkflowRow) -> Workflow {
    let d = &row.definition;
    let token = (d.trigger_type == "webhook")
        .then(|| row.webhook_token.clone())
        .flatten();
    Workflow {
        id: row.id,
        name: d.name.clone(),
        description: d.description.clone(),
        trigger_type: d.trigger_type.clone(),
        trigger_config: d.trigger_config.clone(),
        conditions: d.conditions.clone(),
        actions: d.actions.clone(),
        execution_limits: d.execution_limits.clone(),
        canvas_data: row.canvas_data.clone(),
        retry_failed: d.retry_failed,
        is_active: d.is_active,
        last_run_at: row.last_run_at.map(iso),
        run_count: row.run_count,
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
        webhook_url: token.as_deref().map(|t| webhook_url(state, t)),
        webhook_token: token,
    }
}

/// A fresh webhook token: 32 random bytes, URL-safe.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("whk_{}", hex::encode(bytes))
}

pub fn gate(caller: &Caller) -> ApiResult<()> {
    caller.require(Plan::Starter)
}

pub async fn list(state: &AppState, caller: &Caller) -> ApiResult<WorkflowList> {
    gate(caller)?;
    let rows = store::list(&state.db, caller.account_id).await?;
    let (limit, remaining) = quota_view(
        state.plan_limits(caller.plan),
        Quota::Workflows,
        rows.len() as u64,
    );
    Ok(WorkflowList {
        workflows: rows.iter().map(|r| view(state, r)).collect(),
        count: rows.len(),
        limit,
        remaining,
    })
}

pub async fn get(state: &AppState, caller: &Caller, id: i64) -> ApiResult<Workflow> {
    gate(caller)?;
    let mut conn = state.db.pool.acquire().await?;
    let row = store::get(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    Ok(view(state, &row))
}

/// The input applied over `base` (all fields for a create), checked.
fn merged(
    base: Option<&WorkflowDefinition>,
    input: &WorkflowInput,
) -> ApiResult<WorkflowDefinition> {
    let pick = |v: Option<String>, old: Option<&String>, field: &str| {
        v.or_else(|| old.cloned())
            .ok_or_else(|| ApiError::bad_request(format!("{field} is required")))
    };
    let name = definition::check_name(&pick(input.name.clone(), base.map(|b| &b.name), "name")?)?;
    let description = definition::check_description(
        input
            .description
            .as_deref()
            .or(base.map(|b| b.description.as_str()))
            .unwrap_or(""),
    )?;
    let trigger_type = pick(
        input.trigger_type.clone(),
        base.map(|b| &b.trigger_type),
        "trigger_type",
    )?;
    // A new trigger type without a config starts from an empty one rather
    // than the old type's settings.
    let trigger_config = match (&input.trigger_config, base) {
        (Some(c), _) => c.clone(),
        (None, Some(b)) if input.trigger_type.is_none() || b.trigger_type == trigger_type => {
            b.trigger_config.clone()
        }
        _ => empty_object(),
    };
    let actions = match (&input.actions, base) {
        (Some(a), _) => a.clone(),
        (None, Some(b)) => b.actions.clone(),
        (None, None) => return Err(ApiError::bad_request("actions is required".to_owned())),
    };
    Ok(WorkflowDefinition {
        name,
        description,
        trigger_type,
        trigger_config,
        conditions: input
            .conditions
            .clone()
            .or_else(|| base.map(|b| b.conditions.clone()))
            .unwrap_or_default(),
        actions,
        execution_limits: input
            .execution_limits
            .clone()
            .or_else(|| base.map(|b| b.execution_limits.clone()))
            .unwrap_or_default(),
        retry_failed: input
            .retry_failed
            .or(base.map(|b| b.retry_failed))
            .unwrap_or(false),
        is_active: input
            .is_active
            .or(base.map(|b| b.is_active))
            .unwrap_or(true),
    })
}

/// What a checked definition stores besides itself.
struct Checked {
    target: Option<TargetRef>,
    next_due_at: Option<i64>,
}

/// Every check of a definition; `own_id` is the workflow being changed.
async fn check(
    state: &AppState,
    caller: &Caller,
    conn: &mut sqlx::AnyConnection,
    d: &WorkflowDefinition,
    own_id: Option<i64>,
) -> ApiResult<Checked> {
    let (_, target) = definition::check_trigger(&d.trigger_type, &d.trigger_config)?;
    definition::check_conditions(&d.conditions, "conditions")?;
    definition::check_actions(state.ext::<ActionCatalog>(), &state.plugins, &d.actions)?;
    definition::check_execution_limits(&d.execution_limits, caller.plan)?;
    if d.is_active {
        super::placeholders::refuse_unfilled(d, "activate")?;
    }
    if let Some(t) = target {
        let port = state.ext::<SharedPoolPort>();
        if !port.owns(state, actor(caller), t.target, t.id).await? {
            return Err(ApiError::NotFound(target_not_found(t.target).to_owned()));
        }
    }
    for id in definition::referenced_workflow_ids(&d.actions) {
        if Some(id) != own_id
            && store::actions_of(conn, caller.account_id, id)
                .await?
                .is_none()
        {
            return Err(not_found());
        }
    }
    check_cycles(conn, caller.account_id, own_id, &d.actions).await?;
    // A connection deleted since is refused here as a target is; runs of
    // the stored definition cope with it (connections::apply).
    for id in definition::connection_ids(&d.actions) {
        if !crate::connections::store::exists(conn, caller.account_id, id).await? {
            return Err(crate::connections::service::not_found());
        }
    }
    let next_due_at = if d.trigger_type == "schedule" {
        next_due(d, state.clock.now_ms())
    } else {
        None
    };
    Ok(Checked {
        target,
        next_due_at,
    })
}

/// The next due time of a schedule trigger after `now_ms`.
pub fn next_due(d: &WorkflowDefinition, now_ms: i64) -> Option<i64> {
    let cron = d.trigger_config["cron"].as_str()?;
    let schedule = CronSchedule::parse(cron, d.trigger_config["timezone"].as_str()).ok()?;
    let now = chrono::DateTime::from_timestamp_millis(now_ms)?;
    schedule.next_after(now).map(|t| t.timestamp_millis())
}

pub fn target_not_found(target: TriggerTarget) -> &'static str {
    match target {
        TriggerTarget::Alert => "Alert not found",
        TriggerTarget::Audience => "Audience not found",
        TriggerTarget::Watch => "Watchlist entry not found",
        TriggerTarget::Keyword => "Tracked keyword not found",
    }
}

/// Refuses a `sub_workflow` chain that comes back to a workflow already on
/// it (A to B to A, at any depth). `own_id` stands for the definition being
/// saved, whose stored actions are replaced by `actions`.
pub async fn check_cycles(
    conn: &mut sqlx::AnyConnection,
    account_id: i64,
    own_id: Option<i64>,
    actions: &[WorkflowAction],
) -> ApiResult<()> {
    // Depth-first over (workflow, path so far); the graph is small (at
    // most 100 actions a workflow), so the walk re-reads rather than
    // caching.
    let start = own_id.unwrap_or(0);
    let mut stack: Vec<(i64, Vec<i64>)> = definition::sub_workflow_ids(actions)
        .into_iter()
        .map(|id| (id, vec![start]))
        .collect();
    while let Some((id, path)) = stack.pop() {
        if path.contains(&id) {
            let mut names: Vec<String> = path
                .iter()
                .map(|p| {
                    if *p == 0 {
                        "this workflow".to_owned()
                    } else {
                        p.to_string()
                    }
                })
                .collect();
            names.push(if id == 0 {
                "this workflow".to_owned()
            } else {
                id.to_string()
            });
            return Err(ApiError::bad_request(format!(
                "sub_workflow cycle: {} (a workflow cannot run itself inline)",
                names.join(" -> ")
            )));
        }
        let nested = if Some(id) == own_id {
            Some(actions.to_vec())
        } else {
            store::actions_of(conn, account_id, id).await?
        };
        let mut next = path.clone();
        next.push(id);
        for child in definition::sub_workflow_ids(&nested.unwrap_or_default()) {
            stack.push((child, next.clone()));
        }
    }
    Ok(())
}

pub async fn create(
    state: &AppState,
    caller: &Caller,
    input: WorkflowInput,
) -> ApiResult<Workflow> {
    gate(caller)?;
    let d = merged(None, &input)?;
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let row = create_in(state, caller, &mut tx, &d, input.canvas_data.as_ref()).await?;
    tx.commit().await?;
    Ok(view(state, &row))
}

/// Checks and stores a new workflow in `tx` (which has locked the
/// account), under the plan's cap: `POST /v1/workflows`, and the installs
/// of templates and marketplace entries.
pub async fn create_in(
    state: &AppState,
    caller: &Caller,
    tx: &mut sqlx::AnyConnection,
    d: &WorkflowDefinition,
    canvas_data: Option<&serde_json::Value>,
) -> ApiResult<WorkflowRow> {
    gate(caller)?;
    let checked = check(state, caller, tx, d, None).await?;
    let token = (d.trigger_type == "webhook").then(new_token);
    let fields = Fields {
        definition: d,
        canvas_data,
        webhook_token: token.as_deref(),
        trigger_target: checked.target.map(|t| t.id),
        next_due_at: checked.next_due_at,
    };
    let id = store::insert(tx, caller.account_id, &fields, state.clock.now_ms()).await?;
    ensure_quota_after_insert(
        tx,
        caller.plan,
        state.plan_limits(caller.plan),
        (Quota::Workflows, "workflows"),
        caller.account_id,
    )
    .await?;
    store::get(tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)
}

/// Applies `d` over the stored row in `tx`, snapshotting the previous
/// definition as a version labelled `summary` (derived when `None`).
async fn save_over(
    state: &AppState,
    caller: &Caller,
    tx: &mut sqlx::AnyConnection,
    row: &WorkflowRow,
    d: &WorkflowDefinition,
    canvas_data: Option<&serde_json::Value>,
    summary: Option<String>,
) -> ApiResult<WorkflowRow> {
    let checked = check(state, caller, tx, d, Some(row.id)).await?;
    let token = match (&row.webhook_token, d.trigger_type == "webhook") {
        (Some(t), true) => Some(t.clone()),
        (None, true) => Some(new_token()),
        // A token outlives a change away from the webhook trigger, so that
        // changing back does not silently break the caller's URL; it is
        // not served meanwhile (incoming answers only webhook triggers).
        (t, false) => t.clone(),
    };
    let summary = summary.unwrap_or_else(|| change_summary(&row.definition, d));
    let now = state.clock.now_ms();
    store::insert_version(
        tx,
        caller.account_id,
        row.id,
        &summary,
        &row.definition,
        now,
    )
    .await?;
    let fields = Fields {
        definition: d,
        canvas_data: canvas_data.or(row.canvas_data.as_ref()),
        webhook_token: token.as_deref(),
        trigger_target: checked.target.map(|t| t.id),
        next_due_at: checked.next_due_at,
    };
    store::update(tx, caller.account_id, row.id, &fields, now).await?;
    store::get(tx, caller.account_id, row.id)
        .await?
        .ok_or_else(not_found)
}

pub async fn update(
    state: &AppState,
    caller: &Caller,
    id: i64,
    input: WorkflowInput,
) -> ApiResult<Workflow> {
    gate(caller)?;
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let row = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    let d = merged(Some(&row.definition), &input)?;
    let saved = save_over(
        state,
        caller,
        &mut tx,
        &row,
        &d,
        input.canvas_data.as_ref(),
        None,
    )
    .await?;
    tx.commit().await?;
    Ok(view(state, &saved))
}

pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    gate(caller)?;
    let mut tx = state.db.pool.begin().await?;
    if !store::delete(&mut tx, caller.account_id, id).await? {
        return Err(not_found());
    }
    tx.commit().await?;
    Ok(())
}

/// "actions: 3 -> 4; renamed": what a save changed, in the order a reader
/// scans a definition.
pub fn change_summary(old: &WorkflowDefinition, new: &WorkflowDefinition) -> String {
    let mut parts = Vec::new();
    if old.name != new.name {
        parts.push("renamed".to_owned());
    }
    if old.description != new.description {
        parts.push("description changed".to_owned());
    }
    if old.trigger_type != new.trigger_type {
        parts.push(format!(
            "trigger: {} -> {}",
            old.trigger_type, new.trigger_type
        ));
    } else if old.trigger_config != new.trigger_config {
        parts.push("trigger settings changed".to_owned());
    }
    let counted = [
        (
            "conditions",
            old.conditions.len(),
            new.conditions.len(),
            old.conditions != new.conditions,
        ),
        (
            "actions",
            old.actions.len(),
            new.actions.len(),
            old.actions != new.actions,
        ),
    ];
    for (what, before, after, changed) in counted {
        if before != after {
            parts.push(format!("{what}: {before} -> {after}"));
        } else if changed {
            parts.push(format!("{what} changed"));
        }
    }
    if old.execution_limits != new.execution_limits {
        parts.push("execution limits changed".to_owned());
    }
    if old.retry_failed != new.retry_failed {
        parts.push(format!(
            "retry_failed {}",
            if new.retry_failed { "on" } else { "off" }
        ));
    }
    if old.is_active != new.is_active {
        parts.push(if new.is_active { "activated" } else { "paused" }.to_owned());
    }
    if parts.is_empty() {
        "saved without changes".to_owned()
    } else {
        parts.join("; ")
    }
}

pub async fn versions(
    state: &AppState,
    caller: &Caller,
    id: i64,
) -> ApiResult<WorkflowVersionList> {
    get(state, caller, id).await?;
    let rows = store::versions(&state.db, caller.account_id, id, VERSIONS_LISTED).await?;
    Ok(WorkflowVersionList {
        versions: rows
            .into_iter()
            .map(|v| WorkflowVersionSummary {
                id: v.id,
                version_number: v.version_number,
                change_summary: v.change_summary,
                created_at: iso(v.created_at),
            })
            .collect(),
    })
}

fn version_not_found() -> ApiError {
    ApiError::NotFound("Workflow version not found".to_owned())
}

pub async fn version(
    state: &AppState,
    caller: &Caller,
    id: i64,
    version_id: i64,
) -> ApiResult<WorkflowVersion> {
    gate(caller)?;
    let mut conn = state.db.pool.acquire().await?;
    let v = store::version(&mut conn, caller.account_id, id, version_id)
        .await?
        .ok_or_else(version_not_found)?;
    Ok(WorkflowVersion {
        id: v.id,
        workflow_id: v.workflow_id,
        version_number: v.version_number,
        change_summary: v.change_summary,
        created_at: iso(v.created_at),
        definition: v.snapshot.ok_or_else(version_not_found)?,
    })
}

/// Restores version `version_id`'s definition, checked as a PUT is (a
/// target deleted since answers 404), and records the change as a new
/// version "Rolled back to v<N>".
pub async fn rollback(
    state: &AppState,
    caller: &Caller,
    id: i64,
    version_id: i64,
) -> ApiResult<Workflow> {
    gate(caller)?;
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let row = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    let v = store::version(&mut tx, caller.account_id, id, version_id)
        .await?
        .ok_or_else(version_not_found)?;
    let snapshot = v.snapshot.ok_or_else(version_not_found)?;
    let label = format!("Rolled back to v{}", v.version_number);
    let saved = save_over(state, caller, &mut tx, &row, &snapshot, None, Some(label)).await?;
    tx.commit().await?;
    Ok(view(state, &saved))
}

fn not_webhook() -> ApiError {
    ApiError::bad_request("this workflow's trigger_type is not webhook".to_owned())
}

pub async fn webhook_token(
    state: &AppState,
    caller: &Caller,
    id: i64,
) -> ApiResult<WorkflowWebhookToken> {
    gate(caller)?;
    let mut conn = state.db.pool.acquire().await?;
    let row = store::get(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    let token = match (&row.webhook_token, row.definition.trigger_type == "webhook") {
        (Some(t), true) => t.clone(),
        _ => return Err(not_webhook()),
    };
    Ok(WorkflowWebhookToken {
        webhook_url: webhook_url(state, &token),
        webhook_token: token,
        trigger_count: row.trigger_count,
    })
}

/// A new token; the old one answers 404 from this commit on.
pub async fn regenerate_token(
    state: &AppState,
    caller: &Caller,
    id: i64,
) -> ApiResult<WorkflowWebhookToken> {
    gate(caller)?;
    let mut conn = state.db.pool.acquire().await?;
    let row = store::get(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    if row.definition.trigger_type != "webhook" {
        return Err(not_webhook());
    }
    let token = new_token();
    store::set_token(
        &mut conn,
        caller.account_id,
        id,
        &token,
        state.clock.now_ms(),
    )
    .await?;
    Ok(WorkflowWebhookToken {
        webhook_url: webhook_url(state, &token),
        webhook_token: token,
        trigger_count: row.trigger_count,
    })
}
