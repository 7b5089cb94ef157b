//! The three polling triggers, newest first, each item with a string `id`
//! that stays the same for the same item, so the platform's deduplication
//! (and the REST hooks' deliverer) sees each once:
//!
//! - `new-domain`: the pool's records with facts by entry into the pool;
//!   the id is the domain.
//! - `domain-enriched`: the enrichments the account asked for, read from
//!   its `domain.enriched` events that finished `enriched`; the id is the
//!   event's, so a re-enrichment is a new item.
//! - `score-threshold`: the domains of the account's lead lists whose
//!   score under its `default` rule is at least `threshold`; the id is the
//!   crossing's (`score_crossings`): a domain that drops below and comes
//!   back is a new item, and `triggered_at` is when a poll (or a hook's
//!   scan) first saw it there.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::Row;
use utoipa::{IntoParams, ToSchema};

use crate::domains::record::{COLUMNS, DomainRecord, StoredDomain};
use crate::domains::store as pool;
use crate::intelligence::Industry;
use crate::scoring::{score, service as scoring};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::platform::clock::iso;
use outreach_core::ports::Actor;
use outreach_core::state::AppState;
use outreach_core::store::{id_list, lock_account};

/// Items a poll answers by default, and at most.
pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 100;

/// The trigger names, as in the paths.
pub const NEW_DOMAIN: &str = "new-domain";
pub const DOMAIN_ENRICHED: &str = "domain-enriched";
pub const SCORE_THRESHOLD: &str = "score-threshold";

/// `GET /v1/zapier/triggers/new-domain`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct NewDomainQuery {
    /// An industry of the taxonomy, any case.
    pub industry: Option<String>,
    /// ISO 3166-1 alpha-2, any case: the registrant's country, else the
    /// web server's.
    pub country: Option<String>,
    /// 0-100.
    pub min_confidence: Option<i64>,
    /// 1-100, default 50.
    pub limit: Option<i64>,
}

/// `GET /v1/zapier/triggers/domain-enriched`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct TriggerPage {
    /// 1-100, default 50.
    pub limit: Option<i64>,
}

/// `GET /v1/zapier/triggers/score-threshold`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ThresholdQuery {
    /// 0-100, default 80.
    pub threshold: Option<i64>,
    /// 1-100, default 50.
    pub limit: Option<i64>,
}

/// A `new-domain` item.
#[derive(Debug, Serialize, ToSchema)]
pub struct NewDomainItem {
    /// The domain.
    pub id: String,
    pub domain: String,
    pub industry: Option<String>,
    pub sub_industry: Option<String>,
    pub business_type: Option<String>,
    /// The registrant's country, else the web server's.
    pub country: Option<String>,
    /// Whole percent; null until known.
    pub confidence: Option<i64>,
    pub website_email: Option<String>,
    pub summary: Option<String>,
    pub registered_at: Option<String>,
    /// When the domain entered the pool.
    pub created_at: String,
}

/// A `domain-enriched` item.
#[derive(Debug, Serialize, ToSchema)]
pub struct EnrichedItem {
    /// The enrichment's id.
    pub id: String,
    pub domain: String,
    pub industry: Option<String>,
    pub confidence: Option<i64>,
    pub enriched_at: Option<String>,
    pub fields_filled: i64,
    pub completeness_score: i64,
}

/// A `score-threshold` item.
#[derive(Debug, Serialize, ToSchema)]
pub struct ThresholdItem {
    /// The crossing's id.
    pub id: String,
    pub domain: String,
    pub confidence: Option<i64>,
    pub industry: Option<String>,
    pub country: Option<String>,
    /// When a poll first saw the score at or above the threshold.
    pub triggered_at: String,
}

/// A poll's page size: 1-100, default 50.
pub fn page(limit: Option<i64>) -> ApiResult<usize> {
    match limit {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if (1..=MAX_LIMIT as i64).contains(&n) => Ok(n as usize),
        Some(_) => Err(ApiError::bad_request(format!(
            "limit must be between 1 and {MAX_LIMIT}"
        ))),
    }
}

fn percent(name: &str, value: Option<i64>, default: i64) -> ApiResult<i64> {
    let v = value.unwrap_or(default);
    if (0..=100).contains(&v) {
        Ok(v)
    } else {
        Err(ApiError::bad_request(format!(
            "{name} must be an integer between 0 and 100"
        )))
    }
}

/// Records by id, in the order of `ids`.
async fn records_by_id(state: &AppState, ids: &[i64]) -> ApiResult<Vec<DomainRecord>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT {COLUMNS} FROM domains WHERE id IN ({})",
        id_list(ids)
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .fetch_all(&state.db.pool)
        .await?;
    let mut by_id: HashMap<i64, DomainRecord> = HashMap::with_capacity(rows.len());
    for row in &rows {
        let s = StoredDomain::from_row(row)?;
        by_id.insert(s.id, s.record);
    }
    Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
}

/// `new-domain`: the newest records with facts, filtered as asked.
pub async fn new_domains(
    state: &AppState,
    query: &NewDomainQuery,
    limit: usize,
) -> ApiResult<Vec<NewDomainItem>> {
    let min = percent("min_confidence", query.min_confidence, 0)?;
    let industry = query
        .industry
        .as_deref()
        .map(|name| {
            Industry::named(name)
                .map_err(|_| ApiError::bad_request("industry must be an industry of the taxonomy"))
        })
        .transpose()?
        .map(|i| i.key);
    let country = match query.country.as_deref().map(str::trim) {
        Some(c) if c.len() == 2 && c.chars().all(|ch| ch.is_ascii_alphabetic()) => {
            Some(c.to_ascii_uppercase())
        }
        Some(_) => {
            return Err(ApiError::bad_request(
                "country must be a two-letter ISO 3166-1 code",
            ));
        }
        None => None,
    };
    // Facets hold the filters and the entry time, indexed by both.
    let mut sql = String::from("SELECT domain_id FROM pool_facets WHERE confidence >= $1");
    let mut n = 1;
    if industry.is_some() {
        n += 1;
        sql.push_str(&format!(" AND industry = ${n}"));
    }
    if country.is_some() {
        n += 1;
        sql.push_str(&format!(" AND country = ${n}"));
    }
    sql.push_str(&format!(
        " ORDER BY entered_at DESC, domain_id DESC LIMIT {limit}"
    ));
    let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(min);
    if let Some(i) = &industry {
        q = q.bind(i.clone());
    }
    if let Some(c) = &country {
        q = q.bind(c.clone());
    }
    let ids: Vec<i64> = q.fetch_all(&state.db.pool).await?;
    let records = records_by_id(state, &ids).await?;
    Ok(records
        .iter()
        .map(|r| NewDomainItem {
            id: r.domain.clone(),
            domain: r.domain.clone(),
            industry: r.industry.clone(),
            sub_industry: r.sub_industry.clone(),
            business_type: r.known_business_type().map(str::to_owned),
            country: r.country().map(str::to_owned),
            confidence: r.known_confidence_pct(),
            website_email: r.website_email.clone(),
            summary: r.summary.clone(),
            registered_at: r.registered_at.clone(),
            created_at: r.created_at.clone(),
        })
        .collect())
}

/// `domain-enriched`: the account's finished enrichments, newest first.
pub async fn enriched(
    state: &AppState,
    account_id: i64,
    limit: usize,
) -> ApiResult<Vec<EnrichedItem>> {
    // Failed enrichments are left out after the read, so read a margin.
    let rows = sqlx::query(
        "SELECT id, data FROM event_outbox WHERE account_id = $1 AND event_type = 'domain.enriched' \
         ORDER BY id DESC LIMIT $2",
    )
    .bind(account_id)
    .bind((limit * 4) as i64)
    .fetch_all(&state.db.pool)
    .await?;
    let mut events = Vec::new();
    for row in &rows {
        let id: i64 = row.try_get("id")?;
        let data: String = row.try_get("data")?;
        let data: Value = serde_json::from_str(&data).unwrap_or_default();
        if data["status"] == "enriched"
            && let Some(domain) = data["domain"].as_str()
        {
            let at = data["enriched_at"].as_str().map(str::to_owned);
            events.push((id, domain.to_owned(), at));
        }
        if events.len() == limit {
            break;
        }
    }
    let mut wanted: Vec<String> = events.iter().map(|(_, d, _)| d.clone()).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let found = pool::find_many(&state.db, &wanted).await?;
    let by_domain = pool::by_domain(&found);
    Ok(events
        .iter()
        .filter_map(|(id, domain, enriched_at)| {
            let r = by_domain.get(domain.as_str())?;
            Some(EnrichedItem {
                id: id.to_string(),
                domain: domain.clone(),
                industry: r.industry.clone(),
                confidence: r.known_confidence_pct(),
                enriched_at: enriched_at.clone(),
                fields_filled: r.fields_filled,
                completeness_score: r.completeness_score,
            })
        })
        .collect())
}

/// `score-threshold`: brings the account's crossings of `threshold` up to
/// date with the scores now, then answers the open ones, newest first.
pub async fn score_threshold(
    state: &AppState,
    actor: Actor,
    threshold: Option<i64>,
    limit: usize,
) -> ApiResult<Vec<ThresholdItem>> {
    let threshold = percent("threshold", threshold, 80)?;
    let rule = scoring::resolve(state, actor.account_id, None).await?;
    let domains: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT domain FROM list_items WHERE account_id = $1")
            .bind(actor.account_id)
            .fetch_all(&state.db.pool)
            .await?;
    let found = pool::find_many(&state.db, &domains).await?;
    let at: HashSet<&str> = found
        .iter()
        .filter(|s| score::result(&rule, &s.record).score >= threshold)
        .map(|s| s.record.domain.as_str())
        .collect();
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    // One poll of the account at a time brings its crossings up to date
    // (and on SQLite the transaction is a writer from its start).
    lock_account(&mut tx, state.db.backend, actor.account_id).await?;
    let open: Vec<(i64, String)> = sqlx::query(
        "SELECT id, domain FROM score_crossings \
         WHERE account_id = $1 AND threshold = $2 AND cleared_at IS NULL",
    )
    .bind(actor.account_id)
    .bind(threshold)
    .fetch_all(&mut *tx)
    .await?
    .iter()
    .map(|r| Ok((r.try_get("id")?, r.try_get("domain")?)))
    .collect::<sqlx::Result<_>>()?;
    let gone: Vec<i64> = open
        .iter()
        .filter(|(_, d)| !at.contains(d.as_str()))
        .map(|(id, _)| *id)
        .collect();
    if !gone.is_empty() {
        let sql = format!(
            "UPDATE score_crossings SET cleared_at = $1 WHERE id IN ({})",
            id_list(&gone)
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .bind(now)
            .execute(&mut *tx)
            .await?;
    }
    let known: HashSet<&str> = open.iter().map(|(_, d)| d.as_str()).collect();
    let mut fresh: Vec<&str> = at.iter().copied().filter(|d| !known.contains(d)).collect();
    fresh.sort_unstable();
    for domain in fresh {
        sqlx::query(
            "INSERT INTO score_crossings (account_id, domain, threshold, triggered_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(actor.account_id)
        .bind(domain)
        .bind(threshold)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    let rows = sqlx::query(
        "SELECT id, domain, triggered_at FROM score_crossings \
         WHERE account_id = $1 AND threshold = $2 AND cleared_at IS NULL \
         ORDER BY id DESC LIMIT $3",
    )
    .bind(actor.account_id)
    .bind(threshold)
    .bind(limit as i64)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    let by_domain = pool::by_domain(&found);
    rows.iter()
        .map(|row| {
            let id: i64 = row.try_get("id")?;
            let domain: String = row.try_get("domain")?;
            let triggered_at: i64 = row.try_get("triggered_at")?;
            let r = by_domain.get(domain.as_str()).copied();
            Ok(ThresholdItem {
                id: id.to_string(),
                confidence: r.and_then(DomainRecord::known_confidence_pct),
                industry: r.and_then(|r| r.industry.clone()),
                country: r.and_then(DomainRecord::country).map(str::to_owned),
                domain,
                triggered_at: iso(triggered_at),
            })
        })
        .collect::<sqlx::Result<_>>()
        .map_err(ApiError::from)
}

/// A trigger by name with its query as JSON (`PoolPort::trigger_items`):
/// the REST hooks' deliverer reads the same items as a poll.
pub async fn by_name(
    state: &AppState,
    actor: Actor,
    trigger: &str,
    params: &Value,
    limit: usize,
) -> ApiResult<Vec<Value>> {
    fn values<T: Serialize>(items: Vec<T>) -> ApiResult<Vec<Value>> {
        items
            .into_iter()
            .map(|i| serde_json::to_value(i).map_err(|e| ApiError::Internal(e.into())))
            .collect()
    }
    let limit = limit.clamp(1, MAX_LIMIT);
    match trigger {
        NEW_DOMAIN => {
            let query: NewDomainQuery = serde_json::from_value(params.clone())
                .map_err(|e| ApiError::bad_request(format!("Invalid parameters: {e}")))?;
            values(new_domains(state, &query, limit).await?)
        }
        DOMAIN_ENRICHED => values(enriched(state, actor.account_id, limit).await?),
        SCORE_THRESHOLD => {
            let threshold = params["threshold"].as_i64();
            values(score_threshold(state, actor, threshold, limit).await?)
        }
        other => Err(ApiError::bad_request(format!(
            "Unknown trigger '{}'",
            other.chars().take(40).collect::<String>()
        ))),
    }
}
