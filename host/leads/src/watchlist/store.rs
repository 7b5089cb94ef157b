//! SQL of the watchlist. Every statement on `watched_domains` and
//! `watch_changes` names the account, except those of the pool evaluation
//! and the watch worker, which serve every account's watches of a domain.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::Preferences;
use super::model::{AccountChange, ChangeRecord};
use crate::domains::facets::Monitored;
use crate::domains::record::{ENRICHED, IMPORTED};
use outreach_core::platform::clock::iso;
use outreach_core::store::{Backend, Db, id_list, placeholder_list, value_rows};

const COLUMNS: &str = "id, account_id, domain_id, domain, snapshot, snapshot_revision, \
     alert_on_industry_change, alert_on_email_change, alert_on_tech_change, \
     alert_on_status_change, total_changes, last_checked_at, last_changed_at, created_at";

/// A `watched_domains` row.
#[derive(Debug, Clone)]
pub struct WatchRow {
    pub id: i64,
    pub account_id: i64,
    pub domain_id: i64,
    pub domain: String,
    /// `None` until the record first has facts.
    pub snapshot: Option<Monitored>,
    /// The record's revision the snapshot reflects.
    pub snapshot_revision: i64,
    pub preferences: Preferences,
    pub total_changes: i64,
    pub last_checked_at: Option<i64>,
    pub last_changed_at: Option<i64>,
    pub created_at: i64,
}

fn flag(row: &AnyRow, column: &str) -> sqlx::Result<bool> {
    Ok(row.try_get::<i64, _>(column)? != 0)
}

impl WatchRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<WatchRow> {
        let snapshot: Option<String> = row.try_get("snapshot")?;
        Ok(WatchRow {
            id: row.try_get("id")?,
            account_id: row.try_get("account_id")?,
            domain_id: row.try_get("domain_id")?,
            domain: row.try_get("domain")?,
            // Written by `save_snapshot`; an unreadable one is treated as
            // absent, so the next facts become a fresh baseline.
            snapshot: snapshot.and_then(|s| serde_json::from_str(&s).ok()),
            snapshot_revision: row.try_get("snapshot_revision")?,
            preferences: Preferences {
                industry: flag(row, "alert_on_industry_change")?,
                email: flag(row, "alert_on_email_change")?,
                tech: flag(row, "alert_on_tech_change")?,
                status: flag(row, "alert_on_status_change")?,
            },
            total_changes: row.try_get("total_changes")?,
            last_checked_at: row.try_get("last_checked_at")?,
            last_changed_at: row.try_get("last_changed_at")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

/// The account's watches, oldest first.
pub async fn watches(db: &Db, account_id: i64) -> sqlx::Result<Vec<WatchRow>> {
    let sql = format!("SELECT {COLUMNS} FROM watched_domains WHERE account_id = $1 ORDER BY id");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?;
    rows.iter().map(WatchRow::from_row).collect()
}

/// One watch of the account.
pub async fn watch(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
) -> sqlx::Result<Option<WatchRow>> {
    let sql = format!("SELECT {COLUMNS} FROM watched_domains WHERE id = $1 AND account_id = $2");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(account_id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(WatchRow::from_row)
        .transpose()
}

/// Stamps a watch's `last_checked_at` and returns it; `None` when the
/// account has no such watch. Being a write, it holds the row for the rest
/// of the transaction (the pool evaluation locks the same rows), so a check
/// and an evaluation of the same watch take turns.
pub async fn touch_watch(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
    now: i64,
) -> sqlx::Result<Option<WatchRow>> {
    let sql = format!(
        "UPDATE watched_domains SET last_checked_at = $1 WHERE id = $2 AND account_id = $3 \
         RETURNING {COLUMNS}"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(now)
        .bind(id)
        .bind(account_id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(WatchRow::from_row)
        .transpose()
}

/// Every account's watches of the records `domain_ids`, by id, locked on
/// PostgreSQL until the transaction ends: a server evaluating later events
/// of the same domain waits, then reads the snapshot this one wrote.
pub async fn watches_of_domains(
    conn: &mut AnyConnection,
    backend: Backend,
    domain_ids: &[i64],
) -> sqlx::Result<Vec<WatchRow>> {
    if domain_ids.is_empty() {
        return Ok(Vec::new());
    }
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    // Ids are integers, written inline so one statement serves any batch.
    let sql = format!(
        "SELECT {COLUMNS} FROM watched_domains WHERE domain_id IN ({}) ORDER BY id{lock}",
        id_list(domain_ids)
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .fetch_all(conn)
        .await?;
    rows.iter().map(WatchRow::from_row).collect()
}

/// How many domains the account watches.
pub async fn count(conn: &mut AnyConnection, account_id: i64) -> sqlx::Result<u64> {
    outreach_core::store::count_owned(conn, "watched_domains", account_id).await
}

/// A pool record as the watchlist reads it.
#[derive(Debug, Clone)]
pub struct PoolRecord {
    pub id: i64,
    pub domain: String,
    /// Enriched, or imported: the record carries facts.
    pub has_facts: bool,
    pub revision: i64,
    pub monitored: Monitored,
    pub confidence: f64,
}

const RECORD_COLUMNS: &str = "id, domain, status, revision, industry, sub_industry, \
     website_email, summary, is_trusted, confidence";

fn record_from_row(row: &AnyRow) -> sqlx::Result<PoolRecord> {
    let status: String = row.try_get("status")?;
    Ok(PoolRecord {
        id: row.try_get("id")?,
        domain: row.try_get("domain")?,
        has_facts: status == ENRICHED || status == IMPORTED,
        revision: row.try_get("revision")?,
        monitored: Monitored::from_row(row)?,
        confidence: row.try_get("confidence")?,
    })
}

/// The records of `domains` (at most 200), locked on PostgreSQL until the
/// transaction ends: a save of one of them then commits, and writes its
/// pool event, only after the watch that snapshots it, so the evaluation
/// of that event finds the watch.
pub async fn records_for_watch(
    conn: &mut AnyConnection,
    backend: Backend,
    domains: &[String],
) -> sqlx::Result<Vec<PoolRecord>> {
    if domains.is_empty() {
        return Ok(Vec::new());
    }
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {RECORD_COLUMNS} FROM domains WHERE domain IN ({}) ORDER BY id{lock}",
        placeholder_list(backend, 1, domains.len())
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for d in domains {
        q = q.bind(d);
    }
    q.fetch_all(conn)
        .await?
        .iter()
        .map(record_from_row)
        .collect()
}

/// The record `domain_id` as it stands.
pub async fn record(conn: &mut AnyConnection, domain_id: i64) -> sqlx::Result<Option<PoolRecord>> {
    let sql = format!("SELECT {RECORD_COLUMNS} FROM domains WHERE id = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(domain_id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(record_from_row)
        .transpose()
}

/// A watch to insert.
pub struct NewRow<'a> {
    pub record: &'a PoolRecord,
    pub preferences: Preferences,
}

fn snapshot_text(record: &PoolRecord) -> Option<String> {
    record
        .has_facts
        .then(|| serde_json::to_string(&record.monitored).unwrap_or_default())
}

/// Adds watches (at most 50), skipping records the account watches
/// already; returns the new ids. The caller checks the cap in the same
/// transaction.
pub async fn insert(
    conn: &mut AnyConnection,
    backend: Backend,
    account_id: i64,
    rows: &[NewRow<'_>],
    now: i64,
    next_check_at: i64,
) -> sqlx::Result<Vec<i64>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "INSERT INTO watched_domains (account_id, domain_id, domain, snapshot, snapshot_revision, \
         alert_on_industry_change, alert_on_email_change, alert_on_tech_change, \
         alert_on_status_change, next_check_at, created_at) VALUES {} \
         ON CONFLICT (account_id, domain_id) DO NOTHING RETURNING id",
        value_rows(backend, rows.len(), 11)
    );
    let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).persistent(false);
    for row in rows {
        let p = row.preferences;
        q = q
            .bind(account_id)
            .bind(row.record.id)
            .bind(&row.record.domain)
            .bind(snapshot_text(row.record))
            .bind(row.record.revision)
            .bind(i64::from(p.industry))
            .bind(i64::from(p.email))
            .bind(i64::from(p.tech))
            .bind(i64::from(p.status))
            .bind(next_check_at)
            .bind(now);
    }
    q.fetch_all(conn).await
}

/// Writes a watch's preferences; false when the account has no such watch.
pub async fn set_preferences(
    db: &Db,
    account_id: i64,
    id: i64,
    p: Preferences,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE watched_domains SET alert_on_industry_change = $1, alert_on_email_change = $2, \
         alert_on_tech_change = $3, alert_on_status_change = $4 WHERE id = $5 AND account_id = $6",
    )
    .bind(i64::from(p.industry))
    .bind(i64::from(p.email))
    .bind(i64::from(p.tech))
    .bind(i64::from(p.status))
    .bind(id)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes a watch and (by cascade) its change records; false when the
/// account has no such watch.
pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM watched_domains WHERE id = $1 AND account_id = $2")
        .bind(id)
        .bind(account_id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Writes what a comparison saw: the new snapshot at `revision`, the
/// check's time, and, when `changed` is more than 0, the change count and
/// time.
pub async fn save_snapshot(
    conn: &mut AnyConnection,
    watch_id: i64,
    snapshot: &Monitored,
    revision: i64,
    changed: i64,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE watched_domains SET snapshot = $1, snapshot_revision = $2, last_checked_at = $3, \
         total_changes = total_changes + $4, \
         last_changed_at = CASE WHEN $4 > 0 THEN $3 ELSE last_changed_at END WHERE id = $5",
    )
    .bind(serde_json::to_string(snapshot).unwrap_or_default())
    .bind(revision)
    .bind(now)
    .bind(changed)
    .bind(watch_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// One change record per `(field, old, new)`.
pub async fn insert_changes(
    conn: &mut AnyConnection,
    backend: Backend,
    account_id: i64,
    watch_id: i64,
    changes: &[(&str, Option<String>, Option<String>)],
    now: i64,
) -> sqlx::Result<()> {
    if changes.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO watch_changes (account_id, watchlist_id, field_changed, old_value, \
         new_value, detected_at) VALUES {}",
        value_rows(backend, changes.len(), 6)
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for (field, old, new) in changes {
        q = q
            .bind(account_id)
            .bind(watch_id)
            .bind(*field)
            .bind(old.clone())
            .bind(new.clone())
            .bind(now);
    }
    q.execute(conn).await?;
    Ok(())
}

const CHANGE_COLUMNS: &str = "c.id, c.watchlist_id, c.field_changed, c.old_value, c.new_value, \
     c.detected_at";

fn change_from_row(row: &AnyRow) -> sqlx::Result<ChangeRecord> {
    Ok(ChangeRecord {
        id: row.try_get("id")?,
        watchlist_id: row.try_get("watchlist_id")?,
        field_changed: row.try_get("field_changed")?,
        old_value: row.try_get("old_value")?,
        new_value: row.try_get("new_value")?,
        detected_at: iso(row.try_get("detected_at")?),
    })
}

/// The latest `per_watch` change records of each of the account's watches,
/// newest first within a watch.
pub async fn recent_changes(
    db: &Db,
    account_id: i64,
    per_watch: i64,
) -> sqlx::Result<Vec<ChangeRecord>> {
    let sql = format!(
        "SELECT * FROM (SELECT {CHANGE_COLUMNS}, ROW_NUMBER() OVER \
         (PARTITION BY c.watchlist_id ORDER BY c.id DESC) AS rn FROM watch_changes c \
         WHERE c.account_id = $1) t WHERE rn <= $2 ORDER BY watchlist_id, id DESC"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .bind(per_watch)
        .fetch_all(&db.pool)
        .await?;
    rows.iter().map(change_from_row).collect()
}

/// A page of one watch's change records, newest first, optionally of one
/// field, and how many match in all.
pub async fn history(
    db: &Db,
    account_id: i64,
    watch_id: i64,
    field: Option<&str>,
    (limit, offset): (i64, i64),
) -> sqlx::Result<(Vec<ChangeRecord>, i64)> {
    // One text for both cases: a NULL field matches every row.
    let filter = "c.account_id = $1 AND c.watchlist_id = $2 \
         AND (CAST($3 AS TEXT) IS NULL OR c.field_changed = $3)";
    let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT COUNT(*) FROM watch_changes c WHERE {filter}"
    )))
    .bind(account_id)
    .bind(watch_id)
    .bind(field)
    .fetch_one(&db.pool)
    .await?;
    let sql = format!(
        "SELECT {CHANGE_COLUMNS} FROM watch_changes c WHERE {filter} \
         ORDER BY c.id DESC LIMIT $4 OFFSET $5"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .bind(watch_id)
        .bind(field)
        .bind(limit)
        .bind(offset)
        .fetch_all(&db.pool)
        .await?;
    let changes = rows
        .iter()
        .map(change_from_row)
        .collect::<sqlx::Result<_>>()?;
    Ok((changes, total))
}

/// The account's latest `limit` change records with their domains, newest
/// first, and how many it has in all.
pub async fn account_changes(
    db: &Db,
    account_id: i64,
    limit: i64,
) -> sqlx::Result<(Vec<AccountChange>, i64)> {
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM watch_changes WHERE account_id = $1")
        .bind(account_id)
        .fetch_one(&db.pool)
        .await?;
    let sql = format!(
        "SELECT {CHANGE_COLUMNS}, w.domain FROM watch_changes c \
         JOIN watched_domains w ON w.id = c.watchlist_id \
         WHERE c.account_id = $1 ORDER BY c.id DESC LIMIT $2"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .bind(limit)
        .fetch_all(&db.pool)
        .await?;
    let changes = rows
        .iter()
        .map(|r| {
            Ok(AccountChange {
                change: change_from_row(r)?,
                domain: r.try_get("domain")?,
            })
        })
        .collect::<sqlx::Result<_>>()?;
    Ok((changes, total))
}

/// The re-enrichment interval of each plan, in milliseconds.
pub struct Intervals {
    pub starter: i64,
    pub pro: i64,
    pub enterprise: i64,
}

/// Takes up to `limit` watches whose re-enrichment is due, oldest due
/// first, and moves each one's `next_check_at` a plan's interval past
/// `now`, in one statement: concurrent servers skip each other's rows on
/// PostgreSQL, and take turns on SQLite. Returns the watches' ids.
pub async fn claim_due(
    conn: &mut AnyConnection,
    backend: Backend,
    now: i64,
    every: &Intervals,
    limit: i64,
) -> sqlx::Result<Vec<i64>> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    // An account that fell back to Free keeps its watches (the endpoints
    // answer 403); they move at the Starter pace and are not re-enriched.
    let sql = format!(
        "UPDATE watched_domains SET next_check_at = $1 + CASE \
         (SELECT a.plan FROM accounts a WHERE a.id = watched_domains.account_id) \
         WHEN 'enterprise' THEN $2 WHEN 'pro' THEN $3 ELSE $4 END \
         WHERE id IN (SELECT id FROM watched_domains WHERE next_check_at <= $1 \
         ORDER BY next_check_at, id LIMIT $5{lock}) RETURNING id"
    );
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(now)
        .bind(every.enterprise)
        .bind(every.pro)
        .bind(every.starter)
        .bind(limit)
        .fetch_all(conn)
        .await
}

/// Makes the records of the watches `watch_ids` due for the pool's refresh
/// scan now, unless they are due already; watches of accounts on Free or
/// not active are left out. Returns how many records moved.
pub async fn refresh_records(
    conn: &mut AnyConnection,
    watch_ids: &[i64],
    now: i64,
) -> sqlx::Result<u64> {
    if watch_ids.is_empty() {
        return Ok(0);
    }
    let sql = format!(
        "UPDATE domains SET refresh_at = $1 WHERE (refresh_at IS NULL OR refresh_at > $1) \
         AND id IN (SELECT w.domain_id FROM watched_domains w JOIN accounts a \
         ON a.id = w.account_id WHERE w.id IN ({}) AND a.plan <> 'free' AND a.status = 'active')",
        id_list(watch_ids)
    );
    let done = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(now)
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}
