//! What audiences, alert rules and the watchlist read of the pool, and how
//! they hear of its changes (ARCHITECTURE.md "Pool evaluation").
//!
//! - `pool_facets` holds one narrow row per record that carries facts
//!   (enriched, or imported): the fields audience and alert filters test,
//!   with the signals as bits. Counts and previews run over it with
//!   covering indexes instead of over the wide `domains` rows.
//! - `pool_events` gets one row per save of a record's facts, written by
//!   [`refresh`] in the save's transaction: the facets before and after,
//!   the watchlist's monitored fields, and what an alert history entry
//!   shows. The evaluation worker (`crate::evaluation`) consumes them. The
//!   pool is global, so these are not account events and never reach the
//!   outbox or webhooks.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::record::{ENRICHED, IMPORTED};
use super::rollups::{self, Contribution};
use outreach_core::store::Db;
use outreach_domain_analysis::signals::{ALERT_SIGNALS, AUDIENCE_SIGNALS};

/// The bit of alert signal `i` is `ALERT_SHIFT + i`; audience signals take
/// bits 0-20.
const ALERT_SHIFT: usize = AUDIENCE_SIGNALS.len();

/// The bits of the audience signals named (unknown names add nothing).
pub fn audience_bits<S: AsRef<str>>(names: &[S]) -> i64 {
    bits(names, &AUDIENCE_SIGNALS, 0)
}

/// The bits of the alert signals named (unknown names add nothing).
pub fn alert_bits<S: AsRef<str>>(names: &[S]) -> i64 {
    bits(names, &ALERT_SIGNALS, ALERT_SHIFT)
}

fn bits<S: AsRef<str>>(names: &[S], set: &[&str], shift: usize) -> i64 {
    names
        .iter()
        .filter_map(|n| set.iter().position(|s| *s == n.as_ref()))
        .fold(0, |acc, i| acc | (1i64 << (i + shift)))
}

/// The fields filters test, as `pool_facets` stores them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facets {
    /// Lower case.
    pub industry: Option<String>,
    /// ISO code, upper case: the registrant's country, else the server's.
    pub country: Option<String>,
    pub business_type: String,
    /// Whole percent, 0-100 (the record's 0-1 confidence, rounded down).
    pub confidence: i64,
    pub intent_score: i64,
    /// Audience signals in bits 0-20, alert signals in bits 21-34.
    pub signal_bits: i64,
    /// The last enrichment, else when the record entered the pool: "newest
    /// enrichment first" orders by it.
    pub seen_at: i64,
}

/// The watchlist's monitored fields (spec/2 "Watched domain"), as text, so
/// that a snapshot and a change record say the same thing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Monitored {
    pub industry: Option<String>,
    pub sub_industry: Option<String>,
    pub website_email: Option<String>,
    pub summary: Option<String>,
    /// `true` or `false`.
    pub is_trusted: Option<String>,
    /// Two decimals: `0.80`.
    pub confidence: Option<String>,
}

impl Monitored {
    pub fn new(
        industry: Option<String>,
        sub_industry: Option<String>,
        website_email: Option<String>,
        summary: Option<String>,
        is_trusted: bool,
        confidence: f64,
    ) -> Monitored {
        Monitored {
            industry,
            sub_industry,
            website_email,
            summary,
            is_trusted: Some(is_trusted.to_string()),
            confidence: Some(format!("{confidence:.2}")),
        }
    }

    /// From a `domains` row holding the six columns.
    pub fn from_row(row: &AnyRow) -> sqlx::Result<Monitored> {
        Ok(Monitored::new(
            row.try_get("industry")?,
            row.try_get("sub_industry")?,
            row.try_get("website_email")?,
            row.try_get("summary")?,
            row.try_get::<i64, _>("is_trusted")? != 0,
            row.try_get("confidence")?,
        ))
    }

    /// `(field, value)` in spec/2's order.
    pub fn fields(&self) -> [(&'static str, &Option<String>); 6] {
        [
            ("industry", &self.industry),
            ("sub_industry", &self.sub_industry),
            ("website_email", &self.website_email),
            ("summary", &self.summary),
            ("is_trusted", &self.is_trusted),
            ("confidence", &self.confidence),
        ]
    }

    /// `(field, old, new)` of the fields that differ from `old`.
    pub fn changes_from(
        &self,
        old: &Monitored,
    ) -> Vec<(&'static str, Option<String>, Option<String>)> {
        old.fields()
            .into_iter()
            .zip(self.fields())
            .filter(|((_, a), (_, b))| a != b)
            .map(|((field, a), (_, b))| (field, a.clone(), b.clone()))
            .collect()
    }
}

/// One save of a record's facts, as `pool_events.data` holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PoolChange {
    pub domain: String,
    /// The record's revision after this save.
    pub revision: i64,
    /// `None`: the record carried no facts before (new, queued, failed).
    pub before: Option<Facets>,
    pub after: Option<Facets>,
    pub monitored: Monitored,
    /// What an alert's matched domain shows.
    pub level: String,
    pub likely_buys: Vec<String>,
    pub alert_signals: Vec<String>,
}

/// A consumed `pool_events` row.
#[derive(Debug, Clone)]
pub struct PoolEvent {
    pub id: i64,
    pub domain_id: i64,
    pub change: PoolChange,
}

const READ: &str = "SELECT domain, status, industry, sub_industry, registrant_country, \
     ip_country, business_type, confidence, intent_score, intent_level, audience_signals, \
     alert_signals, likely_buys, website_email, summary, is_trusted, enriched_at, created_at, \
     revision, city FROM domains WHERE id = $1";

fn list(row: &AnyRow, column: &str) -> sqlx::Result<Vec<String>> {
    let text: Option<String> = row.try_get(column)?;
    Ok(text
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default())
}

/// The facets of a `domains` row read with [`READ`]; `None` for a record
/// without facts.
fn facets_of(row: &AnyRow) -> sqlx::Result<Option<Facets>> {
    let status: String = row.try_get("status")?;
    if status != ENRICHED && status != IMPORTED {
        return Ok(None);
    }
    let country: Option<String> = row.try_get("registrant_country")?;
    let country = match country {
        Some(c) => Some(c),
        None => row.try_get("ip_country")?,
    };
    let confidence: f64 = row.try_get("confidence")?;
    let seen_at: Option<i64> = row.try_get("enriched_at")?;
    Ok(Some(Facets {
        industry: row
            .try_get::<Option<String>, _>("industry")?
            .map(|i| i.to_lowercase()),
        country: country.map(|c| c.to_uppercase()),
        business_type: row.try_get("business_type")?,
        // The epsilon keeps 0.8 (stored as 0.7999...) at 80.
        confidence: ((confidence * 100.0) + 1e-6).floor().clamp(0.0, 100.0) as i64,
        intent_score: row.try_get("intent_score")?,
        signal_bits: audience_bits(&list(row, "audience_signals")?)
            | alert_bits(&list(row, "alert_signals")?),
        seen_at: match seen_at {
            Some(at) => at,
            None => row.try_get("created_at")?,
        },
    }))
}

/// What a record with `facets`, read with [`READ`], adds to the rollups.
fn contribution_of(row: &AnyRow, facets: &Facets) -> sqlx::Result<Contribution> {
    let city: Option<String> = row.try_get("city")?;
    let email: Option<String> = row.try_get("website_email")?;
    let confidence: f64 = row.try_get("confidence")?;
    let entered_at: i64 = row.try_get("created_at")?;
    Ok(Contribution {
        industry: facets.industry.clone().unwrap_or_default(),
        country: facets.country.clone().unwrap_or_default(),
        city: city.map(|c| c.trim().to_string()).filter(|c| !c.is_empty()),
        entered_at,
        has_email: email.is_some_and(|e| !e.is_empty()),
        confidence_bp: (confidence * 10_000.0).round() as i64,
    })
}

/// A record's facets and its rollup contribution, as its facet row holds
/// them.
type Stored = (Facets, Contribution);

async fn write_facets(
    conn: &mut AnyConnection,
    domain_id: i64,
    stored: Option<&Stored>,
) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM pool_facets WHERE domain_id = $1")
        .bind(domain_id)
        .execute(&mut *conn)
        .await?;
    if let Some((f, c)) = stored {
        sqlx::query(
            "INSERT INTO pool_facets (domain_id, industry, country, business_type, confidence, \
             intent_score, signal_bits, seen_at, city, has_email, confidence_bp, entered_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(domain_id)
        .bind(&f.industry)
        .bind(&f.country)
        .bind(&f.business_type)
        .bind(f.confidence)
        .bind(f.intent_score)
        .bind(f.signal_bits)
        .bind(f.seen_at)
        .bind(&c.city)
        .bind(i64::from(c.has_email))
        .bind(c.confidence_bp)
        .bind(c.entered_at)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

async fn stored_facets(conn: &mut AnyConnection, domain_id: i64) -> sqlx::Result<Option<Stored>> {
    let row = sqlx::query(
        "SELECT industry, country, business_type, confidence, intent_score, signal_bits, seen_at, \
         city, has_email, confidence_bp, entered_at FROM pool_facets WHERE domain_id = $1",
    )
    .bind(domain_id)
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|r| {
        let facets = Facets {
            industry: r.try_get("industry")?,
            country: r.try_get("country")?,
            business_type: r.try_get("business_type")?,
            confidence: r.try_get("confidence")?,
            intent_score: r.try_get("intent_score")?,
            signal_bits: r.try_get("signal_bits")?,
            seen_at: r.try_get("seen_at")?,
        };
        let contribution = Contribution {
            industry: facets.industry.clone().unwrap_or_default(),
            country: facets.country.clone().unwrap_or_default(),
            city: r.try_get("city")?,
            entered_at: r.try_get("entered_at")?,
            has_email: r.try_get::<i64, _>("has_email")? != 0,
            confidence_bp: r.try_get("confidence_bp")?,
        };
        Ok((facets, contribution))
    })
    .transpose()
}

/// The facets and contribution of a `domains` row read with [`READ`].
fn stored_of(row: &AnyRow) -> sqlx::Result<Option<Stored>> {
    let Some(facets) = facets_of(row)? else {
        return Ok(None);
    };
    let contribution = contribution_of(row, &facets)?;
    Ok(Some((facets, contribution)))
}

/// After the facts of record `domain_id` were written on `conn` (the
/// save's or the import's transaction): moves its revision on, rewrites
/// its facet row and records the pool event. Every writer of a record's
/// facts calls it, so audiences, alerts and watches see every change.
pub async fn refresh(conn: &mut AnyConnection, domain_id: i64, now: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE domains SET revision = revision + 1 WHERE id = $1")
        .bind(domain_id)
        .execute(&mut *conn)
        .await?;
    let row = sqlx::query(READ)
        .bind(domain_id)
        .fetch_one(&mut *conn)
        .await?;
    let before = stored_facets(conn, domain_id).await?;
    let after = stored_of(&row)?;
    if before != after {
        write_facets(conn, domain_id, after.as_ref()).await?;
        rollups::apply(
            conn,
            before.as_ref().map(|(_, c)| c),
            after.as_ref().map(|(_, c)| c),
        )
        .await?;
    }
    let (before, after) = (before.map(|(f, _)| f), after.map(|(f, _)| f));
    let change = PoolChange {
        domain: row.try_get("domain")?,
        revision: row.try_get("revision")?,
        before,
        after,
        monitored: Monitored::from_row(&row)?,
        level: row.try_get("intent_level")?,
        likely_buys: list(&row, "likely_buys")?,
        alert_signals: list(&row, "alert_signals")?,
    };
    let data = serde_json::to_string(&change).unwrap_or_default();
    sqlx::query("INSERT INTO pool_events (domain_id, data, created_at) VALUES ($1, $2, $3)")
        .bind(domain_id)
        .bind(data)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Takes up to `limit` pool events, oldest first, deleting them on `conn`;
/// call it in the transaction that records what they cause, so they come
/// back if it fails. On PostgreSQL concurrent callers skip each other's
/// rows; on SQLite writers take turns. Each event goes to one caller.
pub async fn claim(
    conn: &mut AnyConnection,
    backend: outreach_core::store::Backend,
    limit: i64,
) -> sqlx::Result<Vec<PoolEvent>> {
    let lock = match backend {
        outreach_core::store::Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        outreach_core::store::Backend::Sqlite => "",
    };
    let sql = format!(
        "DELETE FROM pool_events WHERE id IN \
         (SELECT id FROM pool_events ORDER BY id LIMIT $1{lock}) RETURNING id, domain_id, data"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(limit)
        .fetch_all(&mut *conn)
        .await?;
    let mut events = Vec::with_capacity(rows.len());
    for row in rows {
        let data: String = row.try_get("data")?;
        let id: i64 = row.try_get("id")?;
        match serde_json::from_str(&data) {
            Ok(change) => events.push(PoolEvent {
                id,
                domain_id: row.try_get("domain_id")?,
                change,
            }),
            // Written by `refresh`; an unreadable row can only come from a
            // newer server's format, and is dropped rather than retried.
            Err(e) => tracing::warn!(id, error = %e, "unreadable pool event dropped"),
        }
    }
    events.sort_by_key(|e| e.id);
    Ok(events)
}

/// The newest pool event id committed so far (0 when none): a count taken
/// in the same transaction reflects every event up to it (see
/// `audiences::store::lock_pool_events`).
pub async fn last_event_id(conn: &mut AnyConnection) -> sqlx::Result<i64> {
    let id: Option<i64> = sqlx::query_scalar("SELECT MAX(id) FROM pool_events")
        .fetch_one(&mut *conn)
        .await?;
    Ok(id.unwrap_or(0))
}

/// Gives records with facts that lack a facet row (written before the
/// facets existed) their row, without events: nothing changed. Runs when
/// the workers start; a few statements when there is nothing to do.
pub async fn backfill(db: &Db) -> sqlx::Result<u64> {
    let mut done = 0;
    loop {
        let ids: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM domains d WHERE status IN ($1, $2) AND NOT EXISTS \
             (SELECT 1 FROM pool_facets f WHERE f.domain_id = d.id) ORDER BY id LIMIT 500",
        )
        .bind(ENRICHED)
        .bind(IMPORTED)
        .fetch_all(&db.pool)
        .await?;
        if ids.is_empty() {
            return Ok(done);
        }
        let mut tx = db.pool.begin().await?;
        for id in &ids {
            let row = sqlx::query(READ).bind(id).fetch_one(&mut *tx).await?;
            let stored = stored_of(&row)?;
            write_facets(&mut tx, *id, stored.as_ref()).await?;
            rollups::apply(&mut tx, None, stored.as_ref().map(|(_, c)| c)).await?;
        }
        tx.commit().await?;
        done += ids.len() as u64;
    }
}
