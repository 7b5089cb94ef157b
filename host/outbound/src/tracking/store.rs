//! SQL of tracking. A token names a message row; the row names its
//! account, so these queries need no account from the caller (the signed
//! token is the authority, and it only ever reaches that message's data).

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use outreach_core::store::Db;

/// A sent message with what tracking needs of its sequence.
#[derive(Debug, Clone)]
pub struct MessageRow {
    pub id: i64,
    pub account_id: i64,
    pub sequence_id: i64,
    pub enrollment_id: i64,
    pub step_id: i64,
    pub send_account_id: Option<i64>,
    pub variant: Option<String>,
    pub to_email: String,
    /// The original URLs in link-index order.
    pub links: Vec<String>,
    pub goal_type: String,
    pub goal_url: Option<String>,
}

fn message_row(r: &AnyRow) -> sqlx::Result<MessageRow> {
    let links: Option<String> = r.try_get("links")?;
    Ok(MessageRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        sequence_id: r.try_get("sequence_id")?,
        enrollment_id: r.try_get("enrollment_id")?,
        step_id: r.try_get("step_id")?,
        send_account_id: r.try_get("send_account_id")?,
        variant: r.try_get("variant")?,
        to_email: r.try_get("to_email")?,
        links: links
            .and_then(|l| serde_json::from_str(&l).ok())
            .unwrap_or_default(),
        goal_type: r.try_get("goal_type")?,
        goal_url: r.try_get("goal_url")?,
    })
}

/// The message, or None when it is gone (its enrollment or sequence was
/// deleted, which deletes its messages).
pub async fn message(db: &Db, id: i64) -> sqlx::Result<Option<MessageRow>> {
    sqlx::query(
        "SELECT m.id, m.account_id, m.sequence_id, m.enrollment_id, m.step_id, m.send_account_id, \
         m.variant, m.to_email, m.links, s.goal_type, s.goal_url \
         FROM sequence_messages m JOIN sequences s ON s.id = m.sequence_id WHERE m.id = $1",
    )
    .bind(id)
    .fetch_optional(&db.pool)
    .await?
    .as_ref()
    .map(message_row)
    .transpose()
}

/// The enrollment as tracking's rules read it.
#[derive(Debug, Clone)]
pub struct EnrollmentState {
    pub status: String,
    pub goal_completed: bool,
    pub contact_email: String,
}

/// Locks the enrollment row for the rest of the transaction (a write:
/// PostgreSQL's row lock, SQLite's writer lock) and reads it. Every
/// tracking change of one enrollment takes this lock first, so two clicks
/// of one message see each other and exactly one of them is the unique
/// click. None when the enrollment is gone.
pub async fn lock_enrollment(
    conn: &mut AnyConnection,
    id: i64,
) -> sqlx::Result<Option<EnrollmentState>> {
    let row = sqlx::query(
        "UPDATE enrollments SET updated_at = updated_at WHERE id = $1 \
         RETURNING status, goal_completed, contact_email",
    )
    .bind(id)
    .fetch_optional(conn)
    .await?;
    row.map(|r| {
        Ok(EnrollmentState {
            status: r.try_get("status")?,
            goal_completed: r.try_get::<i64, _>("goal_completed")? != 0,
            contact_email: r.try_get("contact_email")?,
        })
    })
    .transpose()
}

/// Adds `points` to the engagement score; a cold lead becomes warm once
/// the score reaches `warm_at` (nothing here lowers a temperature).
pub async fn add_engagement(
    conn: &mut AnyConnection,
    id: i64,
    points: i64,
    warm_at: i64,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE enrollments SET engagement_score = engagement_score + $1, \
         lead_temperature = CASE WHEN lead_temperature = 'cold' AND engagement_score + $2 >= $3 \
             THEN 'warm' ELSE lead_temperature END, \
         updated_at = $4 WHERE id = $5",
    )
    .bind(points)
    .bind(points)
    .bind(warm_at)
    .bind(now)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks the goal met (once) and ends a live (active or paused)
/// enrollment as completed; an enrollment that already ended keeps its
/// status. Returns whether this call met the goal.
pub async fn complete_goal(
    conn: &mut AnyConnection,
    id: i64,
    metadata: &str,
    now: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE enrollments SET goal_completed = 1, goal_completed_at = $1, goal_metadata = $2, \
         status = CASE WHEN status IN ('active', 'paused') THEN 'completed' ELSE status END, \
         next_send_at = CASE WHEN status IN ('active', 'paused') THEN NULL ELSE next_send_at END, \
         updated_at = $3 WHERE id = $4 AND goal_completed = 0",
    )
    .bind(now)
    .bind(metadata)
    .bind(now)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Ends the enrollment as unsubscribed; nothing more is due.
pub async fn unsubscribe(conn: &mut AnyConnection, id: i64, now: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE enrollments SET status = 'unsubscribed', next_send_at = NULL, updated_at = $1 \
         WHERE id = $2",
    )
    .bind(now)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Whether the message's latest click (the one just recorded, under the
/// enrollment lock) was its first: `first_of_kind` as the events module
/// wrote it. A message is one (enrollment, step), which lets the lookup use
/// the `sequence_events_enrollment` index.
pub async fn latest_click_was_first(
    conn: &mut AnyConnection,
    m: &MessageRow,
) -> sqlx::Result<bool> {
    let first: Option<i64> = sqlx::query_scalar(
        "SELECT first_of_kind FROM sequence_events \
         WHERE enrollment_id = $1 AND step_id = $2 AND event_type = 'clicked' AND message_id = $3 \
         ORDER BY id DESC LIMIT 1",
    )
    .bind(m.enrollment_id)
    .bind(m.step_id)
    .bind(m.id)
    .fetch_optional(conn)
    .await?;
    Ok(first == Some(1))
}
