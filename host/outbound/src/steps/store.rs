//! SQL of sequence steps. Callers have checked that the sequence belongs to
//! the account; the account id is still written on every row.

use sqlx::AnyConnection;
use sqlx::Row;
use sqlx::any::AnyRow;

use super::model::Variant;

#[derive(Debug, Clone, Default)]
pub struct StepRow {
    pub id: i64,
    pub account_id: i64,
    pub sequence_id: i64,
    pub position: i64,
    pub step_type: String,
    pub delay_days: i64,
    pub delay_hours: i64,
    pub subject: Option<String>,
    pub body_html: Option<String>,
    pub variant_b_subject: Option<String>,
    pub variant_b_body_html: Option<String>,
    pub ab_test_enabled: bool,
    pub ab_winner: Option<String>,
    pub condition_type: Option<String>,
    pub condition_step_id: Option<i64>,
    pub variants: Option<Vec<Variant>>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, account_id, sequence_id, position, step_type, delay_days, delay_hours, \
    subject, body_html, variant_b_subject, variant_b_body_html, ab_test_enabled, ab_winner, \
    condition_type, condition_step_id, variants, created_at, updated_at";

fn row(r: &AnyRow) -> sqlx::Result<StepRow> {
    let variants: Option<String> = r.try_get("variants")?;
    Ok(StepRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        sequence_id: r.try_get("sequence_id")?,
        position: r.try_get("position")?,
        step_type: r.try_get("step_type")?,
        delay_days: r.try_get("delay_days")?,
        delay_hours: r.try_get("delay_hours")?,
        subject: r.try_get("subject")?,
        body_html: r.try_get("body_html")?,
        variant_b_subject: r.try_get("variant_b_subject")?,
        variant_b_body_html: r.try_get("variant_b_body_html")?,
        ab_test_enabled: r.try_get::<i64, _>("ab_test_enabled")? != 0,
        ab_winner: r.try_get("ab_winner")?,
        condition_type: r.try_get("condition_type")?,
        condition_step_id: r.try_get("condition_step_id")?,
        variants: variants.and_then(|v| serde_json::from_str(&v).ok()),
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// The sequence's steps in position order.
pub async fn list(conn: &mut AnyConnection, sequence_id: i64) -> sqlx::Result<Vec<StepRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM sequence_steps WHERE sequence_id = $1 ORDER BY position, id"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(sequence_id)
        .fetch_all(conn)
        .await?
        .iter()
        .map(row)
        .collect()
}

fn variants_json(s: &StepRow) -> Option<String> {
    s.variants
        .as_ref()
        .map(|v| serde_json::to_string(v).unwrap_or_default())
}

pub async fn insert(conn: &mut AnyConnection, s: &StepRow, now: i64) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO sequence_steps (account_id, sequence_id, position, step_type, delay_days, \
         delay_hours, subject, body_html, variant_b_subject, variant_b_body_html, ab_test_enabled, \
         ab_winner, condition_type, condition_step_id, variants, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16) RETURNING id",
    )
    .bind(s.account_id)
    .bind(s.sequence_id)
    .bind(s.position)
    .bind(&s.step_type)
    .bind(s.delay_days)
    .bind(s.delay_hours)
    .bind(&s.subject)
    .bind(&s.body_html)
    .bind(&s.variant_b_subject)
    .bind(&s.variant_b_body_html)
    .bind(s.ab_test_enabled as i64)
    .bind(&s.ab_winner)
    .bind(&s.condition_type)
    .bind(s.condition_step_id)
    .bind(variants_json(s))
    .bind(now)
    .fetch_one(conn)
    .await
}

/// Writes every field of `s` but its identity.
pub async fn update(conn: &mut AnyConnection, s: &StepRow, now: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE sequence_steps SET position = $1, step_type = $2, delay_days = $3, delay_hours = $4, \
         subject = $5, body_html = $6, variant_b_subject = $7, variant_b_body_html = $8, \
         ab_test_enabled = $9, ab_winner = $10, condition_type = $11, condition_step_id = $12, \
         variants = $13, updated_at = $14 WHERE id = $15",
    )
    .bind(s.position)
    .bind(&s.step_type)
    .bind(s.delay_days)
    .bind(s.delay_hours)
    .bind(&s.subject)
    .bind(&s.body_html)
    .bind(&s.variant_b_subject)
    .bind(&s.variant_b_body_html)
    .bind(s.ab_test_enabled as i64)
    .bind(&s.ab_winner)
    .bind(&s.condition_type)
    .bind(s.condition_step_id)
    .bind(variants_json(s))
    .bind(now)
    .bind(s.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn set_position(conn: &mut AnyConnection, id: i64, position: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE sequence_steps SET position = $1 WHERE id = $2")
        .bind(position)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes a step and drops the conditions that checked it.
pub async fn delete(conn: &mut AnyConnection, id: i64, now: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE sequence_steps SET condition_type = NULL, condition_step_id = NULL, updated_at = $2 \
         WHERE condition_step_id = $1",
    )
    .bind(id)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM sequence_steps WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Moves the places of the sequence's enrollments past `position` by
/// `delta`, so a contact waiting on a step still waits on it after a step
/// before it was inserted or deleted.
pub async fn shift_enrollments(
    conn: &mut AnyConnection,
    sequence_id: i64,
    position: i64,
    delta: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE enrollments SET current_step = current_step + $3 \
         WHERE sequence_id = $1 AND current_step > $2",
    )
    .bind(sequence_id)
    .bind(position)
    .bind(delta)
    .execute(conn)
    .await?;
    Ok(())
}

/// Copies every step of `from` into `to`, pointing conditions at the copies.
pub async fn copy_all(conn: &mut AnyConnection, from: i64, to: i64, now: i64) -> sqlx::Result<()> {
    let steps = list(&mut *conn, from).await?;
    let mut ids = std::collections::HashMap::new();
    for s in &steps {
        let copy = StepRow {
            sequence_id: to,
            condition_step_id: None,
            ..s.clone()
        };
        ids.insert(s.id, insert(&mut *conn, &copy, now).await?);
    }
    for s in &steps {
        if let Some(target) = s.condition_step_id.and_then(|c| ids.get(&c)) {
            sqlx::query("UPDATE sequence_steps SET condition_step_id = $1 WHERE id = $2")
                .bind(*target)
                .bind(ids[&s.id])
                .execute(&mut *conn)
                .await?;
        }
    }
    Ok(())
}

/// The delay of the first step in milliseconds (0 without steps): the wait
/// between enrollment and the first send.
pub async fn first_delay_ms(conn: &mut AnyConnection, sequence_id: i64) -> sqlx::Result<i64> {
    let row = sqlx::query(
        "SELECT delay_days, delay_hours FROM sequence_steps WHERE sequence_id = $1 \
         ORDER BY position LIMIT 1",
    )
    .bind(sequence_id)
    .fetch_optional(conn)
    .await?;
    Ok(match row {
        Some(r) => delay_ms(r.try_get("delay_days")?, r.try_get("delay_hours")?),
        None => 0,
    })
}

pub fn delay_ms(days: i64, hours: i64) -> i64 {
    (days * 24 + hours) * 3_600_000
}
