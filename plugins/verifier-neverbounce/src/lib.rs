//! NeverBounce (`neverbounce`), fallback rank 3, 0.008 USD a check.
//!
//! API v4: `GET /v4/single/check?key=KEY&email=...` answers
//! `{status, result, flags, suggested_correction, execution_time}` and
//! `GET /v4/account/info?key=KEY` answers the balance. NeverBounce reports
//! request failures with HTTP 200 and a `status` other than `success`
//! (auth_failure, throttle_triggered, temp_unavail, bad_referrer,
//! general_failure), so `status` is read before `result`.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;
use vendor_common::*;

const DEFAULT_BASE: &str = "https://api.neverbounce.com";
const VENDOR: &str = "neverbounce";
const REQUEST_TIMEOUT_MS: u32 = 20_000;

pub struct NeverBounce;

impl EmailVerifier for NeverBounce {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: VENDOR.into(),
            display_name: "NeverBounce".into(),
            list_rate_usd: 0.008,
            fallback_rank: 3,
        }
    }

    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        let url = format!("{}/v4/account/info", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .query("key", &ctx.api_key)
            .timeout_ms(10_000)
            .send()?;
        let body = json_object(&check_status(resp)?)?;
        api_status(&body)?;
        Ok(KeyValidation {
            credits_remaining: remaining(&body),
        })
    }

    fn verify(ctx: &VendorContext, email: &str) -> Result<VerificationResult, PluginError> {
        check_email(email)?;
        let url = format!("{}/v4/single/check", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .query("key", &ctx.api_key)
            .query("email", email)
            .timeout_ms(REQUEST_TIMEOUT_MS)
            .send()?;
        let body = json_object(&check_status(resp)?)?;
        api_status(&body)?;
        normalise(email, &body)
    }
}

/// Classifies the documented request-level `status` values.
fn api_status(body: &Value) -> Result<(), PluginError> {
    let status = body["status"].as_str().unwrap_or("");
    let message = format!(
        "neverbounce: {status}: {}",
        error_message(body).unwrap_or_default()
    );
    match status {
        "success" => Ok(()),
        "auth_failure" | "bad_referrer" => Err(PluginError::Auth(message)),
        "throttle_triggered" => Err(quota(message)),
        "temp_unavail" => Err(PluginError::Transient(message)),
        "" => Err(PluginError::Permanent(
            "neverbounce: answer has no status field".into(),
        )),
        _ => Err(PluginError::Permanent(message)),
    }
}

/// Credits left: v4.2 reports `credits_info.{paid,free}_credits_remaining`,
/// older v4 answers a single `credits` number.
fn remaining(body: &Value) -> Option<i64> {
    let info = &body["credits_info"];
    let paid = credits(&info["paid_credits_remaining"]);
    let free = credits(&info["free_credits_remaining"]);
    match (paid, free) {
        (None, None) => credits(&body["credits"]),
        (p, f) => Some(p.unwrap_or(0) + f.unwrap_or(0)),
    }
}

/// Maps `result` (valid, invalid, disposable, catchall, unknown). A valid
/// or invalid answer means the server gave a mailbox-level answer, so the
/// domain is not catch-all; the `role_account` and `disposable_email` flags
/// set the role and disposable booleans.
pub fn normalise(email: &str, body: &Value) -> Result<VerificationResult, PluginError> {
    let Some(raw) = text(&body["result"]) else {
        return Err(PluginError::Permanent(
            "neverbounce: answer has no result field".into(),
        ));
    };
    let flags = strings(&body["flags"]);
    let has = |f: &str| flags.iter().any(|x| x == f);
    let (verdict, catch_all) = match raw.as_str() {
        "valid" => (Verdict::Valid, Some(false)),
        "invalid" => (Verdict::Invalid, Some(false)),
        "disposable" => (Verdict::Risky, None),
        "catchall" => (Verdict::Risky, Some(true)),
        _ => (Verdict::Unknown, None),
    };
    Ok(VerificationResult {
        is_disposable: raw == "disposable" || has("disposable_email"),
        is_role: has("role_account"),
        is_catch_all: catch_all,
        ..verification(email, VENDOR, verdict, &raw)
    })
}

outreach_plugin_sdk::export_email_verifier!(NeverBounce);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_status_then_result() {
        let ok: Value = serde_json::from_str(
            r#"{"status":"success","result":"valid","flags":["role_account","has_dns"]}"#,
        )
        .unwrap();
        assert!(api_status(&ok).is_ok());
        let r = normalise("a@b.co", &ok).unwrap();
        assert_eq!((r.status, r.is_role), (VerificationStatus::Valid, true));
        let t: Value =
            serde_json::from_str(r#"{"status":"throttle_triggered","message":"slow down"}"#)
                .unwrap();
        assert!(matches!(api_status(&t), Err(PluginError::RateLimited(_))));
        let c: Value = serde_json::from_str(r#"{"status":"success","credits_info":{"paid_credits_remaining":10,"free_credits_remaining":5}}"#).unwrap();
        assert_eq!(remaining(&c), Some(15));
    }
}
