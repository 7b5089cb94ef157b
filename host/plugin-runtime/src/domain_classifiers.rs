//! Domain classifiers (`domain-classifier` world): name a company's
//! industry, sub-industry and business type from what the enrichment
//! pipeline read on its site. The host checks every verdict against the
//! taxonomy of `outreach-domain-analysis` and the business types of spec/2,
//! so a plugin cannot store an industry the product does not know: the
//! rules, an LLM or an operator's plugin all fill the same columns.
//!
//! The call itself (sandbox, AI bridge, nesting slot) is the reply
//! classifiers' ([`PluginRuntime::run_classifier`]).

use crate::ai::AiBridge;
use crate::bindings::types::{self as wit, DomainInput};
use crate::classifiers::{ClassifierInfo, checked_confidence, classify_with, shown, verdict_model};
use crate::error::CallError;
use crate::manifest::PluginKind;
use crate::runtime::{KindPre, PluginRuntime};
use outreach_domain_analysis::classify::{self as rules, TAXONOMY};
use serde::Serialize;
use std::sync::Arc;

/// spec/2's business types, the only ones a domain classifier may answer.
pub const BUSINESS_TYPES: [&str; 7] = rules::BUSINESS_TYPES;

/// Bytes of visible page text a classifier receives (the WIT contract); the
/// rules read no more, so a longer text would only cost copying.
pub const MAX_DOMAIN_TEXT_BYTES: usize = 64 * 1024;

/// One loaded domain classifier ([`PluginRuntime::domain_classifiers`]).
pub type DomainClassifierInfo = ClassifierInfo;

/// A checked domain classifier answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DomainVerdict {
    /// One of the taxonomy's industry names (`TAXONOMY[..].name`), or `None`
    /// when the classifier names none.
    pub industry: Option<String>,
    /// One of that industry's sub-industries, or `None`.
    pub sub_industry: Option<String>,
    /// One of [`BUSINESS_TYPES`].
    pub business_type: String,
    /// 0.0-1.0 (a finite value outside is clamped).
    pub confidence: f64,
    /// The model (or rules revision) that decided: the completion's model for
    /// an AI classifier, `domain-rules-v1` for the rules; the classifier's
    /// metadata model when the plugin left it empty.
    pub model: String,
    /// Wall-clock time of the call, AI completions included.
    pub latency_ms: u64,
}

/// The input the native rules read, as the plugins receive it; `text` is cut
/// to [`MAX_DOMAIN_TEXT_BYTES`] by [`PluginRuntime::classify_domain`].
impl From<rules::ClassifyInput> for DomainInput {
    fn from(i: rules::ClassifyInput) -> Self {
        DomainInput {
            domain: i.domain,
            company_name: i.company_name,
            title: i.title,
            summary: i.summary,
            text: i.text,
            technologies: i.technologies,
            sells_subscriptions: i.sells_subscriptions,
        }
    }
}

/// The first `max` bytes of `s`, never splitting a character.
fn cap_bytes(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// Checks a verdict: the business type must be one of the seven exactly,
/// the industry one of the taxonomy's (or none), the sub-industry one of
/// that industry's (or none), the confidence a finite number (clamped to
/// 0.0-1.0). Names are compared exactly: the stored value is what audiences
/// and exports filter on, so "software" is not "Software".
pub(crate) fn check_domain_verdict(
    v: wit::DomainVerdict,
    metadata_model: &str,
    latency_ms: u64,
) -> Result<DomainVerdict, CallError> {
    if !BUSINESS_TYPES.contains(&v.business_type.as_str()) {
        return Err(CallError::InvalidOutput(format!(
            "business type {:?} is not one of {}",
            shown(&v.business_type),
            BUSINESS_TYPES.join(", ")
        )));
    }
    let industry = match v.industry.as_deref() {
        None => None,
        Some(name) => Some(TAXONOMY.iter().find(|i| i.name == name).ok_or_else(|| {
            let known: Vec<&str> = TAXONOMY.iter().map(|i| i.name).collect();
            CallError::InvalidOutput(format!(
                "industry {:?} is not one of {}",
                shown(name),
                known.join(", ")
            ))
        })?),
    };
    match (industry, v.sub_industry.as_deref()) {
        (_, None) => {}
        (None, Some(sub)) => {
            return Err(CallError::InvalidOutput(format!(
                "sub-industry {:?} without an industry",
                shown(sub)
            )));
        }
        (Some(industry), Some(sub)) => {
            if !industry.subs.iter().any(|(name, _)| *name == sub) {
                let known: Vec<&str> = industry.subs.iter().map(|(name, _)| *name).collect();
                return Err(CallError::InvalidOutput(format!(
                    "sub-industry {:?} is not one of {}'s: {}",
                    shown(sub),
                    industry.name,
                    known.join(", ")
                )));
            }
        }
    }
    Ok(DomainVerdict {
        confidence: checked_confidence(v.confidence)?,
        model: verdict_model(&v.model, metadata_model),
        industry: v.industry,
        sub_industry: v.sub_industry,
        business_type: v.business_type,
        latency_ms,
    })
}

impl PluginRuntime {
    /// Classifies one company domain with the `domain-classifier` plugin
    /// `plugin_id`.
    ///
    /// As [`classify_reply`](PluginRuntime::classify_reply): `ai` answers the
    /// plugin's `ai.complete` imports for this call only (with `None` they
    /// fail with [`NO_AI_PROVIDER`](crate::NO_AI_PROVIDER), which an AI
    /// classifier returns as [`CallError::Permanent`]); a classifier whose
    /// metadata says `uses_ai: false` never gets the bridge; the usual
    /// sandbox applies, with no network. `input.text` is cut to
    /// [`MAX_DOMAIN_TEXT_BYTES`]. A verdict outside the taxonomy or
    /// [`BUSINESS_TYPES`], or whose confidence is not a number, is
    /// [`CallError::InvalidOutput`].
    pub async fn classify_domain(
        &self,
        plugin_id: &str,
        input: DomainInput,
        ai: Option<Arc<dyn AiBridge>>,
    ) -> Result<DomainVerdict, CallError> {
        let p = self.plugin_of(plugin_id, PluginKind::DomainClassifier)?;
        let KindPre::DomainClassifier(pre) = &p.pre else {
            unreachable!("kind checked by plugin_of")
        };
        let input = DomainInput {
            text: cap_bytes(input.text, MAX_DOMAIN_TEXT_BYTES),
            ..input
        };
        let c = self
            .run_classifier(
                &p,
                ai,
                classify_with!(pre, outreach_plugin_domain_classification, input),
            )
            .await?;
        check_domain_verdict(c.output, &c.metadata_model, c.latency_ms)
    }

    /// Loaded domain classifiers with their metadata, sorted by id.
    pub fn domain_classifiers(&self) -> Vec<DomainClassifierInfo> {
        self.classifiers_of(PluginKind::DomainClassifier)
    }

    /// One loaded domain classifier, when `plugin_id` is one.
    pub fn domain_classifier(&self, plugin_id: &str) -> Option<DomainClassifierInfo> {
        self.classifier_of(PluginKind::DomainClassifier, plugin_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(
        industry: Option<&str>,
        sub: Option<&str>,
        business_type: &str,
        confidence: f64,
        model: &str,
    ) -> wit::DomainVerdict {
        wit::DomainVerdict {
            industry: industry.map(Into::into),
            sub_industry: sub.map(Into::into),
            business_type: business_type.into(),
            confidence,
            model: model.into(),
        }
    }

    fn invalid(v: wit::DomainVerdict) -> String {
        match check_domain_verdict(v, "m", 0) {
            Err(CallError::InvalidOutput(m)) => m,
            other => panic!("expected invalid output, got {other:?}"),
        }
    }

    #[test]
    fn good_verdicts_pass_clamped() {
        let v = check_domain_verdict(
            verdict(
                Some("Retail"),
                Some("Fashion & Apparel"),
                "B2C",
                1.4,
                " gpt ",
            ),
            "m",
            7,
        );
        let expected = DomainVerdict {
            industry: Some("Retail".into()),
            sub_industry: Some("Fashion & Apparel".into()),
            business_type: "B2C".into(),
            confidence: 1.0,
            model: "gpt".into(),
            latency_ms: 7,
        };
        assert_eq!(v, Ok(expected));
        let v = check_domain_verdict(verdict(None, None, "unknown", -1.0, ""), "rules", 0).unwrap();
        assert_eq!((v.confidence, v.model.as_str()), (0.0, "rules"));
        let long = "x".repeat(500);
        let v = check_domain_verdict(verdict(None, None, "B2B", 0.5, &long), "m", 0).unwrap();
        assert_eq!(v.model.chars().count(), 200);
    }

    #[test]
    fn values_outside_the_taxonomy_are_refused() {
        for bad in ["b2b", "B2G", "", "unknown "] {
            let m = invalid(verdict(None, None, bad, 0.5, "m"));
            assert!(
                m.contains("is not one of B2B, B2C, B2B2C, marketplace"),
                "{m}"
            );
        }
        let m = invalid(verdict(Some("software"), None, "B2B", 0.5, "m"));
        assert!(
            m.contains("industry \"software\" is not one of Software, "),
            "{m}"
        );
        let m = invalid(verdict(Some("Software"), Some("Legal"), "B2B", 0.5, "m"));
        assert!(
            m.contains("is not one of Software's: Developer Tools"),
            "{m}"
        );
        let m = invalid(verdict(None, Some("Legal"), "B2B", 0.5, "m"));
        assert!(m.contains("without an industry"), "{m}");
        for bad in [f64::NAN, f64::NEG_INFINITY] {
            let m = invalid(verdict(Some("Software"), None, "B2B", bad, "m"));
            assert!(m.contains("confidence"), "{m}");
        }
    }

    #[test]
    fn text_is_cut_on_a_character_boundary() {
        assert_eq!(cap_bytes("aé".into(), 2), "a");
        assert_eq!(cap_bytes("abc".into(), 5), "abc");
        assert_eq!(BUSINESS_TYPES.len(), 7);
    }
}
