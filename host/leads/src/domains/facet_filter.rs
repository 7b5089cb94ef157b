//! One filter over the pool's facets (`domains::facets`), which audience
//! and alert filters both compile to: tested in memory against a pool
//! event's facets by the evaluation worker, and run as SQL over
//! `pool_facets` for counts, previews and alert tests. Both forms live
//! here side by side so they cannot drift (a test compares them).

use sqlx::Row;

use super::facets::Facets;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::store::{Arg, Args, Backend, Db};
use outreach_domain_analysis::classify::{BUSINESS_TYPES, TAXONOMY};

/// A checked filter: empty lists and zero minimums test nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FacetFilter {
    /// Lower case; any of them.
    pub industries: Vec<String>,
    /// Upper-case ISO codes; any of them.
    pub countries: Vec<String>,
    /// Whole percent.
    pub min_confidence: i64,
    pub min_intent_score: i64,
    /// Every bit must be set.
    pub required_bits: i64,
    /// No bit may be set.
    pub excluded_bits: i64,
    /// As the record spells them (`B2B`); any of them.
    pub business_types: Vec<String>,
}

impl FacetFilter {
    /// Whether a record with `f` matches.
    pub fn matches(&self, f: &Facets) -> bool {
        let any_of = |wanted: &[String], have: &Option<String>| {
            wanted.is_empty() || have.as_ref().is_some_and(|h| wanted.contains(h))
        };
        any_of(&self.industries, &f.industry)
            && any_of(&self.countries, &f.country)
            && f.confidence >= self.min_confidence
            && f.intent_score >= self.min_intent_score
            && f.signal_bits & self.required_bits == self.required_bits
            && f.signal_bits & self.excluded_bits == 0
            && (self.business_types.is_empty() || self.business_types.contains(&f.business_type))
    }

    /// The SQL condition over `pool_facets` (aliased `f`), its values
    /// pushed on `args`.
    pub fn where_sql(&self, args: &mut Args) -> String {
        let mut clauses = vec!["1 = 1".to_owned()];
        let mut any_of = |column: &str, values: &[String], args: &mut Args| {
            if !values.is_empty() {
                let list: Vec<String> = values
                    .iter()
                    .map(|v| args.push(Arg::Text(v.clone())))
                    .collect();
                clauses.push(format!("f.{column} IN ({})", list.join(", ")));
            }
        };
        any_of("industry", &self.industries, args);
        any_of("country", &self.countries, args);
        any_of("business_type", &self.business_types, args);
        if self.min_confidence > 0 {
            let p = args.push(Arg::Int(self.min_confidence));
            clauses.push(format!("f.confidence >= {p}"));
        }
        if self.min_intent_score > 0 {
            let p = args.push(Arg::Int(self.min_intent_score));
            clauses.push(format!("f.intent_score >= {p}"));
        }
        if self.required_bits != 0 {
            let p = args.push(Arg::Int(self.required_bits));
            let q = args.push(Arg::Int(self.required_bits));
            clauses.push(format!("(f.signal_bits & {p}) = {q}"));
        }
        if self.excluded_bits != 0 {
            let p = args.push(Arg::Int(self.excluded_bits));
            clauses.push(format!("(f.signal_bits & {p}) = 0"));
        }
        clauses.join(" AND ")
    }

    /// How many records of the pool match.
    pub async fn count(&self, db: &Db) -> sqlx::Result<i64> {
        let mut conn = db.pool.acquire().await?;
        self.count_on(&mut conn).await
    }

    /// [`FacetFilter::count`] on a given connection (a transaction that
    /// must see its own snapshot).
    pub async fn count_on(&self, conn: &mut sqlx::AnyConnection) -> sqlx::Result<i64> {
        let mut args = Args::default();
        let sql = format!(
            "SELECT COUNT(*) FROM pool_facets f WHERE {}",
            self.where_sql(&mut args)
        );
        args.bind_scalar(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).persistent(false))
            .fetch_one(conn)
            .await
    }

    /// Up to `limit` matching records, highest `order_by` (a
    /// `pool_facets` column) first, with the `domains` columns named in
    /// `columns`. `matches` is the filter's count, which picks the plan:
    /// many matches walk the column's order and stop at `limit`, few are
    /// found by the filter's own index and sorted. Only the `limit` rows
    /// kept are joined to their wide `domains` rows.
    pub async fn sample(
        &self,
        db: &Db,
        columns: &str,
        order_by: SampleOrder,
        matches: i64,
        limit: i64,
    ) -> sqlx::Result<Vec<sqlx::any::AnyRow>> {
        let mut args = Args::default();
        let filter = self.where_sql(&mut args);
        let limit = args.push(Arg::Int(limit));
        let column = order_by.column();
        let (hint, key) = if matches >= WALK_FROM {
            // SQLite would otherwise prefer the filter's index and sort
            // every match; PostgreSQL walks the order's index by itself.
            let hint = match (db.backend, order_by) {
                (Backend::Sqlite, SampleOrder::Newest) => " INDEXED BY pool_facets_seen",
                _ => "",
            };
            (hint, format!("f.{column}"))
        } else {
            // `+ 0` keeps either planner off the order's index, which
            // would pass over most of the pool to find a few matches.
            ("", format!("f.{column} + 0"))
        };
        let sql = format!(
            "SELECT {columns}, f.country AS facet_country FROM \
             (SELECT f.domain_id, f.country, f.{column} AS sample_key FROM pool_facets f{hint} \
              WHERE {filter} ORDER BY {key} DESC, f.domain_id DESC LIMIT {limit}) f \
             JOIN domains d ON d.id = f.domain_id ORDER BY f.sample_key DESC, f.domain_id DESC"
        );
        args.bind(sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false))
            .fetch_all(&db.pool)
            .await
    }
}

/// From this many matches a sample walks its order's index rather than
/// sorting the matches (0.2 % of a million-record pool: a walk of about
/// 5,000 rows finds ten; measured by `tests/bench/audiences.sh`).
const WALK_FROM: i64 = 2_000;

/// The orders a sample is taken in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleOrder {
    /// Newest enrichment first (audience previews).
    Newest,
    /// Highest intent first (alert tests).
    Intent,
}

impl SampleOrder {
    fn column(self) -> &'static str {
        match self {
            SampleOrder::Newest => "seen_at",
            SampleOrder::Intent => "intent_score",
        }
    }
}

/// The country column [`FacetFilter::sample`] adds.
pub fn sample_country(row: &sqlx::any::AnyRow) -> sqlx::Result<Option<String>> {
    row.try_get("facet_country")
}

/// An industry of the taxonomy, named case-insensitively; answers its
/// canonical name, or 400 naming the value.
pub fn check_industry(field: &str, value: &str) -> ApiResult<String> {
    let value = value.trim();
    TAXONOMY
        .iter()
        .find(|i| i.name.eq_ignore_ascii_case(value))
        .map(|i| i.name.to_owned())
        .ok_or_else(|| ApiError::bad_request(format!("Unknown industry in {field}: '{value}'")))
}

/// An ISO 3166-1 alpha-2 code, any case; answers it in upper case, or 400
/// naming the value.
pub fn check_country(field: &str, value: &str) -> ApiResult<String> {
    let code = value.trim().to_ascii_uppercase();
    let known = code.len() == 2
        && code.bytes().all(|b| b.is_ascii_alphabetic())
        && outreach_domain_analysis::extract::is_region(&code);
    if known {
        Ok(code)
    } else {
        Err(ApiError::bad_request(format!(
            "Unknown country code in {field}: '{}' (ISO 3166-1 alpha-2 expected)",
            value.trim()
        )))
    }
}

/// A business type of spec/2, any case; answers the record's spelling.
pub fn check_business_type(field: &str, value: &str) -> ApiResult<String> {
    let value = value.trim();
    BUSINESS_TYPES
        .iter()
        .find(|b| b.eq_ignore_ascii_case(value))
        .map(|b| (*b).to_owned())
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "Unknown business type in {field}: '{value}' (one of {})",
                BUSINESS_TYPES.join(", ")
            ))
        })
}

/// A signal of `set`, exactly as spelled there, or 400 naming the value.
pub fn check_signal(field: &str, value: &str, set: &[&str]) -> ApiResult<String> {
    let value = value.trim();
    set.iter()
        .find(|s| **s == value)
        .map(|s| (*s).to_owned())
        .ok_or_else(|| ApiError::bad_request(format!("Unknown signal in {field}: '{value}'")))
}

/// 400 unless `value` is within 0-100.
pub fn check_percent(field: &str, value: i64) -> ApiResult<i64> {
    if (0..=100).contains(&value) {
        Ok(value)
    } else {
        Err(ApiError::bad_request(format!(
            "{field} must be between 0 and 100"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domains::facets::audience_bits;

    fn facets() -> Facets {
        Facets {
            industry: Some("software".into()),
            country: Some("DE".into()),
            business_type: "B2B".into(),
            confidence: 80,
            intent_score: 60,
            signal_bits: audience_bits(&["has_crm", "has_ssl"]),
            seen_at: 0,
        }
    }

    #[test]
    fn each_condition_tests_its_field() {
        let f = facets();
        assert!(FacetFilter::default().matches(&f));
        let cases = [
            (
                FacetFilter {
                    industries: vec!["software".into()],
                    ..Default::default()
                },
                true,
            ),
            (
                FacetFilter {
                    industries: vec!["retail".into()],
                    ..Default::default()
                },
                false,
            ),
            (
                FacetFilter {
                    countries: vec!["FR".into(), "DE".into()],
                    ..Default::default()
                },
                true,
            ),
            (
                FacetFilter {
                    countries: vec!["FR".into()],
                    ..Default::default()
                },
                false,
            ),
            (
                FacetFilter {
                    min_confidence: 80,
                    ..Default::default()
                },
                true,
            ),
            (
                FacetFilter {
                    min_confidence: 81,
                    ..Default::default()
                },
                false,
            ),
            (
                FacetFilter {
                    min_intent_score: 61,
                    ..Default::default()
                },
                false,
            ),
            (
                FacetFilter {
                    required_bits: audience_bits(&["has_crm"]),
                    ..Default::default()
                },
                true,
            ),
            (
                FacetFilter {
                    required_bits: audience_bits(&["has_crm", "has_blog"]),
                    ..Default::default()
                },
                false,
            ),
            (
                FacetFilter {
                    excluded_bits: audience_bits(&["has_blog"]),
                    ..Default::default()
                },
                true,
            ),
            (
                FacetFilter {
                    excluded_bits: audience_bits(&["has_ssl"]),
                    ..Default::default()
                },
                false,
            ),
            (
                FacetFilter {
                    business_types: vec!["B2C".into()],
                    ..Default::default()
                },
                false,
            ),
        ];
        for (filter, expected) in cases {
            assert_eq!(filter.matches(&f), expected, "{filter:?}");
        }
    }

    #[test]
    fn checks_name_the_value_they_refuse() {
        assert_eq!(
            check_industry("industries", "software").unwrap(),
            "Software"
        );
        let e = check_industry("industries", "Softwear")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'Softwear'"), "{e}");
        assert_eq!(check_country("countries", "de").unwrap(), "DE");
        assert!(
            check_country("countries", "XX")
                .unwrap_err()
                .to_string()
                .contains("'XX'")
        );
        assert!(check_country("countries", "DEU").is_err());
        assert_eq!(check_business_type("business_types", "b2b").unwrap(), "B2B");
        assert!(check_signal("s", "has_crm ", &["has_crm"]).is_ok());
        assert!(check_percent("min_confidence", 101).is_err());
    }
}
