//! SQL of analytics: one GROUP BY over `sequence_events` per answer (the
//! `sequence_events_step` index covers the sequence and step filters), and
//! the enrollment counts.

use sqlx::Row;

use outreach_core::store::Db;

/// Events of one kind in one group (a step, or a variant of a step).
#[derive(Debug, Clone)]
pub struct EventCount {
    /// The step (sequence-wide counts) or the variant (a step's counts).
    pub step_id: Option<i64>,
    pub variant: Option<String>,
    pub event_type: String,
    /// Every event.
    pub total: i64,
    /// Events marked `first_of_kind`: unique clicks; equal to `total` for
    /// the kinds recorded once per message.
    pub unique: i64,
    /// Replied events classified `interested`.
    pub interested: i64,
}

/// The sequence's events by step and kind.
pub async fn by_step(db: &Db, account_id: i64, sequence_id: i64) -> sqlx::Result<Vec<EventCount>> {
    let rows = sqlx::query(
        "SELECT step_id, event_type, COUNT(*) AS total, \
         CAST(SUM(first_of_kind) AS BIGINT) AS uniq, \
         CAST(SUM(CASE WHEN event_type = 'replied' AND detail = 'interested' THEN 1 ELSE 0 END) AS BIGINT) AS interested \
         FROM sequence_events WHERE sequence_id = $1 AND account_id = $2 \
         GROUP BY step_id, event_type",
    )
    .bind(sequence_id)
    .bind(account_id)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(EventCount {
                step_id: r.try_get("step_id")?,
                variant: None,
                event_type: r.try_get("event_type")?,
                total: r.try_get("total")?,
                unique: r.try_get("uniq")?,
                interested: r.try_get("interested")?,
            })
        })
        .collect()
}

/// One step's events by variant and kind.
pub async fn by_variant(
    db: &Db,
    account_id: i64,
    sequence_id: i64,
    step_id: i64,
) -> sqlx::Result<Vec<EventCount>> {
    let rows = sqlx::query(
        "SELECT variant, event_type, COUNT(*) AS total, \
         CAST(SUM(first_of_kind) AS BIGINT) AS uniq \
         FROM sequence_events WHERE sequence_id = $1 AND step_id = $2 AND account_id = $3 \
         GROUP BY variant, event_type",
    )
    .bind(sequence_id)
    .bind(step_id)
    .bind(account_id)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(EventCount {
                step_id: Some(step_id),
                variant: r.try_get("variant")?,
                event_type: r.try_get("event_type")?,
                total: r.try_get("total")?,
                unique: r.try_get("uniq")?,
                interested: 0,
            })
        })
        .collect()
}

/// Enrollments by status, with how many met the goal.
#[derive(Debug, Clone)]
pub struct StatusCount {
    pub status: String,
    pub count: i64,
    pub goal_completed: i64,
}

pub async fn enrollments(
    db: &Db,
    account_id: i64,
    sequence_id: i64,
) -> sqlx::Result<Vec<StatusCount>> {
    let rows = sqlx::query(
        "SELECT status, COUNT(*) AS n, CAST(SUM(goal_completed) AS BIGINT) AS goals \
         FROM enrollments WHERE sequence_id = $1 AND account_id = $2 GROUP BY status",
    )
    .bind(sequence_id)
    .bind(account_id)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(StatusCount {
                status: r.try_get("status")?,
                count: r.try_get("n")?,
                goal_completed: r.try_get("goals")?,
            })
        })
        .collect()
}
