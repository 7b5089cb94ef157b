//! The delivery log: listings with their summary, and one delivery with its
//! attempts (spec/2 "Webhook delivery").

use sqlx::Row;
use sqlx::any::AnyRow;

use super::model::{Delivery, DeliveryAttempt, DeliverySummary};
use outreach_core::platform::clock::iso;
use outreach_core::store::Db;

/// Which deliveries a listing covers; the account is always part of it.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub account_id: i64,
    pub webhook_id: Option<i64>,
    pub event_type: Option<String>,
}

impl Scope {
    /// The WHERE clause and its parameters after the account's `$1`.
    fn clause(&self) -> (String, Vec<Param>) {
        let mut sql = String::from("account_id = $1");
        let mut params = Vec::new();
        if let Some(id) = self.webhook_id {
            params.push(Param::Int(id));
            sql.push_str(&format!(" AND webhook_id = ${}", params.len() + 1));
        }
        if let Some(t) = &self.event_type {
            params.push(Param::Text(t.clone()));
            sql.push_str(&format!(" AND event_type = ${}", params.len() + 1));
        }
        (sql, params)
    }
}

enum Param {
    Int(i64),
    Text(String),
}

fn bind_all<'q>(
    q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
    account_id: i64,
    params: &'q [Param],
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    params.iter().fold(q.bind(account_id), |q, p| match p {
        Param::Int(i) => q.bind(*i),
        Param::Text(t) => q.bind(t.as_str()),
    })
}

const DELIVERY_COLUMNS: &str = "id, webhook_id, event_type, url, status, status_code, attempt, \
     response_ms, error, next_attempt_at, delivered_at, event_id, created_at";

fn delivery(r: &AnyRow) -> sqlx::Result<Delivery> {
    Ok(Delivery {
        id: r.try_get("id")?,
        webhook_id: r.try_get("webhook_id")?,
        event_type: r.try_get("event_type")?,
        url: r.try_get("url")?,
        status: r.try_get("status")?,
        status_code: r.try_get("status_code")?,
        attempt: r.try_get("attempt")?,
        response_ms: r.try_get("response_ms")?,
        error: r.try_get("error")?,
        next_attempt_at: r.try_get::<Option<i64>, _>("next_attempt_at")?.map(iso),
        delivered_at: r.try_get::<Option<i64>, _>("delivered_at")?.map(iso),
        event_id: r.try_get("event_id")?,
        created_at: iso(r.try_get("created_at")?),
    })
}

/// The newest `limit` deliveries in scope.
pub async fn list(db: &Db, scope: &Scope, limit: i64) -> sqlx::Result<Vec<Delivery>> {
    let (clause, params) = scope.clause();
    let sql = format!(
        "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE {clause} ORDER BY id DESC LIMIT ${}",
        params.len() + 2
    );
    bind_all(
        sqlx::query(sqlx::AssertSqlSafe(sql)),
        scope.account_id,
        &params,
    )
    .bind(limit)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(delivery)
    .collect()
}

/// The summary over every delivery in scope (not only the listed page).
pub async fn summary(db: &Db, scope: &Scope) -> sqlx::Result<DeliverySummary> {
    let (clause, params) = scope.clause();
    // PostgreSQL's SUM of integers is NUMERIC and its AVG too; the casts
    // give both backends the same types.
    let sql = format!(
        "SELECT CAST(COALESCE(SUM(CASE WHEN status = 'delivered' THEN 1 ELSE 0 END), 0) AS BIGINT), \
         CAST(COALESCE(SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), 0) AS BIGINT), \
         CAST(COALESCE(AVG(response_ms), 0) AS DOUBLE PRECISION) \
         FROM webhook_deliveries WHERE {clause}"
    );
    let row = bind_all(
        sqlx::query(sqlx::AssertSqlSafe(sql)),
        scope.account_id,
        &params,
    )
    .fetch_one(&db.pool)
    .await?;
    let delivered: i64 = row.try_get(0)?;
    let failed: i64 = row.try_get(1)?;
    let avg: f64 = row.try_get(2)?;
    Ok(summarise(delivered, failed, avg))
}

fn summarise(delivered: i64, failed: i64, avg_ms: f64) -> DeliverySummary {
    let finished = delivered + failed;
    let rate = if finished == 0 {
        0.0
    } else {
        (delivered as f64 * 1000.0 / finished as f64).round() / 10.0
    };
    DeliverySummary {
        total_delivered: delivered,
        total_failed: failed,
        success_rate: rate,
        avg_response_ms: avg_ms.round() as i64,
    }
}

/// One delivery of the account with its payload and attempts.
pub async fn detail(
    db: &Db,
    account_id: i64,
    webhook_id: i64,
    delivery_id: i64,
) -> sqlx::Result<Option<(Delivery, String, Vec<DeliveryAttempt>)>> {
    let sql = format!(
        "SELECT {DELIVERY_COLUMNS}, payload FROM webhook_deliveries \
         WHERE id = $1 AND account_id = $2 AND webhook_id = $3"
    );
    let Some(row) = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(delivery_id)
        .bind(account_id)
        .bind(webhook_id)
        .fetch_optional(&db.pool)
        .await?
    else {
        return Ok(None);
    };
    let attempts = sqlx::query(
        "SELECT attempt, attempted_at, status_code, response_ms, response_excerpt, error \
         FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt, id",
    )
    .bind(delivery_id)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| {
        Ok(DeliveryAttempt {
            attempt: r.try_get("attempt")?,
            attempted_at: iso(r.try_get("attempted_at")?),
            status_code: r.try_get("status_code")?,
            response_ms: r.try_get("response_ms")?,
            response_excerpt: r.try_get("response_excerpt")?,
            error: r.try_get("error")?,
        })
    })
    .collect::<sqlx::Result<_>>()?;
    Ok(Some((delivery(&row)?, row.try_get("payload")?, attempts)))
}

#[cfg(test)]
mod tests {
    use super::summarise;

    #[test]
    fn success_rate_is_a_percentage_with_one_decimal() {
        let s = summarise(2, 1, 12.6);
        assert_eq!((s.success_rate, s.avg_response_ms), (66.7, 13));
        assert_eq!(summarise(0, 0, 0.0).success_rate, 0.0);
    }
}
