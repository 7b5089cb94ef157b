//! Bouncer (`bouncer`), fallback rank 2, 0.005 USD a check.
//!
//! API v1.1 with the key in the `x-api-key` header:
//! `GET /v1.1/email/verify?email=...&timeout=10` answers
//! `{status, reason, score, domain: {acceptAll, disposable, free},
//! account: {role, disabled, fullMailbox}}`, where the nested flags are the
//! strings "yes", "no" or "unknown"; `GET /v1.1/credits` answers `{credits}`.
//! Bouncer uses 401 for a bad key, 402 for an empty balance and 429 for its
//! request limit, all of which the shared status check classifies.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;
use vendor_common::*;

const DEFAULT_BASE: &str = "https://api.usebouncer.com";
const VENDOR: &str = "bouncer";
const REQUEST_TIMEOUT_MS: u32 = 20_000;

pub struct Bouncer;

impl EmailVerifier for Bouncer {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: VENDOR.into(),
            display_name: "Bouncer".into(),
            list_rate_usd: 0.005,
            fallback_rank: 2,
        }
    }

    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        let url = format!("{}/v1.1/credits", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .header("x-api-key", &ctx.api_key)
            .timeout_ms(10_000)
            .send()?;
        let body = json_object(&check_status(resp)?)?;
        match credits(&body["credits"]) {
            Some(n) => Ok(KeyValidation {
                credits_remaining: Some(n),
            }),
            None => Err(PluginError::Permanent(
                "bouncer: credits answer has no credits field".into(),
            )),
        }
    }

    fn verify(ctx: &VendorContext, email: &str) -> Result<VerificationResult, PluginError> {
        check_email(email)?;
        let url = format!("{}/v1.1/email/verify", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .query("email", email)
            .query("timeout", "10")
            .header("x-api-key", &ctx.api_key)
            .timeout_ms(REQUEST_TIMEOUT_MS)
            .send()?;
        let body = json_object(&check_status(resp)?)?;
        normalise(email, &body)
    }
}

/// Maps `status` (deliverable, risky, undeliverable, unknown) one to one;
/// `score` (0-100) becomes the confidence.
pub fn normalise(email: &str, body: &Value) -> Result<VerificationResult, PluginError> {
    let Some(raw) = text(&body["status"]) else {
        return Err(PluginError::Permanent(
            "bouncer: answer has no status field".into(),
        ));
    };
    let verdict = match raw.as_str() {
        "deliverable" => Verdict::Valid,
        "undeliverable" => Verdict::Invalid,
        "risky" => Verdict::Risky,
        _ => Verdict::Unknown,
    };
    Ok(VerificationResult {
        is_disposable: flag(&body["domain"]["disposable"]).unwrap_or(false),
        is_role: flag(&body["account"]["role"]).unwrap_or(false),
        is_catch_all: flag(&body["domain"]["acceptAll"]),
        confidence: number(&body["score"]).map(|s| (s / 100.0).clamp(0.0, 1.0)),
        ..verification(email, VENDOR, verdict, &raw)
    })
}

outreach_plugin_sdk::export_email_verifier!(Bouncer);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_string_flags() {
        let body: Value = serde_json::from_str(
            r#"{"status":"risky","reason":"low_deliverability","score":55,
                "domain":{"acceptAll":"yes","disposable":"no"},"account":{"role":"unknown"}}"#,
        )
        .unwrap();
        let r = normalise("a@b.co", &body).unwrap();
        assert_eq!(
            (r.status, r.is_catch_all, r.is_role, r.confidence),
            (VerificationStatus::Risky, Some(true), false, Some(0.55))
        );
    }
}
