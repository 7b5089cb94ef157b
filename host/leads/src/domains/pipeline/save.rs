//! The end of an enrichment: the new record is compared with the stored
//! one (change records for spec/2's monitored fields), written with its
//! search tags and facets, a pool event is recorded for audiences, alerts
//! and watches (`domains::facets`), tracked keywords new to the summary
//! are recorded with their `keyword.match` events, a tracked competitor's
//! enrichment is snapshotted, and every account that asked for it gets
//! `domain.enriched`, all in one transaction.

use serde_json::{Value, json};
use sqlx::{AnyConnection, Row};

use crate::domains::facets::{self, Monitored};
use crate::domains::record::{ENRICHED, FAILED, IMPORTED, Technology};
use crate::domains::store::{self, TAG_SIGNAL, TAG_TECHNOLOGY};
use crate::intelligence::competitors;
use crate::intelligence::keywords::{self, KeywordIndex};
use outreach_core::events::{self, EventType};
use outreach_core::state::AppState;

/// What one enrichment found. Single-valued fields it could not learn stay
/// `None` and keep what the record holds (an imported company name, say);
/// lists, signals and scores are the enrichment's own and replace the old.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub company_name: Option<String>,
    pub summary: Option<String>,
    pub industry: Option<String>,
    pub sub_industry: Option<String>,
    pub business_type: Option<String>,
    pub confidence: f64,
    pub website_email: Option<String>,
    pub phone: Option<String>,
    pub employees_range: Option<String>,
    pub technologies: Vec<Technology>,
    pub alert_signals: Vec<String>,
    pub audience_signals: Vec<String>,
    pub intent_score: i64,
    pub intent_level: String,
    pub likely_buys: Vec<String>,
    pub gaps: Vec<String>,
    pub registrant_country: Option<String>,
    pub ip_country: Option<String>,
    pub city: Option<String>,
    pub registered_at: Option<i64>,
    pub language: Option<String>,
    pub social_links: Value,
    pub mx_provider: Option<String>,
    pub has_spf: Option<bool>,
    pub has_dmarc: Option<bool>,
    pub emails_seen: Vec<String>,
    pub is_trusted: bool,
    /// `{stage: reason}` of the stages that failed.
    pub errors: serde_json::Map<String, Value>,
    /// Every stage failed: the record is marked failed, its fields kept.
    pub failed: bool,
    /// What the signals were read from, for the intent score.
    pub reading: Option<outreach_domain_analysis::signals::Reading>,
}

/// Fields counted for `fields_filled` and `completeness_score`.
fn filled(f: &Findings) -> (i64, i64) {
    let checks = [
        f.company_name.is_some(),
        f.summary.is_some(),
        f.industry.is_some(),
        f.business_type.as_deref().is_some_and(|b| b != "unknown"),
        f.website_email.is_some(),
        f.phone.is_some(),
        f.employees_range.is_some(),
        !f.technologies.is_empty(),
        f.registrant_country.is_some() || f.ip_country.is_some(),
        f.city.is_some(),
        f.registered_at.is_some(),
        f.language.is_some(),
        f.social_links.as_object().is_some_and(|o| !o.is_empty()),
        f.mx_provider.is_some(),
    ];
    let n = checks.iter().filter(|c| **c).count() as i64;
    (n, n * 100 / checks.len() as i64)
}

fn text(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// `f` with the single-valued fields it did not learn taken from the
/// stored record.
fn merge(f: &Findings, row: &sqlx::any::AnyRow) -> sqlx::Result<Findings> {
    let mut m = f.clone();
    let keep = |mine: &mut Option<String>, column: &str| -> sqlx::Result<()> {
        if mine.is_none() {
            *mine = row.try_get(column)?;
        }
        Ok(())
    };
    keep(&mut m.company_name, "company_name")?;
    keep(&mut m.summary, "summary")?;
    keep(&mut m.industry, "industry")?;
    keep(&mut m.sub_industry, "sub_industry")?;
    keep(&mut m.website_email, "website_email")?;
    keep(&mut m.phone, "phone")?;
    keep(&mut m.employees_range, "employees_range")?;
    keep(&mut m.registrant_country, "registrant_country")?;
    keep(&mut m.ip_country, "ip_country")?;
    keep(&mut m.city, "city")?;
    keep(&mut m.language, "language")?;
    keep(&mut m.mx_provider, "mx_provider")?;
    if m.registered_at.is_none() {
        m.registered_at = row.try_get("registered_at")?;
    }
    Ok(m)
}

/// Writes `f` over the record `domain_id` at `now`, with `refresh_at` for
/// the next enrichment. Returns the change records written.
pub async fn save(
    state: &AppState,
    domain_id: i64,
    f: &Findings,
    now: i64,
    refresh_at: i64,
) -> anyhow::Result<usize> {
    let mut tx = state.db.pool.begin().await?;
    let conn: &mut AnyConnection = &mut tx;
    // Write first: a SQLite transaction that reads and then writes cannot
    // wait for the lock another writer holds ("database is locked" at
    // once), while one that starts with a write waits its turn. On
    // PostgreSQL this locks the row, so two saves of one domain queue up.
    sqlx::query("UPDATE domains SET updated_at = $1 WHERE id = $2")
        .bind(now)
        .bind(domain_id)
        .execute(&mut *conn)
        .await?;
    let row = sqlx::query(
        "SELECT domain, status, company_name, summary, industry, sub_industry, website_email, \
         phone, employees_range, registrant_country, ip_country, city, registered_at, language, \
         mx_provider, is_trusted, confidence FROM domains WHERE id = $1",
    )
    .bind(domain_id)
    .fetch_one(&mut *conn)
    .await?;
    let merged = merge(f, &row)?;
    let f = &merged;
    let domain: String = row.try_get("domain")?;
    let was_enriched = row.try_get::<String, _>("status")? == ENRICHED;
    let mut changes = 0;
    let mut fields_updated: Vec<String> = Vec::new();
    if f.failed {
        // A record with facts (enriched before, or imported) keeps its
        // status and fields; the reasons go to `enrichment_errors`.
        sqlx::query(
            "UPDATE domains SET status = CASE WHEN status IN ($1, $2) THEN status ELSE $3 END, \
             enrichment_errors = $4, refresh_at = $5, updated_at = $6 WHERE id = $7",
        )
        .bind(ENRICHED)
        .bind(IMPORTED)
        .bind(FAILED)
        .bind(text(&f.errors))
        .bind(refresh_at)
        .bind(now)
        .bind(domain_id)
        .execute(&mut *conn)
        .await?;
    } else {
        // Only a record enriched before has history to compare with.
        if was_enriched {
            let now_monitored = Monitored::new(
                f.industry.clone(),
                f.sub_industry.clone(),
                f.website_email.clone(),
                f.summary.clone(),
                f.is_trusted,
                f.confidence,
            );
            for (field, old, new) in now_monitored.changes_from(&Monitored::from_row(&row)?) {
                sqlx::query(
                    "INSERT INTO domain_changes (domain_id, field_changed, old_value, \
                     new_value, detected_at) VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(domain_id)
                .bind(field)
                .bind(old)
                .bind(new)
                .bind(now)
                .execute(&mut *conn)
                .await?;
                fields_updated.push(field.to_string());
                changes += 1;
            }
        }
        let (fields_filled, completeness) = filled(f);
        sqlx::query(
            "UPDATE domains SET status = $1, company_name = $2, summary = $3, industry = $4, \
             sub_industry = $5, business_type = $6, confidence = $7, website_email = $8, \
             phone = $9, employees_range = $10, technologies = $11, alert_signals = $12, \
             audience_signals = $13, intent_score = $14, intent_level = $15, likely_buys = $16, \
             gaps = $17, registrant_country = $18, ip_country = $19, city = $20, \
             registered_at = $21, language = $22, social_links = $23, mx_provider = $24, \
             has_spf = $25, has_dmarc = $26, emails_seen = $27, is_trusted = $28, \
             fields_filled = $29, completeness_score = $30, enrichment_errors = $31, \
             enriched_at = $32, refresh_at = $33, updated_at = $32 WHERE id = $34",
        )
        .bind(ENRICHED)
        .bind(&f.company_name)
        .bind(&f.summary)
        .bind(&f.industry)
        .bind(&f.sub_industry)
        .bind(f.business_type.as_deref().unwrap_or("unknown"))
        .bind(f.confidence)
        .bind(&f.website_email)
        .bind(&f.phone)
        .bind(&f.employees_range)
        .bind(text(&f.technologies))
        .bind(text(&f.alert_signals))
        .bind(text(&f.audience_signals))
        .bind(f.intent_score)
        .bind(&f.intent_level)
        .bind(text(&f.likely_buys))
        .bind(text(&f.gaps))
        .bind(&f.registrant_country)
        .bind(&f.ip_country)
        .bind(&f.city)
        .bind(f.registered_at)
        .bind(&f.language)
        .bind(text(&f.social_links))
        .bind(&f.mx_provider)
        .bind(f.has_spf.map(i64::from))
        .bind(f.has_dmarc.map(i64::from))
        .bind(text(&f.emails_seen))
        .bind(i64::from(f.is_trusted))
        .bind(fields_filled)
        .bind(completeness)
        .bind(text(&f.errors))
        .bind(now)
        .bind(refresh_at)
        .bind(domain_id)
        .execute(&mut *conn)
        .await?;
        write_tags(conn, domain_id, f).await?;
        facets::refresh(conn, domain_id, now).await?;
        let old_summary: Option<String> = row.try_get("summary")?;
        keywords::record_matches(
            conn,
            state.ext::<KeywordIndex>(),
            (domain_id, domain.as_str()),
            old_summary.as_deref(),
            f.summary.as_deref(),
            now,
        )
        .await?;
        competitors::store::snapshot(conn, domain_id).await?;
    }
    // Everyone who asked hears that it finished, failed or not.
    let waiting: Vec<i64> = sqlx::query_scalar(
        "SELECT account_id FROM domain_enrichment_requests WHERE domain_id = $1",
    )
    .bind(domain_id)
    .fetch_all(&mut *conn)
    .await?;
    let status = if f.failed && !was_enriched {
        FAILED
    } else {
        ENRICHED
    };
    // new_to_pool: the first successful enrichment of a record the pool did
    // not hold enriched (the `new_domain` workflow trigger reads it).
    let new_to_pool = !was_enriched && status == ENRICHED;
    let data = json!({
        "domain": domain,
        "status": status,
        "fields_updated": fields_updated,
        "enriched_at": outreach_core::platform::clock::iso(now),
        "changes": changes,
        "new_to_pool": new_to_pool,
    });
    for account_id in waiting {
        events::record(conn, account_id, EventType::DomainEnriched, &data, now).await?;
    }
    sqlx::query("DELETE FROM domain_enrichment_requests WHERE domain_id = $1")
        .bind(domain_id)
        .execute(&mut *conn)
        .await?;
    tx.commit().await?;
    Ok(changes)
}

/// Rewrites the search tags of a record: its technologies (lower case) and
/// the union of its signals.
async fn write_tags(conn: &mut AnyConnection, domain_id: i64, f: &Findings) -> sqlx::Result<()> {
    let tags: Vec<(&str, String)> = f
        .technologies
        .iter()
        .map(|t| (TAG_TECHNOLOGY, t.name.to_lowercase()))
        .chain(
            f.alert_signals
                .iter()
                .chain(&f.audience_signals)
                .map(|s| (TAG_SIGNAL, s.clone())),
        )
        .collect();
    store::replace_tags(conn, domain_id, &[TAG_TECHNOLOGY, TAG_SIGNAL], tags).await
}
