//! SQL of template grants, installs and ratings. The templates themselves
//! live in their packs; rows here name them by their stable string id.

use std::collections::HashMap;

use sqlx::{AnyConnection, Row};

use outreach_core::store::Db;

/// Whether the account was granted `template_id` by an operator.
pub async fn granted(
    conn: &mut AnyConnection,
    account_id: i64,
    template_id: &str,
) -> sqlx::Result<bool> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM template_grants WHERE account_id = $1 AND template_id = $2",
    )
    .bind(account_id)
    .bind(template_id)
    .fetch_one(conn)
    .await?;
    Ok(n > 0)
}

/// The template ids granted to the account.
pub async fn grants(db: &Db, account_id: i64) -> sqlx::Result<Vec<(String, i64)>> {
    let rows = sqlx::query(
        "SELECT template_id, granted_at FROM template_grants WHERE account_id = $1 \
         ORDER BY template_id",
    )
    .bind(account_id)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("template_id")?, r.try_get("granted_at")?)))
        .collect()
}

/// Grants a template; answers false when it was granted already.
pub async fn grant(db: &Db, account_id: i64, template_id: &str, now: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "INSERT INTO template_grants (account_id, template_id, granted_at) VALUES ($1, $2, $3) \
         ON CONFLICT (account_id, template_id) DO NOTHING",
    )
    .bind(account_id)
    .bind(template_id)
    .bind(now)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Revokes a grant; answers false when there was none.
pub async fn revoke(db: &Db, account_id: i64, template_id: &str) -> sqlx::Result<bool> {
    let done =
        sqlx::query("DELETE FROM template_grants WHERE account_id = $1 AND template_id = $2")
            .bind(account_id)
            .bind(template_id)
            .execute(&db.pool)
            .await?;
    Ok(done.rows_affected() > 0)
}

pub async fn record_install(
    conn: &mut AnyConnection,
    account_id: i64,
    template_id: &str,
    workflow_id: i64,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO template_installs (account_id, template_id, workflow_id, installed_at) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(account_id)
    .bind(template_id)
    .bind(workflow_id)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn installed(
    conn: &mut AnyConnection,
    account_id: i64,
    template_id: &str,
) -> sqlx::Result<bool> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM template_installs WHERE account_id = $1 AND template_id = $2",
    )
    .bind(account_id)
    .bind(template_id)
    .fetch_one(conn)
    .await?;
    Ok(n > 0)
}

/// The template ids the account installed.
pub async fn installed_ids(db: &Db, account_id: i64) -> sqlx::Result<Vec<String>> {
    sqlx::query_scalar("SELECT DISTINCT template_id FROM template_installs WHERE account_id = $1")
        .bind(account_id)
        .fetch_all(&db.pool)
        .await
}

/// Installs per template id, over every account.
pub async fn install_counts(db: &Db) -> sqlx::Result<HashMap<String, i64>> {
    let rows = sqlx::query(
        "SELECT template_id, COUNT(*) AS n FROM template_installs GROUP BY template_id",
    )
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("template_id")?, r.try_get("n")?)))
        .collect()
}

/// (sum, count) of ratings per template id.
pub async fn rating_totals(db: &Db) -> sqlx::Result<HashMap<String, (i64, i64)>> {
    let rows = sqlx::query(
        "SELECT template_id, CAST(SUM(rating) AS BIGINT) AS s, COUNT(*) AS n FROM template_ratings \
         GROUP BY template_id",
    )
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("template_id")?,
                (r.try_get("s")?, r.try_get("n")?),
            ))
        })
        .collect()
}

/// One account's rating of a template.
#[derive(Debug, Clone)]
pub struct RatingRow {
    pub template_id: String,
    pub template_type: String,
    pub rating: i64,
    pub review: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Writes the account's rating, over its earlier one (which keeps its
/// `created_at`); answers the stored `created_at`.
pub async fn rate(conn: &mut AnyConnection, account_id: i64, r: &RatingRow) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO template_ratings (account_id, template_id, template_type, rating, review, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (account_id, template_id) DO UPDATE SET template_type = excluded.template_type, \
         rating = excluded.rating, review = excluded.review, updated_at = excluded.updated_at \
         RETURNING created_at",
    )
    .bind(account_id)
    .bind(&r.template_id)
    .bind(&r.template_type)
    .bind(r.rating)
    .bind(&r.review)
    .bind(r.created_at)
    .bind(r.updated_at)
    .fetch_one(conn)
    .await
}

pub async fn ratings_of(db: &Db, account_id: i64) -> sqlx::Result<Vec<RatingRow>> {
    let rows = sqlx::query(
        "SELECT template_id, template_type, rating, review, created_at, updated_at \
         FROM template_ratings WHERE account_id = $1 ORDER BY updated_at DESC, template_id",
    )
    .bind(account_id)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(RatingRow {
                template_id: r.try_get("template_id")?,
                template_type: r.try_get("template_type")?,
                rating: r.try_get("rating")?,
                review: r.try_get("review")?,
                created_at: r.try_get("created_at")?,
                updated_at: r.try_get("updated_at")?,
            })
        })
        .collect()
}
