//! Trivial `email-verifier` for the isolated-call benchmark: a few string
//! checks and no host calls, so the measurement is the isolation overhead.

use outreach_plugin_sdk::prelude::*;

pub struct Trivial;

impl EmailVerifier for Trivial {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: "trivial".into(),
            display_name: "Trivial".into(),
            list_rate_usd: 0.0,
            fallback_rank: 99,
        }
    }
    fn validate_key(_ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        Ok(KeyValidation {
            credits_remaining: Some(42),
        })
    }
    fn verify(_ctx: &VendorContext, email: &str) -> Result<VerificationResult, PluginError> {
        let (local, domain) = email
            .split_once('@')
            .ok_or_else(|| PluginError::InvalidInput("no @".into()))?;
        let valid = !local.is_empty() && domain.contains('.');
        Ok(VerificationResult {
            email: email.to_string(),
            provider: "trivial".into(),
            status: if valid {
                VerificationStatus::Valid
            } else {
                VerificationStatus::Invalid
            },
            deliverability: if valid {
                Deliverability::Deliverable
            } else {
                Deliverability::Undeliverable
            },
            is_disposable: false,
            is_role: matches!(local, "info" | "sales" | "admin"),
            is_catch_all: None,
            confidence: Some(1.0),
            raw_status: "ok".into(),
        })
    }
}

outreach_plugin_sdk::export_email_verifier!(Trivial);
