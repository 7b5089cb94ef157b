//! The fields of a domain record a scoring condition may read, the kind of
//! each (which decides the ops it takes), the values some of them are
//! limited to, and reading one from a record.

use crate::domains::record::{DomainRecord, ENRICHED, ENRICHING, FAILED, IMPORTED, QUEUED};
use outreach_domain_analysis::classify::BUSINESS_TYPES;
use outreach_domain_analysis::signals::{ALERT_SIGNALS, AUDIENCE_SIGNALS};

/// What a field holds, which decides the ops it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Number,
    Flag,
    List,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Number => "number",
            Kind::Flag => "boolean",
            Kind::List => "list",
        }
    }

    pub fn ops(self) -> &'static [&'static str] {
        match self {
            Kind::Text => &["equals", "not_equals", "in", "contains", "exists"],
            Kind::Number => &["equals", "not_equals", "in", "gte", "lte", "exists"],
            Kind::Flag => &["equals", "not_equals", "exists"],
            Kind::List => &["contains", "in", "exists"],
        }
    }
}

/// Every op, in the order errors list them.
pub const OPS: [&str; 7] = [
    "equals",
    "not_equals",
    "in",
    "contains",
    "exists",
    "gte",
    "lte",
];

/// A record field a condition may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Domain,
    Status,
    CompanyName,
    Summary,
    Industry,
    SubIndustry,
    BusinessType,
    Confidence,
    WebsiteEmail,
    Phone,
    EmployeesRange,
    IntentScore,
    IntentLevel,
    RegistrantCountry,
    IpCountry,
    Country,
    City,
    Language,
    MxProvider,
    HasSpf,
    HasDmarc,
    IsTrusted,
    FieldsFilled,
    CompletenessScore,
    Technologies,
    Signals,
    LikelyBuys,
    Gaps,
}

/// The fields by name, in the order errors list them.
pub const FIELDS: [(&str, Field); 28] = [
    ("domain", Field::Domain),
    ("status", Field::Status),
    ("company_name", Field::CompanyName),
    ("summary", Field::Summary),
    ("industry", Field::Industry),
    ("sub_industry", Field::SubIndustry),
    ("business_type", Field::BusinessType),
    ("confidence", Field::Confidence),
    ("website_email", Field::WebsiteEmail),
    ("phone", Field::Phone),
    ("employees_range", Field::EmployeesRange),
    ("intent_score", Field::IntentScore),
    ("intent_level", Field::IntentLevel),
    ("registrant_country", Field::RegistrantCountry),
    ("ip_country", Field::IpCountry),
    ("country", Field::Country),
    ("city", Field::City),
    ("language", Field::Language),
    ("mx_provider", Field::MxProvider),
    ("has_spf", Field::HasSpf),
    ("has_dmarc", Field::HasDmarc),
    ("is_trusted", Field::IsTrusted),
    ("fields_filled", Field::FieldsFilled),
    ("completeness_score", Field::CompletenessScore),
    ("technologies", Field::Technologies),
    ("signals", Field::Signals),
    ("likely_buys", Field::LikelyBuys),
    ("gaps", Field::Gaps),
];

const STATUSES: [&str; 5] = [IMPORTED, QUEUED, ENRICHING, ENRICHED, FAILED];
/// `signals::level`'s answers.
const INTENT_LEVELS: [&str; 4] = ["hot", "warm", "neutral", "cold"];

/// What a field of one record holds.
pub(super) enum Reading<'a> {
    Text(Option<&'a str>),
    Number(f64),
    Flag(Option<bool>),
    Strings(&'a [String]),
    Technologies(&'a [crate::domains::record::Technology]),
    /// Alert and audience signals (a name in both counts once).
    Signals(&'a [String], &'a [String]),
}

impl Field {
    pub fn parse(name: &str) -> Option<Field> {
        FIELDS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    pub fn name(self) -> &'static str {
        FIELDS
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("", |(n, _)| n)
    }

    pub fn kind(self) -> Kind {
        use Field::*;
        match self {
            Confidence | IntentScore | FieldsFilled | CompletenessScore => Kind::Number,
            HasSpf | HasDmarc | IsTrusted => Kind::Flag,
            Technologies | Signals | LikelyBuys | Gaps => Kind::List,
            _ => Kind::Text,
        }
    }

    /// The values a field can hold, when it is one of a known set: a value
    /// outside it could never match, so it is a typo worth a 400.
    pub(super) fn known_values(self) -> Option<Vec<&'static str>> {
        match self {
            Field::Status => Some(STATUSES.to_vec()),
            Field::BusinessType => Some(BUSINESS_TYPES.to_vec()),
            Field::IntentLevel => Some(INTENT_LEVELS.to_vec()),
            Field::Signals => {
                let mut all = ALERT_SIGNALS.to_vec();
                all.extend(
                    AUDIENCE_SIGNALS
                        .iter()
                        .filter(|s| !ALERT_SIGNALS.contains(s)),
                );
                Some(all)
            }
            _ => None,
        }
    }

    /// The range of a number field.
    pub(super) fn range(self) -> (f64, f64) {
        match self {
            Field::Confidence => (0.0, 1.0),
            Field::FieldsFilled => (0.0, 14.0),
            _ => (0.0, 100.0),
        }
    }

    pub(super) fn read(self, r: &DomainRecord) -> Reading<'_> {
        use Field::*;
        fn text(v: &Option<String>) -> Option<&str> {
            v.as_deref()
        }
        match self {
            Domain => Reading::Text(Some(&r.domain)),
            Status => Reading::Text(Some(&r.status)),
            CompanyName => Reading::Text(text(&r.company_name)),
            Summary => Reading::Text(text(&r.summary)),
            Industry => Reading::Text(text(&r.industry)),
            SubIndustry => Reading::Text(text(&r.sub_industry)),
            BusinessType => Reading::Text(Some(&r.business_type)),
            Confidence => Reading::Number(r.confidence),
            WebsiteEmail => Reading::Text(text(&r.website_email)),
            Phone => Reading::Text(text(&r.phone)),
            EmployeesRange => Reading::Text(text(&r.employees_range)),
            IntentScore => Reading::Number(r.intent_score as f64),
            IntentLevel => Reading::Text(Some(&r.intent_level)),
            RegistrantCountry => Reading::Text(text(&r.registrant_country)),
            IpCountry => Reading::Text(text(&r.ip_country)),
            Country => Reading::Text(text(&r.registrant_country).or(text(&r.ip_country))),
            City => Reading::Text(text(&r.city)),
            Language => Reading::Text(text(&r.language)),
            MxProvider => Reading::Text(text(&r.mx_provider)),
            HasSpf => Reading::Flag(r.has_spf),
            HasDmarc => Reading::Flag(r.has_dmarc),
            IsTrusted => Reading::Flag(Some(r.is_trusted)),
            FieldsFilled => Reading::Number(r.fields_filled as f64),
            CompletenessScore => Reading::Number(r.completeness_score as f64),
            Technologies => Reading::Technologies(&r.technologies),
            Signals => Reading::Signals(&r.alert_signals, &r.audience_signals),
            LikelyBuys => Reading::Strings(&r.likely_buys),
            Gaps => Reading::Strings(&r.gaps),
        }
    }
}

impl Reading<'_> {
    /// Whether some element of a list satisfies `test`.
    pub(super) fn any(&self, test: impl Fn(&str) -> bool) -> bool {
        match self {
            Reading::Strings(v) => v.iter().any(|s| test(s)),
            Reading::Technologies(v) => v.iter().any(|t| test(&t.name)),
            Reading::Signals(a, b) => a.iter().chain(b.iter()).any(|s| test(s)),
            _ => false,
        }
    }

    pub(super) fn exists(&self) -> bool {
        match self {
            Reading::Text(t) => t.is_some_and(|t| !t.is_empty()),
            Reading::Number(_) => true,
            Reading::Flag(f) => f.is_some(),
            Reading::Strings(v) => !v.is_empty(),
            Reading::Technologies(v) => !v.is_empty(),
            Reading::Signals(a, b) => !a.is_empty() || !b.is_empty(),
        }
    }
}

/// `text` equal to `lowered` (already lower case), ignoring case; ASCII
/// text needs no allocation.
pub(super) fn equal_ci(text: &str, lowered: &str) -> bool {
    if text.is_ascii() {
        text.eq_ignore_ascii_case(lowered)
    } else {
        text.to_lowercase() == lowered
    }
}

pub(super) fn contains_ci(text: &str, lowered: &str) -> bool {
    if text.is_ascii() && lowered.is_ascii() {
        text.as_bytes()
            .windows(lowered.len().max(1))
            .any(|w| w.eq_ignore_ascii_case(lowered.as_bytes()))
    } else {
        text.to_lowercase().contains(lowered)
    }
}
