//! The export templates (spec/2: full 22 columns, compact 8, contacts 6)
//! and a pool record's cells under each. The columns are named in
//! ARCHITECTURE.md's code map and docs/decisions/integrations.md.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::domains::record::DomainRecord;

/// A spreadsheet cell holds at most 50,000 characters.
const MAX_CELL: usize = 50_000;

pub struct Template {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub columns: &'static [&'static str],
}

pub const FULL: Template = Template {
    id: "full",
    name: "Full",
    description: "Every field of the pool's record",
    columns: &[
        "domain",
        "company_name",
        "industry",
        "sub_industry",
        "business_type",
        "country",
        "city",
        "confidence",
        "intent_score",
        "intent_level",
        "website_email",
        "phone",
        "employees_range",
        "technologies",
        "signals",
        "likely_buys",
        "summary",
        "linkedin",
        "twitter",
        "registered_at",
        "enriched_at",
        "completeness_score",
    ],
};

pub const COMPACT: Template = Template {
    id: "compact",
    name: "Compact",
    description: "The fields a first look needs",
    columns: &[
        "domain",
        "company_name",
        "industry",
        "country",
        "confidence",
        "intent_score",
        "website_email",
        "summary",
    ],
};

pub const CONTACTS: Template = Template {
    id: "contacts",
    name: "Contacts",
    description: "Ways to reach each company",
    columns: &[
        "domain",
        "company_name",
        "website_email",
        "phone",
        "linkedin",
        "twitter",
    ],
};

pub const TEMPLATES: [&Template; 3] = [&FULL, &COMPACT, &CONTACTS];

/// A template by id; 400 names the three.
pub fn named(id: &str) -> Option<&'static Template> {
    TEMPLATES.into_iter().find(|t| t.id == id)
}

/// `GET /v1/sheets/templates`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SheetsTemplateList {
    pub templates: Vec<SheetsTemplate>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SheetsTemplate {
    pub id: String,
    pub name: String,
    pub description: String,
    pub columns: Vec<String>,
}

pub fn list() -> SheetsTemplateList {
    SheetsTemplateList {
        templates: TEMPLATES
            .iter()
            .map(|t| SheetsTemplate {
                id: t.id.into(),
                name: t.name.into(),
                description: t.description.into(),
                columns: t.columns.iter().map(|c| c.to_string()).collect(),
            })
            .collect(),
    }
}

fn text(v: Option<&str>) -> Value {
    match v {
        Some(s) if !s.is_empty() => Value::from(s.chars().take(MAX_CELL).collect::<String>()),
        _ => Value::from(""),
    }
}

fn joined<'a>(items: impl Iterator<Item = &'a str>) -> Value {
    text(Some(&items.collect::<Vec<_>>().join(", ")))
}

/// One cell of a record. Numbers are numbers; absent values are empty;
/// lists are comma-separated.
fn cell(r: &DomainRecord, column: &str) -> Value {
    let social = |name: &str| text(r.social_links[name].as_str());
    match column {
        "domain" => text(Some(&r.domain)),
        "company_name" => text(r.company_name.as_deref()),
        "industry" => text(r.industry.as_deref()),
        "sub_industry" => text(r.sub_industry.as_deref()),
        "business_type" => text(r.known_business_type()),
        "country" => text(r.country()),
        "city" => text(r.city.as_deref()),
        "confidence" => r
            .known_confidence_pct()
            .map_or(Value::from(""), Value::from),
        "intent_score" => Value::from(r.intent_score),
        "intent_level" => text(Some(&r.intent_level)),
        "website_email" => text(r.website_email.as_deref()),
        "phone" => text(r.phone.as_deref()),
        "employees_range" => text(r.employees_range.as_deref()),
        "technologies" => joined(r.technologies.iter().map(|t| t.name.as_str())),
        "signals" => joined(
            r.alert_signals
                .iter()
                .chain(
                    r.audience_signals
                        .iter()
                        .filter(|s| !r.alert_signals.contains(s)),
                )
                .map(String::as_str),
        ),
        "likely_buys" => joined(r.likely_buys.iter().map(String::as_str)),
        "summary" => text(r.summary.as_deref()),
        "linkedin" => social("linkedin"),
        "twitter" => social("twitter"),
        "registered_at" => text(r.registered_at.as_deref()),
        "enriched_at" => text(r.enriched_at.as_deref()),
        "completeness_score" => Value::from(r.completeness_score),
        _ => Value::from(""),
    }
}

/// The header row of a template.
pub fn header(t: &Template) -> Vec<Value> {
    t.columns.iter().map(|c| Value::from(*c)).collect()
}

/// A record's row; a domain the pool does not hold has only its name.
pub fn row(t: &Template, domain: &str, record: Option<&DomainRecord>) -> Vec<Value> {
    t.columns
        .iter()
        .map(|c| match (record, *c) {
            (Some(r), c) => cell(r, c),
            (None, "domain") => Value::from(domain),
            (None, _) => Value::from(""),
        })
        .collect()
}
