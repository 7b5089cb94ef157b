//! What an attempt's outcome does to its delivery and subscription: the
//! retry schedule of spec/2 ("Webhook delivery" states), the attempt log,
//! and disabling a subscription whose deliveries keep failing. Outcomes are
//! written in batches, one transaction each.

use serde_json::json;
use sqlx::AnyConnection;

use outreach_core::events::{self, EventType};
use outreach_core::platform::clock::iso;
use outreach_core::store::{Backend, Db, typed_value_rows};

/// Delays before retry 1 to 5 (spec/2): 30 s, 2 min, 10 min, 1 h, 6 h.
/// After the fifth retry (the sixth attempt) fails, the delivery is failed.
pub const RETRY_DELAYS_MS: [i64; 5] = [30_000, 120_000, 600_000, 3_600_000, 21_600_000];

/// How long a subscription's deliveries may keep failing, without one
/// success, before the subscription is disabled.
pub const DISABLE_AFTER_MS: i64 = 5 * 24 * 3_600_000;

/// Bytes of an answer kept in the attempt log.
pub const EXCERPT_BYTES: usize = 1024;

/// The result of one attempt.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub delivery_id: i64,
    pub account_id: i64,
    pub webhook_id: i64,
    /// This attempt's number (1 for the first).
    pub attempt: i64,
    pub attempted_at: i64,
    pub url: String,
    pub status_code: Option<i64>,
    pub response_ms: i64,
    pub excerpt: Option<String>,
    pub error: Option<String>,
    /// A 2xx answer within the time limit.
    pub success: bool,
    /// No automatic retries: a failure ends the delivery failed. Set for a
    /// manual replay of a delivery that had finished (delivered or failed)
    /// and for test deliveries.
    pub replay: bool,
    /// The lease holder; a delivery whose lease passed to another worker
    /// keeps that worker's result.
    pub owner: String,
}

/// The delivery's state after an outcome: status and next due time.
pub fn next_state(o: &Outcome) -> (&'static str, Option<i64>) {
    if o.success {
        return ("delivered", None);
    }
    let retry = usize::try_from(o.attempt - 1)
        .ok()
        .and_then(|i| RETRY_DELAYS_MS.get(i))
        .filter(|_| !o.replay);
    match retry {
        Some(delay) => ("retrying", Some(o.attempted_at + delay)),
        None => ("failed", None),
    }
}

/// Writes a batch of outcomes in one transaction: the attempts, the
/// deliveries' new states, the subscriptions' failure clocks, and any
/// subscription that has now failed for five days is disabled (its waiting
/// deliveries fail with it, and a `webhook.disabled` event is recorded).
/// Returns the ids of subscriptions disabled.
pub async fn record(db: &Db, outcomes: &[Outcome], now: i64) -> sqlx::Result<Vec<i64>> {
    if outcomes.is_empty() {
        return Ok(Vec::new());
    }
    let mut tx = db.pool.begin().await?;
    insert_attempts(&mut tx, db.backend, outcomes).await?;
    update_deliveries(&mut tx, db.backend, outcomes).await?;
    // Each subscription's latest outcome in the batch decides its clock.
    let mut latest: Vec<&Outcome> = Vec::new();
    for o in outcomes {
        match latest.iter_mut().find(|l| l.webhook_id == o.webhook_id) {
            Some(l) if l.attempted_at <= o.attempted_at => *l = o,
            Some(_) => {}
            None => latest.push(o),
        }
    }
    let mut failing = Vec::new();
    for o in latest {
        if o.success {
            sqlx::query("UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL")
                .bind(o.webhook_id)
                .execute(&mut *tx)
                .await?;
        } else {
            sqlx::query(
                "UPDATE webhooks SET failing_since = $1 WHERE id = $2 AND failing_since IS NULL",
            )
            .bind(o.attempted_at)
            .bind(o.webhook_id)
            .execute(&mut *tx)
            .await?;
            failing.push(o.webhook_id);
        }
    }
    let disabled = disable_long_failing(&mut tx, &failing, now).await?;
    tx.commit().await?;
    Ok(disabled)
}

/// The deliveries' new states in one statement per chunk: a VALUES list
/// joined to the table (`UPDATE ... FROM`, on both backends). Values are
/// cast so PostgreSQL knows their types. A delivery whose lease passed to
/// another claimer is left to that claimer.
async fn update_deliveries(
    conn: &mut AnyConnection,
    backend: Backend,
    outcomes: &[Outcome],
) -> sqlx::Result<()> {
    const TYPES: [&str; 10] = [
        "BIGINT", "TEXT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT", "BIGINT", "TEXT",
    ];
    for chunk in outcomes.chunks(500) {
        let rows = typed_value_rows(backend, chunk.len(), &TYPES);
        let sql = format!(
            "WITH v(id, status, next_at, attempt, code, ms, error, url, at, owner) AS (VALUES {rows}) \
             UPDATE webhook_deliveries SET status = v.status, next_attempt_at = v.next_at, \
             attempt = v.attempt, status_code = v.code, response_ms = v.ms, error = v.error, \
             url = v.url, updated_at = v.at, \
             delivered_at = CASE WHEN v.status = 'delivered' THEN v.at ELSE webhook_deliveries.delivered_at END, \
             lease_owner = NULL, lease_until = NULL \
             FROM v WHERE webhook_deliveries.id = v.id AND webhook_deliveries.lease_owner = v.owner"
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for o in chunk {
            let (status, next) = next_state(o);
            q = q
                .bind(o.delivery_id)
                .bind(status)
                .bind(next)
                .bind(o.attempt)
                .bind(o.status_code)
                .bind(o.response_ms)
                .bind(o.error.clone())
                .bind(o.url.clone())
                .bind(o.attempted_at)
                .bind(o.owner.clone());
        }
        q.execute(&mut *conn).await?;
    }
    Ok(())
}

/// Logs the attempts of deliveries that still exist: a subscription
/// deleted while its delivery was in flight took the delivery with it, and
/// its attempt must not fail the batch.
async fn insert_attempts(
    conn: &mut AnyConnection,
    backend: Backend,
    outcomes: &[Outcome],
) -> sqlx::Result<()> {
    const TYPES: [&str; 7] = [
        "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT",
    ];
    for chunk in outcomes.chunks(500) {
        let sql = format!(
            "WITH v(delivery_id, attempt, at, code, ms, excerpt, error) AS (VALUES {}) \
             INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, \
             response_ms, response_excerpt, error) \
             SELECT delivery_id, attempt, at, code, ms, excerpt, error FROM v \
             WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = v.delivery_id)",
            typed_value_rows(backend, chunk.len(), &TYPES)
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for o in chunk {
            q = q
                .bind(o.delivery_id)
                .bind(o.attempt)
                .bind(o.attempted_at)
                .bind(o.status_code)
                .bind(o.response_ms)
                .bind(o.excerpt.clone())
                .bind(o.error.clone());
        }
        q.execute(&mut *conn).await?;
    }
    Ok(())
}

/// Disables the active subscriptions among `ids` whose failure clock is at
/// least five days old.
async fn disable_long_failing(
    conn: &mut AnyConnection,
    ids: &[i64],
    now: i64,
) -> sqlx::Result<Vec<i64>> {
    let mut disabled = Vec::new();
    for &id in ids {
        let row: Option<(i64, String, i64)> = sqlx::query_as(
            "SELECT account_id, url, failing_since FROM webhooks \
             WHERE id = $1 AND is_active = 1 AND failing_since <= $2",
        )
        .bind(id)
        .bind(now - DISABLE_AFTER_MS)
        .fetch_optional(&mut *conn)
        .await?;
        let Some((account_id, url, failing_since)) = row else {
            continue;
        };
        let reason = format!(
            "Deliveries failed without a success since {}; disabled after 5 days",
            iso(failing_since)
        );
        sqlx::query(
            "UPDATE webhooks SET is_active = 0, disabled_reason = $1, updated_at = $2 WHERE id = $3",
        )
        .bind(&reason)
        .bind(now)
        .bind(id)
        .execute(&mut *conn)
        .await?;
        sqlx::query(
            "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, \
             error = 'Webhook disabled after 5 days of failures', updated_at = $1 \
             WHERE webhook_id = $2 AND status IN ('pending', 'retrying') AND lease_owner IS NULL",
        )
        .bind(now)
        .bind(id)
        .execute(&mut *conn)
        .await?;
        let data = json!({
            "webhook_id": id,
            "url": url,
            "failing_since": iso(failing_since),
            "disabled_at": iso(now),
            "reason": reason,
        });
        events::record(conn, account_id, EventType::WebhookDisabled, &data, now).await?;
        tracing::warn!(
            webhook_id = id,
            account_id,
            "webhook disabled after 5 days of failures"
        );
        disabled.push(id);
    }
    Ok(disabled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(attempt: i64, success: bool, replay: bool) -> Outcome {
        Outcome {
            delivery_id: 1,
            account_id: 1,
            webhook_id: 1,
            attempt,
            attempted_at: 1_000,
            url: String::new(),
            status_code: None,
            response_ms: 0,
            excerpt: None,
            error: None,
            success,
            replay,
            owner: String::new(),
        }
    }

    #[test]
    fn the_schedule_is_30s_2m_10m_1h_6h_then_failed() {
        let due: Vec<_> = (1..=6)
            .map(|a| next_state(&outcome(a, false, false)))
            .collect();
        assert_eq!(
            due,
            vec![
                ("retrying", Some(31_000)),
                ("retrying", Some(121_000)),
                ("retrying", Some(601_000)),
                ("retrying", Some(3_601_000)),
                ("retrying", Some(21_601_000)),
                ("failed", None),
            ]
        );
        assert_eq!(next_state(&outcome(3, true, false)), ("delivered", None));
        assert_eq!(next_state(&outcome(7, false, true)), ("failed", None));
        assert_eq!(next_state(&outcome(1, false, true)), ("failed", None));
    }
}
