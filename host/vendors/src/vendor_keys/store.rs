//! SQL for vendor keys, the cost ledger and the result caches.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::catalogue::Family;
use outreach_core::store::{Db, placeholder, placeholder_list};
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct KeyRow {
    pub id: i64,
    pub provider: String,
    pub label: String,
    /// Sealed (encrypted) key text.
    pub api_key: String,
    pub key_preview: String,
    pub endpoint_url: Option<String>,
    pub validation_model: Option<String>,
    pub is_active: bool,
    pub credits_remaining: Option<i64>,
    pub last_validated_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

fn key_row(r: &AnyRow) -> sqlx::Result<KeyRow> {
    Ok(KeyRow {
        id: r.try_get("id")?,
        provider: r.try_get("provider")?,
        label: r.try_get("label")?,
        api_key: r.try_get("api_key")?,
        key_preview: r.try_get("key_preview")?,
        endpoint_url: r.try_get("endpoint_url")?,
        validation_model: r.try_get("validation_model")?,
        is_active: r.try_get::<i64, _>("is_active")? != 0,
        credits_remaining: r.try_get("credits_remaining")?,
        last_validated_at: r.try_get("last_validated_at")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// The associated data binding a sealed key to its row.
pub fn key_aad(id: i64) -> String {
    format!("vendor_keys:{id}:api_key")
}

pub struct NewKeyRow<'a> {
    pub account_id: i64,
    pub family: Family,
    pub provider: &'a str,
    pub label: &'a str,
    pub key_preview: &'a str,
    pub endpoint_url: Option<&'a str>,
    pub validation_model: Option<&'a str>,
    pub credits_remaining: Option<i64>,
    pub now: i64,
}

/// Inserts a key; `seal` turns the row id into the sealed key text, so the
/// row identity is part of the encryption. One transaction: a key is never
/// visible unsealed or half-written.
pub async fn insert_key(
    db: &Db,
    k: NewKeyRow<'_>,
    seal: impl FnOnce(i64) -> String,
) -> sqlx::Result<i64> {
    let mut tx = db.pool.begin().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO vendor_keys (account_id, family, provider, label, api_key, key_preview, \
         endpoint_url, validation_model, is_active, credits_remaining, last_validated_at, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, '', $5, $6, $7, 1, $8, $9, $9, $9) RETURNING id",
    )
    .bind(k.account_id)
    .bind(k.family.as_str())
    .bind(k.provider)
    .bind(k.label)
    .bind(k.key_preview)
    .bind(k.endpoint_url)
    .bind(k.validation_model)
    .bind(k.credits_remaining)
    .bind(k.now)
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query("UPDATE vendor_keys SET api_key = $1 WHERE id = $2")
        .bind(seal(id))
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(id)
}

pub async fn list_keys(db: &Db, account_id: i64, family: Family) -> sqlx::Result<Vec<KeyRow>> {
    sqlx::query("SELECT * FROM vendor_keys WHERE account_id = $1 AND family = $2 ORDER BY id")
        .bind(account_id)
        .bind(family.as_str())
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(key_row)
        .collect()
}

pub async fn get_key(
    db: &Db,
    account_id: i64,
    family: Family,
    id: i64,
) -> sqlx::Result<Option<KeyRow>> {
    sqlx::query("SELECT * FROM vendor_keys WHERE account_id = $1 AND family = $2 AND id = $3")
        .bind(account_id)
        .bind(family.as_str())
        .bind(id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(key_row)
        .transpose()
}

/// Writes every mutable column of a key (the service decides their values).
pub async fn save_key(db: &Db, account_id: i64, k: &KeyRow, now: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE vendor_keys SET label = $1, api_key = $2, key_preview = $3, endpoint_url = $4, \
         validation_model = $5, is_active = $6, credits_remaining = $7, last_validated_at = $8, \
         updated_at = $9 WHERE account_id = $10 AND id = $11",
    )
    .bind(&k.label)
    .bind(&k.api_key)
    .bind(&k.key_preview)
    .bind(&k.endpoint_url)
    .bind(&k.validation_model)
    .bind(k.is_active as i64)
    .bind(k.credits_remaining)
    .bind(k.last_validated_at)
    .bind(now)
    .bind(account_id)
    .bind(k.id)
    .execute(&db.pool)
    .await?;
    Ok(())
}

pub async fn delete_key(db: &Db, account_id: i64, family: Family, id: i64) -> sqlx::Result<bool> {
    let done =
        sqlx::query("DELETE FROM vendor_keys WHERE account_id = $1 AND family = $2 AND id = $3")
            .bind(account_id)
            .bind(family.as_str())
            .bind(id)
            .execute(&db.pool)
            .await?;
    Ok(done.rows_affected() == 1)
}

/// One row of the cost ledger.
#[derive(Debug, Clone, Default)]
pub struct VendorCall {
    pub account_id: i64,
    pub family: &'static str,
    pub provider: String,
    pub key_id: Option<i64>,
    pub action_type: String,
    pub model: Option<String>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub latency_ms: i64,
    pub cost_estimate_usd: f64,
    pub success: bool,
    pub cache_hit: bool,
    pub deliverability: Option<String>,
    pub error: Option<String>,
    pub ts: i64,
}

pub async fn record_call(db: &Db, c: &VendorCall) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO vendor_calls (account_id, family, provider, key_id, action_type, model, \
         prompt_tokens, completion_tokens, latency_ms, cost_estimate_usd, success, cache_hit, \
         deliverability, error, ts) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
    )
    .bind(c.account_id)
    .bind(c.family)
    .bind(&c.provider)
    .bind(c.key_id)
    .bind(&c.action_type)
    .bind(&c.model)
    .bind(c.prompt_tokens)
    .bind(c.completion_tokens)
    .bind(c.latency_ms)
    .bind(c.cost_estimate_usd)
    .bind(c.success as i64)
    .bind(c.cache_hit as i64)
    .bind(&c.deliverability)
    .bind(&c.error)
    .bind(c.ts)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// A cached result with its timestamps.
#[derive(Debug, Clone)]
pub struct CachedRow {
    pub result: String,
    pub cached_at: i64,
    pub expires_at: i64,
}

fn cached_row(r: &AnyRow) -> sqlx::Result<CachedRow> {
    Ok(CachedRow {
        result: r.try_get("result")?,
        cached_at: r.try_get("cached_at")?,
        expires_at: r.try_get("expires_at")?,
    })
}

/// The freshest unexpired cached result of `subject` for this user.
pub async fn cache_get(
    db: &Db,
    user_key: &str,
    family: Family,
    subject: &str,
    now: i64,
) -> sqlx::Result<Option<CachedRow>> {
    let row = sqlx::query(
        "SELECT result, cached_at, expires_at FROM vendor_cache WHERE user_key = $1 AND family = $2 \
         AND subject = $3 AND expires_at > $4 ORDER BY cached_at DESC, id DESC LIMIT 1",
    )
    .bind(user_key)
    .bind(family.as_str())
    .bind(subject)
    .bind(now)
    .fetch_optional(&db.pool)
    .await?;
    row.as_ref().map(cached_row).transpose()
}

/// The freshest unexpired cached result of each of `subjects` that has one,
/// among every user of the account, in one query (the sender renders a
/// batch of messages at once; a single lookup is a batch of one).
/// Background work (the sequence sender) acts for the account, not a user,
/// so it reads whatever any of its users cached. The cache's index leads
/// with `user_key`, which this query cannot use; an index on
/// `(account_id, family, subject, expires_at)` would serve it directly.
pub async fn cache_get_many_for_account(
    db: &Db,
    account_id: i64,
    family: Family,
    subjects: &[String],
    now: i64,
) -> sqlx::Result<HashMap<String, CachedRow>> {
    let mut found = HashMap::new();
    // Chunks keep each statement well under SQLite's parameter limit.
    for chunk in subjects.chunks(500) {
        let sql = format!(
            "SELECT subject, result, cached_at, expires_at FROM vendor_cache \
             WHERE account_id = {} AND family = {} AND expires_at > {} AND subject IN ({}) \
             ORDER BY cached_at DESC, id DESC",
            // SQLite's anonymous placeholders bind in order: `$1` before a
            // `?` list would bind the list from the first value again.
            placeholder(db.backend, 1),
            placeholder(db.backend, 2),
            placeholder(db.backend, 3),
            placeholder_list(db.backend, 4, chunk.len())
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .bind(account_id)
            .bind(family.as_str())
            .bind(now);
        for s in chunk {
            q = q.bind(s.as_str());
        }
        for r in q.fetch_all(&db.pool).await? {
            let subject: String = r.try_get("subject")?;
            if let std::collections::hash_map::Entry::Vacant(slot) = found.entry(subject) {
                slot.insert(cached_row(&r)?);
            }
        }
    }
    Ok(found)
}

pub struct CachePut<'a> {
    pub account_id: i64,
    pub user_key: &'a str,
    pub family: Family,
    pub subject: &'a str,
    pub provider: &'a str,
    pub result: String,
    pub now: i64,
    pub ttl_ms: i64,
}

pub async fn cache_put(db: &Db, c: CachePut<'_>) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO vendor_cache (account_id, user_key, family, subject, provider, result, cached_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(c.account_id)
    .bind(c.user_key)
    .bind(c.family.as_str())
    .bind(c.subject)
    .bind(c.provider)
    .bind(c.result)
    .bind(c.now)
    .bind(c.now + c.ttl_ms)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Removes this user's cached rows of `subject`; returns how many.
pub async fn cache_evict(
    db: &Db,
    user_key: &str,
    family: Family,
    subject: &str,
) -> sqlx::Result<u64> {
    let done = sqlx::query(
        "DELETE FROM vendor_cache WHERE user_key = $1 AND family = $2 AND subject = $3",
    )
    .bind(user_key)
    .bind(family.as_str())
    .bind(subject)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected())
}

/// Ledger rows of an account and family since `since`, grouped by `group`
/// (a fixed column name or expression chosen by the caller, never input).
pub async fn ledger_grouped(
    db: &Db,
    account_id: i64,
    family: Family,
    since: i64,
    group: LedgerGroup,
) -> sqlx::Result<Vec<LedgerBucket>> {
    let expr = match group {
        LedgerGroup::Provider => "provider",
        LedgerGroup::ActionType => "action_type",
        LedgerGroup::Deliverability => {
            "CASE WHEN success = 1 THEN COALESCE(deliverability, 'unknown') ELSE 'failed' END"
        }
        LedgerGroup::Day => "CAST(ts / 86400000 AS TEXT)",
        LedgerGroup::All => "'all'",
    };
    // PostgreSQL refuses GROUP BY on a constant; the total is one group anyway.
    let group_by = match group {
        LedgerGroup::All => String::new(),
        _ => format!("GROUP BY {expr}"),
    };
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {expr} AS name, COUNT(*) AS calls, \
         COALESCE(SUM(cost_estimate_usd), 0.0) AS cost, \
         CAST(COALESCE(SUM(prompt_tokens), 0) AS BIGINT) AS prompt_tokens, \
         CAST(COALESCE(SUM(completion_tokens), 0) AS BIGINT) AS completion_tokens, \
         CAST(COALESCE(SUM(cache_hit), 0) AS BIGINT) AS cache_hits \
         FROM vendor_calls WHERE account_id = $1 AND family = $2 AND ts >= $3 \
         {group_by} ORDER BY name"
    )))
    .bind(account_id)
    .bind(family.as_str())
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(LedgerBucket {
                name: r.try_get("name")?,
                calls: r.try_get("calls")?,
                cost_usd: r.try_get("cost")?,
                prompt_tokens: r.try_get("prompt_tokens")?,
                completion_tokens: r.try_get("completion_tokens")?,
                cache_hits: r.try_get("cache_hits")?,
            })
        })
        .collect()
}

#[derive(Debug, Clone, Copy)]
pub enum LedgerGroup {
    Provider,
    ActionType,
    Deliverability,
    Day,
    All,
}

#[derive(Debug, Clone)]
pub struct LedgerBucket {
    pub name: String,
    pub calls: i64,
    pub cost_usd: f64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cache_hits: i64,
}

/// Deletes cached results that have expired; returns how many.
pub async fn prune_cache(db: &Db, now: i64) -> sqlx::Result<u64> {
    let done = sqlx::query("DELETE FROM vendor_cache WHERE expires_at <= $1")
        .bind(now)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected())
}
