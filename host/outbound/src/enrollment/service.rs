//! The enroll rules of spec/1 in their order, and the enrollment
//! operations (list, pause, resume, delete).
//!
//! 1. The address must parse and must not be role-based (`rules`).
//! 2. Already live in this sequence, or suppressed: skipped.
//! 3. With verifier keys, each remaining address is verified through the
//!    chain (action type `sequence_enrollment`): invalid or undeliverable
//!    are skipped; risky, unknown and "every vendor failed" are enrolled.
//! 4. The insert skips an address another request holds (the partial
//!    unique index, see `store`).
//!
//! Suppression is looked up before the insert (for a large file, by reading
//! the account's list once). Without verifier keys, "already live" is left
//! to the insert, which skips it through the unique index; with keys it is
//! asked first, so that no verification is paid for a contact that would be
//! skipped anyway.

use std::collections::HashSet;

use futures::StreamExt;
use serde_json::Value;

use super::model::{
    EnrollRequest, EnrollResult, Enrollment, EnrollmentList, EnrollmentQuery, MAX_CONTACTS,
    STATUSES,
};
use super::rules;
use super::store::{self, EnrollmentRow, NewEnrollment};
use crate::sequences::service::owned;
use crate::sequences::store::{self as sequences, SequenceRow};
use crate::steps::store as steps;
use crate::suppression::{address::Target, store as suppression};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{one_of, within};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;
use outreach_vendors::vendor_keys::catalogue::Family;
use outreach_vendors::{Actor, VendorsExt};

/// Enroll requests per user per minute (spec/1 "Limits").
pub const ENROLL_PER_MINUTE: u32 = 10;
/// Verifications in flight for one request.
const VERIFY_CONCURRENCY: usize = 8;
/// Largest metadata object per contact, serialised.
const MAX_METADATA_BYTES: usize = 16 * 1024;

/// One contact as the caller gave it.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The address as written, for `skipped_emails`.
    pub original: String,
    /// The company domain, when given.
    pub domain: Option<String>,
    /// The metadata object as JSON text.
    pub metadata: String,
}

pub fn view(r: EnrollmentRow) -> Enrollment {
    Enrollment {
        id: r.id,
        sequence_id: r.sequence_id,
        domain: r.domain,
        contact_email: r.contact_email,
        metadata: serde_json::from_str(&r.metadata).unwrap_or(Value::Null),
        status: r.status,
        current_step: r.current_step,
        next_send_at: r.next_send_at.map(iso),
        lead_temperature: r.lead_temperature,
        engagement_score: r.engagement_score,
        goal_completed: r.goal_completed,
        goal_completed_at: r.goal_completed_at.map(iso),
        goal_metadata: r.goal_metadata.and_then(|m| serde_json::from_str(&m).ok()),
        enrolled_at: iso(r.enrolled_at),
        paused_at: r.paused_at.map(iso),
        updated_at: iso(r.updated_at),
    }
}

/// The sequence's most recent enrollments (sequence detail).
pub async fn recent(
    state: &AppState,
    sequence: &SequenceRow,
    limit: i64,
) -> ApiResult<Vec<Enrollment>> {
    let (rows, _) = store::list(&state.db, sequence.id, None, limit, 0).await?;
    Ok(rows.into_iter().map(view).collect())
}

/// The caller's sequence, after the per-user enroll limit.
pub async fn enroll_target(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SequenceRow> {
    let sequence = owned(state, caller, id).await?;
    state
        .limit_per_minute("enroll", &caller.user_key(), ENROLL_PER_MINUTE)
        .await?;
    Ok(sequence)
}

pub async fn enroll(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    body: EnrollRequest,
) -> ApiResult<EnrollResult> {
    if body.contacts.is_empty() || body.contacts.len() > MAX_CONTACTS {
        crate::sequences::service::gate(caller)?;
        return Err(ApiError::bad_request(format!(
            "contacts must hold 1 to {MAX_CONTACTS} contacts"
        )));
    }
    let mut candidates = Vec::with_capacity(body.contacts.len());
    for c in body.contacts {
        let metadata = Value::Object(c.metadata.unwrap_or_default()).to_string();
        check_metadata(&metadata)?;
        candidates.push(Candidate {
            original: c.contact_email,
            domain: Some(c.domain),
            metadata,
        });
    }
    let sequence = enroll_target(state, caller, sequence_id).await?;
    enroll_candidates(state, &Actor::from(caller), &sequence, candidates).await
}

/// A contact's metadata, serialised, within its size limit.
pub fn check_metadata(metadata: &str) -> ApiResult<()> {
    if metadata.len() > MAX_METADATA_BYTES {
        return Err(ApiError::bad_request(format!(
            "metadata must be at most {MAX_METADATA_BYTES} bytes per contact"
        )));
    }
    Ok(())
}

/// The domain for tokens: the given one when it is a domain, else the
/// address's.
fn token_domain(given: Option<&str>, address: &rules::Address) -> String {
    given
        .map(|d| d.trim().to_ascii_lowercase())
        .map(|d| d.trim_start_matches("www.").to_owned())
        .filter(|d| crate::suppression::address::parse(&format!("x@{d}")).is_some())
        .unwrap_or_else(|| address.domain.clone())
}

/// Applies the four rules to `candidates` and enrolls the rest in one
/// transaction, for `actor`'s account (its verifier keys and suppression
/// list; `sequence` is one of its own).
pub async fn enroll_candidates(
    state: &AppState,
    actor: &Actor,
    sequence: &SequenceRow,
    candidates: Vec<Candidate>,
) -> ApiResult<EnrollResult> {
    // (position in the request, address as written), reported in request order.
    let mut skipped: Vec<(usize, String)> = Vec::new();
    let mut seen = HashSet::with_capacity(candidates.len());
    // (position and spelling, row) of every contact that passed rule 1.
    let mut rows: Vec<((usize, String), NewEnrollment)> = Vec::with_capacity(candidates.len());
    for (i, c) in candidates.into_iter().enumerate() {
        match rules::check(&c.original) {
            Some(a) if seen.insert(a.email.clone()) => rows.push((
                (i, c.original),
                NewEnrollment {
                    domain: token_domain(c.domain.as_deref(), &a),
                    email: a.email,
                    metadata: c.metadata,
                    email_domain: a.domain,
                },
            )),
            _ => skipped.push((i, c.original)),
        }
    }
    let chain = match state
        .vendors()
        .chain(actor.account_id, Family::Verifier)
        .await
    {
        Ok(chain) => Some(chain),
        Err(ApiError::BadRequest(_)) => None,
        Err(e) => return Err(e),
    };
    // Rule 2: suppressed addresses always; live ones here only when rule 3
    // would pay to verify them (otherwise the insert skips them).
    let targets: Vec<Target> = rows
        .iter()
        .map(|(_, r)| Target {
            email: r.email.clone(),
            domain: r.email_domain.clone(),
        })
        .collect();
    let mut out: HashSet<String> = suppression::suppressed(&state.db, actor.account_id, &targets)
        .await?
        .into_iter()
        .collect();
    if chain.is_some() {
        let emails: Vec<String> = targets.into_iter().map(|t| t.email).collect();
        let mut conn = state.db.pool.acquire().await?;
        out.extend(store::live_among(&mut conn, state.db.backend, sequence.id, &emails).await?);
    }
    if !out.is_empty() {
        let (kept, dropped): (Vec<_>, Vec<_>) =
            rows.into_iter().partition(|(_, r)| !out.contains(&r.email));
        skipped.extend(dropped.into_iter().map(|(o, _)| o));
        rows = kept;
    }
    if let Some(chain) = &chain {
        let kept = std::mem::take(&mut rows);
        let vendors = state.vendors();
        let vendors = &vendors;
        let emails: Vec<String> = kept.iter().map(|(_, r)| r.email.clone()).collect();
        let verdicts: Vec<bool> = futures::stream::iter(emails)
            .map(|email| async move {
                match vendors
                    .verify_on(chain, actor, &email, "sequence_enrollment")
                    .await
                {
                    Ok(v) => !(v["status"] == "invalid" || v["deliverability"] == "undeliverable"),
                    // Every vendor failed: enroll (spec/1 rule 3).
                    Err(_) => true,
                }
            })
            .buffered(VERIFY_CONCURRENCY)
            .collect()
            .await;
        rows = Vec::with_capacity(kept.len());
        for (row, ok) in kept.into_iter().zip(verdicts) {
            if ok {
                rows.push(row);
            } else {
                skipped.push(row.0);
            }
        }
    }
    rows.sort_unstable_by(|a, b| a.1.email.cmp(&b.1.email));
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    if !sequences::touch(&mut tx, actor.account_id, sequence.id, now).await? {
        return Err(ApiError::not_found("Sequence"));
    }
    let next_send_at = now + steps::first_delay_ms(&mut tx, sequence.id).await?;
    // Rule 4: the touch above holds the sequence's lock, so what is live now
    // stays so until commit; a request that waited for it is skipped here.
    let emails: Vec<String> = rows.iter().map(|(_, r)| r.email.clone()).collect();
    let live = store::live_among(&mut tx, state.db.backend, sequence.id, &emails).await?;
    let (held, free): (Vec<_>, Vec<_>) =
        rows.into_iter().partition(|(_, r)| live.contains(&r.email));
    skipped.extend(held.into_iter().map(|(o, _)| o));
    let new: Vec<NewEnrollment> = free.into_iter().map(|(_, r)| r).collect();
    let enrolled = store::insert_many(
        &mut tx,
        state.db.backend,
        actor.account_id,
        sequence.id,
        &new,
        next_send_at,
        now,
    )
    .await?;
    if enrolled != new.len() as u64 {
        // Cannot happen while the touch serialises enrollment; refuse rather
        // than report contacts as enrolled that were not.
        return Err(ApiError::Internal(anyhow::anyhow!(
            "enroll inserted {enrolled} of {} rows under the sequence lock",
            new.len()
        )));
    }
    tx.commit().await?;
    skipped.sort_unstable_by_key(|(i, _)| *i);
    Ok(EnrollResult {
        enrolled,
        skipped: skipped.len() as u64,
        skipped_emails: skipped.into_iter().map(|(_, e)| e).collect(),
        total_in_file: None,
    })
}

pub async fn list(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    q: EnrollmentQuery,
) -> ApiResult<EnrollmentList> {
    let sequence = owned(state, caller, sequence_id).await?;
    if let Some(s) = &q.status {
        one_of("status", s, &STATUSES)?;
    }
    let limit = within("limit", q.limit.unwrap_or(50), 1..=500)?;
    let offset = within("offset", q.offset.unwrap_or(0), 0..=100_000)?;
    let (rows, total) =
        store::list(&state.db, sequence.id, q.status.as_deref(), limit, offset).await?;
    Ok(EnrollmentList {
        enrollments: rows.into_iter().map(view).collect(),
        total,
        limit,
        offset,
    })
}

async fn get(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    id: i64,
) -> ApiResult<EnrollmentRow> {
    owned(state, caller, sequence_id).await?;
    store::get(&state.db, caller.account_id, sequence_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("Enrollment"))
}

/// active -> paused: sends halt for this contact only.
pub async fn pause(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    id: i64,
) -> ApiResult<Enrollment> {
    let e = get(state, caller, sequence_id, id).await?;
    let now = state.clock.now_ms();
    if !store::transition(
        &state.db,
        e.id,
        "active",
        "paused",
        Some(now),
        e.next_send_at,
        now,
    )
    .await?
    {
        return Err(ApiError::bad_request(format!(
            "Only an active enrollment can be paused (this one is {})",
            e.status
        )));
    }
    Ok(view(get(state, caller, sequence_id, id).await?))
}

/// paused -> active at the same step; a step that fell due while paused is
/// due at once.
pub async fn resume(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    id: i64,
) -> ApiResult<Enrollment> {
    let e = get(state, caller, sequence_id, id).await?;
    let now = state.clock.now_ms();
    let due = e.next_send_at.map(|t| t.max(now));
    if !store::transition(&state.db, e.id, "paused", "active", None, due, now).await? {
        return Err(ApiError::bad_request(format!(
            "Only a paused enrollment can be resumed (this one is {})",
            e.status
        )));
    }
    Ok(view(get(state, caller, sequence_id, id).await?))
}

pub async fn delete(state: &AppState, caller: &Caller, sequence_id: i64, id: i64) -> ApiResult<()> {
    owned(state, caller, sequence_id).await?;
    if store::delete(&state.db, caller.account_id, sequence_id, id).await? {
        Ok(())
    } else {
        Err(ApiError::not_found("Enrollment"))
    }
}
