//! SQL of enrollments. The partial unique index `enrollments_live` allows one
//! live (active or paused) enrollment per (sequence, address); the enroll
//! transaction first touches the sequence row, which serialises enroll
//! requests of one sequence on every server, then reads which addresses are
//! live and inserts the rest.

use sqlx::AnyConnection;
use std::collections::HashSet;

use sqlx::Row;
use sqlx::any::AnyRow;

use outreach_core::store::{Backend, Db, placeholder, placeholder_list};

#[derive(Debug, Clone)]
pub struct EnrollmentRow {
    pub id: i64,
    pub account_id: i64,
    pub sequence_id: i64,
    pub domain: String,
    pub contact_email: String,
    pub metadata: String,
    pub status: String,
    pub current_step: i64,
    pub next_send_at: Option<i64>,
    pub lead_temperature: String,
    pub engagement_score: i64,
    pub goal_completed: bool,
    pub goal_completed_at: Option<i64>,
    pub goal_metadata: Option<String>,
    pub enrolled_at: i64,
    pub paused_at: Option<i64>,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, account_id, sequence_id, domain, contact_email, metadata, status, \
    current_step, next_send_at, lead_temperature, engagement_score, goal_completed, \
    goal_completed_at, goal_metadata, enrolled_at, paused_at, updated_at";

fn row(r: &AnyRow) -> sqlx::Result<EnrollmentRow> {
    Ok(EnrollmentRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        sequence_id: r.try_get("sequence_id")?,
        domain: r.try_get("domain")?,
        contact_email: r.try_get("contact_email")?,
        metadata: r.try_get("metadata")?,
        status: r.try_get("status")?,
        current_step: r.try_get("current_step")?,
        next_send_at: r.try_get("next_send_at")?,
        lead_temperature: r.try_get("lead_temperature")?,
        engagement_score: r.try_get("engagement_score")?,
        goal_completed: r.try_get::<i64, _>("goal_completed")? != 0,
        goal_completed_at: r.try_get("goal_completed_at")?,
        goal_metadata: r.try_get("goal_metadata")?,
        enrolled_at: r.try_get("enrolled_at")?,
        paused_at: r.try_get("paused_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// One contact ready to insert: the lowercased address, the domain for
/// tokens, the metadata as JSON text and the address's own domain (for
/// `@domain` suppression entries).
#[derive(Debug, Clone)]
pub struct NewEnrollment {
    pub email: String,
    pub domain: String,
    pub metadata: String,
    pub email_domain: String,
}

/// Rows per insert statement (3 parameters each).
const CHUNK: usize = 1000;

/// Inserts `rows`, which the caller has checked are not live in the
/// sequence, inside the transaction that touched (and so locked) the
/// sequence; returns how many were inserted. The unique index stays the
/// last word: a row that conflicts anyway is not inserted (and not
/// counted). `rows` are sorted by address so that two transactions never
/// take index locks in opposite orders.
///
/// Every full chunk uses the same statement text, so the connection keeps
/// it prepared: preparing a 1,000-row statement costs about as much as
/// running it. The last, shorter chunk is prepared once and dropped (caching
/// every row count would grow each connection's cache without bound).
pub async fn insert_many(
    conn: &mut AnyConnection,
    backend: Backend,
    account_id: i64,
    sequence_id: i64,
    rows: &[NewEnrollment],
    next_send_at: i64,
    now: i64,
) -> sqlx::Result<u64> {
    let mut inserted = 0;
    for chunk in rows.chunks(CHUNK) {
        // SQLite's anonymous placeholders bind in order of appearance, so the
        // parameters are numbered, and bound, in the order the text uses them.
        let p = |n: usize| placeholder(backend, n);
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("({}, {}, {})", p(6 + i * 3), p(7 + i * 3), p(8 + i * 3)))
            .collect();
        // `WHERE true` keeps SQLite from reading ON CONFLICT as a join's ON.
        let sql = format!(
            "INSERT INTO enrollments (account_id, sequence_id, domain, contact_email, metadata, \
             status, current_step, next_send_at, lead_temperature, engagement_score, goal_completed, \
             enrolled_at, updated_at) \
             SELECT {}, {}, v.column2, v.column1, v.column3, 'active', 1, {}, 'cold', 0, 0, {}, {} \
             FROM (VALUES {}) AS v WHERE true ON CONFLICT DO NOTHING",
            p(1),
            p(2),
            p(3),
            p(4),
            p(5),
            values.join(", ")
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
            .persistent(chunk.len() == CHUNK)
            .bind(account_id)
            .bind(sequence_id)
            .bind(next_send_at)
            .bind(now)
            .bind(now);
        for r in chunk {
            q = q
                .bind(r.email.as_str())
                .bind(r.domain.as_str())
                .bind(r.metadata.as_str());
        }
        inserted += q.execute(&mut *conn).await?.rows_affected();
    }
    Ok(inserted)
}

/// Which of `emails` are live (active or paused) in the sequence. A large
/// batch against a sequence with no more than four times as many live
/// enrollments reads them all at once (a fresh sequence: none); otherwise
/// one query per 500 addresses.
pub async fn live_among(
    conn: &mut AnyConnection,
    backend: Backend,
    sequence_id: i64,
    emails: &[String],
) -> sqlx::Result<HashSet<String>> {
    if emails.len() >= 1000 {
        let live: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM enrollments WHERE sequence_id = $1 AND status IN ('active', 'paused')",
        )
        .bind(sequence_id)
        .fetch_one(&mut *conn)
        .await?;
        if live as usize <= 4 * emails.len() {
            return sqlx::query_scalar(
                "SELECT contact_email FROM enrollments WHERE sequence_id = $1 \
                 AND status IN ('active', 'paused')",
            )
            .bind(sequence_id)
            .fetch_all(&mut *conn)
            .await
            .map(|all| all.into_iter().collect());
        }
    }
    let mut found = HashSet::new();
    for chunk in emails.chunks(500) {
        let sql = format!(
            "SELECT contact_email FROM enrollments WHERE sequence_id = {} \
             AND status IN ('active', 'paused') AND contact_email IN ({})",
            placeholder(backend, 1),
            placeholder_list(backend, 2, chunk.len())
        );
        let mut q = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .bind(sequence_id);
        for e in chunk {
            q = q.bind(e.as_str());
        }
        found.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(found)
}

pub async fn list(
    db: &Db,
    sequence_id: i64,
    status: Option<&str>,
    limit: i64,
    offset: i64,
) -> sqlx::Result<(Vec<EnrollmentRow>, i64)> {
    let filter = if status.is_some() {
        "sequence_id = $1 AND status = $2"
    } else {
        "sequence_id = $1 AND $2 = ''"
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM enrollments WHERE {filter} ORDER BY id DESC LIMIT $3 OFFSET $4"
    );
    let status = status.unwrap_or("");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(sequence_id)
        .bind(status)
        .bind(limit)
        .bind(offset)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(row)
        .collect::<sqlx::Result<_>>()?;
    let count_sql = format!("SELECT COUNT(*) FROM enrollments WHERE {filter}");
    let total = sqlx::query_scalar(sqlx::AssertSqlSafe(count_sql))
        .bind(sequence_id)
        .bind(status)
        .fetch_one(&db.pool)
        .await?;
    Ok((rows, total))
}

pub async fn get(
    db: &Db,
    account_id: i64,
    sequence_id: i64,
    id: i64,
) -> sqlx::Result<Option<EnrollmentRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM enrollments WHERE id = $1 AND sequence_id = $2 AND account_id = $3"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(sequence_id)
        .bind(account_id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

/// Moves an enrollment from status `from` to `to`, setting when it was
/// paused and when its step is due; false when it was not in `from`.
pub async fn transition(
    db: &Db,
    id: i64,
    from: &str,
    to: &str,
    paused_at: Option<i64>,
    next_send_at: Option<i64>,
    now: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE enrollments SET status = $1, paused_at = $2, next_send_at = $3, updated_at = $4 \
         WHERE id = $5 AND status = $6",
    )
    .bind(to)
    .bind(paused_at)
    .bind(next_send_at)
    .bind(now)
    .bind(id)
    .bind(from)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn delete(db: &Db, account_id: i64, sequence_id: i64, id: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "DELETE FROM enrollments WHERE id = $1 AND sequence_id = $2 AND account_id = $3",
    )
    .bind(id)
    .bind(sequence_id)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}
