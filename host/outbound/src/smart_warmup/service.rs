//! Membership of the pool and its transitions (see the module docs), and
//! the mailbox provider of an address.

use serde::Serialize;
use utoipa::ToSchema;

use super::ramp::Plan;
use super::store::{self, Member, NewMember};
use super::writing::persona;
use crate::send_accounts::store::{self as send_accounts, SendAccountRow};
use crate::sequences::service::gate;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;

/// What a transition answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct SmartWarmupChange {
    /// The send account id (a string, as spec/3's ids of send accounts).
    pub account_id: String,
    /// active, paused, completed, failed; null once the account left the pool.
    pub warmup_status: Option<String>,
    /// The send account's status: warming, active or error.
    pub status: String,
    pub message: String,
}

/// The ramp plan of the operator's settings.
pub fn plan(state: &AppState) -> Plan {
    Plan::from_config(&state.config.smart_warmup)
}

/// The mailbox provider of an address from its domain's MX hosts: a short
/// id (`google`, `microsoft`, ...) or `other` (unknown, or no answer).
pub async fn provider_of(state: &AppState, email: &str) -> String {
    let Some(domain) = email.rsplit_once('@').map(|(_, d)| d) else {
        return "other".into();
    };
    // A slow resolver must not hold the request that joins the pool.
    let lookup =
        tokio::time::timeout(std::time::Duration::from_secs(3), state.dns.mx(domain)).await;
    let exchanges: Vec<String> = match lookup {
        Ok(Ok(mx)) => mx.into_iter().map(|m| m.exchange).collect(),
        _ => return "other".into(),
    };
    provider_of_exchanges(&exchanges)
}

/// Known MX host suffixes and their provider ids.
const PROVIDERS: &[(&str, &str)] = &[
    ("google.com", "google"),
    ("googlemail.com", "google"),
    ("outlook.com", "microsoft"),
    ("hotmail.com", "microsoft"),
    ("yahoodns.net", "yahoo"),
    ("zoho.com", "zoho"),
    ("zoho.eu", "zoho"),
    ("icloud.com", "icloud"),
    ("protonmail.ch", "proton"),
    ("mail.ru", "mailru"),
    ("yandex.net", "yandex"),
    ("secureserver.net", "godaddy"),
    ("emailsrvr.com", "rackspace"),
    ("fastmail.com", "fastmail"),
    ("messagingengine.com", "fastmail"),
];

pub fn provider_of_exchanges(exchanges: &[String]) -> String {
    exchanges
        .iter()
        .map(|e| e.trim_end_matches('.').to_ascii_lowercase())
        .find_map(|mx| {
            PROVIDERS
                .iter()
                .find(|(suffix, _)| mx == *suffix || mx.ends_with(&format!(".{suffix}")))
                .map(|(_, id)| (*id).to_owned())
        })
        .unwrap_or_else(|| "other".into())
}

/// The member to add for a send account joining the pool.
pub async fn new_member(state: &AppState, row: &SendAccountRow, send_account_id: i64) -> NewMember {
    NewMember {
        send_account_id,
        account_id: row.account_id,
        email: row.email.clone(),
        persona: persona(&row.email, row.display_name.as_deref()),
        provider: provider_of(state, &row.email).await,
        now: state.clock.now_ms(),
    }
}

async fn send_account(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SendAccountRow> {
    gate(caller)?;
    send_accounts::get(&state.db, caller.account_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("Send account"))
}

/// The member behind send account `id` of the caller, if it is one.
pub async fn member_of(
    state: &AppState,
    caller: &Caller,
    id: i64,
) -> ApiResult<(SendAccountRow, Option<Member>)> {
    let row = send_account(state, caller, id).await?;
    let member = store::get(&state.db, id).await?;
    Ok((row, member))
}

fn changed(id: i64, warmup_status: Option<&str>, status: &str, message: &str) -> SmartWarmupChange {
    SmartWarmupChange {
        account_id: id.to_string(),
        warmup_status: warmup_status.map(str::to_owned),
        status: status.to_owned(),
        message: message.to_owned(),
    }
}

/// `POST .../smart-warmup/start`: joins the pool with a new ramp.
pub async fn start(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SmartWarmupChange> {
    let (row, member) = member_of(state, caller, id).await?;
    if let Some(m) = member {
        return Err(ApiError::bad_request(format!(
            "Smart warmup is already started for this send account (status {}); use pause, \
             resume or stop",
            m.status
        )));
    }
    let new = new_member(state, &row, id).await;
    let mut tx = state.db.pool.begin().await?;
    if !store::insert_member(&mut tx, &new).await? {
        return Err(ApiError::bad_request(
            "Smart warmup is already started for this send account",
        ));
    }
    tx.commit().await?;
    Ok(changed(
        id,
        Some("active"),
        "warming",
        "Joined the smart warmup pool",
    ))
}

/// `POST .../smart-warmup/pause`: an active member stops sending and
/// receiving pool mail; its ramp stands still until it resumes.
pub async fn pause(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SmartWarmupChange> {
    let (_, member) = member_of(state, caller, id).await?;
    match member.as_ref().map(|m| m.status.as_str()) {
        Some("active") => {}
        _ => {
            return Err(ApiError::bad_request(
                "Smart warmup is not active for this send account",
            ));
        }
    }
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    pause_in(&mut tx, id, None, now).await?;
    tx.commit().await?;
    Ok(changed(
        id,
        Some("paused"),
        "warming",
        "Smart warmup paused",
    ))
}

/// Pauses an active member (by its owner, or after a hard bounce with the
/// reason kept as `last_error`).
pub async fn pause_in(
    conn: &mut sqlx::AnyConnection,
    id: i64,
    reason: Option<&str>,
    now: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE smart_warmup_members SET status = 'paused', paused_at = $1,
             last_error = COALESCE($2, last_error), updated_at = $1
         WHERE send_account_id = $3 AND status = 'active'",
    )
    .bind(now)
    .bind(reason)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// `POST .../smart-warmup/resume`: a paused or failed member is active
/// again, its ramp shifted by the time it stood still (a failed member's
/// failure counts start over).
pub async fn resume(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SmartWarmupChange> {
    let (_, member) = member_of(state, caller, id).await?;
    let Some(m) = member else {
        return Err(ApiError::bad_request(
            "Smart warmup was never started for this send account",
        ));
    };
    match m.status.as_str() {
        "active" => {
            return Ok(changed(
                id,
                Some("active"),
                "warming",
                "Smart warmup is already active",
            ));
        }
        "completed" => {
            return Err(ApiError::bad_request(
                "Smart warmup is completed for this send account; stop it and start again for a new ramp",
            ));
        }
        _ => {}
    }
    let now = state.clock.now_ms();
    let stood = now - m.paused_at.unwrap_or(now);
    let mut tx = state.db.pool.begin().await?;
    sqlx::query(
        "UPDATE smart_warmup_members SET status = 'active', paused_at = NULL,
             ramp_origin = ramp_origin + $1, smtp_failures = 0, imap_failures = 0,
             last_error = NULL, next_send_at = $2, next_scan_at = $2, updated_at = $2
         WHERE send_account_id = $3",
    )
    .bind(stood)
    .bind(now)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    store::set_send_account(&mut tx, id, "warming", true, None, now).await?;
    tx.commit().await?;
    Ok(changed(
        id,
        Some("active"),
        "warming",
        "Smart warmup resumed",
    ))
}

/// `POST .../smart-warmup/stop`: leaves the pool. What the account sent
/// and received stays in the pool's figures.
pub async fn stop(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SmartWarmupChange> {
    let (_, member) = member_of(state, caller, id).await?;
    if member.is_none() {
        return Err(ApiError::bad_request(
            "Smart warmup is not started for this send account",
        ));
    }
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    sqlx::query("DELETE FROM smart_warmup_members WHERE send_account_id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    // Answers the account owed are not sent any more.
    sqlx::query(
        "UPDATE smart_warmup_messages SET reply_due_at = NULL
         WHERE recipient_id = $1 AND replied_at IS NULL",
    )
    .bind(id)
    .execute(&mut *tx)
    .await?;
    store::set_send_account(&mut tx, id, "active", false, None, now).await?;
    tx.commit().await?;
    Ok(changed(id, None, "active", "Left the smart warmup pool"))
}

/// Ends a member's warmup: `completed` (the target held) or `failed`
/// (repeated authentication failures, `error` kept as `last_error`).
pub async fn finish(state: &AppState, id: i64, failed: Option<&str>) -> sqlx::Result<()> {
    let now = state.clock.now_ms();
    let (status, account_status) = match failed {
        Some(_) => ("failed", "error"),
        None => ("completed", "active"),
    };
    let mut tx = state.db.pool.begin().await?;
    let done = sqlx::query(
        "UPDATE smart_warmup_members SET status = $1, paused_at = $2,
             completed_at = CASE WHEN $1 = 'completed' THEN $2 ELSE completed_at END,
             last_error = COALESCE($3, last_error), updated_at = $2
         WHERE send_account_id = $4 AND status = 'active'",
    )
    .bind(status)
    .bind(now)
    .bind(failed)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 1 {
        let progress = (failed.is_none()).then_some(100.0);
        store::set_send_account(&mut tx, id, account_status, failed.is_some(), progress, now)
            .await?;
        if let Some(error) = failed {
            sqlx::query("UPDATE send_accounts SET last_error = $1 WHERE id = $2")
                .bind(error)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod unit {
    #[test]
    fn providers_are_read_from_mx_hosts() {
        let p = |hosts: &[&str]| {
            super::provider_of_exchanges(&hosts.iter().map(|h| h.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(p(&["aspmx.l.google.com."]), "google");
        assert_eq!(p(&["acme-test.mail.protection.outlook.com"]), "microsoft");
        assert_eq!(p(&["mx.acme.test", "alt.aspmx.l.google.com"]), "google");
        assert_eq!(p(&["mx.acme.test"]), "other");
        assert_eq!(p(&[]), "other");
    }
}
