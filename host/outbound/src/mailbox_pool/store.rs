//! SQL of the mailbox pool.

use sqlx::AnyConnection;
use sqlx::Row;

use outreach_core::store::Db;

#[derive(Debug, Clone)]
pub struct PoolRow {
    pub id: i64,
    pub send_account_id: i64,
    pub position: i64,
    pub is_active: bool,
    pub last_used_at: Option<i64>,
    pub display_name: Option<String>,
    pub email: String,
    pub daily_send_limit: i64,
    pub emails_sent_today: i64,
    pub sent_day: i64,
}

/// The pool in rotation order, with each mailbox's address and counters.
pub async fn list(db: &Db, sequence_id: i64) -> sqlx::Result<Vec<PoolRow>> {
    sqlx::query(
        "SELECT m.id, m.send_account_id, m.position, m.is_active, m.last_used_at, \
         a.display_name, a.email, a.daily_send_limit, a.emails_sent_today, a.sent_day \
         FROM sequence_mailboxes m JOIN send_accounts a ON a.id = m.send_account_id \
         WHERE m.sequence_id = $1 ORDER BY m.position",
    )
    .bind(sequence_id)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| {
        Ok(PoolRow {
            id: r.try_get("id")?,
            send_account_id: r.try_get("send_account_id")?,
            position: r.try_get("position")?,
            is_active: r.try_get::<i64, _>("is_active")? != 0,
            last_used_at: r.try_get("last_used_at")?,
            display_name: r.try_get("display_name")?,
            email: r.try_get("email")?,
            daily_send_limit: r.try_get("daily_send_limit")?,
            emails_sent_today: r.try_get("emails_sent_today")?,
            sent_day: r.try_get("sent_day")?,
        })
    })
    .collect()
}

/// Replaces the pool with `send_account_ids` in order (position = index).
pub async fn replace(
    conn: &mut AnyConnection,
    account_id: i64,
    sequence_id: i64,
    send_account_ids: &[i64],
) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM sequence_mailboxes WHERE sequence_id = $1")
        .bind(sequence_id)
        .execute(&mut *conn)
        .await?;
    for (position, id) in send_account_ids.iter().enumerate() {
        sqlx::query(
            "INSERT INTO sequence_mailboxes (account_id, sequence_id, send_account_id, position, is_active) \
             VALUES ($1, $2, $3, $4, 1)",
        )
        .bind(account_id)
        .bind(sequence_id)
        .bind(*id)
        .bind(position as i64)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}
