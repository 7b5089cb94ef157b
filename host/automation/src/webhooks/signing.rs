//! The signature headers of a delivery (spec/2 "Events", delivery format),
//! and the Standard Webhooks headers beside them so receivers using the
//! standardwebhooks libraries verify us without custom code.
//!
//! One secret serves both: `X-Service-Signature` is keyed with the whole
//! secret string as given to the user (`whsec_...`), the way GitHub-style
//! verifiers take it; `webhook-signature` is keyed with the bytes the part
//! after `whsec_` decodes to, as the Standard Webhooks specification says.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// The prefix of every secret (Standard Webhooks' convention).
const SECRET_PREFIX: &str = "whsec_";

/// `User-Agent` of every delivery.
pub const USER_AGENT: &str = "Service-Webhook/1.0";

/// A new signing secret: 32 random bytes, base64, prefixed `whsec_`.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

fn hmac(key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    // HMAC takes keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts any key length");
    for part in parts {
        mac.update(part);
    }
    mac
}

/// `sha256=` and the lowercase hex HMAC-SHA256 of `body` keyed with `secret`.
pub fn service_signature(secret: &str, body: &[u8]) -> String {
    let tag = hmac(secret.as_bytes(), &[body]).finalize().into_bytes();
    format!("sha256={}", hex::encode(tag))
}

/// `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with
/// the secret's decoded bytes (Standard Webhooks). A secret that does not
/// decode (never one of ours) is used as raw bytes.
pub fn standard_signature(secret: &str, msg_id: &str, timestamp: i64, body: &[u8]) -> String {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    let key = STANDARD
        .decode(encoded)
        .unwrap_or_else(|_| secret.as_bytes().to_vec());
    let ts = timestamp.to_string();
    let tag = hmac(&key, &[msg_id.as_bytes(), b".", ts.as_bytes(), b".", body])
        .finalize()
        .into_bytes();
    format!("v1,{}", STANDARD.encode(tag))
}

/// Every header of one attempt. `timestamp` is the attempt's time in Unix
/// seconds (receivers reject stale Standard Webhooks timestamps, so each
/// retry is signed afresh); the delivery id is the same on every attempt.
pub fn delivery_headers(
    secret: &str,
    delivery_id: i64,
    event_type: &str,
    body: &[u8],
    timestamp: i64,
) -> Vec<(String, String)> {
    let id = delivery_id.to_string();
    vec![
        ("content-type".into(), "application/json".into()),
        ("user-agent".into(), USER_AGENT.into()),
        ("x-service-event".into(), event_type.into()),
        (
            "x-service-signature".into(),
            service_signature(secret, body),
        ),
        ("x-service-delivery-id".into(), id.clone()),
        ("x-service-delivery".into(), id.clone()),
        ("webhook-id".into(), id.clone()),
        ("webhook-timestamp".into(), timestamp.to_string()),
        (
            "webhook-signature".into(),
            standard_signature(secret, &id, timestamp, body),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_test_vector() {
        // From GitHub's "Validating webhook deliveries" (../shared/NOTES.md).
        assert_eq!(
            service_signature("It's a Secret to Everybody", b"Hello, World!"),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
    }

    #[test]
    fn standard_webhooks_test_vector() {
        // The example of the Standard Webhooks specification and its
        // reference libraries' tests.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            standard_signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn secrets_are_prefixed_32_random_bytes() {
        let a = new_secret();
        assert!(a.starts_with("whsec_"));
        assert_eq!(STANDARD.decode(&a[6..]).unwrap().len(), 32);
        assert_ne!(a, new_secret());
    }
}
