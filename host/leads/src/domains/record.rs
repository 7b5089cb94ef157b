//! The domain record as the API shows it (ARCHITECTURE.md "Domain pool"
//! gives each field's meaning and source), read from a `domains` row.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;
use utoipa::ToSchema;

use outreach_core::platform::clock::iso;

/// Enrichment states of a record. `imported` records came from `outreach
/// domains import` without `--enrich`: an account asking for one queues it.
pub const IMPORTED: &str = "imported";
pub const QUEUED: &str = "queued";
pub const ENRICHING: &str = "enriching";
pub const ENRICHED: &str = "enriched";
pub const FAILED: &str = "failed";

/// A technology seen on the domain's site, its headers, cookies or DNS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Technology {
    pub name: String,
    pub categories: Vec<String>,
    pub version: Option<String>,
    /// 0-100: how sure the fingerprints are.
    pub confidence: u8,
}

/// One company domain of the pool.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DomainRecord {
    pub domain: String,
    /// imported, queued, enriching, enriched or failed.
    pub status: String,
    pub company_name: Option<String>,
    pub summary: Option<String>,
    pub industry: Option<String>,
    pub sub_industry: Option<String>,
    /// B2B, B2C, B2B2C, marketplace, non-profit, government or unknown.
    pub business_type: String,
    /// 0.0-1.0: how sure the record is.
    pub confidence: f64,
    pub website_email: Option<String>,
    /// E.164.
    pub phone: Option<String>,
    pub employees_range: Option<String>,
    pub technologies: Vec<Technology>,
    /// spec/2's alert signal values present.
    pub alert_signals: Vec<String>,
    /// spec/2's audience signal values present.
    pub audience_signals: Vec<String>,
    /// 0-100.
    pub intent_score: i64,
    /// hot, warm, neutral or cold.
    pub intent_level: String,
    pub likely_buys: Vec<String>,
    pub gaps: Vec<String>,
    /// ISO 3166-1 alpha-2, from RDAP where published.
    pub registrant_country: Option<String>,
    /// ISO 3166-1 alpha-2 of the web server's address, from RDAP.
    pub ip_country: Option<String>,
    pub city: Option<String>,
    pub registered_at: Option<String>,
    pub language: Option<String>,
    #[schema(value_type = Object)]
    pub social_links: Value,
    pub mx_provider: Option<String>,
    pub has_spf: Option<bool>,
    pub has_dmarc: Option<bool>,
    pub is_trusted: bool,
    pub fields_filled: i64,
    /// 0-100: the share of the record's fields that are filled.
    pub completeness_score: i64,
    pub created_at: String,
    pub enriched_at: Option<String>,
    /// The last enrichment's failed stages and why: `{"crawl": "timeout"}`.
    #[schema(value_type = Object)]
    pub enrichment_errors: Value,
}

impl DomainRecord {
    /// The business type when it is a finding: `business_type` is a column
    /// with a default (`unknown`), so before a first enrichment only a value
    /// an import set counts (ARCHITECTURE.md "Imported records").
    pub fn known_business_type(&self) -> Option<&str> {
        (self.enriched_at.is_some() || self.business_type != "unknown")
            .then_some(self.business_type.as_str())
    }

    /// The confidence when it is a finding (a column with default 0, as
    /// for [`DomainRecord::known_business_type`]).
    pub fn known_confidence(&self) -> Option<f64> {
        (self.enriched_at.is_some() || self.confidence > 0.0).then_some(self.confidence)
    }

    /// [`DomainRecord::known_confidence`] as a whole percent, as the
    /// integrations show it.
    pub fn known_confidence_pct(&self) -> Option<i64> {
        self.known_confidence().map(|c| (c * 100.0).round() as i64)
    }

    /// The country spec/2 reads: the registrant's, else the web server's.
    pub fn country(&self) -> Option<&str> {
        self.registrant_country
            .as_deref()
            .or(self.ip_country.as_deref())
    }
}

/// The columns [`DomainRecord::from_row`] reads.
pub const COLUMNS: &str = "id, domain, status, company_name, summary, industry, sub_industry, \
     business_type, confidence, website_email, phone, employees_range, technologies, \
     alert_signals, audience_signals, intent_score, intent_level, likely_buys, gaps, \
     registrant_country, ip_country, city, registered_at, language, social_links, mx_provider, \
     has_spf, has_dmarc, emails_seen, is_trusted, fields_filled, completeness_score, \
     enrichment_errors, created_at, enriched_at";

/// A row with what the record does not show (its id, the addresses seen).
#[derive(Debug, Clone)]
pub struct StoredDomain {
    pub id: i64,
    pub record: DomainRecord,
    pub emails_seen: Vec<String>,
}

fn json<T: serde::de::DeserializeOwned + Default>(row: &AnyRow, column: &str) -> sqlx::Result<T> {
    let text: String = row.try_get(column)?;
    // A column we wrote ourselves; an unreadable one shows as empty rather
    // than failing the whole answer.
    Ok(serde_json::from_str(&text).unwrap_or_default())
}

fn flag(row: &AnyRow, column: &str) -> sqlx::Result<Option<bool>> {
    Ok(row.try_get::<Option<i64>, _>(column)?.map(|v| v != 0))
}

impl StoredDomain {
    pub fn from_row(row: &AnyRow) -> sqlx::Result<StoredDomain> {
        let record = DomainRecord {
            domain: row.try_get("domain")?,
            status: row.try_get("status")?,
            company_name: row.try_get("company_name")?,
            summary: row.try_get("summary")?,
            industry: row.try_get("industry")?,
            sub_industry: row.try_get("sub_industry")?,
            business_type: row.try_get("business_type")?,
            confidence: row.try_get("confidence")?,
            website_email: row.try_get("website_email")?,
            phone: row.try_get("phone")?,
            employees_range: row.try_get("employees_range")?,
            technologies: json(row, "technologies")?,
            alert_signals: json(row, "alert_signals")?,
            audience_signals: json(row, "audience_signals")?,
            intent_score: row.try_get("intent_score")?,
            intent_level: row.try_get("intent_level")?,
            likely_buys: json(row, "likely_buys")?,
            gaps: json(row, "gaps")?,
            registrant_country: row.try_get("registrant_country")?,
            ip_country: row.try_get("ip_country")?,
            city: row.try_get("city")?,
            registered_at: row.try_get::<Option<i64>, _>("registered_at")?.map(iso),
            language: row.try_get("language")?,
            social_links: json::<Value>(row, "social_links")?,
            mx_provider: row.try_get("mx_provider")?,
            has_spf: flag(row, "has_spf")?,
            has_dmarc: flag(row, "has_dmarc")?,
            is_trusted: row.try_get::<i64, _>("is_trusted")? != 0,
            fields_filled: row.try_get("fields_filled")?,
            completeness_score: row.try_get("completeness_score")?,
            created_at: iso(row.try_get("created_at")?),
            enriched_at: row.try_get::<Option<i64>, _>("enriched_at")?.map(iso),
            enrichment_errors: json::<Value>(row, "enrichment_errors")?,
        };
        Ok(StoredDomain {
            id: row.try_get("id")?,
            record,
            emails_seen: json(row, "emails_seen")?,
        })
    }
}
