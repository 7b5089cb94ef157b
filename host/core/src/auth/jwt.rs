//! Dashboard session tokens: HS256 JWTs valid for 30 minutes, signed with a
//! key derived from the master key. Expiry is checked against the injected
//! clock rather than by the JWT library, so tests can move time.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::accounts::store as accounts_store;
use crate::error::ApiError;
use crate::http::auth::bearer;
use crate::state::AppState;

pub const SESSION_SECONDS: i64 = 30 * 60;
use crate::error::details::NOT_AUTHENTICATED;

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    acc: i64,
    iat: i64,
    exp: i64,
}

pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
}

impl JwtKeys {
    pub fn new(secret: &[u8]) -> JwtKeys {
        JwtKeys {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
        }
    }

    pub fn issue(&self, user_id: i64, account_id: i64, now_ms: i64) -> String {
        let iat = now_ms / 1000;
        let claims = Claims {
            sub: user_id.to_string(),
            acc: account_id,
            iat,
            exp: iat + SESSION_SECONDS,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .expect("HS256 encoding of plain claims cannot fail")
    }

    /// `(user_id, account_id)` of a valid, unexpired token.
    pub fn check(&self, token: &str, now_ms: i64) -> Option<(i64, i64)> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.validate_exp = false;
        validation.required_spec_claims.clear();
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation).ok()?;
        (data.claims.exp > now_ms / 1000)
            .then(|| data.claims.sub.parse().ok().map(|u| (u, data.claims.acc)))
            .flatten()
    }
}

/// A signed-in dashboard user.
#[derive(Debug, Clone)]
pub struct DashboardUser {
    pub user_id: i64,
    pub account_id: i64,
    pub email: String,
    pub role: String,
}

impl FromRequestParts<AppState> for DashboardUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = bearer(&parts.headers).ok_or(ApiError::Unauthorized(NOT_AUTHENTICATED))?;
        let (user_id, account_id) = state
            .jwt
            .check(token, state.clock.now_ms())
            .ok_or(ApiError::Unauthorized(NOT_AUTHENTICATED))?;
        let user = accounts_store::user_by_id(&state.db, user_id)
            .await?
            .filter(|u| u.account_id == account_id)
            .ok_or(ApiError::Unauthorized(NOT_AUTHENTICATED))?;
        let account = accounts_store::get_account(&state.db, account_id)
            .await?
            .ok_or(ApiError::Unauthorized(NOT_AUTHENTICATED))?;
        if account.status != "active" {
            return Err(ApiError::Forbidden);
        }
        Ok(DashboardUser {
            user_id,
            account_id,
            email: user.email,
            role: user.role,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_expire_after_thirty_minutes() {
        let keys = JwtKeys::new(&[9; 32]);
        let t0 = 1_800_000_000_000;
        let token = keys.issue(5, 7, t0);
        assert_eq!(keys.check(&token, t0 + 29 * 60_000), Some((5, 7)));
        assert_eq!(keys.check(&token, t0 + 30 * 60_000), None);
        assert_eq!(JwtKeys::new(&[8; 32]).check(&token, t0), None);
        assert_eq!(keys.check("garbage", t0), None);
    }
}
