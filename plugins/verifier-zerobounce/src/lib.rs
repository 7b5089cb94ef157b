//! ZeroBounce (`zerobounce`), fallback rank 4, 0.008 USD a check.
//!
//! API v2 with the key as the `api_key` query parameter:
//! `GET /v2/validate?api_key=KEY&email=...&ip_address=` answers
//! `{address, status, sub_status, free_email, ...}` and
//! `GET /v2/getcredits?api_key=KEY` answers `{"Credits": "<n>"}`, where
//! `-1` means the key was not recognised. Validation failures come back as
//! HTTP 200 with an `error` field instead of a status.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;
use vendor_common::*;

const DEFAULT_BASE: &str = "https://api.zerobounce.net";
const VENDOR: &str = "zerobounce";
const REQUEST_TIMEOUT_MS: u32 = 20_000;

pub struct ZeroBounce;

impl EmailVerifier for ZeroBounce {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: VENDOR.into(),
            display_name: "ZeroBounce".into(),
            list_rate_usd: 0.008,
            fallback_rank: 4,
        }
    }

    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        let url = format!("{}/v2/getcredits", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .query("api_key", &ctx.api_key)
            .timeout_ms(10_000)
            .send()?;
        let body = json_object(&check_status(resp)?)?;
        vendor_error(&body)?;
        match credits(&body["Credits"]) {
            // The documented answer for an unknown key.
            Some(-1) => Err(PluginError::Auth(
                "zerobounce: the API key was not recognised (Credits -1)".into(),
            )),
            Some(n) => Ok(KeyValidation {
                credits_remaining: Some(n),
            }),
            None => Err(PluginError::Permanent(
                "zerobounce: credits answer has no Credits field".into(),
            )),
        }
    }

    fn verify(ctx: &VendorContext, email: &str) -> Result<VerificationResult, PluginError> {
        check_email(email)?;
        let url = format!("{}/v2/validate", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .query("api_key", &ctx.api_key)
            .query("email", email)
            .query("ip_address", "")
            .timeout_ms(REQUEST_TIMEOUT_MS)
            .send()?;
        let body = json_object(&check_status(resp)?)?;
        vendor_error(&body)?;
        normalise(email, &body)
    }
}

/// A non-empty `error` field is the vendor's failure report; see
/// `classify_message` for why its "key or credits" wording is a quota.
fn vendor_error(body: &Value) -> Result<(), PluginError> {
    match text(&body["error"]) {
        Some(message) => Err(classify_message(VENDOR, &message)),
        None => Ok(()),
    }
}

/// Maps `status`: valid; invalid and spamtrap (never mail a trap) are
/// undeliverable; catch-all, abuse and do_not_mail (role, disposable, toxic
/// or suppressed addresses that may still accept mail) are risky; unknown
/// stays unknown. `sub_status` sets the role, disposable and catch-all flags.
pub fn normalise(email: &str, body: &Value) -> Result<VerificationResult, PluginError> {
    let Some(raw) = text(&body["status"]) else {
        return Err(PluginError::Permanent(
            "zerobounce: answer has no status field".into(),
        ));
    };
    let sub = text(&body["sub_status"]).unwrap_or_default();
    let verdict = match raw.to_ascii_lowercase().as_str() {
        "valid" => Verdict::Valid,
        "invalid" | "spamtrap" => Verdict::Invalid,
        "catch-all" | "abuse" | "do_not_mail" => Verdict::Risky,
        _ => Verdict::Unknown,
    };
    let catch_all = match raw.to_ascii_lowercase().as_str() {
        "catch-all" => Some(true),
        _ if sub == "role_based_catch_all" => Some(true),
        "valid" | "invalid" => Some(false),
        _ => None,
    };
    Ok(VerificationResult {
        is_disposable: sub == "disposable",
        is_role: sub == "role_based" || sub == "role_based_catch_all",
        is_catch_all: catch_all,
        ..verification(email, VENDOR, verdict, &raw)
    })
}

outreach_plugin_sdk::export_email_verifier!(ZeroBounce);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_sub_status_flags() {
        let body: Value =
            serde_json::from_str(r#"{"status":"do_not_mail","sub_status":"role_based_catch_all"}"#)
                .unwrap();
        let r = normalise("a@b.co", &body).unwrap();
        assert_eq!(
            (r.status, r.is_role, r.is_catch_all),
            (VerificationStatus::Risky, true, Some(true))
        );
        let err: Value = serde_json::from_str(
            r#"{"error":"Invalid API key or your account ran out of credits"}"#,
        )
        .unwrap();
        assert!(matches!(
            vendor_error(&err),
            Err(PluginError::RateLimited(_))
        ));
    }
}
