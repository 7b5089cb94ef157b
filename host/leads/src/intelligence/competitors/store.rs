//! SQL of competitors and their enrichment snapshots.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use crate::domains::record::{ENRICHED, IMPORTED};
use outreach_core::store::Db;

/// A competitor joined with its pool record.
#[derive(Debug, Clone)]
pub struct CompetitorRow {
    pub id: i64,
    pub domain_id: i64,
    pub domain: String,
    pub industry: Option<String>,
    pub notes: String,
    pub alert_email: Option<String>,
    pub created_at: i64,
    pub status: String,
    pub pool_industry: Option<String>,
    pub country: Option<String>,
    pub confidence: f64,
    pub website_email: Option<String>,
    pub business_type: String,
    pub enriched_at: Option<i64>,
}

impl CompetitorRow {
    /// Whether the record carries facts (enriched or imported).
    pub fn has_facts(&self) -> bool {
        self.status == ENRICHED || self.status == IMPORTED
    }

    /// The industry shown: the one given, else the record's.
    pub fn industry(&self) -> Option<String> {
        self.industry.clone().or_else(|| self.pool_industry.clone())
    }
}

const SELECT: &str = "SELECT c.id, c.domain_id, c.domain, c.industry, c.notes, c.alert_email, \
     c.created_at, d.status, d.industry AS pool_industry, \
     COALESCE(d.registrant_country, d.ip_country) AS country, d.confidence, d.website_email, \
     d.business_type, d.enriched_at FROM competitors c JOIN domains d ON d.id = c.domain_id";

fn row(r: &AnyRow) -> sqlx::Result<CompetitorRow> {
    Ok(CompetitorRow {
        id: r.try_get("id")?,
        domain_id: r.try_get("domain_id")?,
        domain: r.try_get("domain")?,
        industry: r.try_get("industry")?,
        notes: r.try_get("notes")?,
        alert_email: r.try_get("alert_email")?,
        created_at: r.try_get("created_at")?,
        status: r.try_get("status")?,
        pool_industry: r.try_get("pool_industry")?,
        country: r
            .try_get::<Option<String>, _>("country")?
            .map(|c| c.to_uppercase()),
        confidence: r.try_get("confidence")?,
        website_email: r.try_get("website_email")?,
        business_type: r.try_get("business_type")?,
        enriched_at: r.try_get("enriched_at")?,
    })
}

/// The account's competitors, oldest first.
pub async fn list(db: &Db, account_id: i64) -> sqlx::Result<Vec<CompetitorRow>> {
    let sql = format!("{SELECT} WHERE c.account_id = $1 ORDER BY c.id");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(row)
        .collect()
}

pub async fn get(db: &Db, account_id: i64, id: i64) -> sqlx::Result<Option<CompetitorRow>> {
    let sql = format!("{SELECT} WHERE c.account_id = $1 AND c.id = $2");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .bind(id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

/// The fields of a new competitor.
pub struct NewRow<'a> {
    pub domain: &'a str,
    pub industry: Option<&'a str>,
    pub notes: &'a str,
    pub alert_email: Option<&'a str>,
}

/// Adds a competitor on `conn` (the record is in the pool); `None` when the
/// account tracks the domain already. Snapshots the record's current
/// enrichment, so the next one has something to compare with.
pub async fn insert(
    conn: &mut AnyConnection,
    account_id: i64,
    new: &NewRow<'_>,
    now: i64,
) -> sqlx::Result<Option<i64>> {
    let inserted: Option<(i64, i64)> = sqlx::query_as(
        "INSERT INTO competitors (account_id, domain_id, domain, industry, notes, alert_email, \
         created_at) SELECT $1, d.id, d.domain, $3, $4, $5, $6 FROM domains d WHERE d.domain = $2 \
         ON CONFLICT (account_id, domain) DO NOTHING RETURNING id, domain_id",
    )
    .bind(account_id)
    .bind(new.domain)
    .bind(new.industry)
    .bind(new.notes)
    .bind(new.alert_email)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some((_, domain_id)) = inserted {
        snapshot(conn, domain_id).await?;
    }
    Ok(inserted.map(|(id, _)| id))
}

/// Deletes a competitor, and the domain's snapshots when no account tracks
/// it any more; whether it was the account's.
pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let mut tx = db.pool.begin().await?;
    let domain_id: Option<i64> = sqlx::query_scalar(
        "DELETE FROM competitors WHERE account_id = $1 AND id = $2 RETURNING domain_id",
    )
    .bind(account_id)
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(domain_id) = domain_id {
        sqlx::query(
            "DELETE FROM competitor_snapshots WHERE domain_id = $1 AND NOT EXISTS \
             (SELECT 1 FROM competitors WHERE domain_id = $1)",
        )
        .bind(domain_id)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(domain_id.is_some())
}

/// In the pool's save (and when a competitor is added): keeps what the
/// record's latest enrichment found, if any account tracks the domain.
pub async fn snapshot(conn: &mut AnyConnection, domain_id: i64) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO competitor_snapshots (domain_id, enriched_at, industry, summary, confidence, \
         technologies, alert_signals, audience_signals) \
         SELECT d.id, d.enriched_at, d.industry, d.summary, d.confidence, d.technologies, \
         d.alert_signals, d.audience_signals FROM domains d \
         WHERE d.id = $1 AND d.status = $2 AND d.enriched_at IS NOT NULL \
         AND EXISTS (SELECT 1 FROM competitors c WHERE c.domain_id = d.id) \
         ON CONFLICT (domain_id, enriched_at) DO NOTHING",
    )
    .bind(domain_id)
    .bind(ENRICHED)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// One snapshot.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub enriched_at: i64,
    pub industry: Option<String>,
    pub summary: Option<String>,
    pub confidence: f64,
    pub technologies: Vec<String>,
    pub signals: Vec<String>,
}

fn names(text: &str, key: Option<&str>) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let mut names: Vec<String> = value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| match key {
                    Some(k) => i[k].as_str(),
                    None => i.as_str(),
                })
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names.dedup();
    names
}

/// The domain's snapshots since `since`, newest first, at most `limit`.
pub async fn snapshots(
    db: &Db,
    domain_id: i64,
    since: i64,
    limit: i64,
) -> sqlx::Result<Vec<Snapshot>> {
    let rows = sqlx::query(
        "SELECT enriched_at, industry, summary, confidence, technologies, alert_signals, \
         audience_signals FROM competitor_snapshots WHERE domain_id = $1 AND enriched_at >= $2 \
         ORDER BY enriched_at DESC LIMIT $3",
    )
    .bind(domain_id)
    .bind(since)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            let alert: String = r.try_get("alert_signals")?;
            let audience: String = r.try_get("audience_signals")?;
            let mut signals = names(&alert, None);
            signals.extend(names(&audience, None));
            signals.sort();
            signals.dedup();
            Ok(Snapshot {
                enriched_at: r.try_get("enriched_at")?,
                industry: r.try_get("industry")?,
                summary: r.try_get("summary")?,
                confidence: r.try_get("confidence")?,
                technologies: names(&r.try_get::<String, _>("technologies")?, Some("name")),
                signals,
            })
        })
        .collect()
}

/// How many snapshots the domain has.
pub async fn snapshot_count(db: &Db, domain_id: i64) -> sqlx::Result<i64> {
    sqlx::query_scalar("SELECT COUNT(*) FROM competitor_snapshots WHERE domain_id = $1")
        .bind(domain_id)
        .fetch_one(&db.pool)
        .await
}

/// Change records of the domain's monitored fields since `since`, newest
/// first: `(field, old, new, detected_at)`.
pub async fn changes(
    db: &Db,
    domain_id: i64,
    since: i64,
) -> sqlx::Result<Vec<(String, Option<String>, Option<String>, i64)>> {
    sqlx::query_as(
        "SELECT field_changed, old_value, new_value, detected_at FROM domain_changes \
         WHERE domain_id = $1 AND detected_at >= $2 ORDER BY detected_at DESC, id DESC LIMIT 200",
    )
    .bind(domain_id)
    .bind(since)
    .fetch_all(&db.pool)
    .await
}

/// Records of `industry` (lower case) that entered the pool since `since`,
/// `skip` left out: how many, and the newest `limit` as `(domain,
/// confidence, entered_at)`.
pub async fn entered_since(
    db: &Db,
    industry: &str,
    since: i64,
    skip: i64,
    limit: i64,
) -> sqlx::Result<(i64, Vec<(String, f64, i64)>)> {
    let count: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pool_facets WHERE industry = $1 AND entered_at >= $2 \
         AND domain_id <> $3",
    )
    .bind(industry)
    .bind(since)
    .bind(skip)
    .fetch_one(&db.pool)
    .await?;
    let newest = sqlx::query_as(
        "SELECT d.domain, d.confidence, f.entered_at FROM pool_facets f \
         JOIN domains d ON d.id = f.domain_id WHERE f.industry = $1 AND f.entered_at >= $2 \
         AND f.domain_id <> $3 ORDER BY f.entered_at DESC, f.domain_id DESC LIMIT $4",
    )
    .bind(industry)
    .bind(since)
    .bind(skip)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    Ok((count, newest))
}
