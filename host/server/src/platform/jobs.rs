//! The durable job queue with leases, shared by every worker.
//!
//! A worker claims due jobs by stamping its owner id and a lease expiry on
//! them in one statement; a job whose lease ran out (its worker crashed) is
//! claimable again. PostgreSQL adds `FOR UPDATE SKIP LOCKED` so concurrent
//! claimers on many processes skip each other's rows instead of waiting;
//! SQLite serialises writers, so the single-statement claim is already atomic.

use std::time::Duration;

use serde_json::Value;
use sqlx::Row;

use super::clock::SharedClock;
use crate::store::{Backend, Db, is_unique_violation};

#[derive(Debug, Clone)]
pub struct NewJob {
    pub queue: String,
    pub payload: Value,
    /// Enqueuing the same key twice on one queue keeps only the first job.
    pub idempotency_key: Option<String>,
    /// Not before this instant (ms since epoch); `None` means now.
    pub run_at_ms: Option<i64>,
    pub max_attempts: i64,
}

impl NewJob {
    pub fn new(queue: &str, payload: Value) -> NewJob {
        NewJob {
            queue: queue.to_string(),
            payload,
            idempotency_key: None,
            run_at_ms: None,
            max_attempts: 5,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ClaimedJob {
    pub id: i64,
    pub queue: String,
    pub payload: Value,
    /// Attempts so far, including this one.
    pub attempts: i64,
    pub max_attempts: i64,
}

#[derive(Clone, Debug)]
pub struct JobQueue {
    db: Db,
    clock: SharedClock,
}

const CLAIM_POSTGRES: &str = "UPDATE jobs SET status = 'running', lease_owner = $1, lease_until = $2, \
     attempts = attempts + 1, updated_at = $3 \
     WHERE id IN (SELECT id FROM jobs WHERE queue = $4 AND run_at <= $3 \
       AND (status = 'queued' OR (status = 'running' AND lease_until < $3)) \
       ORDER BY run_at, id LIMIT $5 FOR UPDATE SKIP LOCKED) \
     RETURNING id, queue, payload, attempts, max_attempts";

const CLAIM_SQLITE: &str = "UPDATE jobs SET status = 'running', lease_owner = $1, lease_until = $2, \
     attempts = attempts + 1, updated_at = $3 \
     WHERE id IN (SELECT id FROM jobs WHERE queue = $4 AND run_at <= $3 \
       AND (status = 'queued' OR (status = 'running' AND lease_until < $3)) \
       ORDER BY run_at, id LIMIT $5) \
     RETURNING id, queue, payload, attempts, max_attempts";

impl JobQueue {
    pub fn new(db: Db, clock: SharedClock) -> JobQueue {
        JobQueue { db, clock }
    }

    /// Adds a job; returns its id, or `None` when its idempotency key exists.
    pub async fn enqueue(&self, job: NewJob) -> anyhow::Result<Option<i64>> {
        let now = self.clock.now_ms();
        let result = sqlx::query(
            "INSERT INTO jobs (queue, payload, idempotency_key, run_at, max_attempts, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id",
        )
        .bind(&job.queue)
        .bind(job.payload.to_string())
        .bind(job.idempotency_key)
        .bind(job.run_at_ms.unwrap_or(now))
        .bind(job.max_attempts)
        .bind(now)
        .fetch_one(&self.db.pool)
        .await;
        match result {
            Ok(row) => Ok(Some(row.try_get("id")?)),
            Err(e) if is_unique_violation(&e) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Claims up to `max` due jobs of `queue` for `owner` for the lease period.
    pub async fn claim(
        &self,
        queue: &str,
        owner: &str,
        lease: Duration,
        max: i64,
    ) -> anyhow::Result<Vec<ClaimedJob>> {
        let now = self.clock.now_ms();
        let sql = match self.db.backend {
            Backend::Postgres => CLAIM_POSTGRES,
            Backend::Sqlite => CLAIM_SQLITE,
        };
        let rows = sqlx::query(sql)
            .bind(owner)
            .bind(now + lease.as_millis() as i64)
            .bind(now)
            .bind(queue)
            .bind(max)
            .fetch_all(&self.db.pool)
            .await?;
        rows.into_iter()
            .map(|row| {
                let payload: String = row.try_get("payload")?;
                Ok(ClaimedJob {
                    id: row.try_get("id")?,
                    queue: row.try_get("queue")?,
                    payload: serde_json::from_str(&payload)?,
                    attempts: row.try_get("attempts")?,
                    max_attempts: row.try_get("max_attempts")?,
                })
            })
            .collect()
    }

    /// Marks a job done. Returns false when the lease was lost to another owner,
    /// so the caller knows its work may be repeated elsewhere.
    pub async fn complete(&self, id: i64, owner: &str) -> anyhow::Result<bool> {
        let done = sqlx::query(
            "UPDATE jobs SET status = 'done', lease_owner = NULL, lease_until = NULL, updated_at = $1 \
             WHERE id = $2 AND lease_owner = $3 AND status = 'running'",
        )
        .bind(self.clock.now_ms())
        .bind(id)
        .bind(owner)
        .execute(&self.db.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records a failure: the job runs again after `retry_in` unless it has
    /// used all its attempts, in which case it is parked as `failed`.
    pub async fn fail(
        &self,
        job: &ClaimedJob,
        owner: &str,
        error: &str,
        retry_in: Duration,
    ) -> anyhow::Result<()> {
        let now = self.clock.now_ms();
        let status = if job.attempts >= job.max_attempts {
            "failed"
        } else {
            "queued"
        };
        sqlx::query(
            "UPDATE jobs SET status = $1, last_error = $2, run_at = $3, lease_owner = NULL, \
             lease_until = NULL, updated_at = $4 WHERE id = $5 AND lease_owner = $6",
        )
        .bind(status)
        .bind(error)
        .bind(now + retry_in.as_millis() as i64)
        .bind(now)
        .bind(job.id)
        .bind(owner)
        .execute(&self.db.pool)
        .await?;
        Ok(())
    }

    /// Job status by id, for tests and diagnostics.
    pub async fn status(&self, id: i64) -> anyhow::Result<Option<String>> {
        Ok(sqlx::query_scalar("SELECT status FROM jobs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.db.pool)
            .await?)
    }
}
