//! SQL of the send-account warmup reports and the reputation roll-up.

use sqlx::Row;

use outreach_core::store::Db;

/// Sent, bounced and delivered events of a send account since `since` (ms).
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    pub sent: i64,
    pub bounced: i64,
    pub delivered: i64,
}

pub async fn counts_since(
    db: &Db,
    account_id: i64,
    send_account_id: i64,
    since: i64,
) -> sqlx::Result<Counts> {
    let rows = sqlx::query(
        "SELECT event_type, COUNT(*) AS n FROM sequence_events \
         WHERE send_account_id = $1 AND account_id = $2 AND created_at >= $3 \
         AND event_type IN ('sent', 'bounced', 'delivered') GROUP BY event_type",
    )
    .bind(send_account_id)
    .bind(account_id)
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    let mut c = Counts::default();
    for r in rows {
        let n: i64 = r.try_get("n")?;
        match r.try_get::<String, _>("event_type")?.as_str() {
            "sent" => c.sent = n,
            "bounced" => c.bounced = n,
            _ => c.delivered = n,
        }
    }
    Ok(c)
}

/// One `send_account_reputation` row.
#[derive(Debug, Clone)]
pub struct ReputationRow {
    pub send_account_id: i64,
    pub account_id: i64,
    pub day: i64,
    pub reputation_score: f64,
    pub bounce_rate: Option<f64>,
    pub complaint_rate: Option<f64>,
    pub total_sent: i64,
}

/// The account's rows from `first_day` on, oldest first.
pub async fn history(
    db: &Db,
    account_id: i64,
    send_account_id: i64,
    first_day: i64,
) -> sqlx::Result<Vec<ReputationRow>> {
    let rows = sqlx::query(
        "SELECT send_account_id, account_id, day, reputation_score, bounce_rate, complaint_rate, \
         total_sent FROM send_account_reputation \
         WHERE send_account_id = $1 AND account_id = $2 AND day >= $3 ORDER BY day",
    )
    .bind(send_account_id)
    .bind(account_id)
    .bind(first_day)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(ReputationRow {
                send_account_id: r.try_get("send_account_id")?,
                account_id: r.try_get("account_id")?,
                day: r.try_get("day")?,
                reputation_score: r.try_get("reputation_score")?,
                bounce_rate: r.try_get("bounce_rate")?,
                complaint_rate: r.try_get("complaint_rate")?,
                total_sent: r.try_get("total_sent")?,
            })
        })
        .collect()
}

/// Every send account: (id, account id).
pub async fn send_accounts(db: &Db) -> sqlx::Result<Vec<(i64, i64)>> {
    let rows = sqlx::query("SELECT id, account_id FROM send_accounts ORDER BY id")
        .fetch_all(&db.pool)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("id")?, r.try_get("account_id")?)))
        .collect()
}

/// A send account's activity per UTC day in `[from, until)` (ms): (day,
/// sent, bounced), only days with at least one event of any kind.
pub async fn daily_activity(
    db: &Db,
    account_id: i64,
    send_account_id: i64,
    from: i64,
    until: i64,
) -> sqlx::Result<Vec<(i64, i64, i64)>> {
    let rows = sqlx::query(
        "SELECT created_at / 86400000 AS day, \
         SUM(CASE WHEN event_type = 'sent' THEN 1 ELSE 0 END) AS sent, \
         SUM(CASE WHEN event_type = 'bounced' THEN 1 ELSE 0 END) AS bounced \
         FROM sequence_events WHERE send_account_id = $1 AND account_id = $2 \
         AND created_at >= $3 AND created_at < $4 \
         GROUP BY created_at / 86400000 ORDER BY day",
    )
    .bind(send_account_id)
    .bind(account_id)
    .bind(from)
    .bind(until)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("day")?, r.try_get("sent")?, r.try_get("bounced")?)))
        .collect()
}

/// Writes `rows`, replacing what an earlier pass wrote for the same day.
pub async fn upsert(db: &Db, rows: &[ReputationRow]) -> sqlx::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut tx = db.pool.begin().await?;
    for r in rows {
        sqlx::query(
            "INSERT INTO send_account_reputation (send_account_id, day, account_id, \
             reputation_score, bounce_rate, complaint_rate, total_sent) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (send_account_id, day) DO UPDATE SET \
             reputation_score = excluded.reputation_score, bounce_rate = excluded.bounce_rate, \
             complaint_rate = excluded.complaint_rate, total_sent = excluded.total_sent",
        )
        // Not cached: sqlx's `Any` driver binds a null f64 (a day without
        // sends has no rates) as a PostgreSQL float4, and a statement first
        // prepared that way refuses a rate bound later on the connection.
        .persistent(false)
        .bind(r.send_account_id)
        .bind(r.day)
        .bind(r.account_id)
        .bind(r.reputation_score)
        .bind(r.bounce_rate)
        .bind(r.complaint_rate)
        .bind(r.total_sent)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}

/// The `settings` key of the last UTC day the roll-up wrote.
const MARKER: &str = "send_account_reputation.rolled_through";

pub async fn rolled_through(db: &Db) -> sqlx::Result<Option<i64>> {
    let value: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
        .bind(MARKER)
        .fetch_optional(&db.pool)
        .await?;
    Ok(value.and_then(|v| v.parse().ok()))
}

/// Moves the marker to `day`, never back (a slower server's pass that
/// finishes later must not undo a faster one's).
pub async fn set_rolled_through(db: &Db, day: i64) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE \
         SET value = excluded.value \
         WHERE CAST(settings.value AS BIGINT) < CAST(excluded.value AS BIGINT)",
    )
    .bind(MARKER)
    .bind(day.to_string())
    .execute(&db.pool)
    .await?;
    Ok(())
}
