//! SQL of the domain pool: records, their search tags, change history and
//! the accounts waiting for an enrichment. The pool is global: nothing here
//! filters by account except the enrichment requests.

use std::collections::HashMap;

use sqlx::{AnyConnection, Row};

use super::record::{
    COLUMNS, DomainRecord, ENRICHED, ENRICHING, IMPORTED, QUEUED, StoredDomain, Technology,
};
use outreach_core::store::{Arg, Args, Backend, Db, placeholder, placeholder_list, value_rows};

/// The record of `domain` (normalised), if the pool has it.
pub async fn find(db: &Db, domain: &str) -> sqlx::Result<Option<StoredDomain>> {
    let sql = format!("SELECT {COLUMNS} FROM domains WHERE domain = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(domain)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(StoredDomain::from_row)
        .transpose()
}

/// Records read by [`find_many`], by domain.
pub fn by_domain(found: &[StoredDomain]) -> HashMap<&str, &DomainRecord> {
    found
        .iter()
        .map(|s| (s.record.domain.as_str(), &s.record))
        .collect()
}

/// The records of several domains, in no particular order.
pub async fn find_many(db: &Db, domains: &[String]) -> sqlx::Result<Vec<StoredDomain>> {
    let mut found = Vec::with_capacity(domains.len());
    // 200 per statement stays under both backends' parameter limits.
    for chunk in domains.chunks(200) {
        let sql = format!(
            "SELECT {COLUMNS} FROM domains WHERE domain IN ({})",
            placeholder_list(db.backend, 1, chunk.len())
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for d in chunk {
            q = q.bind(d);
        }
        for row in q.fetch_all(&db.pool).await? {
            found.push(StoredDomain::from_row(&row)?);
        }
    }
    Ok(found)
}

/// Adds the `domains` the pool lacks as queued (due now) and makes the
/// imported ones never queued due now; returns those two kinds, which need
/// a job. An imported record keeps its `imported` status until an
/// enrichment succeeds, so it answers as the record it is meanwhile; its
/// `refresh_at`, NULL until it is first queued, tells that it is on its
/// way. At most 200 domains a call (parameter limits).
pub async fn add_many(
    conn: &mut AnyConnection,
    backend: Backend,
    domains: &[String],
    source: &str,
    now: i64,
) -> sqlx::Result<Vec<(i64, String)>> {
    if domains.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "INSERT INTO domains (domain, status, source, created_at, refresh_at, updated_at) \
         VALUES {} ON CONFLICT (domain) DO NOTHING RETURNING id, domain",
        value_rows(backend, domains.len(), 6)
    );
    let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql)).persistent(false);
    for d in domains {
        q = q
            .bind(d)
            .bind(QUEUED)
            .bind(source)
            .bind(now)
            .bind(now)
            .bind(now);
    }
    let mut queued: Vec<(i64, String)> = q.fetch_all(&mut *conn).await?;
    let sql = format!(
        "UPDATE domains SET refresh_at = {}, updated_at = {} \
         WHERE status = {} AND refresh_at IS NULL AND domain IN ({}) RETURNING id, domain",
        placeholder(backend, 1),
        placeholder(backend, 2),
        placeholder(backend, 3),
        placeholder_list(backend, 4, domains.len())
    );
    let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(now)
        .bind(now)
        .bind(IMPORTED);
    for d in domains {
        q = q.bind(d);
    }
    queued.extend(q.fetch_all(&mut *conn).await?);
    Ok(queued)
}

/// Notes that `account_id` waits for those of `domains` that are queued,
/// being enriched or imported and not enriched yet (it gets their
/// `domain.enriched` events). At most 200 domains a call.
pub async fn request_many(
    conn: &mut AnyConnection,
    backend: Backend,
    domains: &[String],
    account_id: i64,
    now: i64,
) -> sqlx::Result<()> {
    if domains.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO domain_enrichment_requests (domain_id, account_id, requested_at) \
         SELECT id, CAST({} AS BIGINT), CAST({} AS BIGINT) FROM domains \
         WHERE status IN ({}, {}, {}) AND domain IN ({}) \
         ON CONFLICT (domain_id, account_id) DO NOTHING",
        placeholder(backend, 1),
        placeholder(backend, 2),
        placeholder(backend, 3),
        placeholder(backend, 4),
        placeholder(backend, 5),
        placeholder_list(backend, 6, domains.len())
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(account_id)
        .bind(now)
        .bind(QUEUED)
        .bind(ENRICHING)
        .bind(IMPORTED);
    for d in domains {
        q = q.bind(d);
    }
    q.execute(conn).await?;
    Ok(())
}

/// Moves a record's next refresh to `at` (the scan queued it).
pub async fn postpone(db: &Db, domain_id: i64, at: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE domains SET refresh_at = $1 WHERE id = $2")
        .bind(at)
        .bind(domain_id)
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// A queued record is being enriched now (an enriched one keeps showing as
/// enriched while it is refreshed).
pub async fn mark_enriching(db: &Db, domain_id: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE domains SET status = $1 WHERE id = $2 AND status = $3")
        .bind(ENRICHING)
        .bind(domain_id)
        .bind(QUEUED)
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Domains due for (re-)enrichment, oldest due first: new ones (due when
/// added) and those whose refresh time has come.
pub async fn due(db: &Db, now: i64, limit: i64) -> sqlx::Result<Vec<(i64, String, i64)>> {
    let rows = sqlx::query(
        "SELECT id, domain, COALESCE(enriched_at, 0) AS generation FROM domains \
         WHERE refresh_at <= $1 ORDER BY refresh_at, id LIMIT $2",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("id")?,
                r.try_get("domain")?,
                r.try_get("generation")?,
            ))
        })
        .collect()
}

/// The filters of `GET /v1/search/domains`, already validated.
#[derive(Debug, Default)]
pub struct SearchFilter {
    /// Lower case; matched as a substring of the company name or summary.
    pub q: Option<String>,
    pub industry: Option<String>,
    /// ISO code: the registrant's country, else the server's.
    pub country: Option<String>,
    /// Each must be present (technology names as the fingerprints spell
    /// them, compared case-insensitively; signal names).
    pub technologies: Vec<String>,
    pub signals: Vec<String>,
    pub business_type: Option<String>,
    pub min_confidence: Option<f64>,
    pub min_intent_score: Option<i64>,
    pub registered_after: Option<i64>,
    /// A column of `domains` (checked by the service) and its direction.
    pub sort: &'static str,
    pub descending: bool,
    pub limit: i64,
    pub offset: i64,
}

/// One page of the records matching `f` (enriched, or imported with the
/// fields in question), and how many match in all. Records that are only
/// a name on their way to enrichment (queued, enriching, failed) hold no
/// facts and are left out.
pub async fn search(db: &Db, f: &SearchFilter) -> sqlx::Result<(Vec<StoredDomain>, i64)> {
    let mut args = Args::default();
    let mut clauses = vec![format!(
        "status IN ({}, {})",
        args.push(Arg::Text(ENRICHED.into())),
        args.push(Arg::Text(IMPORTED.into()))
    )];
    if let Some(q) = &f.q {
        let like = format!("%{}%", escape_like(q));
        let p = args.push(Arg::Text(like));
        clauses.push(format!(
            "(LOWER(COALESCE(company_name, '')) LIKE {p} ESCAPE '\\' \
             OR LOWER(COALESCE(summary, '')) LIKE {p} ESCAPE '\\' OR domain LIKE {p} ESCAPE '\\')"
        ));
    }
    if let Some(v) = &f.industry {
        clauses.push(format!(
            "LOWER(industry) = {}",
            args.push(Arg::Text(v.to_lowercase()))
        ));
    }
    if let Some(v) = &f.country {
        clauses.push(format!(
            "COALESCE(registrant_country, ip_country) = {}",
            args.push(Arg::Text(v.to_uppercase()))
        ));
    }
    if let Some(v) = &f.business_type {
        clauses.push(format!(
            "business_type = {}",
            args.push(Arg::Text(v.clone()))
        ));
    }
    if let Some(v) = f.min_confidence {
        clauses.push(format!("confidence >= {}", args.push(Arg::Real(v))));
    }
    if let Some(v) = f.min_intent_score {
        clauses.push(format!("intent_score >= {}", args.push(Arg::Int(v))));
    }
    if let Some(v) = f.registered_after {
        clauses.push(format!("registered_at > {}", args.push(Arg::Int(v))));
    }
    for (kind, values) in [(TAG_TECHNOLOGY, &f.technologies), (TAG_SIGNAL, &f.signals)] {
        for value in values {
            // One indexed lookup per required value.
            let kind = args.push(Arg::Text(kind.into()));
            let value = args.push(Arg::Text(value.to_lowercase()));
            clauses.push(format!(
                "EXISTS (SELECT 1 FROM domain_tags t WHERE t.domain_id = domains.id \
                 AND t.kind = {kind} AND t.value = {value})"
            ));
        }
    }
    let filter = clauses.join(" AND ");
    let count_sql = format!("SELECT COUNT(*) FROM domains WHERE {filter}");
    let total: i64 = args
        .bind_scalar(sqlx::query_scalar(sqlx::AssertSqlSafe(count_sql)).persistent(false))
        .fetch_one(&db.pool)
        .await?;
    let direction = if f.descending { "DESC" } else { "ASC" };
    let limit = args.push(Arg::Int(f.limit));
    let offset = args.push(Arg::Int(f.offset));
    let sql = format!(
        "SELECT {COLUMNS} FROM domains WHERE {filter} ORDER BY {} {direction}, id {direction} \
         LIMIT {limit} OFFSET {offset}",
        f.sort
    );
    let rows = args
        .bind(sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false))
        .fetch_all(&db.pool)
        .await?;
    let page = rows
        .iter()
        .map(StoredDomain::from_row)
        .collect::<sqlx::Result<_>>()?;
    Ok((page, total))
}

/// Replaces a record's search tags of the given `kinds` with `tags`,
/// `(kind, value)` with values lowercased by the caller.
pub async fn replace_tags(
    conn: &mut AnyConnection,
    domain_id: i64,
    kinds: &[&str],
    mut tags: Vec<(&str, String)>,
) -> sqlx::Result<()> {
    for kind in kinds {
        sqlx::query("DELETE FROM domain_tags WHERE domain_id = $1 AND kind = $2")
            .bind(domain_id)
            .bind(*kind)
            .execute(&mut *conn)
            .await?;
    }
    tags.sort();
    tags.dedup();
    for (kind, value) in tags {
        sqlx::query("INSERT INTO domain_tags (domain_id, kind, value) VALUES ($1, $2, $3)")
            .bind(domain_id)
            .bind(kind)
            .bind(value)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Tag kinds of `domain_tags`.
pub const TAG_TECHNOLOGY: &str = "technology";
/// Both of spec/2's signal sets; a name in both is one tag.
pub const TAG_SIGNAL: &str = "signal";

/// `%`, `_` and the escape character itself matched literally.
fn escape_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The technology names of the last enrichment, `None` when the record
/// was never enriched (so nothing can have changed).
pub async fn technology_names(db: &Db, id: i64) -> sqlx::Result<Option<Vec<String>>> {
    let rows: Vec<(Option<String>, Option<i64>)> =
        sqlx::query_as("SELECT technologies, enriched_at FROM domains WHERE id = $1")
            .bind(id)
            .fetch_all(&db.pool)
            .await?;
    let Some((Some(technologies), Some(_))) = rows.into_iter().next() else {
        return Ok(None);
    };
    let parsed: Vec<Technology> = serde_json::from_str(&technologies).unwrap_or_default();
    Ok(Some(parsed.into_iter().map(|t| t.name).collect()))
}
