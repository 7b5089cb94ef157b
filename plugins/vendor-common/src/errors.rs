//! Failure classification shared by the adapters.
//!
//! The host's fallback chain moves to the next vendor only on `transient`
//! and `rate-limited`, so the classes matter more than the messages:
//! an exhausted credit balance is a quota (rate-limited: the next vendor can
//! still answer), a rejected key is `auth`, and a vendor that does not know a
//! domain is `permanent` with a message starting with `not found`, which the
//! host recognises and does not cache.

use outreach_plugin_sdk::http::Response;
use outreach_plugin_sdk::types::{PluginError, RateLimit};
use serde_json::Value;

/// The prefix the host relies on to answer "not found" without caching.
pub const NOT_FOUND_PREFIX: &str = "not found";

/// The error for a domain the vendor has no record of.
pub fn not_found(vendor: &str, domain: &str) -> PluginError {
    PluginError::Permanent(format!(
        "{NOT_FOUND_PREFIX}: {vendor} has no company record for {domain}"
    ))
}

/// A quota or throttle answer without a documented wait.
pub fn quota(message: String) -> PluginError {
    PluginError::RateLimited(RateLimit {
        retry_after_ms: None,
        message,
    })
}

/// Classifies an HTTP status like the SDK's `Response::check`, plus 402
/// (Payment Required), which Bouncer and People Data Labs use for an
/// exhausted credit balance: a quota, so fallback moves on.
pub fn check_status(resp: Response) -> Result<Response, PluginError> {
    if resp.status == 402 {
        let snippet: String = resp.text().chars().take(300).collect();
        return Err(quota(format!(
            "vendor answered HTTP 402 (credits exhausted): {snippet}"
        )));
    }
    resp.check()
}

/// Parses a 2xx body that must be a JSON object; anything else (HTML from a
/// proxy, a bare string, truncated JSON) is a permanent error, never a panic.
pub fn json_object(resp: &Response) -> Result<Value, PluginError> {
    let v: Value = resp.json()?;
    if v.is_object() {
        Ok(v)
    } else {
        Err(PluginError::Permanent(format!(
            "vendor answered HTTP {} with JSON that is not an object",
            resp.status
        )))
    }
}

/// The human-readable error text of a vendor body, from the fields the
/// vendors use for it (`message`, `error` as text or as `{message}`, Hunter's
/// `errors[0].details`).
pub fn error_message(v: &Value) -> Option<String> {
    let candidates = [
        &v["message"],
        &v["error"],
        &v["error"]["message"],
        &v["errors"][0]["details"],
        &v["errors"][0]["message"],
    ];
    candidates.into_iter().find_map(|c| {
        c.as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    })
}

/// Classifies the error text of a vendor that answers HTTP 200 with an error
/// body (MillionVerifier, ZeroBounce, Kickbox). Credit and limit wording is
/// checked first: ZeroBounce's "Invalid API key or your account ran out of
/// credits" is, for a key that passed validation when it was saved, almost
/// always the balance, and treating it as a quota lets fallback move on.
pub fn classify_message(vendor: &str, message: &str) -> PluginError {
    let m = message.to_ascii_lowercase();
    let text = format!("{vendor}: {message}");
    let has = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if has(&["credit", "balance", "quota", "limit", "throttl", "too many"]) {
        quota(text)
    } else if has(&[
        "api key",
        "apikey",
        "api_key",
        "unauthori",
        "forbidden",
        "authenticat",
        "not allowed",
    ]) {
        PluginError::Auth(text)
    } else if has(&[
        "temporar",
        "unavailable",
        "try again",
        "timeout",
        "timed out",
    ]) {
        PluginError::Transient(text)
    } else if has(&["email", "domain", "parameter", "invalid"]) {
        PluginError::InvalidInput(text)
    } else {
        PluginError::Permanent(text)
    }
}

/// A credits count, which vendors send as a number or a numeric string.
pub fn credits(v: &Value) -> Option<i64> {
    crate::fields::integer(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use outreach_plugin_sdk::testing::json_response;

    #[test]
    fn statuses_and_bodies() {
        assert!(matches!(
            check_status(json_response(402, "{}")),
            Err(PluginError::RateLimited(_))
        ));
        assert!(matches!(
            check_status(json_response(401, "{}")),
            Err(PluginError::Auth(_))
        ));
        assert!(matches!(
            check_status(json_response(503, "{}")),
            Err(PluginError::Transient(_))
        ));
        assert!(matches!(
            json_object(&json_response(200, "<html>")),
            Err(PluginError::Permanent(_))
        ));
        assert!(matches!(
            json_object(&json_response(200, "[1]")),
            Err(PluginError::Permanent(_))
        ));
        assert!(json_object(&json_response(200, r#"{"a":1}"#)).is_ok());
    }

    #[test]
    fn messages() {
        let v: Value = serde_json::from_str(
            r#"{"errors":[{"id":"x","details":"No user found for the API key supplied"}]}"#,
        )
        .unwrap();
        assert_eq!(
            error_message(&v).as_deref(),
            Some("No user found for the API key supplied")
        );
        assert!(matches!(
            classify_message("mv", "Apikey not found"),
            PluginError::Auth(_)
        ));
        assert!(matches!(
            classify_message("mv", "Insufficient credits"),
            PluginError::RateLimited(_)
        ));
        assert!(matches!(
            classify_message("zb", "Invalid API key or your account ran out of credits"),
            PluginError::RateLimited(_)
        ));
        assert!(matches!(
            classify_message("x", "Invalid email"),
            PluginError::InvalidInput(_)
        ));
        assert!(matches!(
            classify_message("x", "weird"),
            PluginError::Permanent(_)
        ));
        match not_found("hunter", "nobody.test") {
            PluginError::Permanent(m) => assert!(m.starts_with("not found")),
            other => panic!("{other:?}"),
        }
    }
}
