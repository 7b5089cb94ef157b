//! The classification stage: the operator's `domain-classifier` plugin
//! (`domain_classifier`; the first-party rules component by default), and
//! the rules component whenever the chosen one fails, so a record is never
//! left unclassified because a model was down.
//!
//! The pool is global, so an AI classifier has no asking account to charge:
//! it runs on the AI keys of the account the operator names in
//! `domain_classifier_account_id`, with its cost in that account's vendor
//! ledger under `domain_classifier`. Without one it fails with the
//! no-provider error and the rules decide.

use std::sync::Arc;

use outreach_core::state::AppState;
use outreach_domain_analysis::classify::{Classification, ClassifyInput, classify};
use outreach_plugin_runtime::{AiBridge, DomainInput};
use outreach_vendors::AccountAi;

/// The first-party rules component.
pub const RULES_CLASSIFIER: &str = "domain-classifier-rules";
/// The vendor-ledger action type of AI classification.
pub const ACTION_TYPE: &str = "domain_classifier";

/// Classifies one company.
pub async fn run(state: &AppState, input: ClassifyInput) -> Classification {
    let chosen = state.config.domain_classifier.as_str();
    let chosen = if chosen.is_empty() {
        RULES_CLASSIFIER
    } else {
        chosen
    };
    let mut tried = Vec::new();
    for plugin in [chosen, RULES_CLASSIFIER] {
        if tried.contains(&plugin) {
            continue;
        }
        tried.push(plugin);
        let ai: Option<Arc<dyn AiBridge>> = match state.config.domain_classifier_account_id {
            0 => None,
            account_id => Some(Arc::new(AccountAi::new(
                state,
                account_id,
                "domain-classifier",
                ACTION_TYPE,
            ))),
        };
        match state
            .plugins
            .classify_domain(plugin, DomainInput::from(input.clone()), ai)
            .await
        {
            Ok(v) => {
                return Classification {
                    industry: v.industry,
                    sub_industry: v.sub_industry,
                    business_type: v.business_type,
                    confidence: v.confidence,
                };
            }
            Err(e) => tracing::warn!(plugin, error = %e, domain = %input.domain,
                "domain classifier failed; falling back"),
        }
    }
    // No component loaded at all (plugins switched off): the same rules,
    // compiled in.
    classify(&input)
}
