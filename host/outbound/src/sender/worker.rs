//! The sender loop `outreach serve` runs, and the single pass tests drive.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, oneshot};
use tracing::Instrument;

use super::compose::compose;
use super::lanes::Delivery;
use super::plan::{Job, claim_and_plan};
use super::record::{Outcome, SmtpResult};
use super::{CLAIM_BATCH, Sender};
use outreach_core::state::AppState;

/// Messages between claim and record per server.
const MAX_IN_FLIGHT: usize = 512;

/// Free slots the loop waits for before it claims again (claims are write
/// transactions; fewer, larger ones keep SQLite's writer free).
const CLAIM_MIN: usize = 64;

/// How often an idle sender looks for work that fell due (enrollments
/// made due by this or another server included).
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The loop: claim and plan while slots are free, send each job as its own
/// task; a slow mailbox holds only its own slots.
pub async fn run(state: AppState) {
    replay_journals(&state).await;
    tokio::spawn(renew_leases(state.clone()));
    tokio::spawn(replay_journals_again(state.clone()));
    let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    loop {
        match slots.acquire_many(CLAIM_MIN as u32).await {
            Ok(enough) => drop(enough),
            Err(_) => return,
        }
        let free = slots.available_permits() as i64;
        let span = tracing::info_span!("job", name = "sender.plan");
        let started = std::time::Instant::now();
        let planned = claim_and_plan(&state, free.min(CLAIM_BATCH))
            .instrument(span)
            .await;
        tracing::debug!(
            ms = started.elapsed().as_secs_f64() * 1e3,
            free,
            "planned sends"
        );
        let plan = match planned {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(error = %e, "planning sends failed");
                tokio::time::sleep(POLL_INTERVAL).await;
                continue;
            }
        };
        if plan.claimed == 0 {
            tokio::time::sleep(POLL_INTERVAL).await;
            continue;
        }
        for job in plan.jobs {
            let slot = slots
                .clone()
                .try_acquire_owned()
                .expect("only this loop takes slots, and it claimed no more than were free");
            let state = state.clone();
            let span = tracing::info_span!(
                "job",
                name = "sender.send",
                enrollment_id = job.enrollment_id,
                step_id = job.step_id
            );
            tokio::spawn(
                async move {
                    dispatch(&state, job).await;
                    drop(slot);
                }
                .instrument(span),
            );
        }
    }
}

/// Renews this server's leases three times per lease period, so they run
/// out only when the server is gone.
async fn renew_leases(state: AppState) {
    let sender = state.ext::<Sender>().clone();
    let every = renewal_period(&sender);
    loop {
        tokio::time::sleep(every).await;
        let until = state.clock.now_ms() + sender.lease_ms;
        if let Err(e) = super::store::renew_leases(&state.db, &sender.owner, until).await {
            tracing::warn!(error = %e, "renewing sender leases failed");
        }
    }
}

/// Replays the journals of servers killed meanwhile, as often as leases are
/// renewed, so their answers are recorded before their leases run out. A
/// task of its own: a long replay must not hold up this server's renewals.
async fn replay_journals_again(state: AppState) {
    let every = renewal_period(state.ext::<Sender>());
    loop {
        tokio::time::sleep(every).await;
        replay_journals(&state).await;
    }
}

/// A third of the lease: how often leases are renewed and journals replayed.
fn renewal_period(sender: &Sender) -> Duration {
    Duration::from_millis((sender.lease_ms / 3).max(100) as u64)
}

/// Records the answers in the journals of servers that are gone (SQLite).
async fn replay_journals(state: &AppState) {
    let sender = state.ext::<Sender>();
    if sender.journal.is_some() {
        super::journal::replay(
            &state.db,
            &sender.write_gate,
            &state.config.data_dir,
            &sender.owner,
        )
        .await;
    }
}

/// One pass for tests: claims and plans one batch, sends every job and
/// returns once all answers are recorded. Returns the number of sends.
pub async fn run_once(state: &AppState) -> anyhow::Result<usize> {
    let plan = claim_and_plan(state, CLAIM_BATCH).await?;
    let n = plan.jobs.len();
    futures::future::join_all(plan.jobs.into_iter().map(|job| dispatch(state, job))).await;
    Ok(n)
}

/// Composes and delivers one job; returns once its answer is recorded.
async fn dispatch(state: &AppState, job: Job) {
    let sender = state.ext::<Sender>();
    let mut outcome = outcome_of(&job);
    match compose(state, &job).await {
        Ok(out) => {
            outcome.subject = out.subject;
            outcome.links = out.links;
            let (done, wait) = oneshot::channel();
            let delivery = Delivery {
                outcome,
                envelope: out.envelope,
                bytes: out.bytes,
                done,
            };
            sender.lanes.deliver(state, delivery).await;
            let _ = wait.await;
        }
        Err(reason) => {
            tracing::warn!(%reason, "composing a sequence email failed");
            outcome.result = SmtpResult::Deferred(reason);
            outcome.at = state.clock.now_ms();
            sender.recorder.record(outcome).await;
        }
    }
}

/// The answer record of `job`, before its answer is known.
pub(super) fn outcome_of(job: &Job) -> Outcome {
    Outcome {
        message_row_id: job.message_row_id,
        account_id: job.account_id,
        sequence_id: job.sequence_id,
        enrollment_id: job.enrollment_id,
        step_id: job.step_id,
        variant: job.variant.clone(),
        send_account_id: job.send_account_id,
        reserved_day: job.reserved_day,
        to_email: job.contact.email.clone(),
        next_delay_ms: job.next_delay_ms,
        subject: String::new(),
        links: Vec::new(),
        result: SmtpResult::Delivered,
        at: 0,
        journal_segment: None,
    }
}
