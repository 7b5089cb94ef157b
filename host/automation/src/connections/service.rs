//! The rules of spec/3 "Saved connection": the plan gate and the cap of
//! `[limits.<plan>] saved_connections` (20), the checks of each field, the
//! base URL against the outbound policy, header values sealed at rest
//! (each under its own associated data) and masked in every answer, and
//! the opened connection an `http_request` run merges in.

use std::collections::{BTreeMap, BTreeSet};

use outreach_core::accounts::Plan;
use outreach_core::accounts::plans::{Quota, ensure_quota_after_insert, quota_view};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::platform::outbound::MAX_URL_LEN;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;
use outreach_ssrf::{GuardError, GuardPolicy, Url, check_url, resolve_checked};

use super::model::*;
use super::store::{self, ConnectionRow, Fields};
use crate::workflows::http_action::check_header;

/// spec/3 "Saved connection".
pub const AUTH_TYPES: [&str; 4] = ["none", "bearer", "basic", "api_key"];

/// What every header value shows in an answer. A PUT that sends it back
/// for a header keeps that header's stored value, so a client may edit
/// the body it read without knowing the secrets.
pub const MASK: &str = "********";

pub const MAX_NAME_CHARS: usize = 200;
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
/// Headers a connection may hold, and the longest value: generous for
/// real APIs, small enough that a run's request stays small.
pub const MAX_HEADERS: usize = 50;
pub const MAX_HEADER_VALUE_CHARS: usize = 8192;

pub fn not_found() -> ApiError {
    ApiError::NotFound("Connection not found".to_owned())
}

/// Connections belong to workflows, which are Starter+ (spec/3).
fn gate(caller: &Caller) -> ApiResult<()> {
    caller.require(Plan::Starter)
}

fn bad(detail: impl Into<String>) -> ApiError {
    ApiError::bad_request(detail.into())
}

/// The associated data of one sealed header value: a value copied into
/// another row or under another name does not open.
fn header_aad(id: i64, name: &str) -> String {
    format!(
        "saved_connections:{id}:header:{}",
        name.to_ascii_lowercase()
    )
}

pub fn view(row: &ConnectionRow) -> SavedConnection {
    SavedConnection {
        id: row.id,
        name: row.name.clone(),
        base_url: row.base_url.clone(),
        headers: row
            .headers
            .keys()
            .map(|name| (name.clone(), MASK.to_owned()))
            .collect(),
        auth_type: row.auth_type.clone(),
        description: row.description.clone(),
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
    }
}

fn check_name(raw: &str) -> ApiResult<String> {
    let name = raw.trim();
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS {
        return Err(bad(format!("name must be 1-{MAX_NAME_CHARS} characters")));
    }
    Ok(name.to_owned())
}

fn check_description(raw: &str) -> ApiResult<String> {
    if raw.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(bad(format!(
            "description must be at most {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    Ok(raw.to_owned())
}

fn check_auth_type(raw: &str) -> ApiResult<String> {
    if AUTH_TYPES.contains(&raw) {
        Ok(raw.to_owned())
    } else {
        Err(bad(format!(
            "auth_type must be one of {} (got {raw:?})",
            AUTH_TYPES.join(", ")
        )))
    }
}

/// An http(s) URL without credentials or fragment whose address the
/// outbound policy admits: a literal address now, a name on the addresses
/// it resolves to (a name that does not resolve yet is accepted; every
/// call is checked again after DNS). Answers the URL as it will be used.
pub async fn check_base_url(policy: &GuardPolicy, raw: &str) -> ApiResult<String> {
    let raw = raw.trim();
    if raw.is_empty() || raw.len() > MAX_URL_LEN {
        return Err(bad(format!("base_url must be 1-{MAX_URL_LEN} characters")));
    }
    let url = Url::parse(raw).map_err(|e| bad(format!("base_url is not a valid URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(bad("base_url must be an http or https URL with a host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad(
            "base_url must not hold credentials; give them as headers, which are sealed at rest",
        ));
    }
    if url.fragment().is_some() {
        return Err(bad("base_url must not have a fragment"));
    }
    let refused = |e: GuardError| bad(format!("base_url refused: {e}"));
    match check_url(&url, policy) {
        Err(e @ GuardError::Blocked(_)) => return Err(refused(e)),
        Err(e) => return Err(bad(format!("base_url: {e}"))),
        Ok(()) => {}
    }
    if let Some(url::Host::Domain(host)) = url.host()
        && let Err(e @ GuardError::Blocked(_)) = resolve_checked(policy, host, 0).await
    {
        return Err(refused(e));
    }
    Ok(url.to_string())
}

/// The headers of a body, checked; a value of [`MASK`] takes the stored
/// value of the same name (case-insensitively) from `stored`.
fn check_headers(
    given: &BTreeMap<String, String>,
    stored: &BTreeMap<String, String>,
) -> ApiResult<BTreeMap<String, String>> {
    if given.len() > MAX_HEADERS {
        return Err(bad(format!("headers holds at most {MAX_HEADERS} headers")));
    }
    let mut seen = BTreeSet::new();
    let mut out = BTreeMap::new();
    for (name, value) in given {
        check_header(name, value, "headers").map_err(bad)?;
        if !seen.insert(name.to_ascii_lowercase()) {
            return Err(bad(format!(
                "headers: {name:?} is given twice (header names ignore case)"
            )));
        }
        let value = if value == MASK {
            stored
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
                .ok_or_else(|| {
                    bad(format!(
                        "headers.{name}: {MASK:?} stands for the stored value, and this \
                         connection stores no {name} header"
                    ))
                })?
        } else {
            value.clone()
        };
        if value.chars().count() > MAX_HEADER_VALUE_CHARS {
            return Err(bad(format!(
                "headers.{name}: must be at most {MAX_HEADER_VALUE_CHARS} characters"
            )));
        }
        out.insert(name.clone(), value);
    }
    Ok(out)
}

/// The credentials `auth_type` says: bearer and basic need an
/// `Authorization` header of that scheme, api_key needs some header to
/// carry the key; none takes any headers.
fn check_auth(auth_type: &str, headers: &BTreeMap<String, String>) -> ApiResult<()> {
    let authorization = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        .map(|(_, v)| v.trim());
    let has_scheme = |scheme: &str| {
        authorization.is_some_and(|v| {
            v.len() > scheme.len() + 1
                && v[..scheme.len()].eq_ignore_ascii_case(scheme)
                && v.as_bytes()[scheme.len()] == b' '
        })
    };
    match auth_type {
        "bearer" if !has_scheme("Bearer") => Err(bad(
            "auth_type bearer needs an Authorization header \"Bearer <token>\" in headers",
        )),
        "basic" if !has_scheme("Basic") => Err(bad(
            "auth_type basic needs an Authorization header \"Basic <base64 of user:password>\" in headers",
        )),
        "api_key" if headers.is_empty() => Err(bad(
            "auth_type api_key needs the key as a header value in headers, for example X-Api-Key",
        )),
        _ => Ok(()),
    }
}

fn seal(state: &AppState, id: i64, plain: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    plain
        .iter()
        .map(|(name, value)| {
            let sealed = state.secrets.encrypt(&header_aad(id, name), value);
            (name.clone(), sealed)
        })
        .collect()
}

fn open_headers(state: &AppState, row: &ConnectionRow) -> anyhow::Result<BTreeMap<String, String>> {
    row.headers
        .iter()
        .map(|(name, sealed)| {
            let plain = state.secrets.decrypt(&header_aad(row.id, name), sealed)?;
            Ok((name.clone(), plain))
        })
        .collect()
}

/// Commits a write and answers the connection as it now stands.
async fn commit_view(
    mut tx: sqlx::Transaction<'static, sqlx::Any>,
    account_id: i64,
    id: i64,
) -> ApiResult<SavedConnection> {
    let row = store::get(&mut tx, account_id, id)
        .await?
        .ok_or_else(not_found)?;
    tx.commit().await?;
    Ok(view(&row))
}

pub async fn list(state: &AppState, caller: &Caller) -> ApiResult<SavedConnectionList> {
    gate(caller)?;
    let rows = store::list(&state.db, caller.account_id).await?;
    let (limit, remaining) = quota_view(
        state.plan_limits(caller.plan),
        Quota::SavedConnections,
        rows.len() as u64,
    );
    Ok(SavedConnectionList {
        connections: rows.iter().map(view).collect(),
        count: rows.len(),
        limit,
        remaining,
    })
}

pub async fn get(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SavedConnection> {
    gate(caller)?;
    let mut conn = state.db.pool.acquire().await?;
    let row = store::get(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    Ok(view(&row))
}

pub async fn create(
    state: &AppState,
    caller: &Caller,
    input: SavedConnectionInput,
) -> ApiResult<SavedConnection> {
    gate(caller)?;
    let name = check_name(
        input
            .name
            .as_deref()
            .ok_or_else(|| bad("name is required"))?,
    )?;
    let base_url = input
        .base_url
        .as_deref()
        .ok_or_else(|| bad("base_url is required"))?;
    let base_url = check_base_url(&state.outbound, base_url).await?;
    let auth_type = check_auth_type(input.auth_type.as_deref().unwrap_or("none"))?;
    let description = check_description(input.description.as_deref().unwrap_or(""))?;
    let headers = check_headers(&input.headers.unwrap_or_default(), &BTreeMap::new())?;
    check_auth(&auth_type, &headers)?;
    let fields = Fields {
        name: &name,
        base_url: &base_url,
        auth_type: &auth_type,
        description: &description,
    };
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let id = store::insert(&mut tx, caller.account_id, &fields, state.clock.now_ms()).await?;
    ensure_quota_after_insert(
        &mut tx,
        caller.plan,
        state.plan_limits(caller.plan),
        (Quota::SavedConnections, "saved_connections"),
        caller.account_id,
    )
    .await?;
    store::set_headers(&mut tx, id, &seal(state, id, &headers)).await?;
    commit_view(tx, caller.account_id, id).await
}

pub async fn update(
    state: &AppState,
    caller: &Caller,
    id: i64,
    input: SavedConnectionInput,
) -> ApiResult<SavedConnection> {
    gate(caller)?;
    // The checks that need no stored row come first, outside the
    // transaction: the address check may wait on DNS.
    let name = input.name.as_deref().map(check_name).transpose()?;
    let base_url = match input.base_url.as_deref() {
        Some(u) => Some(check_base_url(&state.outbound, u).await?),
        None => None,
    };
    let auth_type = input
        .auth_type
        .as_deref()
        .map(check_auth_type)
        .transpose()?;
    let description = input
        .description
        .as_deref()
        .map(check_description)
        .transpose()?;
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    if !store::touch(&mut tx, caller.account_id, id, now).await? {
        return Err(not_found());
    }
    let row = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    let stored = open_headers(state, &row)?;
    let headers = match &input.headers {
        Some(given) => check_headers(given, &stored)?,
        None => stored,
    };
    let auth_type = auth_type.unwrap_or_else(|| row.auth_type.clone());
    check_auth(&auth_type, &headers)?;
    let fields = Fields {
        name: name.as_deref().unwrap_or(&row.name),
        base_url: base_url.as_deref().unwrap_or(&row.base_url),
        auth_type: &auth_type,
        description: description.as_deref().unwrap_or(&row.description),
    };
    store::update(&mut tx, caller.account_id, id, &fields, now).await?;
    store::set_headers(&mut tx, id, &seal(state, id, &headers)).await?;
    commit_view(tx, caller.account_id, id).await
}

/// Workflows naming the connection keep running: an action with an
/// absolute URL of its own runs on it, one without fails (see `apply`).
pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    gate(caller)?;
    let mut conn = state.db.pool.acquire().await?;
    if !store::delete(&mut conn, caller.account_id, id).await? {
        return Err(not_found());
    }
    Ok(())
}

/// A connection as a run uses it: the base URL and the opened headers.
pub struct Opened {
    pub id: i64,
    pub base_url: String,
    pub headers: BTreeMap<String, String>,
}

/// The account's connection `id` for a run; `None` when it does not exist
/// (deleted since the workflow was saved).
pub async fn open(state: &AppState, account_id: i64, id: i64) -> anyhow::Result<Option<Opened>> {
    let mut conn = state.db.pool.acquire().await?;
    let Some(row) = store::get(&mut conn, account_id, id).await? else {
        return Ok(None);
    };
    let headers = open_headers(state, &row)?;
    Ok(Some(Opened {
        id,
        base_url: row.base_url,
        headers,
    }))
}
