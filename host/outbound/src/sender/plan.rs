//! Claim and plan: one transaction per batch that leases due enrollments,
//! walks their steps and reserves what each send needs (daily caps, the
//! mailbox, the message row) before anything leaves the machine.
//!
//! The walk of one enrollment, from its current step (due at `due_at`):
//! - no step at the position: the enrollment is `completed`
//!   (`sequence.completed`);
//! - a delay step: the next step falls due its delays after this one's due
//!   time;
//! - a step whose condition does not hold: skipped, the next step falls due
//!   its delays after now;
//! - linkedin, phone, manual and sms steps: an open task on the enrollment,
//!   then on at once (tasks never block the sequence);
//! - an email step: waits for the send window, the sequence's daily cap and
//!   a mailbox with room; otherwise becomes a [`Job`].

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use sqlx::AnyConnection;

use super::store::{self, Claimed, Mailbox, MessageRow, PoolEntry};
use super::{CLAIM_BATCH, Sender};
use crate::preview::service::content;
use crate::rendering::{Contact, enrichment_domain};
use crate::sequence_events::day_of;
use crate::sequence_warmup::ramp::Ramp;
use crate::sequences::settings::{self, EngineSettings};
use crate::sequences::store::SequenceRow;
use crate::steps::store::{StepRow, delay_ms};
use crate::tracking::TrackingOptions;
use outreach_core::events::{self, EventType};
use outreach_core::platform::clock::ms_to_datetime;
use outreach_core::state::AppState;
use outreach_core::store::Backend;
use outreach_vendors::VendorsExt;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;

/// How long a send account in `error` rests before the sender tries it
/// again (a changed password is not retried in a loop).
pub const ERROR_RETRY_MS: i64 = 30 * 60 * 1000;

/// Bounces counted over this many days decide whether a pool mailbox is
/// over its bounce threshold.
const BOUNCE_WINDOW_MS: i64 = 7 * DAY_MS;

/// Sends a mailbox needs in the window before its bounce rate counts.
const MIN_SENDS_FOR_RATE: i64 = 20;

/// One message to render, compose and deliver.
#[derive(Debug, Clone)]
pub struct Job {
    pub message_row_id: i64,
    pub message_id: String,
    pub account_id: i64,
    pub sequence_id: i64,
    pub enrollment_id: i64,
    pub step_id: i64,
    pub variant: Option<String>,
    pub send_account_id: i64,
    /// The UTC day whose counters this send reserved; `None` for a resend
    /// of a message reserved before (a crash recovery).
    pub reserved_day: Option<i64>,
    pub from_email: String,
    pub from_name: Option<String>,
    pub contact: Contact,
    pub subject_template: String,
    pub body_template: String,
    /// The Message-ID and subject of the enrollment's first message, which
    /// follow-ups thread under.
    pub thread: Option<(String, String)>,
    pub tracking: TrackingOptions,
    /// Delay of the step after this one; `None` when this is the last.
    pub next_delay_ms: Option<i64>,
    /// The contact's cached enrichment, read for the whole batch at once
    /// (see [`prefetch_enrichment`]).
    pub enrichment: Option<Arc<Value>>,
}

/// What one plan decided.
#[derive(Debug, Default)]
pub struct Plan {
    pub jobs: Vec<Job>,
    /// Enrollments claimed (sends or not).
    pub claimed: usize,
}

/// Everything a batch's walk reads, loaded once per transaction.
struct Batch {
    sequences: HashMap<i64, (SequenceRow, EngineSettings)>,
    steps: HashMap<i64, Vec<StepRow>>,
    sent_today: HashMap<i64, i64>,
    pools: HashMap<i64, Vec<PoolEntry>>,
    mailboxes: HashMap<i64, Mailbox>,
    bounces: HashMap<i64, (i64, i64)>,
    messages: HashMap<i64, Vec<MessageRow>>,
    engagement: HashMap<i64, Vec<(i64, String)>>,
    /// Where each pool's rotation stands (index of the last used entry).
    rotation: HashMap<i64, usize>,
    /// Claimed enrollments whose address is suppressed, with the reason.
    suppressed: HashMap<i64, String>,
    /// Message rows the walk planned, inserted together afterwards.
    new_messages: Vec<store::NewMessage>,
    today: i64,
}

/// Claims up to `limit` due enrollments and plans them.
pub async fn claim_and_plan(state: &AppState, limit: i64) -> anyhow::Result<Plan> {
    let sender = state.ext::<Sender>();
    let backend = state.db.backend;
    let mut gate = sender.write_gate.enter(&state.db).await;
    let mut tx = gate.begin(&state.db).await?;
    // Read once the gate is ours: a lease dated from before a long wait
    // for it would start out nearly run out.
    let now = state.clock.now_ms();
    let claimed = store::claim(
        &mut tx,
        backend,
        &sender.owner,
        now,
        now + sender.lease_ms,
        limit.min(CLAIM_BATCH),
    )
    .await?;
    if claimed.is_empty() {
        tx.commit().await?;
        return Ok(Plan::default());
    }
    let mut batch = load(&mut tx, backend, &claimed, now).await?;
    batch.suppressed = store::suppression_reasons(&state.db, &claimed).await?;
    let mut plan = Plan {
        jobs: Vec::new(),
        claimed: claimed.len(),
    };
    for c in &claimed {
        if let Some(job) = walk(&mut tx, sender, &mut batch, c, now).await? {
            plan.jobs.push(job);
        }
    }
    let ids = store::insert_messages(&mut tx, backend, &batch.new_messages).await?;
    for job in plan.jobs.iter_mut().filter(|j| j.message_row_id == 0) {
        job.message_row_id = ids.get(&job.enrollment_id).copied().unwrap_or_default();
    }
    // Counters reserved by this plan.
    let mut per_sequence: HashMap<i64, (i64, i64)> = HashMap::new();
    let mut per_mailbox: HashMap<i64, i64> = HashMap::new();
    for j in plan.jobs.iter().filter(|j| j.reserved_day.is_some()) {
        per_sequence
            .entry(j.sequence_id)
            .or_insert((j.account_id, 0))
            .1 += 1;
        *per_mailbox.entry(j.send_account_id).or_default() += 1;
    }
    for (sequence_id, (account_id, n)) in per_sequence {
        crate::sequence_events::add_to_day(&mut tx, sequence_id, batch.today, account_id, n, 0, 0)
            .await?;
    }
    for (id, n) in per_mailbox {
        store::reserve_mailbox(&mut tx, id, n, batch.today).await?;
    }
    for (sequence_id, index) in &batch.rotation {
        if let Some(entry) = batch.pools.get(sequence_id).and_then(|p| p.get(*index)) {
            store::touch_pool_entry(&mut tx, *sequence_id, entry.send_account_id, now).await?;
        }
    }
    tx.commit().await?;
    drop(gate);
    prefetch_enrichment(state, &mut plan.jobs).await?;
    Ok(plan)
}

/// Reads the cached enrichment of every job's domain, one query per account
/// of the batch instead of one per message.
async fn prefetch_enrichment(state: &AppState, jobs: &mut [Job]) -> anyhow::Result<()> {
    let domains_of_jobs: Vec<Option<String>> =
        jobs.iter().map(|j| enrichment_domain(&j.contact)).collect();
    let mut wanted: HashMap<i64, Vec<String>> = HashMap::new();
    for (job, domain) in jobs.iter().zip(&domains_of_jobs) {
        if let Some(domain) = domain {
            wanted
                .entry(job.account_id)
                .or_default()
                .push(domain.clone());
        }
    }
    for (account_id, mut domains) in wanted {
        domains.sort_unstable();
        domains.dedup();
        let found: HashMap<String, Arc<Value>> = state
            .vendors()
            .cached_enrichments_for_account(account_id, &domains)
            .await
            .map_err(|e| anyhow::anyhow!("reading cached enrichment: {e}"))?
            .into_iter()
            .map(|(domain, value)| (domain, Arc::new(value)))
            .collect();
        for (job, domain) in jobs.iter_mut().zip(&domains_of_jobs) {
            if job.account_id == account_id {
                job.enrichment = domain.as_ref().and_then(|d| found.get(d).cloned());
            }
        }
    }
    Ok(())
}

async fn load(
    conn: &mut AnyConnection,
    backend: Backend,
    claimed: &[Claimed],
    now: i64,
) -> anyhow::Result<Batch> {
    let mut sequence_ids: Vec<i64> = claimed.iter().map(|c| c.sequence_id).collect();
    sequence_ids.sort_unstable();
    sequence_ids.dedup();
    store::lock_sequences(conn, backend, &sequence_ids).await?;
    let mut sequences = HashMap::new();
    let mut steps = HashMap::new();
    for id in &sequence_ids {
        let account_id = claimed
            .iter()
            .find(|c| c.sequence_id == *id)
            .map(|c| c.account_id)
            .unwrap_or_default();
        if let Some(s) = crate::sequences::store::get(conn, account_id, *id).await? {
            let parsed = serde_json::from_str(&s.settings).unwrap_or(Value::Null);
            let engine = settings::parse(&parsed)
                .unwrap_or_else(|_| settings::parse(&json!({})).expect("empty settings parse"));
            sequences.insert(*id, (s, engine));
        }
        steps.insert(*id, crate::steps::store::list(conn, *id).await?);
    }
    let today = day_of(now);
    let pools = store::pools(conn, &sequence_ids).await?;
    let mut account_ids: Vec<i64> = pools
        .values()
        .flatten()
        .map(|p| p.send_account_id)
        .chain(sequences.values().filter_map(|(s, _)| s.send_account_id))
        .collect();
    account_ids.sort_unstable();
    account_ids.dedup();
    let enrollment_ids: Vec<i64> = claimed.iter().map(|c| c.id).collect();
    let conditions = steps.values().flatten().any(|s| s.condition_type.is_some());
    Ok(Batch {
        sent_today: store::sent_on_day(conn, &sequence_ids, today).await?,
        mailboxes: store::mailboxes(conn, backend, &account_ids, today).await?,
        // Only pool rotation reads bounce rates.
        bounces: if pools.is_empty() {
            HashMap::new()
        } else {
            let pooled: Vec<i64> = pools
                .values()
                .flatten()
                .map(|p| p.send_account_id)
                .collect();
            store::recent_bounces(conn, &pooled, now - BOUNCE_WINDOW_MS).await?
        },
        messages: store::messages_of(conn, &enrollment_ids).await?,
        engagement: if conditions {
            store::engagement_of(conn, &enrollment_ids).await?
        } else {
            HashMap::new()
        },
        rotation: HashMap::new(),
        suppressed: HashMap::new(),
        new_messages: Vec::new(),
        sequences,
        steps,
        pools,
        today,
    })
}

/// Walks one enrollment's steps from its current one; returns the send
/// this plan made for it, if any. Every other outcome is written here.
async fn walk(
    conn: &mut AnyConnection,
    sender: &Sender,
    b: &mut Batch,
    c: &Claimed,
    now: i64,
) -> anyhow::Result<Option<Job>> {
    let Some((sequence, engine)) = b.sequences.get(&c.sequence_id).cloned() else {
        return Ok(None);
    };
    let steps = b.steps.get(&c.sequence_id).cloned().unwrap_or_default();
    let metadata: Map<String, Value> = serde_json::from_str(&c.metadata).unwrap_or_default();
    let zone = metadata.get("timezone").and_then(Value::as_str);
    let mut position = c.current_step;
    let mut due = c.due_at;
    let mut acted_at: Option<i64> = None;
    // Bounded: every pass moves to the next position.
    for _ in 0..=steps.len() {
        let Some(step) = steps.iter().find(|s| s.position == position) else {
            if store::complete(conn, c.id, position, now).await? {
                let data = json!({"sequence_id": c.sequence_id, "enrollment_id": c.id,
                    "email": c.contact_email});
                events::record(conn, c.account_id, EventType::SequenceCompleted, &data, now)
                    .await?;
            }
            return Ok(None);
        };
        let next_delay = steps
            .iter()
            .find(|s| s.position == position + 1)
            .map(|s| delay_ms(s.delay_days, s.delay_hours));
        if step.step_type == "delay" {
            position += 1;
            due += next_delay.unwrap_or(0);
        } else if !condition_holds(step, b.engagement.get(&c.id)) {
            position += 1;
            due = now + next_delay.unwrap_or(0);
        } else if step.step_type != "email" {
            let title = task_title(step);
            store::insert_task(conn, c, step.id, &step.step_type, &title, now).await?;
            acted_at = Some(now);
            position += 1;
            due = now + next_delay.unwrap_or(0);
        } else {
            // An email step: already sent (a crash after recording), to
            // resend (a crash before), or new.
            let existing = b
                .messages
                .get(&c.id)
                .and_then(|m| m.iter().find(|m| m.step_id == step.id))
                .cloned();
            if let Some(m) = existing
                .as_ref()
                .filter(|m| m.status == "sent" || m.status == "failed")
            {
                let at = m.sent_at.unwrap_or(now);
                acted_at = Some(at);
                position += 1;
                due = at + next_delay.unwrap_or(0);
            } else if let Some(reason) = b.suppressed.get(&c.id) {
                store::end_suppressed(conn, c.id, reason, now).await?;
                return Ok(None);
            } else {
                let at = ms_to_datetime(now);
                if !engine.allows(at, zone) {
                    let open = engine.next_allowed(at, zone).timestamp_millis();
                    store::reschedule(conn, c.id, position, open, acted_at, now).await?;
                    return Ok(None);
                }
                let job = plan_send(
                    conn, sender, b, c, &sequence, &engine, step, existing, next_delay, metadata,
                    now,
                )
                .await?;
                return Ok(job);
            }
        }
        if due > now {
            let due = if steps
                .iter()
                .find(|s| s.position == position)
                .is_some_and(|s| s.step_type == "email")
            {
                engine
                    .next_allowed(ms_to_datetime(due), zone)
                    .timestamp_millis()
            } else {
                due
            };
            store::reschedule(conn, c.id, position, due, acted_at, now).await?;
            return Ok(None);
        }
    }
    store::reschedule(conn, c.id, position, now, acted_at, now).await?;
    Ok(None)
}

/// The title of a task step: the step's subject when it has one.
fn task_title(step: &StepRow) -> String {
    match step.subject.as_deref().map(str::trim) {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => match step.step_type.as_str() {
            "linkedin_connect" => "Send a LinkedIn connection request".into(),
            "linkedin_message" => "Send a LinkedIn message".into(),
            "phone_call" => "Call the contact".into(),
            "sms" => "Send a text message".into(),
            _ => "Manual task".into(),
        },
    }
}

/// Whether a step's condition holds for the enrollment's recorded events.
pub fn condition_holds(step: &StepRow, events: Option<&Vec<(i64, String)>>) -> bool {
    let (Some(kind), Some(on)) = (step.condition_type.as_deref(), step.condition_step_id) else {
        return true;
    };
    let (negated, event) = match kind.strip_prefix("not_") {
        Some(rest) => (true, rest),
        None => (false, kind),
    };
    let seen = events.is_some_and(|list| list.iter().any(|(s, e)| *s == on && e == event));
    seen != negated
}

/// A stable number 0..100 for an enrollment and step: the same on every
/// server and every release, so a contact always gets the same variant.
pub fn bucket(enrollment_id: i64, step_id: i64) -> u64 {
    let digest = Sha256::digest(format!("{enrollment_id}:{step_id}").as_bytes());
    u64::from_be_bytes(digest[..8].try_into().expect("8 bytes")) % 100
}

/// The variant a contact gets and its subject and body: the locked A/B
/// winner, else a 50/50 split; multivariate by weight.
pub fn choose_variant(step: &StepRow, enrollment_id: i64) -> (Option<String>, String, String) {
    let label = if let Some(variants) = step.variants.as_ref().filter(|v| !v.is_empty()) {
        let roll = bucket(enrollment_id, step.id) as i64;
        let mut upto = 0;
        let pick = variants.iter().find(|v| {
            upto += v.weight;
            roll < upto
        });
        Some(pick.unwrap_or(&variants[variants.len() - 1]).label.clone())
    } else if step.ab_test_enabled {
        let b_arm = match step.ab_winner.as_deref() {
            Some(w) => w == "b",
            None => bucket(enrollment_id, step.id) >= 50,
        };
        Some(if b_arm { "b" } else { "a" }.to_owned())
    } else {
        None
    };
    let (subject, body) = variant_content(step, label.as_deref());
    (label, subject, body)
}

/// The subject and body of a variant (as preview shows them); a label the
/// step no longer has falls back to the step's own content.
fn variant_content(step: &StepRow, variant: Option<&str>) -> (String, String) {
    content(step, variant).unwrap_or_else(|_| {
        (
            step.subject.clone().unwrap_or_default(),
            step.body_html.clone().unwrap_or_default(),
        )
    })
}

/// Why a send cannot go now, and until when it waits.
enum Wait {
    /// Until the sequence's or the mailboxes' counters reset.
    NextDay,
    Until(i64),
}

/// The mailbox for the next send of `sequence`: in a pool, round-robin
/// from the entry after the last used one over active entries whose
/// account is usable, under its daily limit and under the bounce
/// threshold; else the sequence's own send account.
fn pick_mailbox(b: &mut Batch, sequence: &SequenceRow, now: i64) -> Result<i64, Wait> {
    let usable = |m: &Mailbox| match m.status.as_str() {
        "active" | "warming" => Ok(()),
        "error" => {
            let retry = m.updated_at + ERROR_RETRY_MS;
            if now >= retry {
                Ok(())
            } else {
                Err(Wait::Until(retry))
            }
        }
        _ => Err(Wait::Until(now + HOUR_MS)),
    };
    let pool = b.pools.get(&sequence.id).cloned().unwrap_or_default();
    if pool.is_empty() {
        let Some(m) = sequence.send_account_id.and_then(|id| b.mailboxes.get(&id)) else {
            return Err(Wait::Until(now + HOUR_MS));
        };
        usable(m)?;
        if m.sent_today >= m.daily_send_limit {
            return Err(Wait::NextDay);
        }
        let id = m.id;
        b.mailboxes.get_mut(&id).expect("present").sent_today += 1;
        return Ok(id);
    }
    let start = match b.rotation.get(&sequence.id) {
        Some(i) => i + 1,
        None => pool
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.last_used_at.map(|t| (t, i)))
            .max()
            .map_or(0, |(_, i)| i + 1),
    };
    let threshold = sequence.auto_pause_bounce_rate;
    let mut wait = Wait::NextDay;
    for k in 0..pool.len() {
        let index = (start + k) % pool.len();
        let entry = &pool[index];
        let Some(m) = b.mailboxes.get(&entry.send_account_id) else {
            continue;
        };
        if !entry.is_active {
            continue;
        }
        if let Err(w) = usable(m) {
            wait = earlier(wait, w);
            continue;
        }
        if m.sent_today >= m.daily_send_limit {
            continue;
        }
        let (sent, bounced) = b.bounces.get(&m.id).copied().unwrap_or_default();
        if threshold > 0.0
            && sent >= MIN_SENDS_FOR_RATE
            && bounced as f64 * 100.0 / sent as f64 > threshold
        {
            wait = earlier(wait, Wait::Until(now + HOUR_MS));
            continue;
        }
        let id = m.id;
        b.mailboxes.get_mut(&id).expect("present").sent_today += 1;
        b.rotation.insert(sequence.id, index);
        return Ok(id);
    }
    Err(wait)
}

fn earlier(a: Wait, b: Wait) -> Wait {
    match (a, b) {
        (Wait::Until(x), Wait::Until(y)) => Wait::Until(x.min(y)),
        (Wait::NextDay, w) | (w, Wait::NextDay) => w,
    }
}

/// Reserves an email step's send, or writes the wait.
#[allow(clippy::too_many_arguments)]
async fn plan_send(
    conn: &mut AnyConnection,
    sender: &Sender,
    b: &mut Batch,
    c: &Claimed,
    sequence: &SequenceRow,
    engine: &EngineSettings,
    step: &StepRow,
    existing: Option<MessageRow>,
    next_delay: Option<i64>,
    metadata: Map<String, Value>,
    now: i64,
) -> anyhow::Result<Option<Job>> {
    let zone = metadata
        .get("timezone")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let wait_until = |w: Wait| -> i64 {
        let at = match w {
            Wait::NextDay => (day_of(now) + 1) * DAY_MS,
            Wait::Until(t) => t,
        };
        engine
            .next_allowed(ms_to_datetime(at), zone.as_deref())
            .timestamp_millis()
    };
    let (message_row_id, message_id, send_account_id, variant, reserved_day) = match existing {
        // Sent before a crash, answer not recorded: the same message again,
        // on the reservation it already holds.
        Some(m) if m.status == "sending" => (
            m.id,
            m.message_id,
            m.send_account_id.unwrap_or_default(),
            m.variant,
            None,
        ),
        // New, or deferred (its reservation was released): reserve.
        previous => {
            let ramp = Ramp {
                warmup_enabled: sequence.warmup_enabled,
                daily_send_limit: sequence.daily_send_limit,
                start_volume: sequence.warmup_start_volume,
                increment: sequence.warmup_increment,
                started_at: sequence.warmup_started_at,
                paused_at: sequence.warmup_paused_at,
            };
            let sent = b.sent_today.entry(sequence.id).or_default();
            if *sent >= ramp.current_effective_limit(now) {
                let at = wait_until(Wait::NextDay);
                store::reschedule(conn, c.id, step.position, at, None, now).await?;
                return Ok(None);
            }
            let mailbox = match pick_mailbox(b, sequence, now) {
                Ok(id) => id,
                Err(w) => {
                    let at = wait_until(w);
                    store::reschedule(conn, c.id, step.position, at, None, now).await?;
                    return Ok(None);
                }
            };
            *b.sent_today.entry(sequence.id).or_default() += 1;
            match previous {
                Some(m) => {
                    store::requeue_message(conn, m.id, mailbox).await?;
                    (m.id, m.message_id, mailbox, m.variant, Some(b.today))
                }
                None => {
                    let from = &b.mailboxes[&mailbox].email;
                    let domain = from.rsplit_once('@').map_or("localhost", |(_, d)| d);
                    let message_id = sender.message_id(c.id, step.id, domain);
                    let variant = choose_variant(step, c.id).0;
                    // Written with the batch's others after the walk; the
                    // job's row id is filled in then.
                    b.new_messages.push(store::NewMessage {
                        account_id: c.account_id,
                        sequence_id: c.sequence_id,
                        enrollment_id: c.id,
                        step_id: step.id,
                        step_position: step.position,
                        send_account_id: mailbox,
                        variant: variant.clone(),
                        message_id: message_id.clone(),
                        to_email: c.contact_email.clone(),
                        at: now,
                    });
                    (0, message_id, mailbox, variant, Some(b.today))
                }
            }
        }
    };
    // A resend keeps the variant it was planned with.
    let (subject, body) = variant_content(step, variant.as_deref());
    let thread = b
        .messages
        .get(&c.id)
        .and_then(|m| m.iter().find(|m| m.step_id != step.id))
        .map(|m| (m.message_id.clone(), m.subject.clone().unwrap_or_default()));
    let mailbox = b.mailboxes.get(&send_account_id);
    let from_email = mailbox
        .map(|m| m.email.clone())
        .or_else(|| sequence.from_email.clone())
        .unwrap_or_default();
    let from_name = if sequence.send_account_id == Some(send_account_id) {
        sequence.from_name.clone()
    } else {
        None
    }
    .filter(|n| !n.trim().is_empty())
    .or_else(|| mailbox.and_then(|m| m.display_name.clone()));
    Ok(Some(Job {
        message_row_id,
        message_id,
        account_id: c.account_id,
        sequence_id: c.sequence_id,
        enrollment_id: c.id,
        step_id: step.id,
        variant,
        send_account_id,
        reserved_day,
        from_email,
        from_name,
        contact: Contact {
            email: c.contact_email.clone(),
            domain: c.domain.clone(),
            metadata,
        },
        subject_template: subject,
        body_template: body,
        thread,
        tracking: TrackingOptions {
            opens: engine.track_opens,
            clicks: engine.track_clicks,
            unsubscribe: sequence.enable_unsubscribe,
        },
        next_delay_ms: next_delay,
        enrichment: None,
    }))
}
