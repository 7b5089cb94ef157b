//! `/auth/*` handlers. Sign-in routes are limited per client IP (spec/1
//! "Limits" rule 4); the rest need a dashboard JWT.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::jwt::DashboardUser;
use super::service;
use crate::accounts::routes::CreatedKey;
use crate::accounts::{Quota, ensure_quota};
use crate::api_keys::{KeyInfo, NewKey};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::http::client_ip::client_ip;
use crate::http::extract::{Json, Path};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(login))
        .routes(routes!(forgot_password))
        .routes(routes!(reset_password))
        .routes(routes!(me))
        .routes(routes!(totp_setup))
        .routes(routes!(totp_enable))
        .routes(routes!(totp_disable))
        .routes(routes!(list_keys, create_key))
        .routes(routes!(revoke_key))
}

/// Which per-IP limit a sign-in route falls under.
#[derive(Clone, Copy)]
enum IpLimit {
    Login,
    Register,
    Forgot,
    Reset,
}

fn check_ip_limit(state: &AppState, req_ip: std::net::IpAddr, which: IpLimit) -> ApiResult<()> {
    let (limiter, name, limit) = match which {
        IpLimit::Login => (&state.limits.per_minute, "login", 10),
        IpLimit::Register => (&state.limits.per_minute, "register", 5),
        IpLimit::Forgot => (&state.limits.per_five_minutes, "forgot", 3),
        IpLimit::Reset => (&state.limits.per_five_minutes, "reset", 5),
    };
    let d = limiter.check(&format!("auth:{name}:{req_ip}"), limit);
    if d.allowed {
        Ok(())
    } else {
        Err(ApiError::RateLimited {
            retry_after: d.retry_after_secs,
        })
    }
}

/// Limits by IP, then parses the JSON body (so floods of malformed bodies are
/// limited too).
async fn limited_body<T: serde::de::DeserializeOwned>(
    state: &AppState,
    req: Request,
    which: IpLimit,
) -> ApiResult<T> {
    let ip = client_ip(&req, &state.trusted_proxies);
    check_ip_limit(state, ip, which)?;
    use axum::extract::FromRequest;
    let Json(body) = Json::<T>::from_request(req, state).await?;
    Ok(body)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    pub email: String,
    /// 8-128 characters.
    pub password: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Registered {
    pub account_id: i64,
    pub user_id: i64,
    pub email: String,
    pub plan: String,
}

/// Creates a Free account and its owner. 5 per IP per minute.
#[utoipa::path(post, path = "/auth/register", tag = "auth", request_body = Credentials,
    responses(
        (status = 201, description = "Account created", body = Registered),
        (status = 400, description = "Invalid email or password", body = ErrorBody),
        (status = 409, description = "Email already registered", body = ErrorBody),
        (status = 429, description = "Too many attempts from this IP", body = ErrorBody),
    ))]
async fn register(
    State(state): State<AppState>,
    req: Request,
) -> ApiResult<(StatusCode, Json<Registered>)> {
    let body: Credentials = limited_body(&state, req, IpLimit::Register).await?;
    let created = service::register(&state, &body.email, &body.password).await?;
    Ok((
        StatusCode::CREATED,
        Json(Registered {
            account_id: created.account_id,
            user_id: created.user_id,
            email: body.email.trim().to_lowercase(),
            plan: "free".into(),
        }),
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Login {
    pub email: String,
    pub password: String,
    /// The current TOTP code, required once two-factor is enabled.
    pub totp_code: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Token {
    pub access_token: String,
    /// Always `bearer`.
    pub token_type: String,
}

/// Signs in; the token is valid for 30 minutes. 10 per IP per minute.
#[utoipa::path(post, path = "/auth/login", tag = "auth", request_body = Login,
    responses(
        (status = 200, description = "Signed in", body = Token),
        (status = 401, description = "Wrong credentials or two-factor code", body = ErrorBody),
        (status = 429, description = "Too many attempts from this IP", body = ErrorBody),
    ))]
async fn login(State(state): State<AppState>, req: Request) -> ApiResult<Json<Token>> {
    let body: Login = limited_body(&state, req, IpLimit::Login).await?;
    let access_token = service::login(
        &state,
        &body.email,
        &body.password,
        body.totp_code.as_deref(),
    )
    .await?;
    Ok(Json(Token {
        access_token,
        token_type: "bearer".into(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgotPassword {
    pub email: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Message {
    pub message: String,
}

/// Mails a reset token when the address is registered. 3 per IP per 5 minutes.
#[utoipa::path(post, path = "/auth/forgot-password", tag = "auth", request_body = ForgotPassword,
    responses(
        (status = 200, description = "Same answer whether or not the address exists", body = Message),
        (status = 429, description = "Too many attempts from this IP", body = ErrorBody),
    ))]
async fn forgot_password(State(state): State<AppState>, req: Request) -> ApiResult<Json<Message>> {
    let body: ForgotPassword = limited_body(&state, req, IpLimit::Forgot).await?;
    service::forgot_password(&state, &body.email).await?;
    Ok(Json(Message {
        message: "If the address is registered, a reset link has been sent.".into(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetPassword {
    pub token: String,
    /// 8-128 characters.
    pub new_password: String,
}

/// Sets a new password with a reset token (single use, one hour). 5 per IP per 5 minutes.
#[utoipa::path(post, path = "/auth/reset-password", tag = "auth", request_body = ResetPassword,
    responses(
        (status = 200, description = "Password changed", body = Message),
        (status = 400, description = "Invalid or expired token, or weak password", body = ErrorBody),
        (status = 429, description = "Too many attempts from this IP", body = ErrorBody),
    ))]
async fn reset_password(State(state): State<AppState>, req: Request) -> ApiResult<Json<Message>> {
    let body: ResetPassword = limited_body(&state, req, IpLimit::Reset).await?;
    service::reset_password(&state, &body.token, &body.new_password).await?;
    Ok(Json(Message {
        message: "Password updated".into(),
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    pub user_id: i64,
    pub account_id: i64,
    pub email: String,
    pub role: String,
}

/// The signed-in user.
#[utoipa::path(get, path = "/auth/me", tag = "auth", security(("dashboard_jwt" = [])),
    responses(
        (status = 200, description = "The user", body = Me),
        (status = 401, description = "Not authenticated", body = ErrorBody),
    ))]
async fn me(user: DashboardUser) -> Json<Me> {
    Json(Me {
        user_id: user.user_id,
        account_id: user.account_id,
        email: user.email,
        role: user.role,
    })
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TotpSetup {
    /// Base32 secret for manual entry.
    pub secret: String,
    /// `otpauth://` URL for QR codes.
    pub otpauth_url: String,
}

/// Starts two-factor enrolment; confirm with `/auth/2fa/enable`.
#[utoipa::path(post, path = "/auth/2fa/setup", tag = "auth", security(("dashboard_jwt" = [])),
    responses(
        (status = 200, description = "New secret", body = TotpSetup),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 409, description = "Already enabled", body = ErrorBody),
    ))]
async fn totp_setup(
    State(state): State<AppState>,
    user: DashboardUser,
) -> ApiResult<Json<TotpSetup>> {
    let (secret, otpauth_url) = service::totp_setup(&state, user.user_id, &user.email).await?;
    Ok(Json(TotpSetup {
        secret,
        otpauth_url,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TotpCode {
    /// The 6-digit code shown by the authenticator app.
    pub code: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TotpState {
    pub two_factor_enabled: bool,
}

/// Enables two-factor after checking a code from the new secret.
#[utoipa::path(post, path = "/auth/2fa/enable", tag = "auth", security(("dashboard_jwt" = [])),
    request_body = TotpCode,
    responses(
        (status = 200, description = "Enabled", body = TotpState),
        (status = 400, description = "Wrong code or no setup", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
    ))]
async fn totp_enable(
    State(state): State<AppState>,
    user: DashboardUser,
    Json(body): Json<TotpCode>,
) -> ApiResult<Json<TotpState>> {
    service::totp_enable(&state, user.user_id, &body.code).await?;
    Ok(Json(TotpState {
        two_factor_enabled: true,
    }))
}

/// Disables two-factor; needs a current code.
#[utoipa::path(post, path = "/auth/2fa/disable", tag = "auth", security(("dashboard_jwt" = [])),
    request_body = TotpCode,
    responses(
        (status = 200, description = "Disabled", body = TotpState),
        (status = 400, description = "Wrong code or not enabled", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
    ))]
async fn totp_disable(
    State(state): State<AppState>,
    user: DashboardUser,
    Json(body): Json<TotpCode>,
) -> ApiResult<Json<TotpState>> {
    service::totp_disable(&state, user.user_id, &body.code).await?;
    Ok(Json(TotpState {
        two_factor_enabled: false,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeyList {
    pub keys: Vec<KeyInfo>,
}

/// The account's API keys (never the keys themselves).
#[utoipa::path(get, path = "/auth/api-keys", tag = "auth", security(("dashboard_jwt" = [])),
    responses(
        (status = 200, description = "Keys", body = KeyList),
        (status = 401, description = "Not authenticated", body = ErrorBody),
    ))]
async fn list_keys(State(state): State<AppState>, user: DashboardUser) -> ApiResult<Json<KeyList>> {
    Ok(Json(KeyList {
        keys: state.keys.list(user.account_id).await?,
    }))
}

/// Creates a named API key, optionally restricted to IPs/CIDRs and endpoint
/// groups. The key is in this response only.
#[utoipa::path(post, path = "/auth/api-keys", tag = "auth", security(("dashboard_jwt" = [])),
    request_body = NewKey,
    responses(
        (status = 201, description = "Key created", body = CreatedKey),
        (status = 400, description = "Invalid name or restrictions, or key limit reached", body = ErrorBody),
        (status = 401, description = "Not authenticated", body = ErrorBody),
    ))]
async fn create_key(
    State(state): State<AppState>,
    user: DashboardUser,
    Json(body): Json<NewKey>,
) -> ApiResult<(StatusCode, Json<CreatedKey>)> {
    let account = crate::accounts::service::account_view(&state, user.account_id).await?;
    ensure_quota(
        account.plan,
        state.plan_limits(account.plan),
        Quota::ApiKeys,
        state.keys.count_active(user.account_id).await?,
    )?;
    let (key, api_key) = state
        .keys
        .create(user.account_id, Some(user.user_id), None, body)
        .await?;
    Ok((StatusCode::CREATED, Json(CreatedKey { api_key, key })))
}

/// Revokes one key; it stops working at once.
#[utoipa::path(delete, path = "/auth/api-keys/{key_id}", tag = "auth", security(("dashboard_jwt" = [])),
    params(("key_id" = i64, Path, description = "Key id")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 401, description = "Not authenticated", body = ErrorBody),
        (status = 404, description = "No such key", body = ErrorBody),
    ))]
async fn revoke_key(
    State(state): State<AppState>,
    user: DashboardUser,
    Path(key_id): Path<i64>,
) -> ApiResult<StatusCode> {
    state.keys.revoke(user.account_id, key_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
