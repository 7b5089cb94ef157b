//! Reference `email-verifier` adapter.
//!
//! It speaks a small JSON API (`GET /v1/verify?email=`, `GET /v1/credits`,
//! bearer auth) that the vendor adapters of the next issue follow in spirit:
//! normalise the vendor's answer into the canonical verification result and
//! classify failures so fallback chains move on only on transient errors.

use outreach_plugin_sdk::prelude::*;
use serde_json::Value;

const DEFAULT_BASE: &str = "https://api.verifier.example";

pub struct ExampleVerifier;

impl EmailVerifier for ExampleVerifier {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: "example-verifier".into(),
            display_name: "Example Verifier".into(),
            list_rate_usd: 0.0049,
            fallback_rank: 1,
        }
    }

    fn validate_key(ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        let url = format!("{}/v1/credits", base_url(ctx, DEFAULT_BASE));
        let body: Value = Request::get(&url)
            .bearer(&ctx.api_key)
            .send()?
            .check()?
            .json()?;
        Ok(KeyValidation {
            credits_remaining: body["credits"].as_i64(),
        })
    }

    fn verify(ctx: &VendorContext, email: &str) -> Result<VerificationResult, PluginError> {
        if !email.contains('@') {
            return Err(PluginError::InvalidInput(format!(
                "not an email address: {email}"
            )));
        }
        let url = format!("{}/v1/verify", base_url(ctx, DEFAULT_BASE));
        let body: Value = Request::get(&url)
            .query("email", email)
            .bearer(&ctx.api_key)
            .send()?
            .check()?
            .json()?;
        Ok(normalise(email, &body))
    }
}

/// Maps the vendor's `result` field onto the canonical status pair.
fn normalise(email: &str, body: &Value) -> VerificationResult {
    let raw = body["result"].as_str().unwrap_or("unknown").to_string();
    let (status, deliverability) = match raw.as_str() {
        "deliverable" => (VerificationStatus::Valid, Deliverability::Deliverable),
        "undeliverable" => (VerificationStatus::Invalid, Deliverability::Undeliverable),
        "risky" | "accept_all" => (VerificationStatus::Risky, Deliverability::Risky),
        _ => (VerificationStatus::Unknown, Deliverability::Unknown),
    };
    VerificationResult {
        email: email.to_string(),
        provider: "example-verifier".into(),
        status,
        deliverability,
        is_disposable: body["disposable"].as_bool().unwrap_or(false),
        is_role: body["role"].as_bool().unwrap_or(false),
        is_catch_all: body["accept_all"].as_bool(),
        confidence: body["score"].as_f64().map(|s| (s / 100.0).clamp(0.0, 1.0)),
        raw_status: raw,
    }
}

outreach_plugin_sdk::export_email_verifier!(ExampleVerifier);

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> VendorContext {
        VendorContext {
            api_key: "secret".into(),
            base_url: Some("http://stub.test/".into()),
        }
    }

    #[test]
    fn normalises_a_deliverable_answer() {
        let _m = testing::mock_http(|req| {
            assert_eq!(req.url, "http://stub.test/v1/verify?email=jane%40acme.com");
            assert!(
                req.headers
                    .contains(&("authorization".into(), "Bearer secret".into()))
            );
            Ok(testing::json_response(
                200,
                r#"{"result":"deliverable","score":97,"role":false}"#,
            ))
        });
        let r = ExampleVerifier::verify(&ctx(), "jane@acme.com").unwrap();
        assert_eq!(r.status, VerificationStatus::Valid);
        assert_eq!(r.confidence, Some(0.97));
    }

    #[test]
    fn classifies_rate_limits_and_auth() {
        let _m = testing::mock_http(|_| {
            let mut r = testing::json_response(429, "{}");
            r.headers.push(("retry-after".into(), "3".into()));
            Ok(r)
        });
        match ExampleVerifier::verify(&ctx(), "a@b.c") {
            Err(PluginError::RateLimited(r)) => assert_eq!(r.retry_after_ms, Some(3000)),
            other => panic!("{other:?}"),
        }
        let _m = testing::mock_http(|_| Ok(testing::json_response(401, "{}")));
        assert!(matches!(
            ExampleVerifier::validate_key(&ctx()),
            Err(PluginError::Auth(_))
        ));
    }
}
