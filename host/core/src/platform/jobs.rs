//! The durable job queue with leases, shared by every worker.
//!
//! A worker claims due jobs by stamping its owner id and a lease expiry on
//! them in one statement; a job whose lease ran out (its worker crashed) is
//! claimable again. PostgreSQL adds `FOR UPDATE SKIP LOCKED` so concurrent
//! claimers on many processes skip each other's rows instead of waiting;
//! SQLite serialises writers, so the single-statement claim is already atomic.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;
use sqlx::Row;
use tracing::Instrument;

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

/// Why an attempt of a job failed; `retry` says whether a later attempt
/// may do better (a row or an address that is gone will not).
#[derive(Debug)]
pub struct JobFailure {
    pub reason: String,
    pub retry: bool,
}

impl JobFailure {
    pub fn new(reason: impl Into<String>, retry: bool) -> JobFailure {
        JobFailure {
            reason: reason.into(),
            retry,
        }
    }
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

    /// Adds `jobs` on `conn`, the transaction of the change that needs them,
    /// so the work and its cause commit together; a job whose idempotency
    /// key exists is dropped. Returns how many were added.
    pub async fn enqueue_many_on(
        conn: &mut sqlx::AnyConnection,
        backend: Backend,
        jobs: &[NewJob],
        now: i64,
    ) -> sqlx::Result<u64> {
        let mut added = 0;
        // 7 parameters a row: 200 rows stay under both backends' limits.
        for chunk in jobs.chunks(200) {
            let sql = format!(
                "INSERT INTO jobs (queue, payload, idempotency_key, run_at, max_attempts, \
                 created_at, updated_at) VALUES {} ON CONFLICT (queue, idempotency_key) DO NOTHING",
                crate::store::value_rows(backend, chunk.len(), 7)
            );
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
            for job in chunk {
                q = q
                    .bind(&job.queue)
                    .bind(job.payload.to_string())
                    .bind(&job.idempotency_key)
                    .bind(job.run_at_ms.unwrap_or(now))
                    .bind(job.max_attempts)
                    .bind(now)
                    .bind(now);
            }
            added += q.execute(&mut *conn).await?.rows_affected();
        }
        Ok(added)
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

    /// One pass of a worker: claims up to `max` due jobs of `queue` and
    /// hands each to `handle` in turn, in a span named after the queue. A
    /// failed attempt `n` is tried again after `retries[n - 1]` (the last
    /// wait repeating) until the job's attempts are spent; a failure that
    /// may not retry gives the job up at once. Answers how many it claimed.
    pub async fn work_once<F, Fut>(
        &self,
        queue: &str,
        owner: &str,
        lease: Duration,
        max: i64,
        retries: &[Duration],
        mut handle: F,
    ) -> anyhow::Result<usize>
    where
        F: FnMut(ClaimedJob) -> Fut,
        Fut: Future<Output = Result<(), JobFailure>>,
    {
        let jobs = self.claim(queue, owner, lease, max).await?;
        let claimed = jobs.len();
        for mut job in jobs {
            let span = tracing::info_span!("job", queue, job_id = job.id, attempt = job.attempts);
            match handle(job.clone()).instrument(span).await {
                Ok(()) => {
                    self.complete(job.id, owner).await?;
                }
                Err(f) => {
                    tracing::warn!(queue, job_id = job.id, reason = %f.reason, "job failed");
                    if !f.retry {
                        job.attempts = job.max_attempts;
                    }
                    let wait = retries
                        .get((job.attempts as usize).saturating_sub(1))
                        .or(retries.last())
                        .copied()
                        .unwrap_or(Duration::from_secs(60));
                    self.fail(&job, owner, &f.reason, wait).await?;
                }
            }
        }
        Ok(claimed)
    }

    /// A worker's loop over `pass` (a `work_once` of its queue): another
    /// pass at once after one that claimed jobs, else after a second; a
    /// failed pass is logged under `what` and the loop goes on.
    pub async fn keep_working<F, Fut>(what: &str, mut pass: F)
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = anyhow::Result<usize>>,
    {
        loop {
            match pass().await {
                Ok(n) if n > 0 => continue,
                Ok(_) => {}
                Err(e) => tracing::warn!("{what}: {e:#}"),
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// Job status by id, for tests and diagnostics.
    pub async fn status(&self, id: i64) -> anyhow::Result<Option<String>> {
        Ok(sqlx::query_scalar("SELECT status FROM jobs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.db.pool)
            .await?)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::testing::TestApp;

    /// Several claimers, each on its own pool (as separate processes would
    /// be), drain one queue concurrently; no job may be taken twice.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_claimers_never_take_the_same_job() {
        let app = TestApp::new().await;
        let queue = JobQueue::new(app.state.db.clone(), app.state.clock.clone());
        for i in 0..200 {
            queue
                .enqueue(NewJob::new("test", serde_json::json!({ "n": i })))
                .await
                .unwrap();
        }
        let url = app.state.config.database_url();
        let mut workers = Vec::new();
        for w in 0..4 {
            let db = crate::store::Db::connect(&url).await.unwrap();
            let q = JobQueue::new(db, app.state.clock.clone());
            workers.push(tokio::spawn(async move {
                let owner = format!("worker-{w}");
                let mut taken = Vec::new();
                loop {
                    let jobs = q
                        .claim("test", &owner, Duration::from_secs(60), 7)
                        .await
                        .unwrap();
                    if jobs.is_empty() {
                        break;
                    }
                    for job in jobs {
                        assert!(q.complete(job.id, &owner).await.unwrap());
                        taken.push(job.id);
                    }
                }
                taken
            }));
        }
        let mut seen = HashSet::new();
        let mut total = 0;
        for w in workers {
            let taken = w.await.unwrap();
            total += taken.len();
            seen.extend(taken);
        }
        assert_eq!(total, 200, "every job claimed exactly once");
        assert_eq!(seen.len(), 200);
    }

    #[tokio::test]
    async fn leases_expire_failures_retry_and_idempotency_keys_dedupe() {
        let app = TestApp::new().await;
        let q = app.state.jobs.clone();
        let mut job = NewJob::new("mail", serde_json::json!({"to": "a@example.com"}));
        job.idempotency_key = Some("send-1".into());
        job.max_attempts = 2;
        let id = q.enqueue(job.clone()).await.unwrap().unwrap();
        assert_eq!(q.enqueue(job).await.unwrap(), None, "duplicate key");

        let claimed = q
            .claim("mail", "a", Duration::from_secs(30), 10)
            .await
            .unwrap();
        assert_eq!(claimed.len(), 1);
        assert!(
            q.claim("mail", "b", Duration::from_secs(30), 10)
                .await
                .unwrap()
                .is_empty()
        );
        // The first worker dies; after the lease another takes over.
        app.clock.advance(Duration::from_secs(31));
        let again = q
            .claim("mail", "b", Duration::from_secs(30), 10)
            .await
            .unwrap();
        assert_eq!(again[0].id, id);
        assert_eq!(again[0].attempts, 2);
        // The stale owner can no longer complete it.
        assert!(!q.complete(id, "a").await.unwrap());
        q.fail(&again[0], "b", "smtp down", Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(q.status(id).await.unwrap().as_deref(), Some("failed"));

        let id2 = q
            .enqueue(NewJob::new("mail", serde_json::json!({})))
            .await
            .unwrap()
            .unwrap();
        let c = q
            .claim("mail", "a", Duration::from_secs(30), 10)
            .await
            .unwrap();
        q.fail(&c[0], "a", "temporary", Duration::from_secs(10))
            .await
            .unwrap();
        assert!(
            q.claim("mail", "a", Duration::from_secs(30), 10)
                .await
                .unwrap()
                .is_empty()
        );
        app.clock.advance(Duration::from_secs(11));
        let c = q
            .claim("mail", "a", Duration::from_secs(30), 10)
            .await
            .unwrap();
        assert_eq!(c[0].id, id2);
        assert!(q.complete(id2, "a").await.unwrap());
        assert_eq!(q.status(id2).await.unwrap().as_deref(), Some("done"));
    }
}
