//! Kickbox (`kickbox`), fallback rank 5, 0.0098 USD a check.
//!
//! API v2 with the key as the `apikey` query parameter:
//! `GET /v2/verify?email=...&apikey=KEY&timeout=6000` answers
//! `{result, reason, role, free, disposable, accept_all, sendex, success,
//! message}`, and every answer carries the balance in the documented
//! `X-Kickbox-Balance` header. Key validation reads `GET /v2/balance`, which
//! answers `{balance, success, message}` without spending a verification;
//! its header is used when the body has no balance.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;
use vendor_common::*;

const DEFAULT_BASE: &str = "https://api.kickbox.com";
const VENDOR: &str = "kickbox";
/// Kickbox's own SMTP budget in milliseconds (its documented default).
const VENDOR_TIMEOUT_MS: &str = "6000";
const REQUEST_TIMEOUT_MS: u32 = 15_000;
const BALANCE_HEADER: &str = "x-kickbox-balance";

pub struct Kickbox;

impl EmailVerifier for Kickbox {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: VENDOR.into(),
            display_name: "Kickbox".into(),
            list_rate_usd: 0.0098,
            fallback_rank: 5,
        }
    }

    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        let url = format!("{}/v2/balance", base_url(ctx, DEFAULT_BASE));
        let resp = classify(
            Request::get(&url)
                .query("apikey", &ctx.api_key)
                .timeout_ms(10_000)
                .send()?,
        )?;
        let body = json_object(&resp)?;
        unsuccessful(&body)?;
        let header = resp
            .header(BALANCE_HEADER)
            .and_then(|h| h.trim().parse::<i64>().ok());
        Ok(KeyValidation {
            credits_remaining: credits(&body["balance"]).or(header),
        })
    }

    fn verify(ctx: &VendorContext, email: &str) -> Result<VerificationResult, PluginError> {
        check_email(email)?;
        let url = format!("{}/v2/verify", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .query("email", email)
            .query("apikey", &ctx.api_key)
            .query("timeout", VENDOR_TIMEOUT_MS)
            .timeout_ms(REQUEST_TIMEOUT_MS)
            .send()?;
        let body = json_object(&classify(resp)?)?;
        unsuccessful(&body)?;
        normalise(email, &body)
    }
}

/// Kickbox answers an exhausted balance with a 4xx and a message naming the
/// balance; that is a quota (fallback moves on), whatever the status code.
/// Other statuses follow the shared classification.
fn classify(resp: Response) -> Result<Response, PluginError> {
    if (400..500).contains(&resp.status) && resp.status != 429 {
        let body: Value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
        if let Some(message) = error_message(&body) {
            let m = message.to_ascii_lowercase();
            if m.contains("balance") || m.contains("credit") {
                return Err(quota(format!("kickbox: HTTP {}: {message}", resp.status)));
            }
        }
    }
    check_status(resp)
}

/// `success: false` with HTTP 200 carries the reason in `message`.
fn unsuccessful(body: &Value) -> Result<(), PluginError> {
    if body["success"] == Value::Bool(false) {
        let message = error_message(body).unwrap_or_else(|| "request failed".into());
        return Err(classify_message(VENDOR, &message));
    }
    Ok(())
}

/// Maps `result` (deliverable, undeliverable, risky, unknown) one to one;
/// `sendex` (0-1) is the confidence.
pub fn normalise(email: &str, body: &Value) -> Result<VerificationResult, PluginError> {
    let Some(raw) = text(&body["result"]) else {
        return Err(PluginError::Permanent(
            "kickbox: answer has no result field".into(),
        ));
    };
    let verdict = match raw.as_str() {
        "deliverable" => Verdict::Valid,
        "undeliverable" => Verdict::Invalid,
        "risky" => Verdict::Risky,
        _ => Verdict::Unknown,
    };
    Ok(VerificationResult {
        is_disposable: flag(&body["disposable"]).unwrap_or(false),
        is_role: flag(&body["role"]).unwrap_or(false),
        is_catch_all: flag(&body["accept_all"]),
        confidence: number(&body["sendex"]).map(|s| s.clamp(0.0, 1.0)),
        ..verification(email, VENDOR, verdict, &raw)
    })
}

outreach_plugin_sdk::export_email_verifier!(Kickbox);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balance_from_header_and_quota_from_message() {
        let _m = testing::mock_http(|_| {
            let mut r = testing::json_response(200, r#"{"success":true}"#);
            r.headers.push(("x-kickbox-balance".into(), "321".into()));
            Ok(r)
        });
        let ctx = VendorContext {
            api_key: "k".into(),
            base_url: None,
        };
        assert_eq!(
            Kickbox::validate_key(&ctx).unwrap().credits_remaining,
            Some(321)
        );
        let _m = testing::mock_http(|_| {
            Ok(testing::json_response(
                403,
                r#"{"success":false,"message":"Insufficient balance"}"#,
            ))
        });
        assert!(matches!(
            Kickbox::verify(&ctx, "a@b.co"),
            Err(PluginError::RateLimited(_))
        ));
    }
}
