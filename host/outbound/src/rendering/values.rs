//! Token values: what a name resolves to for one contact, from the
//! contact itself, its enrollment metadata and the cached enrichment of its
//! domain. Pure, so every rule is unit-tested here.

use serde_json::{Map, Value};

/// The enrichment tokens of spec/3 that are fields of the enrichment result
/// read as they are. `technologies`, `technologies_list` and
/// `company_size_estimate` are derived and handled apart. The result's
/// other fields (provider, cost, latency, raw) are bookkeeping, not copy.
const ENRICHMENT_FIELDS: [&str; 14] = [
    "name",
    "legal_name",
    "description",
    "founded_year",
    "employee_count",
    "employee_range",
    "annual_revenue_usd",
    "total_funding_usd",
    "latest_funding_stage",
    "industry",
    "hq_country",
    "hq_city",
    "linkedin_url",
    "twitter_handle",
];

/// How many technologies `{{technologies}}` lists (spec/3: top 20).
const TOP_TECHNOLOGIES: usize = 20;

/// Everything a token can be resolved from.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    pub email: &'a str,
    pub domain: &'a str,
    pub metadata: &'a Map<String, Value>,
    /// The cached enrichment result of the contact's domain, if any.
    pub enrichment: Option<&'a Value>,
}

impl Sources<'_> {
    /// The value of the token `name` (as written, trimmed), or `None` when
    /// it has none. The order (see the module docs of `rendering`):
    /// built-ins, metadata, the `first_name` and `company` aliases, then
    /// the enrichment tokens.
    pub fn lookup(&self, name: &str) -> Option<String> {
        let key = name.trim().to_lowercase();
        match key.as_str() {
            "domain" => return non_empty(self.domain),
            "email" => return non_empty(self.email),
            _ => {}
        }
        if let Some(v) = self.metadata_value(name.trim()) {
            return Some(v);
        }
        match key.as_str() {
            // `first_name` itself was tried above, case-insensitively.
            "first_name" => return self.metadata_value("firstName"),
            "company" => return self.enrichment_value("name"),
            _ => {}
        }
        self.enrichment_token(&key)
    }

    /// A metadata key matched exactly, else case-insensitively (the first
    /// such key in the object's order, which is insertion order).
    fn metadata_value(&self, name: &str) -> Option<String> {
        if let Some(v) = self.metadata.get(name) {
            return format_value(v);
        }
        self.metadata
            .iter()
            .find(|(k, _)| k.to_lowercase() == name.to_lowercase())
            .and_then(|(_, v)| format_value(v))
    }

    fn enrichment_value(&self, field: &str) -> Option<String> {
        format_value(self.enrichment?.get(field)?)
    }

    fn enrichment_token(&self, key: &str) -> Option<String> {
        let enrichment = self.enrichment?;
        match key {
            "technologies" => {
                let names: Vec<String> = technologies(enrichment)
                    .into_iter()
                    .filter_map(format_value)
                    .take(TOP_TECHNOLOGIES)
                    .collect();
                non_empty(&names.join(", "))
            }
            "technologies_list" => match enrichment.get("technologies") {
                Some(list @ Value::Array(items)) if !items.is_empty() => Some(list.to_string()),
                _ => None,
            },
            "company_size_estimate" => self
                .enrichment_value("employee_range")
                .or_else(|| self.enrichment_value("employee_count")),
            _ if ENRICHMENT_FIELDS.contains(&key) => self.enrichment_value(key),
            _ => None,
        }
    }
}

fn technologies(enrichment: &Value) -> Vec<&Value> {
    match enrichment.get("technologies") {
        Some(Value::Array(items)) => items.iter().collect(),
        _ => Vec::new(),
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.trim().is_empty()).then(|| s.to_owned())
}

/// A JSON value as token text. Null, blank strings and empty arrays or
/// objects are no value (so a fallback applies); numbers lose a trailing
/// `.0` (`5000000.0` is `5000000`); other arrays and objects are their
/// compact JSON text.
pub fn format_value(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => non_empty(s),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(format_number(n)),
        Value::Array(a) if a.is_empty() => None,
        Value::Object(o) if o.is_empty() => None,
        other => Some(other.to_string()),
    }
}

/// Integers as they are; floats with a zero fraction as integers (up to
/// 2^53, where every integer is exact); other floats in Rust's shortest
/// round-trip form.
fn format_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
            format!("{}", f as i64)
        }
        Some(f) => format!("{f}"),
        None => n.to_string(),
    }
}

#[cfg(test)]
mod unit {
    use super::*;
    use serde_json::json;

    fn with<'a>(metadata: &'a Map<String, Value>, enrichment: Option<&'a Value>) -> Sources<'a> {
        Sources {
            email: "ann@acme.com",
            domain: "acme.com",
            metadata,
            enrichment,
        }
    }

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn built_ins_come_before_metadata() {
        let m = map(json!({"domain": "spoof.com", "email": "x@y.z"}));
        let s = with(&m, None);
        assert_eq!(s.lookup("domain").as_deref(), Some("acme.com"));
        assert_eq!(s.lookup(" EMAIL ").as_deref(), Some("ann@acme.com"));
    }

    #[test]
    fn metadata_exact_then_case_insensitive() {
        let m = map(json!({"Title": "CTO", "title": "cto", "Team": "Data", "Grüße": "x"}));
        let s = with(&m, None);
        assert_eq!(s.lookup("Title").as_deref(), Some("CTO"));
        assert_eq!(s.lookup("title").as_deref(), Some("cto"));
        assert_eq!(s.lookup("TEAM").as_deref(), Some("Data"));
        assert_eq!(s.lookup("GRÜßE").as_deref(), Some("x"));
        assert_eq!(s.lookup("nope"), None);
    }

    #[test]
    fn first_name_and_company_aliases() {
        let m = map(json!({"firstName": "Ann"}));
        let e = json!({"name": "Acme Inc"});
        let s = with(&m, Some(&e));
        assert_eq!(s.lookup("first_name").as_deref(), Some("Ann"));
        assert_eq!(s.lookup("company").as_deref(), Some("Acme Inc"));
        let m = map(json!({"first_name": "Bo", "firstName": "Ann", "Company": "ACME"}));
        let s = with(&m, Some(&e));
        assert_eq!(s.lookup("first_name").as_deref(), Some("Bo"));
        assert_eq!(s.lookup("company").as_deref(), Some("ACME"));
    }

    #[test]
    fn value_formatting() {
        let m = map(json!({
            "n": 42, "f": 5000000.0, "g": 2.5, "neg": -3.0, "t": true,
            "blank": "  ", "empty": "", "null": null, "arr": [1, "a"], "obj": {"k": 1},
            "noarr": [], "noobj": {}
        }));
        let s = with(&m, None);
        let got = |k: &str| s.lookup(k);
        assert_eq!(got("n").as_deref(), Some("42"));
        assert_eq!(got("f").as_deref(), Some("5000000"));
        assert_eq!(got("g").as_deref(), Some("2.5"));
        assert_eq!(got("neg").as_deref(), Some("-3"));
        assert_eq!(got("t").as_deref(), Some("true"));
        assert_eq!(got("arr").as_deref(), Some(r#"[1,"a"]"#));
        assert_eq!(got("obj").as_deref(), Some(r#"{"k":1}"#));
        for none in ["blank", "empty", "null", "noarr", "noobj"] {
            assert_eq!(got(none), None, "{none}");
        }
    }

    #[test]
    fn enrichment_tokens() {
        let techs: Vec<String> = (1..=25).map(|i| format!("T{i}")).collect();
        let e = json!({
            "domain": "acme.com", "provider": "vendor-x", "name": "Acme", "founded_year": 1999,
            "employee_count": 120, "employee_range": "51-200", "annual_revenue_usd": 12000000.0,
            "total_funding_usd": 2.5e6, "industry": "Software", "hq_city": null,
            "technologies": techs, "cost_estimate_usd": 0.0
        });
        let m = Map::new();
        let s = with(&m, Some(&e));
        assert_eq!(s.lookup("founded_year").as_deref(), Some("1999"));
        assert_eq!(s.lookup("Annual_Revenue_USD").as_deref(), Some("12000000"));
        assert_eq!(s.lookup("total_funding_usd").as_deref(), Some("2500000"));
        assert_eq!(s.lookup("company_size_estimate").as_deref(), Some("51-200"));
        assert_eq!(s.lookup("hq_city"), None);
        let joined = s.lookup("technologies").unwrap();
        assert!(
            joined.starts_with("T1, T2, ") && joined.ends_with("T20"),
            "{joined}"
        );
        let list: Vec<String> =
            serde_json::from_str(&s.lookup("technologies_list").unwrap()).unwrap();
        assert_eq!(list.len(), 25, "the raw array, not the top 20");
        // Bookkeeping fields are not tokens.
        for field in ["provider", "cost_estimate_usd", "raw", "latency_ms"] {
            assert_eq!(s.lookup(field), None, "{field}");
        }
        // The range missing: the exact count; metadata wins over enrichment.
        let e = json!({"employee_range": "", "employee_count": 7, "technologies": []});
        let m = map(json!({"industry": "Retail"}));
        let s = with(&m, Some(&e));
        assert_eq!(s.lookup("company_size_estimate").as_deref(), Some("7"));
        assert_eq!(s.lookup("technologies"), None);
        assert_eq!(s.lookup("technologies_list"), None);
        assert_eq!(s.lookup("industry").as_deref(), Some("Retail"));
        // No cached enrichment at all.
        assert_eq!(with(&m, None).lookup("name"), None);
    }
}
