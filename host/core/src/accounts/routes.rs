//! `/v1/account` and `/v1/reseller/clients` handlers.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::plans::Plan;
use super::reseller::{self, ClientUpdate, NewClient, ResellerClientView};
use super::service::{self, AccountView, MemberView};
use crate::api_keys::KeyInfo;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::http::auth::Caller;
use crate::http::extract::{Json, Path};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_account))
        .routes(routes!(list_members, add_member))
        .routes(routes!(list_clients, create_client))
        .routes(routes!(update_client))
        .routes(routes!(create_client_key))
}

/// The caller's account.
#[utoipa::path(get, path = "/v1/account", tag = "account", security(("api_key" = [])),
    responses(
        (status = 200, description = "The account", body = AccountView),
        (status = 401, description = "Invalid API key", body = ErrorBody),
    ))]
async fn get_account(caller: Caller) -> Json<AccountView> {
    Json(service::account_view_of(&caller.key))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MemberList {
    pub members: Vec<MemberView>,
}

/// Organisation members (the users inbox threads can be assigned to).
#[utoipa::path(get, path = "/v1/account/members", tag = "account", security(("api_key" = [])),
    responses(
        (status = 200, description = "Members", body = MemberList),
        (status = 401, description = "Invalid API key", body = ErrorBody),
    ))]
async fn list_members(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<MemberList>> {
    Ok(Json(MemberList {
        members: service::members(&state, caller.account_id).await?,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMember {
    pub email: String,
    /// admin or member (default member)
    pub role: Option<String>,
    /// Optional dashboard password (8-128 characters); without one the
    /// member signs in after a password reset.
    pub password: Option<String>,
}

/// Adds a member to the organisation.
#[utoipa::path(post, path = "/v1/account/members", tag = "account", security(("api_key" = [])),
    request_body = NewMember,
    responses(
        (status = 201, description = "Member added", body = MemberView),
        (status = 400, description = "Invalid input", body = ErrorBody),
        (status = 409, description = "Email already registered", body = ErrorBody),
    ))]
async fn add_member(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewMember>,
) -> ApiResult<(StatusCode, Json<MemberView>)> {
    if caller.reseller_client_id.is_some() {
        return Err(ApiError::Forbidden);
    }
    let role = body.role.as_deref().unwrap_or("member");
    let member = service::add_member(
        &state,
        caller.account_id,
        &body.email,
        role,
        body.password.as_deref(),
    )
    .await?;
    Ok((StatusCode::CREATED, Json(member)))
}

/// Reseller management is for the reseller's own keys on Enterprise.
fn reseller_admin(caller: &Caller) -> ApiResult<()> {
    caller.require(Plan::Enterprise)?;
    if caller.reseller_client_id.is_some() {
        return Err(ApiError::Forbidden);
    }
    Ok(())
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ClientList {
    pub clients: Vec<ResellerClientView>,
}

/// Lists reseller clients (Enterprise).
#[utoipa::path(get, path = "/v1/reseller/clients", tag = "reseller", security(("api_key" = [])),
    responses(
        (status = 200, description = "Clients", body = ClientList),
        (status = 403, description = "Needs Enterprise", body = ErrorBody),
    ))]
async fn list_clients(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<ClientList>> {
    reseller_admin(&caller)?;
    Ok(Json(ClientList {
        clients: reseller::list_clients(&state, caller.account_id).await?,
    }))
}

/// Creates a reseller client with its monthly quota (Enterprise).
#[utoipa::path(post, path = "/v1/reseller/clients", tag = "reseller", security(("api_key" = [])),
    request_body = NewClient,
    responses(
        (status = 201, description = "Client created", body = ResellerClientView),
        (status = 400, description = "Invalid input", body = ErrorBody),
        (status = 403, description = "Needs Enterprise", body = ErrorBody),
    ))]
async fn create_client(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<NewClient>,
) -> ApiResult<(StatusCode, Json<ResellerClientView>)> {
    reseller_admin(&caller)?;
    let client = reseller::create_client(&state, caller.account_id, body).await?;
    Ok((StatusCode::CREATED, Json(client)))
}

/// Renames, re-allocates or disables a reseller client.
#[utoipa::path(patch, path = "/v1/reseller/clients/{client_id}", tag = "reseller",
    security(("api_key" = [])), params(("client_id" = i64, Path, description = "Client id")),
    request_body = ClientUpdate,
    responses(
        (status = 200, description = "Updated client", body = ResellerClientView),
        (status = 400, description = "Invalid input", body = ErrorBody),
        (status = 404, description = "No such client", body = ErrorBody),
    ))]
async fn update_client(
    State(state): State<AppState>,
    caller: Caller,
    Path(client_id): Path<i64>,
    Json(body): Json<ClientUpdate>,
) -> ApiResult<Json<ResellerClientView>> {
    reseller_admin(&caller)?;
    Ok(Json(
        reseller::update_client(&state, caller.account_id, client_id, body).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewClientKey {
    /// 1-100 characters.
    pub name: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedKey {
    /// The key itself; shown only in this response.
    pub api_key: String,
    pub key: KeyInfo,
}

/// Issues an API key for a reseller client; the key is shown once.
#[utoipa::path(post, path = "/v1/reseller/clients/{client_id}/keys", tag = "reseller",
    security(("api_key" = [])), params(("client_id" = i64, Path, description = "Client id")),
    request_body = NewClientKey,
    responses(
        (status = 201, description = "Key created", body = CreatedKey),
        (status = 404, description = "No such client", body = ErrorBody),
    ))]
async fn create_client_key(
    State(state): State<AppState>,
    caller: Caller,
    Path(client_id): Path<i64>,
    Json(body): Json<NewClientKey>,
) -> ApiResult<(StatusCode, Json<CreatedKey>)> {
    reseller_admin(&caller)?;
    let (key, api_key) =
        reseller::create_client_key(&state, caller.account_id, client_id, &body.name).await?;
    Ok((StatusCode::CREATED, Json(CreatedKey { api_key, key })))
}
