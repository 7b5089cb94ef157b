//! The OAuth 2.0 connection to the spreadsheet service: authorization code
//! with PKCE (RFC 7636) through the `oauth2` crate, whose HTTP goes through
//! the guarded client with the provider's deadline.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use oauth2::basic::{BasicClient, BasicErrorResponseType};
use oauth2::http::{HeaderValue, Response};
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet, EndpointSet,
    HttpRequest, HttpResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken,
    RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::Sheets;
use super::store::{self, Connection};
use outreach_core::error::details::SHEETS_NOT_CONNECTED;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;
use outreach_ssrf::{GuardError, GuardedRequest, Method, Url};

/// The scope asked for: files this application creates, nothing else of
/// the user's Drive.
pub const SCOPE: &str = "https://www.googleapis.com/auth/drive.file";
/// How long an authorisation may take (issue 33: 10 minutes).
pub const STATE_TTL_MS: i64 = 10 * 60_000;
/// An access token this close to its expiry is refreshed first.
const REFRESH_MARGIN_MS: i64 = 60_000;

type Client = BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// `GET /v1/sheets/connect`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConnectAnswer {
    /// Where to send the user's browser; good for 10 minutes.
    pub authorization_url: String,
}

/// `GET /v1/sheets/status`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SheetsStatus {
    /// connected, broken (the provider refused a refresh: connect again)
    /// or not_connected.
    pub status: String,
    pub connected_at: Option<String>,
}

/// The redirect URI the operator registers with the provider.
pub fn redirect_uri(state: &AppState) -> String {
    format!(
        "{}/v1/sheets/oauth/callback",
        state.config.public_base_url.trim_end_matches('/')
    )
}

fn client(state: &AppState) -> ApiResult<Client> {
    let c = &state.config.sheets;
    if c.client_id.is_empty() {
        return Err(ApiError::bad_request(
            "The spreadsheet export is not configured on this server (the operator sets [sheets] client_id)",
        ));
    }
    fn bad(what: &'static str) -> impl Fn(oauth2::url::ParseError) -> ApiError {
        move |e| ApiError::Internal(anyhow::anyhow!("sheets.{what}: {e}"))
    }
    Ok(BasicClient::new(ClientId::new(c.client_id.clone()))
        .set_client_secret(ClientSecret::new(c.client_secret.clone()))
        .set_auth_uri(AuthUrl::new(c.authorization_url.clone()).map_err(bad("authorization_url"))?)
        .set_token_uri(TokenUrl::new(c.token_url.clone()).map_err(bad("token_url"))?)
        .set_redirect_uri(RedirectUrl::new(redirect_uri(state)).map_err(bad("public_base_url"))?))
}

/// The `oauth2` crate's requests, sent by the guarded client.
async fn send(sheets: Sheets, request: HttpRequest) -> Result<HttpResponse, GuardError> {
    let url = Url::parse(&request.uri().to_string())
        .map_err(|e| GuardError::InvalidUrl(e.to_string()))?;
    let method = Method::from_bytes(request.method().as_str().as_bytes())
        .map_err(|e| GuardError::InvalidRequest(e.to_string()))?;
    let mut out = GuardedRequest::new(method, url);
    out.timeout = Some(sheets.timeout());
    for (name, value) in request.headers() {
        out.headers.push((
            name.as_str().to_owned(),
            value.to_str().unwrap_or_default().to_owned(),
        ));
    }
    out.body = Some(request.into_body());
    let got = sheets.http.send(out).await?;
    let mut response = Response::builder().status(got.status);
    for (name, value) in &got.headers {
        if let Ok(v) = HeaderValue::from_str(value) {
            response = response.header(name.as_str(), v);
        }
    }
    response
        .body(got.body)
        .map_err(|e| GuardError::Transport(e.to_string()))
}

/// The SHA-256 of a state parameter, as stored.
fn state_hash(state: &str) -> String {
    hex::encode(Sha256::digest(state.as_bytes()))
}

fn verifier_aad(hash: &str) -> String {
    format!("sheets:state:{hash}:verifier")
}

/// The associated data sealing an account's `access` or `refresh` token.
pub fn token_aad(account_id: i64, which: &str) -> String {
    format!("sheets:{account_id}:{which}")
}

/// `GET /v1/sheets/connect`: a fresh authorisation URL whose state names
/// the account.
pub async fn connect(state: &AppState, account_id: i64) -> ApiResult<ConnectAnswer> {
    let client = client(state)?;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    // 32 random bytes, as the crate's own state token is.
    let csrf = CsrfToken::new_random_len(32);
    let (url, csrf) = client
        .authorize_url(|| csrf)
        .add_scope(Scope::new(SCOPE.into()))
        .set_pkce_challenge(challenge)
        // A refresh token, and a fresh one when an account connects again.
        .add_extra_param("access_type", "offline")
        .add_extra_param("prompt", "consent")
        .url();
    let hash = state_hash(csrf.secret());
    let sealed = state
        .secrets
        .encrypt(&verifier_aad(&hash), verifier.secret());
    let now = state.clock.now_ms();
    store::insert_state(
        &state.db,
        &hash,
        account_id,
        &sealed,
        now + STATE_TTL_MS,
        now,
    )
    .await?;
    Ok(ConnectAnswer {
        authorization_url: url.to_string(),
    })
}

/// Why a callback did not connect: 400 with `{detail}`.
fn refused(detail: impl Into<String>) -> ApiError {
    ApiError::BadRequest(detail.into())
}

/// `GET /v1/sheets/oauth/callback`: consumes the state, exchanges the code
/// and stores the tokens sealed. Answers the connected account's id.
pub async fn callback(
    state: &AppState,
    code: Option<&str>,
    csrf: Option<&str>,
    error: Option<&str>,
) -> ApiResult<i64> {
    let client = client(state)?;
    let csrf = csrf
        .filter(|s| !s.is_empty())
        .ok_or_else(|| refused("Missing state"))?;
    let hash = state_hash(csrf);
    let now = state.clock.now_ms();
    let mut conn = state.db.pool.acquire().await?;
    let (account_id, sealed, expires_at) =
        store::take_state(&mut conn, &hash).await?.ok_or_else(|| {
            refused("Invalid or expired state: start again from GET /v1/sheets/connect")
        })?;
    if expires_at <= now {
        return Err(refused(
            "Invalid or expired state: start again from GET /v1/sheets/connect",
        ));
    }
    if let Some(error) = error {
        return Err(refused(format!(
            "Authorization was not granted: {}",
            error.chars().take(100).collect::<String>()
        )));
    }
    let code = code
        .filter(|c| !c.is_empty())
        .ok_or_else(|| refused("Missing code"))?;
    let verifier = state
        .secrets
        .decrypt(&verifier_aad(&hash), &sealed)
        .map_err(ApiError::Internal)?;
    let sheets = state.ext::<Sheets>().clone();
    let http = move |r| send(sheets.clone(), r);
    let token = client
        .exchange_code(AuthorizationCode::new(code.to_owned()))
        .set_pkce_verifier(PkceCodeVerifier::new(verifier))
        .request_async(&http)
        .await
        .map_err(|e| match e {
            RequestTokenError::ServerResponse(r) => {
                refused(format!("The provider refused the code: {}", r.error()))
            }
            other => google_error(&other.to_string()),
        })?;
    let connection = Connection {
        account_id,
        access_token: state.secrets.encrypt(
            &token_aad(account_id, "access"),
            token.access_token().secret(),
        ),
        refresh_token: token.refresh_token().map(|r| {
            state
                .secrets
                .encrypt(&token_aad(account_id, "refresh"), r.secret())
        }),
        expires_at: token.expires_in().map(|d| now + d.as_millis() as i64),
        status: "connected".into(),
        connected_at: now,
    };
    let mut tx = state.db.pool.begin().await?;
    store::connect(&mut tx, &connection, now).await?;
    tx.commit().await?;
    Ok(account_id)
}

/// spec/2's 500 'Google API error: <text>' with the provider's text.
pub fn google_error(text: &str) -> ApiError {
    ApiError::ServiceError(format!("Google API error: {text}"))
}

/// `GET /v1/sheets/status`.
pub async fn status(state: &AppState, account_id: i64) -> ApiResult<SheetsStatus> {
    Ok(match store::connection(&state.db, account_id).await? {
        Some(c) => SheetsStatus {
            status: c.status,
            connected_at: Some(iso(c.connected_at)),
        },
        None => SheetsStatus {
            status: "not_connected".into(),
            connected_at: None,
        },
    })
}

/// `DELETE /v1/sheets/connect`: revokes the grant at the provider (the
/// refresh token, else the access token), then forgets it. A token the
/// provider no longer knows counts as revoked; a provider that cannot be
/// reached is a 500 and the connection stays, so the user can try again.
pub async fn disconnect(state: &AppState, account_id: i64) -> ApiResult<()> {
    let Some(c) = store::connection(&state.db, account_id).await? else {
        return Err(ApiError::BadRequest(SHEETS_NOT_CONNECTED.into()));
    };
    let (token, hint) = match &c.refresh_token {
        Some(sealed) => (open(state, account_id, "refresh", sealed)?, "refresh_token"),
        None => (
            open(state, account_id, "access", &c.access_token)?,
            "access_token",
        ),
    };
    revoke(state, &token, hint).await?;
    store::forget(&state.db, account_id).await?;
    Ok(())
}

/// An RFC 7009 revocation request, made here rather than by the `oauth2`
/// crate: the crate refuses a revocation URL that is not HTTPS, which the
/// tests' provider stub on loopback is. The same rule holds here except
/// for loopback under `unsafe_outbound_allow_loopback`.
async fn revoke(state: &AppState, token: &str, hint: &str) -> ApiResult<()> {
    let c = &state.config.sheets;
    let url = Url::parse(&c.revocation_url)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("sheets.revocation_url: {e}")))?;
    let loopback = url
        .host_str()
        .is_some_and(|h| h == "127.0.0.1" || h == "localhost");
    if url.scheme() != "https" && !(loopback && state.outbound.allow_loopback) {
        return Err(ApiError::Internal(anyhow::anyhow!(
            "sheets.revocation_url must use HTTPS"
        )));
    }
    let body = oauth2::url::form_urlencoded::Serializer::new(String::new())
        .append_pair("token", token)
        .append_pair("token_type_hint", hint)
        .finish();
    let credentials = format!("{}:{}", c.client_id, c.client_secret);
    let sheets = state.ext::<Sheets>();
    let mut request = GuardedRequest::new(Method::POST, url);
    request.timeout = Some(sheets.timeout());
    request.headers = vec![
        (
            "content-type".into(),
            "application/x-www-form-urlencoded".into(),
        ),
        (
            "authorization".into(),
            format!("Basic {}", STANDARD.encode(credentials)),
        ),
    ];
    request.body = Some(body.into_bytes());
    match sheets.http.send(request).await {
        // 400 (`invalid_token` and the like): the grant is gone already.
        Ok(r) if r.status < 500 => Ok(()),
        Ok(r) => Err(google_error(&format!(
            "revocation answered HTTP {}",
            r.status
        ))),
        Err(e) => Err(google_error(&e.to_string())),
    }
}

fn open(state: &AppState, account_id: i64, which: &str, sealed: &str) -> ApiResult<String> {
    state
        .secrets
        .decrypt(&token_aad(account_id, which), sealed)
        .map_err(ApiError::Internal)
}

/// A usable access token for the account: the stored one, or a refreshed
/// one when it expires within a minute or `force` (the API answered 401).
/// 400 'Google Sheets not connected' without a connection, with a broken
/// one, and when the provider refuses the refresh (which breaks it).
pub async fn access_token(state: &AppState, account_id: i64, force: bool) -> ApiResult<String> {
    let not_connected = || ApiError::BadRequest(SHEETS_NOT_CONNECTED.into());
    let c = store::connection(&state.db, account_id)
        .await?
        .filter(|c| c.status == "connected")
        .ok_or_else(not_connected)?;
    let now = state.clock.now_ms();
    let fresh = c.expires_at.is_none_or(|at| at - REFRESH_MARGIN_MS > now);
    if fresh && !force {
        return open(state, account_id, "access", &c.access_token);
    }
    let Some(sealed) = &c.refresh_token else {
        store::mark_broken(&state.db, account_id, now).await?;
        return Err(not_connected());
    };
    let refresh = RefreshToken::new(open(state, account_id, "refresh", sealed)?);
    let client = client(state)?;
    let sheets = state.ext::<Sheets>().clone();
    let http = move |r| send(sheets.clone(), r);
    let token = match client
        .exchange_refresh_token(&refresh)
        .request_async(&http)
        .await
    {
        Ok(t) => t,
        Err(RequestTokenError::ServerResponse(r))
            if matches!(
                r.error(),
                BasicErrorResponseType::InvalidGrant | BasicErrorResponseType::InvalidClient
            ) =>
        {
            store::mark_broken(&state.db, account_id, now).await?;
            return Err(not_connected());
        }
        Err(e) => return Err(google_error(&e.to_string())),
    };
    let access = token.access_token().secret().clone();
    let sealed_access = state
        .secrets
        .encrypt(&token_aad(account_id, "access"), &access);
    let sealed_refresh = token.refresh_token().map(|r| {
        state
            .secrets
            .encrypt(&token_aad(account_id, "refresh"), r.secret())
    });
    let expires_at = token.expires_in().map(|d| now + d.as_millis() as i64);
    store::refreshed(
        &state.db,
        account_id,
        &sealed_access,
        sealed_refresh.as_deref(),
        expires_at,
        now,
    )
    .await?;
    Ok(access)
}
