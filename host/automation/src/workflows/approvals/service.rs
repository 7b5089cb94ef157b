//! Approvals (spec/3 "States and transitions", Approval row; "Events" 2):
//! the `wait_for_approval` action stores an approval and ends its run; the
//! first decision starts a new run at the action after the wait.

use rand::RngCore;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::notify;
use super::store::{self, ApprovalRow, NewApproval};
use crate::workflows::engine::{Failure, Outcome, RunEnv};
use crate::workflows::model::WorkflowApprovalDecision;
use crate::workflows::runs::{self, NewRun};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// spec/3 "Limits": approval expiry default.
pub const DEFAULT_EXPIRY_HOURS: f64 = 24.0;

/// The public page of `token`.
pub fn approval_url(state: &AppState, token: &str) -> String {
    format!(
        "{}/v1/workflows/approvals/{token}",
        state.config.public_base_url.trim_end_matches('/')
    )
}

/// Rows are found by the token's SHA-256, so the table alone cannot decide.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Associated data of a sealed value: bound to the waiting run and action,
/// so a sealed token copied to another row does not open.
pub fn sealed_as(run_id: i64, action_index: i64, what: &str) -> String {
    format!("workflow_approvals:{run_id}:{action_index}:{what}")
}

pub fn open_token(state: &AppState, row: &ApprovalRow) -> anyhow::Result<String> {
    state.secrets.decrypt(
        &sealed_as(row.run_id, row.action_index, "token"),
        &row.token_sealed,
    )
}

/// The `wait_for_approval` action at top-level position `index`: stores
/// the approval (once, even when a resumed run repeats the action), queues
/// its announcement in the same transaction, and answers an outcome that
/// ends the run with the action recorded as waiting.
pub async fn wait(env: &RunEnv<'_>, config: &Value, items: Vec<Value>) -> Result<Outcome, Failure> {
    let Some(index) = env.action_index else {
        return Err(Failure::fatal(
            "wait_for_approval must be a top-level action: a branch or an inlined workflow cannot wait",
        ));
    };
    let state = env.state;
    let index = index as i64;
    let now = state.clock.now_ms();
    let hours = config["expires_in_hours"]
        .as_f64()
        .unwrap_or(DEFAULT_EXPIRY_HOURS);
    let expires_at = now + (hours * 3_600_000.0).round() as i64;
    let message = config["message"].as_str().unwrap_or_default();
    let mut channels = Vec::new();
    let mut target = serde_json::Map::new();
    for (key, channel) in [("email", "email"), ("slack_url", "slack")] {
        if let Some(v) = config[key].as_str().filter(|v| !v.trim().is_empty()) {
            channels.push(channel);
            target.insert(key.to_owned(), Value::String(v.trim().to_owned()));
        }
    }
    if channels.is_empty() {
        return Err(Failure::fatal("wait_for_approval needs slack_url or email"));
    }
    let token = new_token();
    let token_sealed = state
        .secrets
        .encrypt(&sealed_as(env.run_id, index, "token"), &token);
    let target_sealed = state.secrets.encrypt(
        &sealed_as(env.run_id, index, "target"),
        &Value::Object(target).to_string(),
    );
    let stored = store_approval(
        state,
        &NewApproval {
            account_id: env.actor.account_id,
            workflow_id: env.workflow_id,
            run_id: env.run_id,
            action_index: index,
            token_hash: &token_hash(&token),
            token_sealed: &token_sealed,
            message,
            channels: &channels.join(","),
            target_sealed: &target_sealed,
            items: &items,
            expires_at,
            now,
        },
        &channels,
    )
    .await
    .map_err(|e| Failure::retry(format!("storing the approval: {e:#}")))?;
    let (approval_id, token, expires_at) = match stored {
        Stored::New(id) => (id, token, expires_at),
        Stored::Existing(row) => {
            let token = open_token(state, &row)
                .map_err(|_| Failure::fatal("the stored approval's link could not be opened"))?;
            (row.id, token, row.expires_at)
        }
    };
    let result = json!({
        "status": "waiting",
        "approval_id": approval_id,
        "approval_url": approval_url(state, &token),
        "expires_at": iso(expires_at),
        "channels": channels,
        "domains_waiting": items.len(),
    });
    Ok(Outcome {
        waits: true,
        ..Outcome::pass(items, result)
    })
}

enum Stored {
    New(i64),
    Existing(Box<ApprovalRow>),
}

async fn store_approval(
    state: &AppState,
    approval: &NewApproval<'_>,
    channels: &[&str],
) -> anyhow::Result<Stored> {
    // The INSERT is the transaction's first statement: SQLite takes its
    // write lock at once.
    let mut tx = state.db.pool.begin().await?;
    let stored = match store::insert(&mut tx, approval).await? {
        Some(id) => {
            notify::enqueue(&mut tx, state.db.backend, id, channels, approval.now).await?;
            Stored::New(id)
        }
        None => Stored::Existing(Box::new(
            store::by_run_action(&mut tx, approval.run_id, approval.action_index)
                .await?
                .ok_or_else(|| anyhow::anyhow!("the approval vanished"))?,
        )),
    };
    tx.commit().await?;
    Ok(stored)
}

fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("apr_{}", hex::encode(bytes))
}

/// Checks a decision's text.
pub fn parse_decision(raw: Option<&str>) -> ApiResult<&'static str> {
    match raw.map(str::trim) {
        Some("approved") => Ok("approved"),
        Some("rejected") => Ok("rejected"),
        Some(other) => Err(ApiError::bad_request(format!(
            "decision must be approved or rejected (got '{other}')"
        ))),
        None => Err(ApiError::bad_request(
            "decision is required: approved or rejected".to_owned(),
        )),
    }
}

/// The approval behind `token` (404 when unknown, or gone with its
/// workflow).
pub async fn find(state: &AppState, token: &str) -> ApiResult<ApprovalRow> {
    let mut conn = state.db.pool.acquire().await?;
    store::by_token_hash(&mut conn, &token_hash(token))
        .await?
        .ok_or_else(|| ApiError::not_found("Approval"))
}

/// Records the first decision and starts the new run in one transaction;
/// any later decision answers `already_decided`, one after expiry
/// `expired`.
pub async fn decide(
    state: &AppState,
    token: &str,
    decision: &'static str,
) -> ApiResult<WorkflowApprovalDecision> {
    let hash = token_hash(token);
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    if store::decide(&mut tx, &hash, decision, now).await? {
        let row = store::by_token_hash(&mut tx, &hash)
            .await?
            .ok_or_else(|| ApiError::not_found("Approval"))?;
        let run = NewRun {
            workflow_id: row.workflow_id,
            account_id: row.account_id,
            trigger_event: "approval_received".to_owned(),
            trigger_data: json!({
                "approval_decision": decision,
                "approval_id": row.id,
                "waiting_run_id": row.run_id,
                "message": row.message,
                "decided_at": iso(now),
            }),
            items: Some(row.items.clone()),
            due_at: now,
            rerun_of: None,
            resume_at: Some(row.action_index as usize + 1),
        };
        let run_id = runs::enqueue(&mut tx, &run, now).await?;
        store::set_decision_run(&mut tx, row.id, run_id).await?;
        tx.commit().await?;
        runs::wake(state);
        tracing::info!(approval_id = row.id, run_id, decision, "approval decided");
        return Ok(WorkflowApprovalDecision {
            status: decision.to_owned(),
            detail: None,
            workflow_id: row.workflow_id,
            decision: Some(decision.to_owned()),
            run_id: Some(run_id),
            decided_at: Some(iso(now)),
            expires_at: iso(row.expires_at),
        });
    }
    tx.rollback().await?;
    let row = find(state, token).await?;
    Ok(match &row.decision {
        Some(earlier) => WorkflowApprovalDecision {
            status: "already_decided".to_owned(),
            detail: Some(format!("This approval was already decided: {earlier}")),
            workflow_id: row.workflow_id,
            decision: Some(earlier.clone()),
            run_id: row.decision_run_id,
            decided_at: row.decided_at.map(iso),
            expires_at: iso(row.expires_at),
        },
        None => WorkflowApprovalDecision {
            status: "expired".to_owned(),
            detail: Some(format!("This approval expired at {}", iso(row.expires_at))),
            workflow_id: row.workflow_id,
            decision: None,
            run_id: None,
            decided_at: None,
            expires_at: iso(row.expires_at),
        },
    })
}
