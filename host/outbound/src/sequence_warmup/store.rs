//! SQL of sequence warmup: the warmup columns of `sequences` (each change
//! one conditional statement, so two requests racing cannot both pass a
//! state rule), the chart and counts the dashboard reads, the effective
//! limit log in `sequence_days`, and the `dns_check_cache` both warmup
//! areas share.

use sqlx::Row;

use outreach_core::store::Db;

/// One `sequence_days` row.
#[derive(Debug, Clone)]
pub struct DayRow {
    pub day: i64,
    pub sent: i64,
    pub bounced: i64,
    pub complaints: i64,
    pub effective_limit: Option<i64>,
}

/// The sequence's days in `first..=last` (UTC days since the epoch).
pub async fn days(
    db: &Db,
    account_id: i64,
    sequence_id: i64,
    first: i64,
    last: i64,
) -> sqlx::Result<Vec<DayRow>> {
    let rows = sqlx::query(
        "SELECT day, sent, bounced, complaints, effective_limit FROM sequence_days \
         WHERE sequence_id = $1 AND account_id = $2 AND day >= $3 AND day <= $4 ORDER BY day",
    )
    .bind(sequence_id)
    .bind(account_id)
    .bind(first)
    .bind(last)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(DayRow {
                day: r.try_get("day")?,
                sent: r.try_get("sent")?,
                bounced: r.try_get("bounced")?,
                complaints: r.try_get("complaints")?,
                effective_limit: r.try_get("effective_limit")?,
            })
        })
        .collect()
}

/// Delivered and opened events of the sequence since `since` (ms).
pub async fn delivered_and_opened(
    db: &Db,
    account_id: i64,
    sequence_id: i64,
    since: i64,
) -> sqlx::Result<(i64, i64)> {
    let rows = sqlx::query(
        "SELECT event_type, COUNT(*) AS n FROM sequence_events \
         WHERE sequence_id = $1 AND account_id = $2 AND created_at >= $3 \
         AND event_type IN ('delivered', 'opened') GROUP BY event_type",
    )
    .bind(sequence_id)
    .bind(account_id)
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    let (mut delivered, mut opened) = (0, 0);
    for r in rows {
        let n: i64 = r.try_get("n")?;
        match r.try_get::<String, _>("event_type")?.as_str() {
            "delivered" => delivered = n,
            _ => opened = n,
        }
    }
    Ok((delivered, opened))
}

/// Writes the ramp settings (preset and adjust).
pub async fn set_volumes(
    db: &Db,
    account_id: i64,
    sequence_id: i64,
    (start_volume, increment, daily_limit): (i64, i64, i64),
    preset: &str,
    now: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE sequences SET warmup_start_volume = $1, warmup_increment = $2, \
         daily_send_limit = $3, warmup_preset = $4, updated_at = $5 \
         WHERE id = $6 AND account_id = $7",
    )
    .bind(start_volume)
    .bind(increment)
    .bind(daily_limit)
    .bind(preset)
    .bind(now)
    .bind(sequence_id)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Pauses a running ramp; false when it is not running (any more).
pub async fn pause(db: &Db, account_id: i64, sequence_id: i64, now: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE sequences SET warmup_enabled = 0, warmup_paused_at = $1, updated_at = $1 \
         WHERE id = $2 AND account_id = $3 AND warmup_enabled = 1 \
         AND warmup_started_at IS NOT NULL AND warmup_paused_at IS NULL",
    )
    .bind(now)
    .bind(sequence_id)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Resumes a started ramp: the start moves forward by the pause's length
/// (when it was paused) and warmup is on again. False when it never started.
pub async fn resume(db: &Db, account_id: i64, sequence_id: i64, now: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE sequences SET warmup_started_at = warmup_started_at + \
             CASE WHEN warmup_paused_at IS NOT NULL AND warmup_paused_at < $1 \
                  THEN $1 - warmup_paused_at ELSE 0 END, \
         warmup_paused_at = NULL, warmup_enabled = 1, updated_at = $1 \
         WHERE id = $2 AND account_id = $3 AND warmup_started_at IS NOT NULL",
    )
    .bind(now)
    .bind(sequence_id)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Wipes the ramp's start and pause and its log (the effective limits in
/// `sequence_days`; the sent, bounce and complaint counts stay, as the
/// daily limit and reputation read them). An active sequence with warmup on
/// starts its ramp again at once, since the sequences' rule is that such a
/// sequence has a start time.
pub async fn reset(db: &Db, account_id: i64, sequence_id: i64, now: i64) -> sqlx::Result<bool> {
    let mut tx = db.pool.begin().await?;
    let done = sqlx::query(
        "UPDATE sequences SET warmup_started_at = \
             CASE WHEN status = 'active' AND warmup_enabled = 1 THEN $1 ELSE NULL END, \
         warmup_paused_at = NULL, updated_at = $1 WHERE id = $2 AND account_id = $3",
    )
    .bind(now)
    .bind(sequence_id)
    .bind(account_id)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    sqlx::query(
        "UPDATE sequence_days SET effective_limit = NULL WHERE sequence_id = $1 AND account_id = $2",
    )
    .bind(sequence_id)
    .bind(account_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(true)
}

/// The ramp fields of every active sequence whose ramp has a start, for the
/// hourly log of effective limits.
#[derive(Debug, Clone)]
pub struct RampRow {
    pub id: i64,
    pub account_id: i64,
    pub ramp: super::ramp::Ramp,
}

pub async fn active_ramps(db: &Db) -> sqlx::Result<Vec<RampRow>> {
    let rows = sqlx::query(
        "SELECT id, account_id, warmup_enabled, daily_send_limit, warmup_start_volume, \
         warmup_increment, warmup_started_at, warmup_paused_at FROM sequences \
         WHERE status = 'active' AND warmup_started_at IS NOT NULL",
    )
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(RampRow {
                id: r.try_get("id")?,
                account_id: r.try_get("account_id")?,
                ramp: super::ramp::Ramp {
                    warmup_enabled: r.try_get::<i64, _>("warmup_enabled")? != 0,
                    daily_send_limit: r.try_get("daily_send_limit")?,
                    start_volume: r.try_get("warmup_start_volume")?,
                    increment: r.try_get("warmup_increment")?,
                    started_at: r.try_get("warmup_started_at")?,
                    paused_at: r.try_get("warmup_paused_at")?,
                },
            })
        })
        .collect()
}

/// Records the cap that applies on `day` to each of `limits` (sequence id,
/// account id, cap) in one transaction; the last write of a day stays.
pub async fn note_effective_limits(
    db: &Db,
    day: i64,
    limits: &[(i64, i64, i64)],
) -> sqlx::Result<()> {
    let mut tx = db.pool.begin().await?;
    for (sequence_id, account_id, limit) in limits {
        sqlx::query(
            "INSERT INTO sequence_days (sequence_id, day, account_id, effective_limit) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (sequence_id, day) \
             DO UPDATE SET effective_limit = excluded.effective_limit",
        )
        .bind(sequence_id)
        .bind(day)
        .bind(account_id)
        .bind(limit)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}

/// A cached check's body when it has not expired at `now`.
pub async fn cached(db: &Db, key: &str, now: i64) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT body FROM dns_check_cache WHERE cache_key = $1 AND expires_at > $2")
        .bind(key)
        .bind(now)
        .fetch_optional(&db.pool)
        .await
}

/// Stores a check's body until `expires_at`, replacing an older one (two
/// servers checking at once both write; either answer is as good).
pub async fn cache(db: &Db, key: &str, body: &str, now: i64, expires_at: i64) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO dns_check_cache (cache_key, body, checked_at, expires_at) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (cache_key) DO UPDATE SET \
         body = excluded.body, checked_at = excluded.checked_at, expires_at = excluded.expires_at",
    )
    .bind(key)
    .bind(body)
    .bind(now)
    .bind(expires_at)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Deletes cached checks that expired before `now`.
pub async fn purge_cache(db: &Db, now: i64) -> sqlx::Result<u64> {
    let done = sqlx::query("DELETE FROM dns_check_cache WHERE expires_at <= $1")
        .bind(now)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected())
}
