//! Reseller clients: sub-tenants of a reseller account with their own
//! monthly quota. Their keys (`<prefix>_r_<client_id>_...`) act for the
//! reseller's account but count against the client's quota, and a disabled
//! client's keys answer 403. Created on the CLI (`outreach resellers ...`) or
//! through `/v1/reseller/clients` by an Enterprise account.

use serde::{Deserialize, Serialize};
use sqlx::Row;
use utoipa::ToSchema;

use crate::api_keys::NewKey;
use crate::error::{ApiError, ApiResult};
use crate::http::extract::within;
use crate::platform::clock::iso;
use crate::state::AppState;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResellerClientView {
    pub id: i64,
    pub name: String,
    /// Requests per billing month allocated to this client.
    pub monthly_quota: i64,
    pub disabled: bool,
    pub created_at: String,
    #[serde(skip)]
    pub created_ms: i64,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewClient {
    /// 1-200 characters.
    pub name: String,
    /// 1-100,000,000 requests per month.
    pub monthly_quota: i64,
}

#[derive(Debug, Deserialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct ClientUpdate {
    pub name: Option<String>,
    pub monthly_quota: Option<i64>,
    pub disabled: Option<bool>,
}

fn check_name(name: &str) -> ApiResult<()> {
    let n = name.trim().chars().count();
    if n == 0 || n > 200 {
        return Err(ApiError::bad_request("name must be 1-200 characters"));
    }
    Ok(())
}

fn check_quota(q: i64) -> ApiResult<()> {
    within("monthly_quota", q, 1..=100_000_000).map(drop)
}

fn view(row: &sqlx::any::AnyRow) -> sqlx::Result<ResellerClientView> {
    let created: i64 = row.try_get("created_at")?;
    Ok(ResellerClientView {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        monthly_quota: row.try_get("monthly_quota")?,
        disabled: row.try_get::<i64, _>("disabled")? != 0,
        created_at: iso(created),
        created_ms: created,
    })
}

pub async fn create_client(
    state: &AppState,
    account_id: i64,
    new: NewClient,
) -> ApiResult<ResellerClientView> {
    check_name(&new.name)?;
    check_quota(new.monthly_quota)?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO reseller_clients (account_id, name, monthly_quota, created_at) \
         VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(account_id)
    .bind(new.name.trim())
    .bind(new.monthly_quota)
    .bind(state.clock.now_ms())
    .fetch_one(&state.db.pool)
    .await?;
    get_client(state, account_id, id).await
}

pub async fn list_clients(state: &AppState, account_id: i64) -> ApiResult<Vec<ResellerClientView>> {
    let rows = sqlx::query("SELECT * FROM reseller_clients WHERE account_id = $1 ORDER BY id")
        .bind(account_id)
        .fetch_all(&state.db.pool)
        .await?;
    Ok(rows.iter().map(view).collect::<sqlx::Result<_>>()?)
}

pub async fn get_client(
    state: &AppState,
    account_id: i64,
    client_id: i64,
) -> ApiResult<ResellerClientView> {
    let row = sqlx::query("SELECT * FROM reseller_clients WHERE account_id = $1 AND id = $2")
        .bind(account_id)
        .bind(client_id)
        .fetch_optional(&state.db.pool)
        .await?
        .ok_or_else(|| ApiError::not_found("reseller client"))?;
    Ok(view(&row)?)
}

pub async fn update_client(
    state: &AppState,
    account_id: i64,
    client_id: i64,
    update: ClientUpdate,
) -> ApiResult<ResellerClientView> {
    let current = get_client(state, account_id, client_id).await?;
    if let Some(name) = &update.name {
        check_name(name)?;
    }
    if let Some(q) = update.monthly_quota {
        check_quota(q)?;
    }
    sqlx::query(
        "UPDATE reseller_clients SET name = $1, monthly_quota = $2, disabled = $3 \
         WHERE account_id = $4 AND id = $5",
    )
    .bind(
        update
            .name
            .as_deref()
            .map(str::trim)
            .unwrap_or(&current.name),
    )
    .bind(update.monthly_quota.unwrap_or(current.monthly_quota))
    .bind(update.disabled.unwrap_or(current.disabled) as i64)
    .bind(account_id)
    .bind(client_id)
    .execute(&state.db.pool)
    .await?;
    state.keys.invalidate_all();
    get_client(state, account_id, client_id).await
}

/// Issues a key for a client; returned once, in clear.
pub async fn create_client_key(
    state: &AppState,
    account_id: i64,
    client_id: i64,
    name: &str,
) -> ApiResult<(crate::api_keys::KeyInfo, String)> {
    get_client(state, account_id, client_id).await?;
    state
        .keys
        .create(account_id, None, Some(client_id), NewKey::named(name))
        .await
}
