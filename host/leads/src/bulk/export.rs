//! The fields of `POST /v1/bulk/export`: spec/2's default eleven, and the
//! rest of the record a caller may ask for by name.

use crate::domains::record::DomainRecord;

/// spec/2 "Bulk operations": the columns when `fields` is omitted.
pub const DEFAULT_FIELDS: [&str; 11] = [
    "domain",
    "company_name",
    "industry",
    "sub_industry",
    "country",
    "website_email",
    "phone",
    "employees_range",
    "business_type",
    "confidence",
    "technologies",
];

/// The rest of the record an export may name.
pub const MORE_FIELDS: [&str; 16] = [
    "summary",
    "status",
    "registrant_country",
    "ip_country",
    "city",
    "language",
    "intent_score",
    "intent_level",
    "signals",
    "likely_buys",
    "gaps",
    "mx_provider",
    "is_trusted",
    "completeness_score",
    "registered_at",
    "enriched_at",
];

/// Whether an export may name `field`.
pub fn is_field(field: &str) -> bool {
    DEFAULT_FIELDS.contains(&field) || MORE_FIELDS.contains(&field)
}

fn text(v: &Option<String>) -> String {
    v.clone().unwrap_or_default()
}

/// Several values in one cell.
fn joined(values: impl IntoIterator<Item = String>) -> String {
    values.into_iter().collect::<Vec<_>>().join("; ")
}

/// The cell of `field` (see [`is_field`]) for a record; a domain the pool
/// lacks has only its domain cell.
pub fn cell(record: Option<&DomainRecord>, domain: &str, field: &str) -> String {
    let Some(r) = record else {
        return if field == "domain" {
            domain.to_string()
        } else {
            String::new()
        };
    };
    match field {
        "domain" => r.domain.clone(),
        "company_name" => text(&r.company_name),
        "industry" => text(&r.industry),
        "sub_industry" => text(&r.sub_industry),
        "country" => text(&r.registrant_country.clone().or(r.ip_country.clone())),
        "website_email" => text(&r.website_email),
        "phone" => text(&r.phone),
        "employees_range" => text(&r.employees_range),
        "business_type" => r.business_type.clone(),
        "confidence" => format!("{:.2}", r.confidence),
        "technologies" => joined(r.technologies.iter().map(|t| t.name.clone())),
        "summary" => text(&r.summary),
        "status" => r.status.clone(),
        "registrant_country" => text(&r.registrant_country),
        "ip_country" => text(&r.ip_country),
        "city" => text(&r.city),
        "language" => text(&r.language),
        "intent_score" => r.intent_score.to_string(),
        "intent_level" => r.intent_level.clone(),
        "signals" => {
            let mut all = r.alert_signals.clone();
            all.extend(
                r.audience_signals
                    .iter()
                    .filter(|s| !r.alert_signals.contains(s))
                    .cloned(),
            );
            joined(all)
        }
        "likely_buys" => joined(r.likely_buys.clone()),
        "gaps" => joined(r.gaps.clone()),
        "mx_provider" => text(&r.mx_provider),
        "is_trusted" => r.is_trusted.to_string(),
        "completeness_score" => r.completeness_score.to_string(),
        "registered_at" => text(&r.registered_at),
        "enriched_at" => text(&r.enriched_at),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_has_a_cell_and_the_defaults_are_fields() {
        for f in DEFAULT_FIELDS.iter().chain(&MORE_FIELDS) {
            assert!(is_field(f), "{f}");
        }
        // An unknown record gives only its domain.
        assert_eq!(cell(None, "acme.com", "domain"), "acme.com");
        assert_eq!(cell(None, "acme.com", "industry"), "");
    }
}
