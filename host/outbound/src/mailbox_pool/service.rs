//! Rules of spec/1 "Mailbox pool".

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::store;
use crate::send_accounts::service::{sent_today, today};
use crate::send_accounts::store as send_accounts;
use crate::sequences::service::owned;
use crate::sequences::store as sequences;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// Mailboxes one pool may hold.
pub const MAX_POOL: usize = 100;

#[derive(Debug, Serialize, ToSchema)]
pub struct MailboxPoolEntry {
    pub id: i64,
    pub send_account_id: i64,
    pub from_name: Option<String>,
    pub from_email: String,
    pub is_active: bool,
    /// Index in rotation order, from 0.
    pub position: i64,
    pub daily_limit: i64,
    pub sent_today: i64,
    pub last_used_at: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MailboxPool {
    pub sequence_id: i64,
    pub pool: Vec<MailboxPoolEntry>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMailboxPool {
    /// In rotation order; ids of other accounts are dropped; empty reverts
    /// to single-mailbox mode.
    pub send_account_ids: Vec<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MailboxPoolSize {
    pub sequence_id: i64,
    pub pool_size: usize,
}

pub async fn get(state: &AppState, caller: &Caller, sequence_id: i64) -> ApiResult<MailboxPool> {
    let sequence = owned(state, caller, sequence_id).await?;
    let day = today(state);
    let pool = store::list(&state.db, sequence.id)
        .await?
        .into_iter()
        .map(|r| MailboxPoolEntry {
            id: r.id,
            send_account_id: r.send_account_id,
            from_name: r.display_name,
            from_email: r.email,
            is_active: r.is_active,
            position: r.position,
            daily_limit: r.daily_send_limit,
            sent_today: sent_today(r.emails_sent_today, r.sent_day, day),
            last_used_at: r.last_used_at.map(iso),
        })
        .collect();
    Ok(MailboxPool { sequence_id, pool })
}

pub async fn set(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    body: SetMailboxPool,
) -> ApiResult<MailboxPoolSize> {
    crate::sequences::service::gate(caller)?;
    if body.send_account_ids.len() > MAX_POOL {
        return Err(ApiError::bad_request(format!(
            "send_account_ids may list at most {MAX_POOL} accounts"
        )));
    }
    let owned_ids =
        send_accounts::owned_ids(&state.db, caller.account_id, &body.send_account_ids).await?;
    let mut ids: Vec<i64> = Vec::new();
    for id in body.send_account_ids {
        if owned_ids.contains(&id) && !ids.contains(&id) {
            ids.push(id);
        }
    }
    let mut tx = state.db.pool.begin().await?;
    if !sequences::touch(
        &mut tx,
        caller.account_id,
        sequence_id,
        state.clock.now_ms(),
    )
    .await?
    {
        return Err(ApiError::not_found("Sequence"));
    }
    store::replace(&mut tx, caller.account_id, sequence_id, &ids).await?;
    tx.commit().await?;
    Ok(MailboxPoolSize {
        sequence_id,
        pool_size: ids.len(),
    })
}
