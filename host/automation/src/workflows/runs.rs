//! Runs: the queue, the worker that executes them with leases and
//! checkpoints, the stream events, and the run records.
//!
//! A run row is its own queue entry (`workflow_runs`): `queued` and
//! `waiting` (a retry's backoff) rows are due at `due_at`; a worker claims
//! due rows by setting `status = 'running'` with a 30-second lease, which
//! it renews while an action works. After each top-level action the row's
//! checkpoint (next action, working set, previous result) and its
//! `actions_executed` are written together, guarded by the lease, and the
//! action's stream event is added. A server killed mid-run leaves a
//! `running` row whose lease runs out; any server then claims it and
//! resumes at the action that was in flight, so no action before the
//! checkpoint runs twice.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};
use tokio::sync::Notify;
use tracing::Instrument;

use super::action_types::has_effects;
use super::definition::effective_limits;
use super::engine::conditions::all_hold;
use super::engine::{self, RunEnv, Working, actions, retry_wait};
use super::model::*;
use super::run_progress::{checkpoint, finish, renew_lease, wait_for_retry};
use super::store::{self, WorkflowRow};
use outreach_core::accounts::Plan;
use outreach_core::platform::clock::iso;
use outreach_core::ports::{Actor, SharedPoolPort};
use outreach_core::state::AppState;
use outreach_core::store::Backend;

/// A run's lease; renewed every third of it while an action works.
pub const LEASE_MS: i64 = 30_000;
/// Runs one worker pass claims at most.
pub const CLAIM_BATCH: i64 = 32;
/// Worker loops per process (see `start`).
const LANES: usize = 4;

/// The worker's identity and its wake-up signal; a typed extension.
#[derive(Clone)]
pub struct RunQueue {
    pub owner: Arc<str>,
    wake: Arc<Notify>,
}

impl RunQueue {
    pub fn new() -> RunQueue {
        RunQueue {
            owner: format!("runs-{}", uuid::Uuid::new_v4()).into(),
            wake: Arc::new(Notify::new()),
        }
    }
}

impl Default for RunQueue {
    fn default() -> Self {
        RunQueue::new()
    }
}

/// Tells this process's worker that a run is due (other servers find it
/// on their next poll).
pub fn wake(state: &AppState) {
    state.ext::<RunQueue>().wake.notify_one();
}

/// A run to queue.
pub struct NewRun {
    pub workflow_id: i64,
    pub account_id: i64,
    pub trigger_event: String,
    pub trigger_data: Value,
    /// The working set; `None` seeds it from a sample of the pool when the
    /// run starts.
    pub items: Option<Vec<Value>>,
    pub due_at: i64,
    pub rerun_of: Option<i64>,
    /// Starts at this action with `items` as the working set, as they
    /// were when an earlier run stopped there (a decided approval): no
    /// pool fields or conditions are applied again.
    pub resume_at: Option<usize>,
}

/// What a run carries between actions, stored after each.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The items the run was given (kept for a `retry_failed` rerun).
    #[serde(default)]
    pub input: Option<Vec<Value>>,
    #[serde(default)]
    pub seeded: bool,
    #[serde(default)]
    pub next: usize,
    #[serde(default)]
    pub working: Working,
    /// Failed attempts of the action at `next` so far.
    #[serde(default)]
    pub attempt: u32,
    #[serde(default)]
    pub partial: bool,
    #[serde(default)]
    pub truncated_from: Option<i64>,
    /// The action a resumed run started at (kept for its rerun).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_at: Option<usize>,
}

/// A new run's checkpoint text and domain count.
pub fn initial_checkpoint(run: &NewRun) -> (String, i64) {
    let checkpoint = match run.resume_at {
        Some(next) => Checkpoint {
            input: run.items.clone(),
            seeded: true,
            next,
            working: Working {
                items: run.items.clone().unwrap_or_default(),
                ..Working::default()
            },
            resume_at: Some(next),
            ..Checkpoint::default()
        },
        None => Checkpoint {
            input: run.items.clone(),
            ..Checkpoint::default()
        },
    };
    let count = run.items.as_ref().map(|i| i.len() as i64).unwrap_or(0);
    (
        serde_json::to_string(&checkpoint).unwrap_or_default(),
        count,
    )
}

/// Queues `run` on `conn` (the caller's transaction); answers its id.
pub async fn enqueue(conn: &mut AnyConnection, run: &NewRun, now: i64) -> sqlx::Result<i64> {
    let ids = super::run_batch::enqueue(conn, &[(run, now)]).await?;
    ids.first().copied().ok_or(sqlx::Error::RowNotFound)
}

pub(super) struct Claimed {
    pub(super) id: i64,
    pub(super) workflow_id: i64,
    pub(super) account_id: i64,
    pub(super) trigger_event: String,
    pub(super) trigger_data: Value,
    pub(super) checkpoint: Checkpoint,
    pub(super) records: Vec<WorkflowActionRecord>,
    pub(super) rerun_of: Option<i64>,
    pub(super) started_at: i64,
    /// Records whose stream events are written (all of them at a claim).
    pub(super) written: usize,
}

const CLAIMED: &str = "id, workflow_id, account_id, trigger_event, trigger_data, checkpoint, \
     actions_executed, rerun_of, started_at";

fn claimed(r: &AnyRow) -> sqlx::Result<Claimed> {
    let data: String = r.try_get("trigger_data")?;
    let checkpoint: String = r.try_get("checkpoint")?;
    let records: String = r.try_get("actions_executed")?;
    let records: Vec<WorkflowActionRecord> = serde_json::from_str(&records).unwrap_or_default();
    Ok(Claimed {
        id: r.try_get("id")?,
        workflow_id: r.try_get("workflow_id")?,
        account_id: r.try_get("account_id")?,
        trigger_event: r.try_get("trigger_event")?,
        trigger_data: serde_json::from_str(&data).unwrap_or(Value::Null),
        checkpoint: serde_json::from_str(&checkpoint).unwrap_or_default(),
        rerun_of: r.try_get("rerun_of")?,
        started_at: r.try_get::<Option<i64>, _>("started_at")?.unwrap_or(0),
        written: records.len(),
        records,
    })
}

/// Leases up to `limit` due runs (queued, waiting out a retry, or running
/// under an expired lease) to `owner`.
async fn claim(state: &AppState, owner: &str, limit: i64) -> sqlx::Result<Vec<Claimed>> {
    let now = state.clock.now_ms();
    let lock = match state.db.backend {
        Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE workflow_runs SET status = 'running', lease_owner = $1, lease_until = $2, \
         started_at = COALESCE(started_at, $3) WHERE id IN (SELECT id FROM workflow_runs \
         WHERE (status IN ('queued', 'waiting') AND due_at <= $3) \
         OR (status = 'running' AND lease_until < $3) ORDER BY due_at, id LIMIT $4{lock}) \
         RETURNING {CLAIMED}"
    )))
    .bind(owner)
    .bind(now + LEASE_MS)
    .bind(now)
    .bind(limit)
    .fetch_all(&state.db.pool)
    .await?
    .iter()
    .map(claimed)
    .collect()
}

async fn plan_of(state: &AppState, account_id: i64) -> anyhow::Result<Plan> {
    let plan: Option<String> = sqlx::query_scalar("SELECT plan FROM accounts WHERE id = $1")
        .bind(account_id)
        .fetch_optional(&state.db.pool)
        .await?;
    Ok(plan.as_deref().and_then(Plan::parse).unwrap_or(Plan::Free))
}

/// What a claimed batch's runs read once per workflow: the definition
/// (`None` once deleted: its runs went with it) and its account's plan
/// (read once per account).
type Loaded = HashMap<i64, Option<(Arc<WorkflowRow>, Plan)>>;

async fn load(state: &AppState, batch: &[Claimed]) -> anyhow::Result<Loaded> {
    let mut loaded = Loaded::new();
    let mut plans: HashMap<i64, Plan> = HashMap::new();
    for run in batch {
        if loaded.contains_key(&run.workflow_id) {
            continue;
        }
        let mut conn = state.db.pool.acquire().await?;
        let workflow = store::get(&mut conn, run.account_id, run.workflow_id).await?;
        drop(conn);
        let entry = match workflow {
            Some(w) => {
                let plan = match plans.get(&run.account_id) {
                    Some(plan) => *plan,
                    None => {
                        let plan = plan_of(state, run.account_id).await?;
                        plans.insert(run.account_id, plan);
                        plan
                    }
                };
                Some((Arc::new(w), plan))
            }
            None => None,
        };
        loaded.insert(run.workflow_id, entry);
    }
    Ok(loaded)
}

/// The pool records of every domain the batch's starting runs were given,
/// in one read.
async fn pool_records(state: &AppState, batch: &[Claimed]) -> anyhow::Result<engine::PoolRecords> {
    let domains: Vec<String> = batch
        .iter()
        .filter(|run| !run.checkpoint.seeded)
        .filter_map(|run| run.checkpoint.input.as_ref())
        .flat_map(|input| engine::items_from(input))
        .filter_map(|i| i.get("domain").and_then(Value::as_str).map(str::to_owned))
        .collect();
    if domains.is_empty() {
        return Ok(engine::PoolRecords::new());
    }
    state.ext::<SharedPoolPort>().records(state, &domains).await
}

/// One pass: claims due runs and executes them concurrently. Answers how
/// many it claimed.
pub async fn run_due(state: &AppState, limit: i64) -> anyhow::Result<usize> {
    let owner = state.ext::<RunQueue>().owner.clone();
    let batch = claim(state, &owner, limit).await?;
    let n = batch.len();
    let loaded = load(state, &batch).await?;
    let pool = &pool_records(state, &batch).await?;
    let work = batch.into_iter().map(|run| {
        let owner = owner.clone();
        let loaded = loaded.get(&run.workflow_id).cloned().flatten();
        async move {
            let id = run.id;
            let Some((workflow, plan)) = loaded else {
                return;
            };
            let span = tracing::info_span!("workflow_run", run_id = id, workflow_id = workflow.id);
            let work = execute(state, &owner, &workflow, plan, run, pool).instrument(span);
            if let Err(e) = work.await {
                tracing::warn!(run_id = id, "workflow run: {e:#}");
            }
        }
    });
    futures::future::join_all(work).await;
    Ok(n)
}

/// Runs passes until nothing is due (tests, with the manual clock).
pub async fn drain(state: &AppState) -> anyhow::Result<usize> {
    let mut total = 0;
    loop {
        let n = run_due(state, CLAIM_BATCH).await?;
        if n == 0 {
            return Ok(total);
        }
        total += n;
    }
}

/// The worker `serve` starts: `LANES` loops, each a pass whenever woken,
/// else every 500 ms. Several lanes keep runs working while another lane
/// waits for its batch's slowest run, so the run writer always has a
/// crowd of writes to commit together.
pub fn start(state: &AppState) {
    for _ in 0..LANES {
        let state = state.clone();
        tokio::spawn(async move {
            let wake = state.ext::<RunQueue>().wake.clone();
            loop {
                match run_due(&state, CLAIM_BATCH).await {
                    Ok(n) if n > 0 => continue,
                    Ok(_) => {}
                    Err(e) => tracing::warn!("workflow runs: {e:#}"),
                }
                let _ = tokio::time::timeout(Duration::from_millis(500), wake.notified()).await;
            }
        });
    }
}

/// Executes a claimed run from its checkpoint to its end, a retry's wait,
/// or a lost lease.
async fn execute(
    state: &AppState,
    owner: &Arc<str>,
    workflow: &WorkflowRow,
    plan: Plan,
    mut run: Claimed,
    pool: &engine::PoolRecords,
) -> anyhow::Result<()> {
    let actor = Actor {
        account_id: run.account_id,
        plan,
    };
    let (max_domains, max_runtime) = effective_limits(&workflow.definition.execution_limits, plan);
    let cp = &mut run.checkpoint;
    if !cp.seeded {
        seed(state, workflow, &run.trigger_data, cp, max_domains, pool).await?;
    }
    let trigger = run.trigger_data.clone();
    let mut env = RunEnv {
        state,
        actor,
        workflow_id: workflow.id,
        run_id: run.id,
        trigger: &trigger,
        inline_stack: Vec::new(),
        action_index: None,
    };
    let actions = &workflow.definition.actions;
    let runtime_ms = max_runtime * 1000;
    while run.checkpoint.next < actions.len() {
        let index = run.checkpoint.next;
        let action = &actions[index];
        let now = state.clock.now_ms();
        let left = run.started_at + runtime_ms - now;
        if left <= 0 {
            let msg = format!("Run stopped: it ran past max_runtime_seconds ({max_runtime})");
            return finish(state, owner, workflow, &mut run, Some(msg)).await;
        }
        let started = now;
        let clock_start = std::time::Instant::now();
        env.action_index = Some(index);
        let renewal = renew_lease(state, run.id, owner);
        let attempt = tokio::time::timeout(
            Duration::from_millis(left as u64),
            actions::execute(&env, action, &run.checkpoint.working),
        )
        .await;
        renewal.abort();
        let outcome = match attempt {
            Ok(outcome) => outcome,
            Err(_) => {
                let msg = format!("Run stopped: it ran past max_runtime_seconds ({max_runtime})");
                return finish(state, owner, workflow, &mut run, Some(msg)).await;
            }
        };
        let input_count = run.checkpoint.working.items.len();
        let attempts = run.checkpoint.attempt + 1;
        let finished = state.clock.now_ms();
        let mut record = WorkflowActionRecord {
            index,
            action_type: action.action_type.clone(),
            status: "success".to_owned(),
            input_count,
            output_count: input_count,
            result: Value::Null,
            error: None,
            attempts,
            started_at: iso(started),
            finished_at: iso(finished),
            duration_ms: clock_start.elapsed().as_millis() as i64,
            captured: None,
        };
        match outcome {
            Ok(o) if o.waits => {
                // The run ends here; a decision starts the next one.
                record.status = "waiting".to_owned();
                record.output_count = o.items.len();
                record.result = o.result;
                run.records.push(record);
                run.checkpoint.next += 1;
                return finish(state, owner, workflow, &mut run, None).await;
            }
            Ok(o) => {
                record.output_count = o.items.len();
                record.result = o.result.clone();
                record.captured = o.captured.clone();
                engine::apply(&mut run.checkpoint.working, o);
            }
            Err(f) => {
                if let Some(wait) =
                    retry_wait(action, run.checkpoint.attempt).filter(|_| f.retryable)
                {
                    if run.written < run.records.len()
                        && !checkpoint(state, owner, &mut run).await?
                    {
                        return Ok(());
                    }
                    run.checkpoint.attempt += 1;
                    let due = finished + wait.as_millis() as i64;
                    return wait_for_retry(state, owner, &run, due, &f).await;
                }
                record.status = "error".to_owned();
                record.error = Some(f.message.clone());
                record.result = json!({"error": f.message});
                // The cap's refusal stops the run whatever the action
                // allows: every later AI call would be refused too.
                if !action.continue_on_error || super::budget::spend::is_budget_stop(&f.message) {
                    run.records.push(record);
                    run.checkpoint.next += 1;
                    let msg = format!(
                        "action {index} ({}) failed: {}",
                        action.action_type, f.message
                    );
                    return finish(state, owner, workflow, &mut run, Some(msg)).await;
                }
                run.checkpoint.partial = true;
            }
        }
        run.checkpoint.next += 1;
        run.checkpoint.attempt = 0;
        run.records.push(record);
        // An action with no effect outside the run (a component without
        // network, merge_branches) is not checkpointed on its own: a
        // resumed run repeating it changes nothing, and its record and
        // event go with the next write (docs/decisions/workflows.md).
        if run.checkpoint.next < actions.len() && !has_effects(&state.plugins, &action.action_type)
        {
            continue;
        }
        if !checkpoint(state, owner, &mut run).await? {
            tracing::info!("lease lost; another server has the run");
            return Ok(());
        }
    }
    finish(state, owner, workflow, &mut run, None).await
}

/// The working set of a run that starts: the items it was given, or a
/// sample of the pool; with the pool's fields; through the conditions;
/// cut to `max_domains` (recorded).
async fn seed(
    state: &AppState,
    workflow: &WorkflowRow,
    trigger: &Value,
    cp: &mut Checkpoint,
    max_domains: i64,
    pool: &engine::PoolRecords,
) -> anyhow::Result<()> {
    let items = match &cp.input {
        Some(items) => engine::with_records(engine::items_from(items), pool),
        None => state
            .ext::<SharedPoolPort>()
            .sample(state, max_domains.max(0) as usize)
            .await?
            .into_iter()
            .map(Value::Object)
            .collect(),
    };
    let mut items: Vec<Value> = items
        .into_iter()
        .filter(|i| all_hold(&workflow.definition.conditions, i, trigger))
        .collect();
    if items.len() as i64 > max_domains {
        cp.truncated_from = Some(items.len() as i64);
        items.truncate(max_domains.max(0) as usize);
    }
    cp.working = Working {
        items,
        ..Working::default()
    };
    cp.seeded = true;
    Ok(())
}
