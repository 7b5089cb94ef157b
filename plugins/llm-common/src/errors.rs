//! Classification of vendor answers into the plugin error taxonomy, and the
//! retry hints vendors document for rate limits.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;

/// What differs between vendors when classifying an answer.
#[derive(Clone, Copy, Debug)]
pub struct VendorErrors {
    /// Display name used at the start of error messages.
    pub name: &'static str,
    /// Statuses besides 401 and 403 that mean the key was rejected (Cohere
    /// documents 498 for an invalid token).
    pub extra_auth_statuses: &'static [u16],
}

/// Longest vendor error text kept in a message; enough to name the cause
/// without copying a whole HTML error page into logs.
const MAX_DETAIL: usize = 300;

/// Classifies a vendor answer: the JSON body of a 2xx answer, or the error
/// the fallback chain needs.
pub fn classify(
    resp: &Response,
    api_key: &str,
    vendor: &VendorErrors,
) -> Result<Value, PluginError> {
    let status = resp.status;
    let body: Option<Value> = serde_json::from_slice(&resp.body).ok();
    let detail = redact(&error_detail(body.as_ref(), resp), api_key);
    let name = vendor.name;
    if (200..300).contains(&status) {
        return match body {
            // Some gateways answer 200 with an error object; retrying the
            // same vendor will not fix it and the fallback chain must not
            // take it for a completion.
            Some(v) if is_error_body(&v) => Err(PluginError::Permanent(format!(
                "{name} answered HTTP {status} with an error: {detail}"
            ))),
            Some(v) if v.is_object() => Ok(v),
            _ => Err(PluginError::Permanent(format!(
                "{name} answered HTTP {status} with a body that is not a JSON object: {detail}"
            ))),
        };
    }
    let message = format!("{name} answered HTTP {status}: {detail}");
    Err(match status {
        429 => PluginError::RateLimited(RateLimit {
            retry_after_ms: retry_after_ms(resp, body.as_ref()),
            message,
        }),
        401 | 403 => PluginError::Auth(message),
        s if vendor.extra_auth_statuses.contains(&s) => PluginError::Auth(message),
        400 if body.as_ref().is_some_and(key_rejected) => PluginError::Auth(message),
        408 | 500..=599 => PluginError::Transient(message),
        400..=499 => PluginError::InvalidInput(message),
        _ => PluginError::Permanent(message),
    })
}

/// An error object where a completion was expected: `{"error": ...}` (the
/// OpenAI, Gemini and gateway shape) or `{"type": "error"}` (Anthropic).
fn is_error_body(v: &Value) -> bool {
    !v["error"].is_null() || v["type"] == "error"
}

/// Gemini answers 400 INVALID_ARGUMENT with reason API_KEY_INVALID for a bad
/// key, which is an auth error for the fallback chain, not a bad request.
fn key_rejected(v: &Value) -> bool {
    let e = &v["error"];
    e["status"] == "UNAUTHENTICATED"
        || e["details"]
            .as_array()
            .is_some_and(|d| d.iter().any(|x| x["reason"] == "API_KEY_INVALID"))
}

/// The most useful human-readable text of an error answer, with the vendor's
/// error code first when it has one.
fn error_detail(body: Option<&Value>, resp: &Response) -> String {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    };
    let detail = body.and_then(|b| {
        let e = &b["error"];
        let msg = text(&e["message"])
            .or_else(|| e.as_str().map(str::to_string))
            .or_else(|| text(&b["message"]))
            .or_else(|| text(&b["detail"]))?;
        let code = [&e["code"], &e["type"], &e["status"]]
            .into_iter()
            .find_map(|c| c.as_str().map(str::to_string));
        Some(match code {
            Some(c) if !c.is_empty() => format!("{c}: {msg}"),
            _ => msg,
        })
    });
    let detail = detail.unwrap_or_else(|| resp.text());
    detail.chars().take(MAX_DETAIL).collect()
}

fn redact(text: &str, api_key: &str) -> String {
    if api_key.len() < 4 {
        text.to_string()
    } else {
        text.replace(api_key, "[redacted]")
    }
}

/// The wait a rate-limited answer asks for, in milliseconds, from (in order)
/// `retry-after-ms`, `Retry-After` in seconds, the `x-ratelimit-reset-*`
/// headers of OpenAI and Groq (the exhausted dimension when the matching
/// `x-ratelimit-remaining-*` is 0), and Google's `RetryInfo.retryDelay` in
/// the error details.
pub fn retry_after_ms(resp: &Response, body: Option<&Value>) -> Option<u64> {
    if let Some(ms) = resp
        .header("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return finite_ms(ms);
    }
    // An HTTP-date Retry-After fails to parse and falls through to the other
    // hints: the guest has no reliable clock to subtract it from.
    if let Some(s) = resp
        .header("retry-after")
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return finite_ms(s * 1000.0);
    }
    let reset = |dim: &str| {
        resp.header(&format!("x-ratelimit-reset-{dim}"))
            .and_then(parse_duration_ms)
    };
    let exhausted = |dim: &str| {
        resp.header(&format!("x-ratelimit-remaining-{dim}"))
            .is_some_and(|v| v.trim() == "0")
    };
    let dims = ["requests", "tokens"];
    let from_exhausted = dims
        .iter()
        .filter(|d| exhausted(d))
        .filter_map(|d| reset(d))
        .max();
    if let Some(ms) = from_exhausted.or_else(|| dims.iter().filter_map(|d| reset(d)).max()) {
        return Some(ms);
    }
    body?["error"]["details"].as_array()?.iter().find_map(|d| {
        let is_retry_info = d["@type"]
            .as_str()
            .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"));
        if is_retry_info {
            d["retryDelay"].as_str().and_then(parse_duration_ms)
        } else {
            None
        }
    })
}

fn finite_ms(ms: f64) -> Option<u64> {
    (ms.is_finite() && ms >= 0.0).then(|| ms.ceil() as u64)
}

/// Parses the duration strings vendors use in rate-limit hints: Go-style
/// (`6m0s`, `1.5s`, `20ms`, `1h2m`), protobuf-JSON (`37s`, `0.250s`), or a
/// bare number of seconds. Rounds up to whole milliseconds.
pub fn parse_duration_ms(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<f64>() {
        return finite_ms(secs * 1000.0);
    }
    let mut total = 0.0f64;
    let mut rest = s;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let per_unit = match &rest[..unit_end] {
            "h" => 3_600_000.0,
            "m" => 60_000.0,
            "s" => 1_000.0,
            "ms" => 1.0,
            "us" | "µs" => 0.001,
            "ns" => 0.000_001,
            _ => return None,
        };
        total += value * per_unit;
        rest = &rest[unit_end..];
    }
    finite_ms(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: VendorErrors = VendorErrors {
        name: "Acme",
        extra_auth_statuses: &[498],
    };

    fn resp(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        let mut r = testing::json_response(status, body);
        r.headers
            .extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        r
    }

    #[test]
    fn parses_vendor_durations() {
        assert_eq!(parse_duration_ms("7"), Some(7_000));
        assert_eq!(parse_duration_ms("6m0s"), Some(360_000));
        assert_eq!(parse_duration_ms("1.5s"), Some(1_500));
        assert_eq!(parse_duration_ms("20ms"), Some(20));
        assert_eq!(parse_duration_ms("1h2m3s"), Some(3_723_000));
        assert_eq!(parse_duration_ms("0.0001s"), Some(1));
        assert_eq!(parse_duration_ms(""), None);
        assert_eq!(parse_duration_ms("soon"), None);
        assert_eq!(parse_duration_ms("3 days"), None);
    }

    #[test]
    fn retry_hints_in_priority_order() {
        let r = resp(
            429,
            &[("retry-after", "7"), ("x-ratelimit-reset-requests", "1m")],
            "{}",
        );
        assert_eq!(retry_after_ms(&r, None), Some(7_000));
        let r = resp(
            429,
            &[
                ("x-ratelimit-remaining-requests", "5"),
                ("x-ratelimit-reset-requests", "1m"),
                ("x-ratelimit-remaining-tokens", "0"),
                ("x-ratelimit-reset-tokens", "7.66s"),
            ],
            "{}",
        );
        assert_eq!(retry_after_ms(&r, None), Some(7_660));
        let body: Value = serde_json::from_str(
            r#"{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}"#,
        )
        .unwrap();
        assert_eq!(
            retry_after_ms(&resp(429, &[], "{}"), Some(&body)),
            Some(37_000)
        );
        assert_eq!(
            retry_after_ms(
                &resp(
                    429,
                    &[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")],
                    "{}"
                ),
                None
            ),
            None
        );
    }

    #[test]
    fn classifies_statuses_and_bodies() {
        let kind = |status, body: &str| match classify(&resp(status, &[], body), "sk-secret", &V) {
            Ok(_) => "ok",
            Err(PluginError::Auth(_)) => "auth",
            Err(PluginError::RateLimited(_)) => "rate",
            Err(PluginError::Transient(_)) => "transient",
            Err(PluginError::InvalidInput(_)) => "invalid",
            Err(PluginError::Permanent(_)) => "permanent",
        };
        assert_eq!(kind(200, r#"{"x":1}"#), "ok");
        assert_eq!(kind(200, r#"{"error":{"message":"quota"}}"#), "permanent");
        assert_eq!(
            kind(200, r#"{"type":"error","error":{"type":"api_error"}}"#),
            "permanent"
        );
        assert_eq!(kind(200, "<html>"), "permanent");
        assert_eq!(kind(200, "[1]"), "permanent");
        assert_eq!(kind(401, "{}"), "auth");
        assert_eq!(kind(498, "{}"), "auth");
        assert_eq!(
            kind(
                400,
                r#"{"error":{"details":[{"reason":"API_KEY_INVALID"}]}}"#
            ),
            "auth"
        );
        assert_eq!(kind(429, "{}"), "rate");
        assert_eq!(kind(529, "{}"), "transient");
        assert_eq!(kind(404, "{}"), "invalid");
        assert_eq!(kind(422, "{}"), "invalid");
        assert_eq!(kind(302, "{}"), "permanent");
        let Err(PluginError::Auth(m)) = classify(
            &resp(
                401,
                &[],
                r#"{"error":{"code":"invalid_api_key","message":"bad sk-secret"}}"#,
            ),
            "sk-secret",
            &V,
        ) else {
            panic!("expected auth")
        };
        assert_eq!(m, "Acme answered HTTP 401: invalid_api_key: bad [redacted]");
    }
}
