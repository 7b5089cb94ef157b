//! SQL of tracked keywords and their matches.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::matcher::Tracked;
use outreach_core::store::Db;

/// A stored keyword of an account.
#[derive(Debug, Clone)]
pub struct KeywordRow {
    pub id: i64,
    pub keyword: String,
    pub created_at: i64,
}

fn keyword_row(r: &AnyRow) -> sqlx::Result<KeywordRow> {
    Ok(KeywordRow {
        id: r.try_get("id")?,
        keyword: r.try_get("keyword")?,
        created_at: r.try_get("created_at")?,
    })
}

/// The version every server's automaton is built from.
pub async fn version(conn: &mut AnyConnection) -> sqlx::Result<i64> {
    sqlx::query_scalar("SELECT version FROM tracked_keywords_version WHERE id = 1")
        .fetch_one(&mut *conn)
        .await
}

/// Moves the version on, in the transaction of an add or a delete.
async fn bump(conn: &mut AnyConnection) -> sqlx::Result<()> {
    sqlx::query("UPDATE tracked_keywords_version SET version = version + 1 WHERE id = 1")
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Every account's keywords, for the automaton.
pub async fn all(conn: &mut AnyConnection) -> sqlx::Result<Vec<Tracked>> {
    sqlx::query("SELECT id, account_id, keyword FROM tracked_keywords ORDER BY id")
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| {
            Ok(Tracked {
                id: r.try_get("id")?,
                account_id: r.try_get("account_id")?,
                keyword: r.try_get("keyword")?,
            })
        })
        .collect()
}

/// The account's keywords, oldest first.
pub async fn list(db: &Db, account_id: i64) -> sqlx::Result<Vec<KeywordRow>> {
    sqlx::query(
        "SELECT id, keyword, created_at FROM tracked_keywords WHERE account_id = $1 ORDER BY id",
    )
    .bind(account_id)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(keyword_row)
    .collect()
}

pub async fn get(db: &Db, account_id: i64, id: i64) -> sqlx::Result<Option<KeywordRow>> {
    sqlx::query(
        "SELECT id, keyword, created_at FROM tracked_keywords WHERE account_id = $1 AND id = $2",
    )
    .bind(account_id)
    .bind(id)
    .fetch_optional(&db.pool)
    .await?
    .as_ref()
    .map(keyword_row)
    .transpose()
}

/// Adds a keyword on `conn` (the account locked); `None` when the account
/// tracks it already.
pub async fn insert(
    conn: &mut AnyConnection,
    account_id: i64,
    (keyword, normalised): (&str, &str),
    now: i64,
) -> sqlx::Result<Option<i64>> {
    let id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO tracked_keywords (account_id, keyword, normalised, created_at) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, normalised) DO NOTHING RETURNING id",
    )
    .bind(account_id)
    .bind(keyword)
    .bind(normalised)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    if id.is_some() {
        bump(conn).await?;
    }
    Ok(id)
}

/// Deletes a keyword and its matches; whether it was the account's.
pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let mut tx = db.pool.begin().await?;
    let gone = sqlx::query("DELETE FROM tracked_keywords WHERE account_id = $1 AND id = $2")
        .bind(account_id)
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected()
        > 0;
    if gone {
        bump(&mut tx).await?;
    }
    tx.commit().await?;
    Ok(gone)
}

/// Records a match unless the keyword was deleted meanwhile; whether it did.
pub async fn insert_match(
    conn: &mut AnyConnection,
    tracked: &Tracked,
    (domain_id, domain, excerpt): (i64, &str, &str),
    now: i64,
) -> sqlx::Result<bool> {
    let id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO keyword_matches (account_id, keyword_id, domain_id, domain, excerpt, \
         matched_at) SELECT account_id, id, $2, $3, $4, $5 FROM tracked_keywords WHERE id = $1 \
         RETURNING id",
    )
    .bind(tracked.id)
    .bind(domain_id)
    .bind(domain)
    .bind(excerpt)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(id.is_some())
}

/// Per keyword of the account: matches since `week`, since `month`, and
/// the newest match of all time.
pub async fn match_counts(
    db: &Db,
    account_id: i64,
    week: i64,
    month: i64,
) -> sqlx::Result<Vec<(i64, i64, i64, Option<i64>)>> {
    sqlx::query_as(
        "SELECT keyword_id, CAST(SUM(CASE WHEN matched_at >= $2 THEN 1 ELSE 0 END) AS BIGINT), \
         CAST(SUM(CASE WHEN matched_at >= $3 THEN 1 ELSE 0 END) AS BIGINT), MAX(matched_at) \
         FROM keyword_matches WHERE account_id = $1 GROUP BY keyword_id",
    )
    .bind(account_id)
    .bind(week)
    .bind(month)
    .fetch_all(&db.pool)
    .await
}

/// A recorded match.
#[derive(Debug, Clone)]
pub struct MatchRow {
    pub domain: String,
    pub excerpt: String,
    pub matched_at: i64,
}

fn match_row(r: &AnyRow) -> sqlx::Result<MatchRow> {
    Ok(MatchRow {
        domain: r.try_get("domain")?,
        excerpt: r.try_get("excerpt")?,
        matched_at: r.try_get("matched_at")?,
    })
}

/// The keyword's matches since `since`, newest first.
pub async fn matches_since(db: &Db, keyword_id: i64, since: i64) -> sqlx::Result<Vec<MatchRow>> {
    sqlx::query(
        "SELECT domain, excerpt, matched_at FROM keyword_matches \
         WHERE keyword_id = $1 AND matched_at >= $2 ORDER BY matched_at DESC, id DESC",
    )
    .bind(keyword_id)
    .bind(since)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(match_row)
    .collect()
}

/// All matches of the keyword, and the newest `limit`.
pub async fn recent(db: &Db, keyword_id: i64, limit: i64) -> sqlx::Result<(i64, Vec<MatchRow>)> {
    let total: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM keyword_matches WHERE keyword_id = $1")
            .bind(keyword_id)
            .fetch_one(&db.pool)
            .await?;
    let rows = sqlx::query(
        "SELECT domain, excerpt, matched_at FROM keyword_matches WHERE keyword_id = $1 \
         ORDER BY matched_at DESC, id DESC LIMIT $2",
    )
    .bind(keyword_id)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    let recent = rows.iter().map(match_row).collect::<sqlx::Result<_>>()?;
    Ok((total, recent))
}
