//! Where runs come from (spec/3 "Events" 3): manual execution, the public
//! incoming webhook, the schedule, and the outbox events the webhooks
//! fan-out hands over (docs/decisions/workflows.md, "Triggers").

use serde_json::{Value, json};
use sqlx::{AnyConnection, Row};

use super::model::*;
use super::run_writer;
use super::runs::{self, NewRun};
use super::service::{self, not_found};
use super::store;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::events::{EventType, OutboxEvent};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;
use outreach_core::store::id_list;

/// `POST /v1/workflows/{id}/execute`: queues a run now, seeded by a pool
/// sample (the manual trigger has no domains of its own); `activate`
/// also makes the workflow active.
pub async fn execute(
    state: &AppState,
    caller: &Caller,
    id: i64,
    activate: bool,
) -> ApiResult<WorkflowRunQueued> {
    caller.require(outreach_core::accounts::Plan::Starter)?;
    let now = state.clock.now_ms();
    // Read before the transaction, whose first statement then writes (on
    // SQLite a read lock cannot always be upgraded while another process
    // writes).
    let row = {
        let mut conn = state.db.pool.acquire().await?;
        store::get(&mut conn, caller.account_id, id)
            .await?
            .ok_or_else(not_found)?
    };
    super::placeholders::refuse_unfilled(
        &row.definition,
        if activate { "activate" } else { "run" },
    )?;
    let mut tx = state.db.pool.begin().await?;
    if activate && !row.definition.is_active {
        store::set_active(&mut tx, id, true).await?;
    }
    let run = NewRun {
        workflow_id: id,
        account_id: caller.account_id,
        trigger_event: "manual".to_owned(),
        trigger_data: json!({"activate": activate}),
        items: None,
        due_at: now,
        rerun_of: None,
        resume_at: None,
    };
    let run_id = runs::enqueue(&mut tx, &run, now).await?;
    tx.commit().await?;
    runs::wake(state);
    Ok(WorkflowRunQueued {
        run_id,
        status: "queued".to_owned(),
    })
}

/// `POST /v1/workflows/incoming/{token}`: public; the token is the secret.
pub async fn incoming(
    state: &AppState,
    token: &str,
    body: Value,
) -> ApiResult<WorkflowWebhookAccepted> {
    let row = store::by_token(&state.db, token)
        .await?
        .filter(|r| r.definition.trigger_type == "webhook")
        .ok_or_else(not_found)?;
    state
        .limit_per_minute(
            "workflow_incoming",
            &row.id.to_string(),
            state.config.workflow_webhook_calls_per_minute,
        )
        .await?;
    if !row.definition.is_active {
        return Err(ApiError::Conflict(
            "Workflow is paused: activate it to accept incoming calls".to_owned(),
        ));
    }
    let items = match body.get("domains") {
        None | Some(Value::Null) => None,
        Some(Value::Array(list)) => Some(list.clone()),
        Some(_) => {
            return Err(ApiError::bad_request(
                "domains must be an array of strings or of objects with a domain".to_owned(),
            ));
        }
    };
    let now = state.clock.now_ms();
    let run = NewRun {
        workflow_id: row.id,
        account_id: row.account_id,
        trigger_event: "webhook".to_owned(),
        trigger_data: body,
        items,
        due_at: now,
        rerun_of: None,
        resume_at: None,
    };
    // Through the run writer: a busy webhook's runs commit together.
    let run_id = run_writer::enqueue(state, run, now).await?;
    runs::wake(state);
    Ok(WorkflowWebhookAccepted {
        status: "accepted".to_owned(),
        workflow_id: row.id,
        run_id,
        run_status: "queued".to_owned(),
    })
}

/// The trigger an outbox event can start, and whether it names a target.
fn trigger_of(event: EventType) -> Option<&'static str> {
    match event {
        EventType::SearchAlert => Some("intent_alert"),
        EventType::AudienceUpdated => Some("audience_match"),
        EventType::WatchlistChange => Some("watchlist_change"),
        EventType::DomainEnriched => Some("new_domain"),
        EventType::KeywordMatch => Some("tracked_keyword_match"),
        _ => None,
    }
}

/// The event's target id and its domains as items, or `None` when the
/// event starts nothing (a `domain.enriched` of a record the pool held).
fn target_and_items(event: &OutboxEvent) -> Option<(Option<i64>, Vec<Value>)> {
    let d = &event.data;
    let id = |k: &str| d.get(k).and_then(Value::as_i64);
    match event.event_type {
        EventType::SearchAlert => Some((
            id("alert_id"),
            d["matched_domains"].as_array().cloned().unwrap_or_default(),
        )),
        EventType::AudienceUpdated => Some((
            id("audience_id"),
            d["new_domains"].as_array().cloned().unwrap_or_default(),
        )),
        EventType::WatchlistChange => Some((
            id("watchlist_id"),
            vec![json!({"domain": d["domain"], "changes": d["changes"]})],
        )),
        EventType::DomainEnriched if d["new_to_pool"].as_bool() == Some(true) => {
            Some((None, vec![json!({"domain": d["domain"]})]))
        }
        EventType::KeywordMatch => Some((
            id("keyword_id"),
            vec![json!({"domain": d["domain"], "keyword": d["keyword"], "excerpt": d["excerpt"]})],
        )),
        _ => None,
    }
}

/// Queues a run of every active workflow an event triggers, on the
/// fan-out's transaction (so an event starts its runs exactly once).
pub async fn from_events(
    conn: &mut AnyConnection,
    batch: &[OutboxEvent],
    now: i64,
) -> sqlx::Result<usize> {
    let mut accounts: Vec<i64> = batch
        .iter()
        .filter(|e| trigger_of(e.event_type).is_some())
        .map(|e| e.account_id)
        .collect();
    if accounts.is_empty() {
        return Ok(0);
    }
    accounts.sort_unstable();
    accounts.dedup();
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT id, account_id, trigger_type, trigger_target FROM workflows WHERE is_active = 1 \
         AND trigger_type IN ('intent_alert', 'audience_match', 'watchlist_change', 'new_domain', \
         'tracked_keyword_match') AND account_id IN ({})",
        id_list(&accounts)
    )))
    .fetch_all(&mut *conn)
    .await?;
    let mut queued = 0;
    for event in batch {
        let Some(trigger) = trigger_of(event.event_type) else {
            continue;
        };
        let Some((target, items)) = target_and_items(event) else {
            continue;
        };
        if items.is_empty() {
            continue;
        }
        for row in &rows {
            let account: i64 = row.try_get("account_id")?;
            let kind: String = row.try_get("trigger_type")?;
            let wanted: Option<i64> = row.try_get("trigger_target")?;
            // A workflow without a target (watchlist, keywords) takes any
            // of the account's events of its kind.
            if account != event.account_id
                || kind != trigger
                || (wanted.is_some() && wanted != target)
            {
                continue;
            }
            let run = NewRun {
                workflow_id: row.try_get("id")?,
                account_id: account,
                trigger_event: event.event_type.as_str().to_owned(),
                trigger_data: json!({"event": event.event_type.as_str(), "event_id": event.id, "data": event.data}),
                items: Some(items.clone()),
                due_at: now,
                rerun_of: None,
                resume_at: None,
            };
            runs::enqueue(conn, &run, now).await?;
            queued += 1;
        }
    }
    Ok(queued)
}

/// The scheduler's pass: every active schedule workflow whose due time
/// has come gets one run, and its next due time. Each firing is one
/// transaction whose first statement moves `next_due_at` only if no other
/// server did (a compare-and-set), so a due time fires once across
/// servers; starting with that write also lets SQLite wait for another
/// process's write instead of failing a read lock's upgrade.
pub async fn fire_schedules(state: &AppState) -> anyhow::Result<usize> {
    let now = state.clock.now_ms();
    let due = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM workflows WHERE next_due_at <= $1 AND is_active = 1 \
         AND trigger_type = 'schedule' ORDER BY next_due_at LIMIT 100",
        store::COLUMNS
    )))
    .bind(now)
    .fetch_all(&state.db.pool)
    .await?;
    let mut fired = 0;
    for row in &due {
        let row = store::workflow_row(row)?;
        let due_at = row.next_due_at.unwrap_or(now);
        let next = service::next_due(&row.definition, now);
        let mut tx = state.db.pool.begin().await?;
        let moved = sqlx::query(
            "UPDATE workflows SET next_due_at = $1 WHERE id = $2 AND next_due_at = $3 \
             AND is_active = 1",
        )
        .bind(next)
        .bind(row.id)
        .bind(due_at)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 1 {
            let run = NewRun {
                workflow_id: row.id,
                account_id: row.account_id,
                trigger_event: "schedule".to_owned(),
                trigger_data: json!({"due_at": outreach_core::platform::clock::iso(due_at)}),
                items: None,
                due_at: now,
                rerun_of: None,
                resume_at: None,
            };
            runs::enqueue(&mut tx, &run, now).await?;
            fired += 1;
        }
        tx.commit().await?;
    }
    Ok(fired)
}

/// The scheduler `serve` starts: a pass every 10 seconds.
pub fn start_scheduler(state: &AppState) {
    let state = state.clone();
    tokio::spawn(async move {
        loop {
            match fire_schedules(&state).await {
                Ok(n) if n > 0 => runs::wake(&state),
                Ok(_) => {}
                Err(e) => tracing::warn!("workflow schedules: {e:#}"),
            }
            tokio::time::sleep(std::time::Duration::from_secs(10)).await;
        }
    });
}
