//! The enrichment pipeline: jobs of the durable queue (`domain_enrich`),
//! one per domain and enrichment generation, so several servers share the
//! work through the queue's leases and a domain is never enriched twice at
//! once.
//!
//! [`submit`] adds domains to the pool and queues them. [`run`] is the
//! worker `serve` starts: each round it queues the records whose refresh
//! time has come (at most `domain_refresh_per_hour`), then claims jobs and
//! enriches them a few at a time. A stage that fails for a reason worth
//! retrying (a DNS time-out) fails the job, which the queue runs again with
//! a doubling delay; a final reason (no such domain) is recorded on the
//! record and the pipeline goes on with the stages that can still run.
//!
//! Stages, in order: DNS (`dns.rs`); the crawl (`crawl.rs`) and RDAP
//! (`rdap.rs`) side by side; extraction, technologies and signals
//! (`site.rs`); the domain-classifier plugin (`classify.rs`); scores
//! (`site.rs`). The findings are written by `save.rs`.

pub mod classify;
pub mod crawl;
pub mod dns;
pub mod rdap;
pub mod save;
pub mod site;

use std::net::IpAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::task::JoinSet;
use tracing::Instrument;

use super::store;
use outreach_core::platform::jobs::{ClaimedJob, JobQueue, NewJob};
use outreach_core::state::AppState;
use outreach_core::store::Backend;
use save::Findings;
use sqlx::AnyConnection;

/// The job queue of enrichments.
pub const QUEUE: &str = "domain_enrich";
/// How long a claimed enrichment is leased: longer than a whole crawl.
const LEASE: Duration = Duration::from_secs(10 * 60);
/// Enrichments one server runs at once.
const CONCURRENCY: usize = 16;
/// Attempts of one enrichment before it is parked as failed.
const MAX_ATTEMPTS: i64 = 4;
/// How long an enrichment is given before the refresh scan queues it again
/// (its job was lost, say, between the insert and the enqueue).
const REQUEUE_AFTER_MS: i64 = 60 * 60 * 1000;

/// Adds `domains` (normalised) to the pool unless present, notes that
/// `account_id` waits for those not enriched yet, and queues the new ones
/// (and imported ones never enriched). Returns how many it queued.
pub async fn submit(
    state: &AppState,
    domains: &[String],
    source: &str,
    account_id: Option<i64>,
) -> anyhow::Result<usize> {
    let mut tx = state.db.pool.begin().await?;
    let queued = submit_in(
        &mut tx,
        state.db.backend,
        domains,
        source,
        account_id,
        state.clock.now_ms(),
    )
    .await?;
    tx.commit().await?;
    Ok(queued)
}

/// [`submit`] on `conn`, the transaction of the change that names the
/// domains (a list's new items), so the records, the waiting account and
/// the jobs commit with it. A few statements per 200 domains, so a list
/// import of 100,000 new domains stays one short transaction.
pub async fn submit_in(
    conn: &mut AnyConnection,
    backend: Backend,
    domains: &[String],
    source: &str,
    account_id: Option<i64>,
    now: i64,
) -> sqlx::Result<usize> {
    // In one order for every writer: two transactions adding overlapping
    // domains then wait for each other on the unique index instead of
    // deadlocking on PostgreSQL.
    let mut sorted = domains.to_vec();
    sorted.sort_unstable();
    let mut jobs = Vec::new();
    for chunk in sorted.chunks(200) {
        let queued = store::add_many(conn, backend, chunk, source, now).await?;
        if let Some(account_id) = account_id {
            store::request_many(conn, backend, chunk, account_id, now).await?;
        }
        jobs.extend(queued.iter().map(|(id, domain)| job(*id, domain, 0)));
    }
    JobQueue::enqueue_many_on(conn, backend, &jobs, now).await?;
    Ok(jobs.len())
}

/// One enrichment; the key makes a repeat for the same generation
/// (`enriched_at`, 0 for a new record) a no-op.
fn job(id: i64, domain: &str, generation: i64) -> NewJob {
    let mut job = NewJob::new(QUEUE, json!({"domain_id": id, "domain": domain}));
    job.idempotency_key = Some(format!("{id}:{generation}"));
    job.max_attempts = MAX_ATTEMPTS;
    job
}

async fn enqueue(state: &AppState, id: i64, domain: &str, generation: i64) -> anyhow::Result<()> {
    state.jobs.enqueue(job(id, domain, generation)).await?;
    Ok(())
}

/// Queues an enrichment of record `id` now, whatever its refresh time (a
/// competitor's refresh); `account_id` hears when it lands. Returns false
/// when an enrichment of the record's current state is already queued.
pub async fn enrich_now(
    state: &AppState,
    id: i64,
    domain: &str,
    account_id: i64,
) -> anyhow::Result<bool> {
    let now = state.clock.now_ms();
    // Every enrichment job of the record has a key starting `id:`; one
    // waiting or running makes another pointless.
    let waiting: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM jobs WHERE queue = $1 AND idempotency_key >= $2 \
         AND idempotency_key < $3 AND status IN ('queued', 'running')",
    )
    .bind(QUEUE)
    .bind(format!("{id}:"))
    .bind(format!("{id};"))
    .fetch_one(&state.db.pool)
    .await?;
    let mut conn = state.db.pool.acquire().await?;
    store::request_many(
        &mut conn,
        state.db.backend,
        &[domain.to_string()],
        account_id,
        now,
    )
    .await?;
    drop(conn);
    if waiting > 0 {
        return Ok(false);
    }
    let mut job = job(id, domain, 0);
    job.idempotency_key = Some(format!("{id}:refresh:{now}"));
    Ok(state.jobs.enqueue(job).await?.is_some())
}

/// Queues the records whose refresh time has come, oldest first, at most
/// `limit`; each is given [`REQUEUE_AFTER_MS`] before it is due again.
pub async fn queue_due(state: &AppState, limit: i64) -> anyhow::Result<usize> {
    let now = state.clock.now_ms();
    let due = store::due(&state.db, now, limit).await?;
    for (id, domain, generation) in &due {
        enqueue(state, *id, domain, *generation).await?;
        store::postpone(&state.db, *id, now + REQUEUE_AFTER_MS).await?;
    }
    Ok(due.len())
}

/// Whether the refresh scan runs now: at start, then once a minute.
fn refresh_scan_due(last_scan: Option<i64>, now: i64) -> bool {
    last_scan.is_none_or(|last| now.saturating_sub(last) >= 60_000)
}

/// The worker: refresh scan once a minute, enrichments as they come.
pub async fn run(state: AppState) {
    let owner = format!("enrich-{}", uuid::Uuid::new_v4());
    let mut last_scan = None;
    loop {
        let now = state.clock.now_ms();
        if refresh_scan_due(last_scan, now) {
            last_scan = Some(now);
            // A minute's share of the hourly cap, at least one.
            let per_minute = (state.config.domain_refresh_per_hour / 60).max(1) as i64;
            if let Err(e) = queue_due(&state, per_minute).await {
                tracing::warn!(error = %e, "domain refresh scan failed");
            }
        }
        match enrich_claimed(&state, &owner).await {
            Ok(0) => tokio::time::sleep(Duration::from_secs(1)).await,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "claiming domain enrichments failed");
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        }
    }
}

/// Claims up to [`CONCURRENCY`] due enrichments and runs them; returns how
/// many it ran. Tests call it to drain the queue.
pub async fn enrich_claimed(state: &AppState, owner: &str) -> anyhow::Result<usize> {
    let jobs = state
        .jobs
        .claim(QUEUE, owner, LEASE, CONCURRENCY as i64)
        .await?;
    let count = jobs.len();
    let mut running = JoinSet::new();
    for job in jobs {
        let state = state.clone();
        let owner = owner.to_string();
        let span = tracing::info_span!("enrich", domain = %job.payload["domain"], job = job.id);
        running.spawn(
            async move {
                let outcome = enrich(&state, &job).await;
                finish(&state, &job, &owner, outcome).await
            }
            .instrument(span),
        );
    }
    while let Some(done) = running.join_next().await {
        if let Ok(Err(e)) = done {
            tracing::warn!(error = %e, "recording a domain enrichment failed");
        }
    }
    Ok(count)
}

/// Why an enrichment did not finish: worth another attempt, or not.
#[derive(Debug)]
enum Outcome {
    Done,
    Retry(String),
}

async fn finish(
    state: &AppState,
    job: &ClaimedJob,
    owner: &str,
    outcome: anyhow::Result<Outcome>,
) -> anyhow::Result<()> {
    match outcome {
        Ok(Outcome::Done) => {
            state.jobs.complete(job.id, owner).await?;
        }
        Ok(Outcome::Retry(reason)) => {
            // 1 min, 2 min, 4 min... as the attempts go.
            let delay = Duration::from_secs(60 << (job.attempts - 1).clamp(0, 6));
            state.jobs.fail(job, owner, &reason, delay).await?;
            if job.attempts >= job.max_attempts {
                // Out of attempts: the record shows why, and the refresh
                // brings it back later.
                let mut findings = Findings {
                    failed: true,
                    ..Findings::default()
                };
                findings
                    .errors
                    .insert("pipeline".into(), Value::String(reason));
                let now = state.clock.now_ms();
                save::save(
                    state,
                    domain_id(job)?,
                    &findings,
                    now,
                    refresh_at(state, now),
                )
                .await?;
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "domain enrichment failed; it runs again in a minute");
            let delay = Duration::from_secs(60);
            state.jobs.fail(job, owner, &e.to_string(), delay).await?;
        }
    }
    Ok(())
}

fn domain_id(job: &ClaimedJob) -> anyhow::Result<i64> {
    job.payload["domain_id"]
        .as_i64()
        .ok_or_else(|| anyhow::anyhow!("job {} has no domain_id", job.id))
}

/// When a record enriched at `now` is due again.
fn refresh_at(state: &AppState, now: i64) -> i64 {
    now + state.config.domain_refresh_age_days as i64 * 24 * 60 * 60 * 1000
}

/// Runs the stages for one job's domain and saves what they found.
async fn enrich(state: &AppState, job: &ClaimedJob) -> anyhow::Result<Outcome> {
    let id = domain_id(job)?;
    let domain = job.payload["domain"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("job {} has no domain", job.id))?
        .to_string();
    store::mark_enriching(&state.db, id).await?;
    let mut findings = Findings {
        intent_level: "cold".into(),
        social_links: json!({}),
        ..Findings::default()
    };
    let dns_facts = match dns::lookup(&state.dns, &domain).await {
        Ok(facts) => {
            findings.mx_provider = facts.mx_provider.clone();
            findings.has_spf = Some(facts.has_spf);
            findings.has_dmarc = Some(facts.has_dmarc);
            Some(facts)
        }
        Err(dns::DnsFailure::Lookup(reason)) => return Ok(Outcome::Retry(reason)),
        Err(dns::DnsFailure::NoSuchDomain) => {
            findings
                .errors
                .insert("dns".into(), Value::String("no such domain".into()));
            None
        }
    };

    // A domain without addresses has no site to crawl, unless a test
    // points it elsewhere.
    let base = state
        .config
        .crawler_base_url_overrides
        .get(&domain)
        .cloned();
    let first_ip = dns_facts
        .as_ref()
        .and_then(|d| d.ipv4.first().copied())
        .map(IpAddr::V4);
    let crawl = async {
        if first_ip.is_none() && base.is_none() {
            return Ok(None);
        }
        let crawler = state.ext::<crawl::Crawler>();
        let links = |home: &crawl::Page| site::next_pages(home, base.as_deref(), &domain);
        crawler
            .crawl(&domain, base.as_deref(), links)
            .await
            .map(Some)
    };
    let registry = state.ext::<rdap::Rdap>().lookup(&domain, first_ip);
    let (crawled, registry) = tokio::join!(crawl, registry);
    // The last attempt keeps what the other stages found rather than
    // failing the whole record over the site.
    let last_attempt = job.attempts >= job.max_attempts;
    let site = match crawled {
        Ok(site) => {
            let problems = site.as_ref().map(crawl::Site::problems).unwrap_or_default();
            if !problems.is_empty() {
                findings
                    .errors
                    .insert("crawl".into(), Value::String(problems.join("; ")));
            }
            site
        }
        Err(crawl::CrawlFailure::Retry(reason)) if !last_attempt => {
            return Ok(Outcome::Retry(reason));
        }
        Err(crawl::CrawlFailure::Retry(reason) | crawl::CrawlFailure::Final(reason)) => {
            findings
                .errors
                .insert("crawl".into(), Value::String(reason));
            None
        }
    };
    findings.registered_at = registry.registered_at;
    findings.registrant_country = registry.registrant_country;
    findings.ip_country = registry.ip_country;
    if !registry.errors.is_empty() {
        findings
            .errors
            .insert("rdap".into(), Value::String(registry.errors.join("; ")));
    }
    findings.failed = dns_facts.is_none() && site.is_none();

    if !findings.failed {
        let analysed = tokio::task::spawn_blocking(move || {
            let input = site::analyse(
                &domain,
                base.as_deref(),
                site.as_ref(),
                dns_facts.as_ref(),
                &mut findings,
            );
            (findings, input)
        });
        let input;
        (findings, input) = analysed.await?;
        site::classified(&mut findings, classify::run(state, input).await);
        let previous = store::technology_names(&state.db, id).await?;
        site::score(&mut findings, previous.as_deref(), state.clock.now_ms());
    }
    let now = state.clock.now_ms();
    save::save(state, id, &findings, now, refresh_at(state, now)).await?;
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::refresh_scan_due;

    #[test]
    fn the_refresh_scan_runs_at_start_then_once_a_minute() {
        let now = 1_795_000_000_000;
        assert!(refresh_scan_due(None, now));
        assert!(!refresh_scan_due(Some(now), now + 59_999));
        assert!(refresh_scan_due(Some(now), now + 60_000));
    }
}
