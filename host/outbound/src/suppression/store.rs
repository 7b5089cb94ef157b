//! SQL of the suppression list; every query is scoped to the account.

use sqlx::AnyConnection;
use sqlx::Row;
use sqlx::any::AnyRow;

use super::address::Target;
use outreach_core::store::{Db, placeholder, placeholder_list, value_rows};

#[derive(Debug, Clone)]
pub struct EntryRow {
    pub id: i64,
    pub email: String,
    pub domain: String,
    pub reason: String,
    pub created_at: i64,
}

fn entry(r: &AnyRow) -> sqlx::Result<EntryRow> {
    Ok(EntryRow {
        id: r.try_get("id")?,
        email: r.try_get("email")?,
        domain: r.try_get("domain")?,
        reason: r.try_get("reason")?,
        created_at: r.try_get("created_at")?,
    })
}

/// Adds one entry unless the address (or `@domain`) is there already.
/// Returns the entry and whether this call created it.
pub async fn insert_one(
    db: &Db,
    account_id: i64,
    target: &Target,
    reason: &str,
    now: i64,
) -> sqlx::Result<(EntryRow, bool)> {
    let mut conn = db.pool.acquire().await?;
    let created = add_on(&mut conn, account_id, target, reason, now).await?;
    let row = sqlx::query(
        "SELECT id, email, domain, reason, created_at FROM suppression_entries \
         WHERE account_id = $1 AND email = $2",
    )
    .bind(account_id)
    .bind(&target.email)
    .fetch_one(&mut *conn)
    .await?;
    Ok((entry(&row)?, created))
}

/// Adds one entry on `conn` (a transaction of the change that suppresses
/// the address: a bounce, an unsubscribe, a complaint) unless it is listed
/// already; says whether it was added.
pub async fn add_on(
    conn: &mut AnyConnection,
    account_id: i64,
    target: &Target,
    reason: &str,
    now: i64,
) -> sqlx::Result<bool> {
    Ok(sqlx::query(
        "INSERT INTO suppression_entries (account_id, email, domain, reason, created_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
    )
    .bind(account_id)
    .bind(&target.email)
    .bind(&target.domain)
    .bind(reason)
    .bind(now)
    .execute(conn)
    .await?
    .rows_affected()
        == 1)
}

/// Adds many entries with one reason; existing ones are left as they are.
/// Returns how many were added.
pub async fn insert_many(
    db: &Db,
    account_id: i64,
    targets: &[Target],
    reason: &str,
    now: i64,
) -> sqlx::Result<u64> {
    let mut added = 0;
    let mut tx = db.pool.begin().await?;
    for chunk in targets.chunks(1000) {
        let sql = format!(
            "INSERT INTO suppression_entries (account_id, email, domain, reason, created_at) \
             VALUES {} ON CONFLICT DO NOTHING",
            value_rows(db.backend, chunk.len(), 5)
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for t in chunk {
            q = q
                .bind(account_id)
                .bind(t.email.clone())
                .bind(t.domain.clone())
                .bind(reason)
                .bind(now);
        }
        added += q.execute(&mut *tx).await?.rows_affected();
    }
    tx.commit().await?;
    Ok(added)
}

/// One page, newest first, and the total.
pub async fn list(
    db: &Db,
    account_id: i64,
    limit: i64,
    offset: i64,
) -> sqlx::Result<(Vec<EntryRow>, i64)> {
    let rows = sqlx::query(
        "SELECT id, email, domain, reason, created_at FROM suppression_entries \
         WHERE account_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3",
    )
    .bind(account_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(entry)
    .collect::<sqlx::Result<_>>()?;
    let total: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM suppression_entries WHERE account_id = $1")
            .bind(account_id)
            .fetch_one(&db.pool)
            .await?;
    Ok((rows, total))
}

pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM suppression_entries WHERE id = $1 AND account_id = $2")
        .bind(id)
        .bind(account_id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Which of `emails` (checked, lowercased addresses) the account suppresses,
/// by the address itself or by an `@domain` entry. For enrollment: a large
/// batch against a list no longer than four times the batch reads the whole
/// list once (one sequential read instead of an index probe per address and
/// domain); otherwise one query per 500 addresses.
pub async fn suppressed(db: &Db, account_id: i64, emails: &[Target]) -> sqlx::Result<Vec<String>> {
    if emails.len() >= 1000 {
        let total: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM suppression_entries WHERE account_id = $1")
                .bind(account_id)
                .fetch_one(&db.pool)
                .await?;
        if total as usize <= 4 * emails.len() {
            let all: std::collections::HashSet<String> =
                sqlx::query_scalar("SELECT email FROM suppression_entries WHERE account_id = $1")
                    .bind(account_id)
                    .fetch_all(&db.pool)
                    .await?
                    .into_iter()
                    .collect();
            return Ok(emails
                .iter()
                .filter(|t| all.contains(&t.email) || all.contains(&format!("@{}", t.domain)))
                .map(|t| t.email.clone())
                .collect());
        }
    }
    let mut hits = Vec::new();
    for chunk in emails.chunks(500) {
        let mut keys: Vec<String> = chunk.iter().map(|t| t.email.clone()).collect();
        keys.extend(chunk.iter().map(|t| format!("@{}", t.domain)));
        keys.sort_unstable();
        keys.dedup();
        let sql = format!(
            "SELECT email FROM suppression_entries WHERE account_id = {} AND email IN ({})",
            placeholder(db.backend, 1),
            placeholder_list(db.backend, 2, keys.len())
        );
        let mut q = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .bind(account_id);
        for k in &keys {
            q = q.bind(k.clone());
        }
        let found = q.fetch_all(&db.pool).await?;
        for t in chunk {
            let domain_entry = format!("@{}", t.domain);
            if found.iter().any(|f| *f == t.email || *f == domain_entry) {
                hits.push(t.email.clone());
            }
        }
    }
    Ok(hits)
}
