//! Password hashing with Argon2id (the argon2 crate's default parameters,
//! which follow the OWASP recommendation).

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

use crate::error::{ApiError, ApiResult};

pub const MIN_LEN: usize = 8;
pub const MAX_LEN: usize = 128;

pub fn check_policy(password: &str) -> ApiResult<()> {
    let n = password.chars().count();
    if !(MIN_LEN..=MAX_LEN).contains(&n) {
        return Err(ApiError::bad_request(format!(
            "password must be {MIN_LEN}-{MAX_LEN} characters"
        )));
    }
    Ok(())
}

pub fn hash(password: &str) -> ApiResult<String> {
    check_policy(password)?;
    let salt = SaltString::generate(&mut argon2::password_hash::rand_core::OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("hashing password: {e}")))
}

pub fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A fixed hash to verify against when the user does not exist, so a login
/// for an unknown address costs the same time as one with a wrong password.
pub fn dummy_verify(password: &str) {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let stored = DUMMY.get_or_init(|| hash("dummy-password-for-timing").unwrap_or_default());
    let _ = verify(password, stored);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_argon2id_and_verify() {
        let h = hash("correct horse battery").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify("correct horse battery", &h));
        assert!(!verify("wrong", &h));
        assert!(!verify("x", "not a hash"));
        assert!(hash("short").is_err());
    }
}
