//! Shared logic of the email-verifier and contact-enricher vendor adapters.
//!
//! Every vendor answers in its own shape, but the adapters share three jobs:
//! reading loosely typed JSON fields (numbers that arrive as strings, empty
//! strings that mean "no value"), refusing malformed input before a paid call
//! is made, and classifying failures so that fallback chains move on only on
//! transient and rate-limited errors. Those jobs live here so that each
//! adapter only holds its vendor's request and field mapping.

pub mod errors;
pub mod fields;

pub use errors::*;
pub use fields::*;

use outreach_plugin_sdk::types::{
    Deliverability, EnrichmentResult, PluginError, VerificationResult, VerificationStatus,
};
use serde_json::Value;

/// The canonical verdict of a verification, which fixes both the `status`
/// and the `deliverability` field; the two move together for every vendor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Valid,
    Invalid,
    Risky,
    Unknown,
}

impl Verdict {
    /// The status and deliverability pair of this verdict.
    pub fn pair(self) -> (VerificationStatus, Deliverability) {
        match self {
            Verdict::Valid => (VerificationStatus::Valid, Deliverability::Deliverable),
            Verdict::Invalid => (VerificationStatus::Invalid, Deliverability::Undeliverable),
            Verdict::Risky => (VerificationStatus::Risky, Deliverability::Risky),
            Verdict::Unknown => (VerificationStatus::Unknown, Deliverability::Unknown),
        }
    }
}

/// A verification result with the verdict and raw status set and every flag
/// at its "vendor did not say" value; adapters fill in what their vendor
/// reports with struct-update syntax.
pub fn verification(
    email: &str,
    provider: &str,
    verdict: Verdict,
    raw_status: &str,
) -> VerificationResult {
    let (status, deliverability) = verdict.pair();
    VerificationResult {
        email: email.to_string(),
        provider: provider.to_string(),
        status,
        deliverability,
        is_disposable: false,
        is_role: false,
        is_catch_all: None,
        confidence: None,
        raw_status: raw_status.to_string(),
    }
}

/// An enrichment result with every field null and `raw` set to the vendor's
/// own JSON, so that a field an adapter does not map stays null as spec/3
/// requires ("null means the vendor did not return the field").
pub fn enrichment(domain: &str, provider: &str, raw: &Value) -> EnrichmentResult {
    EnrichmentResult {
        domain: domain.to_string(),
        provider: provider.to_string(),
        name: None,
        legal_name: None,
        description: None,
        founded_year: None,
        employee_count: None,
        employee_range: None,
        annual_revenue_usd: None,
        total_funding_usd: None,
        latest_funding_stage: None,
        industry: None,
        subindustry: None,
        hq_country: None,
        hq_city: None,
        linkedin_url: None,
        twitter_handle: None,
        technologies: Vec::new(),
        raw: serde_json::to_string(raw).unwrap_or_else(|_| "{}".into()),
    }
}

/// Refuses an address that no vendor could verify, before a paid call is
/// made: one `@`, a non-empty local part, a dotted domain, no whitespace and
/// at most 254 characters (the SMTP path limit).
pub fn check_email(email: &str) -> Result<(), PluginError> {
    let bad = || {
        Err(PluginError::InvalidInput(format!(
            "not an email address: {email:?}"
        )))
    };
    if email.len() > 254 || email.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad();
    }
    match email.split_once('@') {
        Some((local, domain))
            if !local.is_empty()
                && !domain.contains('@')
                && is_hostname(domain)
                && domain.contains('.') =>
        {
            Ok(())
        }
        _ => bad(),
    }
}

/// Refuses a domain that is not a dotted host name. The host has already
/// stripped scheme and path, so anything else here is a caller mistake.
pub fn check_domain(domain: &str) -> Result<(), PluginError> {
    if is_hostname(domain) && domain.contains('.') {
        Ok(())
    } else {
        Err(PluginError::InvalidInput(format!(
            "not a company domain: {domain:?}"
        )))
    }
}

fn is_hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_alphanumeric() || c == '-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_and_domain_checks() {
        assert!(check_email("jane@acme.com").is_ok());
        assert!(check_email("jane.o+tag@mail.acme.co.uk").is_ok());
        for bad in [
            "",
            "jane",
            "@acme.com",
            "jane@",
            "jane@acme",
            "ja ne@acme.com",
            "a@b@c.com",
            "a@-x.com",
        ] {
            assert!(
                matches!(check_email(bad), Err(PluginError::InvalidInput(_))),
                "{bad}"
            );
        }
        assert!(check_domain("acme.com").is_ok());
        for bad in [
            "",
            "acme",
            "acme..com",
            "https://acme.com",
            "acme.com/about",
        ] {
            assert!(
                matches!(check_domain(bad), Err(PluginError::InvalidInput(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn builders_start_from_unknown_values() {
        let v = verification("a@b.co", "x", Verdict::Risky, "catch_all");
        assert_eq!(
            (v.status, v.deliverability),
            (VerificationStatus::Risky, Deliverability::Risky)
        );
        assert_eq!(v.is_catch_all, None);
        let e = enrichment("b.co", "x", &serde_json::json!({"a": 1}));
        assert_eq!(e.raw, r#"{"a":1}"#);
        assert!(e.name.is_none() && e.technologies.is_empty());
    }
}
