//! Attempts: signing and sending one delivery, and the two workers that
//! `outreach serve` runs, the fan-out loop over the outbox and the delivery
//! loop over due deliveries. Both are safe on several processes: fan-out
//! claims outbox rows, deliveries are leased (PostgreSQL `FOR UPDATE SKIP
//! LOCKED`, SQLite one atomic statement), and a lease that runs out (a
//! crashed server) makes the delivery due again, so every event is
//! delivered at least once; receivers deduplicate by the delivery id.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Notify, Semaphore, mpsc};
use tracing::Instrument;

use super::dispatch::dispatch_once;
use super::outcomes::{self, EXCERPT_BYTES, Outcome};
use super::signing::{USER_AGENT, delivery_headers};
use super::store::{self, ClaimedDelivery, secret_aad};
use outreach_core::state::AppState;
use outreach_ssrf::{ClientOptions, GuardError, GuardedClient, GuardedRequest, Method, Url};

/// spec/2: the receiver must answer 2xx within 5 seconds.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a claimed delivery stays with its claimer: the answer time plus
/// ample room to write the outcome. A server that dies holding leases
/// delays those deliveries by this much.
pub const LEASE_MS: i64 = 15_000;

/// Attempts in flight per server.
const MAX_IN_FLIGHT: usize = 128;

/// Free slots the delivery loop waits for before it claims again.
const CLAIM_MIN: usize = 32;

/// Outbox events taken per fan-out transaction.
const FAN_OUT_BATCH: i64 = 1000;

/// Outcomes written per transaction.
const OUTCOME_BATCH: usize = 512;

/// How often idle workers look for work another server created. Work this
/// server creates wakes them at once.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// The webhooks area's services (a state extension).
#[derive(Clone)]
pub struct Deliverer {
    client: GuardedClient,
    /// Wakes the delivery loop when fan-out or a replay made work due.
    wake: Arc<Notify>,
    /// This process's lease owner name.
    owner: Arc<str>,
}

impl Deliverer {
    pub fn new(state: &AppState) -> Deliverer {
        let options = ClientOptions {
            timeout: ANSWER_TIMEOUT,
            connect_timeout: ANSWER_TIMEOUT,
            follow_redirects: false,
            truncate_response: true,
            max_response_bytes: EXCERPT_BYTES,
            max_request_bytes: 1024 * 1024,
            user_agent: USER_AGENT.to_owned(),
            ..ClientOptions::default()
        };
        let client = GuardedClient::new(state.outbound.clone(), options)
            .expect("the webhook HTTP client builds with static options");
        Deliverer {
            client,
            wake: Arc::new(Notify::new()),
            owner: format!("webhooks-{}", uuid::Uuid::new_v4().simple()).into(),
        }
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }
}

/// Makes one attempt of a claimed delivery and says how it went; `replay`
/// says a failure gets no automatic retries (see [`Outcome::replay`]). Never
/// fails: every problem (no answer, a refused address, a secret that does
/// not open) is a failed attempt with its reason.
pub async fn attempt(state: &AppState, d: &ClaimedDelivery, replay: bool) -> Outcome {
    let deliverer = state.ext::<Deliverer>();
    let started_at = state.clock.now_ms();
    let started = Instant::now();
    let result = send(state, deliverer, d, started_at).await;
    let response_ms = started.elapsed().as_millis() as i64;
    let (status_code, excerpt, error, success) = match result {
        Ok(resp) => {
            let excerpt =
                (!resp.body.is_empty()).then(|| String::from_utf8_lossy(&resp.body).into_owned());
            let success = (200..300).contains(&resp.status);
            let error = match resp.status {
                200..=299 => None,
                300..=399 => Some(format!(
                    "Redirect not followed (HTTP {}{})",
                    resp.status,
                    resp.header("location")
                        .map(|l| format!(" to {l}"))
                        .unwrap_or_default()
                )),
                s => Some(format!("HTTP {s}")),
            };
            (Some(resp.status as i64), excerpt, error, success)
        }
        Err(e) => (None, None, Some(e), false),
    };
    metrics::counter!("webhook_attempts_total", "result" => if success { "delivered" } else { "failed" })
        .increment(1);
    Outcome {
        delivery_id: d.id,
        account_id: d.account_id,
        webhook_id: d.webhook_id,
        attempt: d.attempt + 1,
        attempted_at: started_at,
        url: d.url.clone(),
        status_code,
        response_ms,
        excerpt,
        error,
        success,
        replay,
        owner: deliverer.owner.to_string(),
    }
}

async fn send(
    state: &AppState,
    deliverer: &Deliverer,
    d: &ClaimedDelivery,
    now_ms: i64,
) -> Result<outreach_ssrf::GuardedResponse, String> {
    let secret = state
        .secrets
        .decrypt(&secret_aad(d.webhook_id), &d.secret)
        .map_err(|e| {
            tracing::error!(webhook_id = d.webhook_id, error = %e, "webhook secret does not open");
            "Signing secret unavailable".to_owned()
        })?;
    let url = Url::parse(&d.url).map_err(|e| format!("Invalid URL: {e}"))?;
    let body = d.payload.as_bytes();
    let mut req = GuardedRequest::new(Method::POST, url);
    req.headers = delivery_headers(&secret, d.id, &d.event_type, body, now_ms.div_euclid(1000));
    req.body = Some(body.to_vec());
    deliverer.client.send(req).await.map_err(|e| match e {
        GuardError::Timeout => "No answer within 5 seconds".to_owned(),
        other => other.to_string(),
    })
}

/// One pass of the delivery loop, for tests and tools: attempts every due
/// delivery (up to `limit`) concurrently and records the outcomes. Returns
/// how many attempts were made.
pub async fn deliver_due_once(state: &AppState, limit: i64) -> anyhow::Result<usize> {
    let now = state.clock.now_ms();
    let owner = state.ext::<Deliverer>().owner.clone();
    let claimed = store::claim_due(&state.db, &owner, now, now + LEASE_MS, limit).await?;
    let tasks: Vec<_> = claimed
        .into_iter()
        .map(|d| {
            let state = state.clone();
            tokio::spawn(async move { attempt(&state, &d, false).await })
        })
        .collect();
    let mut results = Vec::with_capacity(tasks.len());
    for t in tasks {
        results.push(t.await?);
    }
    outcomes::record(&state.db, &results, state.clock.now_ms()).await?;
    Ok(results.len())
}

/// Starts the fan-out and delivery workers (`outreach serve`).
pub fn start_workers(state: &AppState) {
    tokio::spawn(fan_out_loop(state.clone()));
    tokio::spawn(delivery_loop(state.clone()));
}

async fn fan_out_loop(state: AppState) {
    let wake = state.ext::<Deliverer>().wake.clone();
    loop {
        let span = tracing::info_span!("job", name = "webhooks.fan_out");
        let taken = dispatch_once(&state, FAN_OUT_BATCH).instrument(span).await;
        match taken {
            Ok(0) => tokio::time::sleep(POLL_INTERVAL).await,
            Ok(_) => wake.notify_one(),
            Err(e) => {
                tracing::error!(error = %e, "webhook fan-out failed");
                tokio::time::sleep(POLL_INTERVAL).await;
            }
        }
    }
}

/// Claims due deliveries while attempt slots are free, runs each attempt as
/// its own task, and hands outcomes to a writer that records them in
/// batches; a slow receiver holds its slots only, never the loop.
async fn delivery_loop(state: AppState) {
    let deliverer = state.ext::<Deliverer>().clone();
    let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let (done, results) = mpsc::channel::<Outcome>(MAX_IN_FLIGHT * 4);
    tokio::spawn(outcome_writer(state.clone(), results));
    loop {
        // Claims are write transactions, so they are made for several slots
        // at once: wait until CLAIM_MIN attempts have finished (or that many
        // slots are idle), then claim every free slot. Only this loop takes
        // slots, so the ones counted free stay free until it takes them.
        match slots.acquire_many(CLAIM_MIN as u32).await {
            Ok(enough) => drop(enough),
            Err(_) => return,
        }
        let free = slots.available_permits();
        let now = state.clock.now_ms();
        let claimed = store::claim_due(
            &state.db,
            &deliverer.owner,
            now,
            now + LEASE_MS,
            free as i64,
        )
        .await;
        let claimed = match claimed {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "claiming webhook deliveries failed");
                tokio::time::sleep(POLL_INTERVAL).await;
                continue;
            }
        };
        if claimed.is_empty() {
            let _ = tokio::time::timeout(POLL_INTERVAL, deliverer.wake.notified()).await;
            continue;
        }
        for d in claimed {
            let slot = slots
                .clone()
                .try_acquire_owned()
                .expect("only this loop takes slots, and it claimed no more than were free");
            let (state, done) = (state.clone(), done.clone());
            let span = tracing::info_span!("job", name = "webhooks.attempt", delivery_id = d.id);
            tokio::spawn(
                async move {
                    let outcome = attempt(&state, &d, false).await;
                    drop(slot);
                    let _ = done.send(outcome).await;
                }
                .instrument(span),
            );
        }
    }
}

/// Records outcomes as they come, in batches of what has arrived. A failed
/// write loses nothing: the leases run out and the deliveries are tried
/// again.
async fn outcome_writer(state: AppState, mut results: mpsc::Receiver<Outcome>) {
    let mut batch = Vec::with_capacity(OUTCOME_BATCH);
    while results.recv_many(&mut batch, OUTCOME_BATCH).await > 0 {
        if let Err(e) = outcomes::record(&state.db, &batch, state.clock.now_ms()).await {
            tracing::error!(error = %e, n = batch.len(), "recording webhook outcomes failed");
        }
        batch.clear();
    }
}

/// Wakes the delivery loop (new due work in this process).
pub fn wake(state: &AppState) {
    state.ext::<Deliverer>().wake.notify_one();
}
