//! MillionVerifier (`millionverifier`), fallback rank 1, 0.0049 USD a check.
//!
//! API v3: `GET /api/v3/?api=KEY&email=...&timeout=10` verifies one address
//! and `GET /api/v3/credits?api=KEY` reads the balance. The key travels as
//! the `api` query parameter, as the vendor documents. MillionVerifier
//! answers HTTP 200 even for a rejected key or an empty balance and puts the
//! reason in a non-empty `error` field, so that field is checked before the
//! result is read.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;
use vendor_common::*;

const DEFAULT_BASE: &str = "https://api.millionverifier.com";
const VENDOR: &str = "millionverifier";
/// Seconds the vendor may spend on the SMTP conversation; the request
/// timeout leaves room for the answer on top of it.
const VENDOR_TIMEOUT_S: &str = "10";
const REQUEST_TIMEOUT_MS: u32 = 20_000;

pub struct MillionVerifier;

impl EmailVerifier for MillionVerifier {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: VENDOR.into(),
            display_name: "MillionVerifier".into(),
            list_rate_usd: 0.0049,
            fallback_rank: 1,
        }
    }

    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        let url = format!("{}/api/v3/credits", base_url(ctx, DEFAULT_BASE));
        let resp = check_status(
            Request::get(&url)
                .query("api", &ctx.api_key)
                .timeout_ms(10_000)
                .send()?,
        )?;
        let body = json_object(&resp)?;
        vendor_error(&body)?;
        match credits(&body["credits"]) {
            Some(n) => Ok(KeyValidation {
                credits_remaining: Some(n),
            }),
            None => Err(PluginError::Permanent(
                "millionverifier: credits answer has no credits field".into(),
            )),
        }
    }

    fn verify(ctx: &VendorContext, email: &str) -> Result<VerificationResult, PluginError> {
        check_email(email)?;
        let url = format!("{}/api/v3/", base_url(ctx, DEFAULT_BASE));
        let resp = Request::get(&url)
            .query("api", &ctx.api_key)
            .query("email", email)
            .query("timeout", VENDOR_TIMEOUT_S)
            .timeout_ms(REQUEST_TIMEOUT_MS)
            .send()?;
        let body = json_object(&check_status(resp)?)?;
        vendor_error(&body)?;
        normalise(email, &body)
    }
}

/// A non-empty `error` field is the vendor's failure report.
fn vendor_error(body: &Value) -> Result<(), PluginError> {
    match text(&body["error"]) {
        Some(message) => Err(classify_message(VENDOR, &message)),
        None => Ok(()),
    }
}

/// Maps `result` (ok, catch_all, unknown, error, disposable, invalid).
/// `error` is the vendor's "could not verify" bucket, not a request failure
/// (those carry the `error` text field), so it is an unknown verdict.
pub fn normalise(email: &str, body: &Value) -> Result<VerificationResult, PluginError> {
    let Some(raw) = text(&body["result"]) else {
        return Err(PluginError::Permanent(
            "millionverifier: answer has no result field".into(),
        ));
    };
    let (verdict, catch_all) = match raw.as_str() {
        "ok" => (Verdict::Valid, Some(false)),
        "catch_all" => (Verdict::Risky, Some(true)),
        "disposable" => (Verdict::Risky, None),
        "invalid" => (Verdict::Invalid, None),
        _ => (Verdict::Unknown, None),
    };
    Ok(VerificationResult {
        is_disposable: raw == "disposable",
        is_role: flag(&body["role"]).unwrap_or(false),
        is_catch_all: catch_all,
        ..verification(email, VENDOR, verdict, &raw)
    })
}

outreach_plugin_sdk::export_email_verifier!(MillionVerifier);

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> VendorContext {
        VendorContext {
            api_key: "k1".into(),
            base_url: Some("http://mv.test".into()),
        }
    }

    #[test]
    fn maps_results_and_errors() {
        let _m = testing::mock_http(|req| {
            assert!(
                req.url
                    .starts_with("http://mv.test/api/v3/?api=k1&email=a%40b.co"),
                "{}",
                req.url
            );
            Ok(testing::json_response(
                200,
                r#"{"result":"catch_all","role":true,"error":""}"#,
            ))
        });
        let r = MillionVerifier::verify(&ctx(), "a@b.co").unwrap();
        assert_eq!(
            (r.status, r.is_catch_all, r.is_role),
            (VerificationStatus::Risky, Some(true), true)
        );
        let _m = testing::mock_http(|_| {
            Ok(testing::json_response(
                200,
                r#"{"result":"error","error":"Apikey not found"}"#,
            ))
        });
        assert!(matches!(
            MillionVerifier::verify(&ctx(), "a@b.co"),
            Err(PluginError::Auth(_))
        ));
    }
}
