//! `domain-classifier` over the rules of `outreach-domain-analysis`:
//! weighted keywords of the taxonomy in seven languages, shop-system
//! technologies and registry suffixes, no model and no key. It wraps exactly
//! [`outreach_domain_analysis::classify::classify`], so its verdicts match
//! what the enrichment pipeline computes natively for the same site.

use outreach_domain_analysis::classify::{self as rules, ClassifyInput};
use outreach_plugin_sdk::prelude::*;

/// The rules revision stored with every verdict. Bump it when the rules or
/// the taxonomy change, so stored classifications can be told apart.
pub const MODEL: &str = "domain-rules-v1";

pub struct Rules;

impl DomainClassifier for Rules {
    fn metadata() -> ClassifierMetadata {
        ClassifierMetadata {
            name: "Rules".into(),
            model: MODEL.into(),
            description: "Taxonomy keywords in seven languages, shop systems and registry \
                          suffixes; no AI key needed and no cost."
                .into(),
            uses_ai: false,
        }
    }

    fn classify(input: &DomainInput) -> Result<DomainVerdict, PluginError> {
        let c = rules::classify(&ClassifyInput {
            domain: input.domain.clone(),
            company_name: input.company_name.clone(),
            title: input.title.clone(),
            summary: input.summary.clone(),
            text: input.text.clone(),
            technologies: input.technologies.clone(),
            sells_subscriptions: input.sells_subscriptions,
        });
        Ok(DomainVerdict {
            industry: c.industry,
            sub_industry: c.sub_industry,
            business_type: c.business_type,
            confidence: c.confidence,
            model: MODEL.into(),
        })
    }
}

outreach_plugin_sdk::export_domain_classifier!(Rules);

#[cfg(test)]
mod tests {
    use super::*;

    fn input(domain: &str, name: &str, summary: &str, text: &str) -> DomainInput {
        DomainInput {
            domain: domain.into(),
            company_name: Some(name.into()),
            title: None,
            summary: Some(summary.into()),
            text: text.into(),
            technologies: vec![],
            sells_subscriptions: false,
        }
    }

    #[test]
    fn a_software_company_is_software_and_b2b() {
        let v = Rules::classify(&DomainInput {
            sells_subscriptions: true,
            ..input(
                "initech.io",
                "Initech",
                "The workflow automation platform for finance teams. Book a demo.",
                "Integrate with our API. Trusted by 2,000 businesses. Enterprise plans. \
                 Developer docs.",
            )
        })
        .unwrap();
        assert_eq!(
            (
                v.industry.as_deref(),
                v.business_type.as_str(),
                v.model.as_str()
            ),
            (Some("Software"), "B2B", MODEL)
        );
        assert!(v.confidence >= 0.6, "{v:?}");
    }

    #[test]
    fn a_german_shoe_shop_is_fashion_retail_and_b2c() {
        let v = Rules::classify(&DomainInput {
            technologies: vec![("Shopify".into(), vec!["Ecommerce".into()])],
            ..input(
                "schuhhaus-meier.de",
                "Schuhhaus Meier",
                "Schuhe und Mode online kaufen – versandkostenfrei ab 50 €",
                "Warenkorb Damen Herren Sale Schuhe Stiefel Sneaker jetzt kaufen",
            )
        })
        .unwrap();
        assert_eq!(
            (
                v.industry.as_deref(),
                v.sub_industry.as_deref(),
                v.business_type.as_str()
            ),
            (Some("Retail"), Some("Fashion & Apparel"), "B2C")
        );
    }

    #[test]
    fn too_little_evidence_is_unknown() {
        let v = Rules::classify(&input("x.example", "X", "Welcome", "Hello world")).unwrap();
        assert_eq!(
            (
                v.industry,
                v.sub_industry,
                v.business_type.as_str(),
                v.confidence
            ),
            (None, None, "unknown", 0.0)
        );
    }

    #[test]
    fn metadata_names_the_rules_revision() {
        let m = Rules::metadata();
        assert_eq!((m.name.as_str(), m.model.as_str()), ("Rules", MODEL));
        assert!(!m.uses_ai);
        // The SDK's list and the rules' list are the same seven.
        assert_eq!(BUSINESS_TYPES, rules::BUSINESS_TYPES);
    }
}
