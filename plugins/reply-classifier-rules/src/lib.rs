//! `reply-classifier` over the rules of `outreach-mail-analysis`: headers,
//! DSN structure and multilingual phrase lists, no model and no key. It wraps
//! exactly [`outreach_mail_analysis::rules::classify`], so its verdicts match
//! what the host computes natively for the same reply.

use outreach_mail_analysis::rules;
use outreach_plugin_sdk::prelude::*;

pub struct Rules;

impl ReplyClassifier for Rules {
    fn metadata() -> ClassifierMetadata {
        ClassifierMetadata {
            name: "Rules".into(),
            model: rules::MODEL.into(),
            description: "Headers, bounce structure and multilingual phrase lists; \
                          no AI key needed and no cost."
                .into(),
            uses_ai: false,
        }
    }

    fn classify(input: &ReplyInput) -> Result<ReplyVerdict, PluginError> {
        let verdict = rules::classify(&rules::Input {
            headers: &input.headers,
            subject: &input.subject,
            text: &input.text,
            original_subject: input.original_subject.as_deref(),
        });
        Ok(ReplyVerdict {
            label: verdict.label.into(),
            confidence: verdict.confidence,
            model: rules::MODEL.into(),
        })
    }
}

outreach_plugin_sdk::export_reply_classifier!(Rules);

#[cfg(test)]
mod tests {
    use super::*;

    fn input(headers: &[(&str, &str)], subject: &str, text: &str) -> ReplyInput {
        ReplyInput {
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            subject: subject.into(),
            text: text.into(),
            original_subject: Some("Quick question".into()),
        }
    }

    #[test]
    fn labels_match_the_rules() {
        let v = Rules::classify(&input(
            &[],
            "Re: Quick question",
            "Please remove me from your list.",
        ))
        .unwrap();
        assert_eq!(
            (v.label.as_str(), v.model.as_str()),
            ("unsubscribe", "rules-v1")
        );
        let v = Rules::classify(&input(
            &[("Auto-Submitted", "auto-replied")],
            "Out of Office: Quick question",
            "I am out of the office until Monday.",
        ))
        .unwrap();
        assert_eq!(v.label, "ooo");
        assert!(v.confidence >= 0.9, "{}", v.confidence);
        let v = Rules::classify(&input(
            &[],
            "Re: Quick question",
            "Sounds great, can we set up a call Tuesday?",
        ))
        .unwrap();
        assert_eq!(v.label, "interested");
    }

    #[test]
    fn metadata_names_the_rules_revision() {
        let m = Rules::metadata();
        assert_eq!(m.model, "rules-v1");
        assert!(!m.uses_ai);
        assert!(REPLY_LABELS.iter().all(|l| rules::LABELS.contains(l)));
    }
}
