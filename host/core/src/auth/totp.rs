//! RFC 6238 time-based one-time passwords (SHA-1, 6 digits, 30-second steps,
//! one step of clock drift either way), via the totp-rs crate.

use totp_rs::{Algorithm, Secret, TOTP};

pub const DIGITS: usize = 6;
pub const STEP_SECONDS: u64 = 30;

fn totp(secret: &[u8], digits: usize) -> TOTP {
    // `new_unchecked` accepts seeds shorter than 128 bits, which the RFC's own
    // test seed is not, but which we never generate.
    TOTP::new_unchecked(Algorithm::SHA1, digits, 1, STEP_SECONDS, secret.to_vec())
}

/// A new random 160-bit secret, base32 encoded as authenticator apps expect.
pub fn generate_secret() -> String {
    Secret::generate_secret().to_encoded().to_string()
}

pub fn decode_secret(base32: &str) -> Option<Vec<u8>> {
    Secret::Encoded(base32.to_string()).to_bytes().ok()
}

/// The `otpauth://` URL an authenticator app scans.
pub fn otpauth_url(base32: &str, email: &str) -> String {
    format!(
        "otpauth://totp/Outreach:{}?secret={base32}&issuer=Outreach&algorithm=SHA1&digits={DIGITS}&period={STEP_SECONDS}",
        url::form_urlencoded::byte_serialize(email.as_bytes()).collect::<String>()
    )
}

pub fn code_at(secret: &[u8], unix_seconds: u64, digits: usize) -> String {
    totp(secret, digits).generate(unix_seconds)
}

/// The time step whose code equals `code`, looking one step back and ahead.
/// The caller must record the step so the code is accepted only once.
pub fn matching_step(secret: &[u8], code: &str, unix_seconds: u64) -> Option<i64> {
    let code = code.trim();
    if code.len() != DIGITS || !code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let now_step = (unix_seconds / STEP_SECONDS) as i64;
    (now_step - 1..=now_step + 1).find(|&step| {
        step >= 0 && {
            let expected = code_at(secret, step as u64 * STEP_SECONDS, DIGITS);
            expected.len() == code.len()
                && expected
                    .bytes()
                    .zip(code.bytes())
                    .fold(0u8, |a, (x, y)| a | (x ^ y))
                    == 0
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238 Appendix B, SHA-1 column.
    #[test]
    fn rfc6238_appendix_b_vectors() {
        let seed = b"12345678901234567890";
        assert_eq!(
            decode_secret("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ").unwrap(),
            seed
        );
        for (t, expected) in [
            (59u64, "94287082"),
            (1111111109, "07081804"),
            (1111111111, "14050471"),
            (1234567890, "89005924"),
            (2000000000, "69279037"),
            (20000000000, "65353130"),
        ] {
            assert_eq!(code_at(seed, t, 8), expected, "T={t}");
        }
    }

    #[test]
    fn codes_match_within_one_step_only() {
        let secret = decode_secret(&generate_secret()).unwrap();
        let t = 1_700_000_000;
        let code = code_at(&secret, t, DIGITS);
        let step = (t / STEP_SECONDS) as i64;
        assert_eq!(matching_step(&secret, &code, t), Some(step));
        assert_eq!(matching_step(&secret, &code, t + 30), Some(step));
        assert_eq!(matching_step(&secret, &code, t + 90), None);
        assert_eq!(matching_step(&secret, "12345", t), None);
        assert_eq!(matching_step(&secret, "abcdef", t), None);
    }
}
