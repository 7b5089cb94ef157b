//! Rules of dashboard sign-in.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::Row;

use super::{password, totp};
use crate::accounts::plans::Plan;
use crate::accounts::service::{CreatedAccount, create_account, normalize_email};
use crate::accounts::store as accounts_store;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

const RESET_TTL_MS: i64 = 60 * 60 * 1000;
const BAD_LOGIN: &str = "Invalid email or password";

/// Self-service registration creates a Free account owned by the new user.
pub async fn register(state: &AppState, email: &str, pass: &str) -> ApiResult<CreatedAccount> {
    password::check_policy(pass)?;
    create_account(state, email, Plan::Free, Some(pass)).await
}

/// Checks the password and, when enabled, the TOTP code; returns a JWT.
pub async fn login(
    state: &AppState,
    email: &str,
    pass: &str,
    code: Option<&str>,
) -> ApiResult<String> {
    let email = normalize_email(email).map_err(|_| ApiError::Unauthorized(BAD_LOGIN))?;
    let Some(user) = accounts_store::user_by_email(&state.db, &email).await? else {
        password::dummy_verify(pass);
        return Err(ApiError::Unauthorized(BAD_LOGIN));
    };
    let ok = user
        .password_hash
        .as_deref()
        .is_some_and(|h| password::verify(pass, h));
    if !ok {
        return Err(ApiError::Unauthorized(BAD_LOGIN));
    }
    if user.totp_enabled {
        let code = code.ok_or(ApiError::Unauthorized("Two-factor code required"))?;
        verify_totp(state, &user, code).await?;
    }
    let account = accounts_store::get_account(&state.db, user.account_id)
        .await?
        .ok_or(ApiError::Unauthorized(BAD_LOGIN))?;
    if account.status != "active" {
        return Err(ApiError::Forbidden);
    }
    Ok(state
        .jwt
        .issue(user.id, user.account_id, state.clock.now_ms()))
}

fn totp_aad(user_id: i64) -> String {
    format!("users:{user_id}:totp_secret")
}

/// Accepts a code once: the matched time step is recorded atomically.
async fn verify_totp(
    state: &AppState,
    user: &accounts_store::UserRow,
    code: &str,
) -> ApiResult<()> {
    const BAD_CODE: &str = "Invalid two-factor code";
    let sealed = user
        .totp_secret
        .as_deref()
        .ok_or(ApiError::Unauthorized(BAD_CODE))?;
    let secret = state.secrets.decrypt(&totp_aad(user.id), sealed)?;
    let secret = totp::decode_secret(&secret).ok_or(ApiError::Unauthorized(BAD_CODE))?;
    let now = (state.clock.now_ms() / 1000) as u64;
    let step = totp::matching_step(&secret, code, now).ok_or(ApiError::Unauthorized(BAD_CODE))?;
    if !accounts_store::consume_totp_step(&state.db, user.id, step).await? {
        return Err(ApiError::Unauthorized(BAD_CODE));
    }
    Ok(())
}

/// Starts enrolment: stores a new secret (not yet enforced) and returns it.
pub async fn totp_setup(
    state: &AppState,
    user_id: i64,
    email: &str,
) -> ApiResult<(String, String)> {
    let user = load_user(state, user_id).await?;
    if user.totp_enabled {
        return Err(ApiError::Conflict(
            "two-factor authentication is already enabled".into(),
        ));
    }
    let secret = totp::generate_secret();
    let sealed = state.secrets.encrypt(&totp_aad(user_id), &secret);
    accounts_store::set_totp(&state.db, user_id, Some(&sealed), false).await?;
    let url = totp::otpauth_url(&secret, email);
    Ok((secret, url))
}

/// Turns two-factor on once the user proves their app produces codes.
pub async fn totp_enable(state: &AppState, user_id: i64, code: &str) -> ApiResult<()> {
    let user = load_user(state, user_id).await?;
    if user.totp_secret.is_none() {
        return Err(ApiError::bad_request("call /auth/2fa/setup first"));
    }
    if user.totp_enabled {
        return Err(ApiError::Conflict(
            "two-factor authentication is already enabled".into(),
        ));
    }
    verify_totp(state, &user, code)
        .await
        .map_err(as_bad_request)?;
    sqlx::query("UPDATE users SET totp_enabled = $1 WHERE id = $2")
        .bind(1i64)
        .bind(user_id)
        .execute(&state.db.pool)
        .await?;
    Ok(())
}

pub async fn totp_disable(state: &AppState, user_id: i64, code: &str) -> ApiResult<()> {
    let user = load_user(state, user_id).await?;
    if !user.totp_enabled {
        return Err(ApiError::bad_request(
            "two-factor authentication is not enabled",
        ));
    }
    verify_totp(state, &user, code)
        .await
        .map_err(as_bad_request)?;
    accounts_store::set_totp(&state.db, user_id, None, false).await?;
    Ok(())
}

/// A wrong code while already signed in is bad input, not a failed sign-in.
fn as_bad_request(err: ApiError) -> ApiError {
    match err {
        ApiError::Unauthorized(detail) => ApiError::bad_request(detail),
        other => other,
    }
}

async fn load_user(state: &AppState, user_id: i64) -> ApiResult<accounts_store::UserRow> {
    accounts_store::user_by_id(&state.db, user_id)
        .await?
        .ok_or(ApiError::Unauthorized("Not authenticated"))
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Mails a reset link when the address is registered. The answer is the same
/// either way, so the endpoint does not reveal who has an account.
pub async fn forgot_password(state: &AppState, email: &str) -> ApiResult<()> {
    let Ok(email) = normalize_email(email) else {
        return Ok(());
    };
    let Some(user) = accounts_store::user_by_email(&state.db, &email).await? else {
        return Ok(());
    };
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    let token = URL_SAFE_NO_PAD.encode(raw);
    let now = state.clock.now_ms();
    sqlx::query(
        "INSERT INTO password_resets (user_id, token_hash, expires_at) VALUES ($1, $2, $3)",
    )
    .bind(user.id)
    .bind(token_hash(&token))
    .bind(now + RESET_TTL_MS)
    .execute(&state.db.pool)
    .await?;
    let link = format!(
        "{}/reset-password?token={token}",
        state.config.public_base_url.trim_end_matches('/')
    );
    let body = format!(
        "A password reset was requested for your Outreach account.\n\n\
         Reset token: {token}\nLink: {link}\n\nIt expires in one hour. If you did not ask for it, ignore this message."
    );
    if let Err(e) = state
        .mailer
        .send(&email, "Reset your Outreach password", &body)
        .await
    {
        tracing::error!(error = %e, "sending password reset mail failed");
    }
    Ok(())
}

/// Sets a new password with a single-use, unexpired reset token.
pub async fn reset_password(state: &AppState, token: &str, new_password: &str) -> ApiResult<()> {
    let hash = password::hash(new_password)?;
    let now = state.clock.now_ms();
    // Claiming the token and checking it in one statement makes it single-use
    // even under concurrent resets.
    let row = sqlx::query(
        "UPDATE password_resets SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL \
         AND expires_at > $1 RETURNING user_id",
    )
    .bind(now)
    .bind(token_hash(token))
    .fetch_optional(&state.db.pool)
    .await?
    .ok_or_else(|| ApiError::bad_request("invalid or expired reset token"))?;
    let user_id: i64 = row.try_get("user_id")?;
    accounts_store::set_password(&state.db, user_id, &hash).await?;
    Ok(())
}

/// Deletes password-reset tokens that have expired or been used; returns how many.
pub async fn prune_reset_tokens(state: &AppState) -> ApiResult<u64> {
    let done =
        sqlx::query("DELETE FROM password_resets WHERE expires_at <= $1 OR used_at IS NOT NULL")
            .bind(state.clock.now_ms())
            .execute(&state.db.pool)
            .await?;
    Ok(done.rows_affected())
}
