//! Rules of the thread API (spec/1 "Inbox"): the filters, the status
//! moves, manual classification overrides, assignment, bulk actions and
//! reclassification. Decisions where the spec is silent:
//!
//! - **Snoozed threads.** A thread whose snooze window elapsed shows
//!   `status: "open"` (its `snoozed_until` stays as it was) and is counted
//!   and listed as open; `status=snoozed` means snoozed and still asleep.
//!   A thread snoozed without a time (none is written by the API) is open.
//! - **Counts.** Threads without a classification yet (new, or held as
//!   suspected spoofing) are in no `by_classification` group, but in
//!   `by_status` and `total`.
//! - **Update.** `snooze_hours` alone implies `status: snoozed`; with
//!   `status` open or handled it is 400, and `status: snoozed` needs it.
//!   `assigned_to_user_id` and `notes` take `null` to clear them; the
//!   assignee must be a user of the account (400 otherwise). Notes are up
//!   to 10,000 characters. An empty body changes nothing.
//! - **Overrides.** `classification_override` (and bulk
//!   `mark_classification`) stamps `manually_overridden_to` on the thread's
//!   latest reply; the thread shows the label with confidence 1.0, and so
//!   does the reply's classification object (its `label` stays the
//!   classifier's). An override to `interested` marks the reply's
//!   enrollment hot; no other effect is replayed (effects apply once, when
//!   the classifier first labels the reply).
//! - **Bulk.** Repeated ids count once; ids of other accounts or unknown
//!   ids are left out silently; `thread_ids` lists the updated threads in
//!   ascending order. Fields that the action does not use are ignored.
//! - **Reclassify.** Replies held as suspected spoofing stay deferred and
//!   are counted neither as queued nor as preserved; a thread keeps its
//!   label until the worker relabels its replies.
//! - **Filters.** An empty `status`, `classification` or `domain` is no
//!   filter; `domain` matches exactly, case-insensitively; `assigned_to`
//!   below 0 is 400.

/// The constants, bodies, queries and responses (`service/model.rs`).
mod model;

pub use model::*;

use super::CLASSIFY_INTERVAL_SECS;
use super::store::{self, Filter, ReplyRow, ThreadRow};
use outreach_core::accounts::plans::Plan;
use outreach_core::accounts::service::is_member;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{one_of, within};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;
use outreach_core::store::{Arg, Args};

/// The inbox belongs to sequences, which are Starter+.
pub fn gate(caller: &Caller) -> ApiResult<()> {
    caller.require(Plan::Starter)
}

/// The status a thread shows at `now` (an elapsed snooze is open).
pub fn effective_status(r: &ThreadRow, now: i64) -> String {
    if r.status == "snoozed" && r.snoozed_until.is_none_or(|t| t <= now) {
        "open".to_owned()
    } else {
        r.status.clone()
    }
}

pub fn view(r: ThreadRow, now: i64) -> Thread {
    Thread {
        status: effective_status(&r, now),
        id: r.id,
        thread_id: r.thread_id,
        domain: r.domain,
        contact_email: r.contact_email,
        subject: r.subject,
        last_received_at: iso(r.last_received_at),
        last_classification: r.last_classification,
        last_classification_confidence: r.last_classification_confidence,
        message_count: r.message_count,
        assigned_to_user_id: r.assigned_to_user_id,
        notes: r.notes,
        snoozed_until: r.snoozed_until.map(iso),
        created_at: iso(r.created_at),
        updated_at: iso(r.updated_at),
    }
}

fn reply_view(r: ReplyRow) -> Reply {
    let confidence = if r.overridden_to.is_some() {
        Some(1.0)
    } else {
        r.confidence
    };
    Reply {
        id: r.id,
        from_email: r.from_email,
        from_name: r.from_name,
        subject: r.subject,
        body_text: r.body_text,
        received_at: iso(r.received_at),
        message_id: r.message_id,
        in_reply_to: r.in_reply_to,
        domain: r.domain,
        sequence_step_id: r.sequence_step_id,
        classification: ReplyClassification {
            label: r.label,
            confidence,
            manually_overridden_to: r.overridden_to,
            model: r.model,
            provider: r.provider,
            classified_at: r.classified_at.map(iso),
        },
        kind: r.kind,
        spoofing_suspected: r.spoofing_suspected,
    }
}

/// A non-empty query value, trimmed.
fn given(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

fn filter(
    status: Option<String>,
    classification: Option<String>,
    assigned_to: Option<i64>,
    domain: Option<String>,
) -> ApiResult<Filter> {
    let status = given(status);
    if let Some(s) = &status {
        one_of("status", s, &STATUSES)?;
    }
    let classification = given(classification);
    if let Some(c) = &classification {
        one_of("classification", c, &CLASSIFICATIONS)?;
    }
    let assigned_to = match assigned_to {
        None => None,
        Some(0) => Some(None),
        Some(u) if u > 0 => Some(Some(u)),
        Some(_) => {
            return Err(ApiError::bad_request(
                "assigned_to must be a user id, or 0 for unassigned",
            ));
        }
    };
    Ok(Filter {
        status,
        classification,
        assigned_to,
        domain: given(domain).map(|d| d.to_lowercase()),
    })
}

pub async fn list(state: &AppState, caller: &Caller, q: ThreadQuery) -> ApiResult<ThreadList> {
    gate(caller)?;
    let limit = within("limit", q.limit.unwrap_or(50), 1..=200)?;
    let offset = within("offset", q.offset.unwrap_or(0), 0..=10_000)?;
    let f = filter(q.status, q.classification, q.assigned_to, q.domain)?;
    let now = state.clock.now_ms();
    let (rows, total) = store::list(&state.db, caller.account_id, &f, now, limit, offset).await?;
    Ok(ThreadList {
        total,
        limit,
        offset,
        items: rows.into_iter().map(|r| view(r, now)).collect(),
    })
}

pub async fn counts(state: &AppState, caller: &Caller, q: CountsQuery) -> ApiResult<ThreadCounts> {
    gate(caller)?;
    let f = filter(q.status, q.classification, q.assigned_to, q.domain)?;
    let (statuses, labels) =
        store::counts(&state.db, caller.account_id, &f, state.clock.now_ms()).await?;
    let mut by_status = StatusCounts::default();
    for (status, n) in statuses {
        match status.as_str() {
            "open" => by_status.open += n,
            "handled" => by_status.handled += n,
            "snoozed" => by_status.snoozed += n,
            _ => {}
        }
    }
    let mut c = ClassificationCounts::default();
    for (label, n) in labels {
        match label.as_str() {
            "interested" => c.interested += n,
            "not_now" => c.not_now += n,
            "ooo" => c.ooo += n,
            "objection" => c.objection += n,
            "unsubscribe" => c.unsubscribe += n,
            "bounce" => c.bounce += n,
            "other" => c.other += n,
            _ => {}
        }
    }
    // The status facet applies every other filter, so the total is its
    // group (or its sum without a status filter).
    let total = match f.status.as_deref() {
        Some("open") => by_status.open,
        Some("handled") => by_status.handled,
        Some("snoozed") => by_status.snoozed,
        _ => by_status.open + by_status.handled + by_status.snoozed,
    };
    Ok(ThreadCounts {
        by_status,
        by_classification: c,
        total,
    })
}

/// The caller's thread, or 404.
pub async fn owned(state: &AppState, caller: &Caller, id: i64) -> ApiResult<ThreadRow> {
    gate(caller)?;
    store::get(&state.db, caller.account_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("thread"))
}

pub async fn detail(state: &AppState, caller: &Caller, id: i64) -> ApiResult<ThreadDetail> {
    let row = owned(state, caller, id).await?;
    let replies = store::replies(&state.db, caller.account_id, row.id).await?;
    Ok(ThreadDetail {
        thread: view(row, state.clock.now_ms()),
        replies: replies.into_iter().map(reply_view).collect(),
    })
}

/// 400 unless `user` is a user of the caller's account.
async fn assignee(state: &AppState, caller: &Caller, user: Option<i64>) -> ApiResult<()> {
    match user {
        Some(u) if !is_member(state, caller.account_id, u).await? => Err(ApiError::bad_request(
            "assigned_to_user_id must be a member of the account's organisation",
        )),
        _ => Ok(()),
    }
}

/// `status` and `snoozed_until` (set for a snooze, cleared otherwise).
fn status_sets(args: &mut Args, sets: &mut Vec<String>, status: &str, until: Option<i64>) {
    sets.push(format!(
        "status = {}",
        args.push(Arg::Text(status.to_owned()))
    ));
    sets.push(format!("snoozed_until = {}", args.push(Arg::OptInt(until))));
}

pub async fn update(
    state: &AppState,
    caller: &Caller,
    id: i64,
    body: UpdateThread,
) -> ApiResult<Thread> {
    gate(caller)?;
    if let Some(s) = &body.status {
        one_of("status", s, &STATUSES)?;
    }
    if let Some(c) = &body.classification_override {
        one_of("classification_override", c, &CLASSIFICATIONS)?;
    }
    let snooze = match (body.status.as_deref(), body.snooze_hours) {
        (Some("snoozed") | None, Some(h)) => Some(within("snooze_hours", h, SNOOZE_HOURS)?),
        (Some("snoozed"), None) => {
            return Err(ApiError::bad_request(
                "status snoozed needs snooze_hours (1-720)",
            ));
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "snooze_hours goes with status snoozed",
            ));
        }
        (_, None) => None,
    };
    if let Some(Some(n)) = &body.notes
        && n.chars().count() > MAX_NOTES
    {
        return Err(ApiError::bad_request(format!(
            "notes must be at most {MAX_NOTES} characters"
        )));
    }
    let now = state.clock.now_ms();
    let mut args = Args::default();
    let mut sets = Vec::new();
    match (snooze, body.status.as_deref()) {
        (Some(h), _) => status_sets(&mut args, &mut sets, "snoozed", Some(now + h * HOUR_MS)),
        (None, Some(s)) => status_sets(&mut args, &mut sets, s, None),
        (None, None) => {}
    }
    if let Some(user) = body.assigned_to_user_id {
        sets.push(format!(
            "assigned_to_user_id = {}",
            args.push(Arg::OptInt(user))
        ));
    }
    if let Some(notes) = body.notes {
        sets.push(format!("notes = {}", args.push(Arg::OptText(notes))));
    }

    if let Some(user) = body.assigned_to_user_id {
        assignee(state, caller, user).await?;
    }
    let account = caller.account_id;
    if sets.is_empty() && body.classification_override.is_none() {
        return Ok(view(owned(state, caller, id).await?, now));
    }
    let mut tx = state.db.pool.begin().await?;
    if store::touch(&mut tx, account, &[id], now).await?.is_empty() {
        return Err(ApiError::not_found("thread"));
    }
    if !sets.is_empty() {
        store::set_threads(&mut tx, account, &[id], args, sets, now).await?;
    }
    if let Some(label) = &body.classification_override {
        override_labels(&mut tx, account, &[id], label, now).await?;
    }
    tx.commit().await?;
    let row = store::get(&state.db, account, id)
        .await?
        .ok_or_else(|| ApiError::not_found("thread"))?;
    Ok(view(row, now))
}

/// Stamps the override on the threads' latest replies; `interested` marks
/// their enrollments hot.
async fn override_labels(
    conn: &mut sqlx::AnyConnection,
    account_id: i64,
    ids: &[i64],
    label: &str,
    now: i64,
) -> ApiResult<()> {
    let enrollments = store::override_latest(conn, account_id, ids, label, now).await?;
    if label == "interested" {
        store::mark_hot(conn, account_id, &enrollments, now).await?;
    }
    Ok(())
}

/// 1-500 ids, deduplicated.
fn thread_ids(ids: &[i64]) -> ApiResult<Vec<i64>> {
    if ids.is_empty() || ids.len() > MAX_BULK {
        return Err(ApiError::bad_request(format!(
            "thread_ids must hold 1 to {MAX_BULK} ids"
        )));
    }
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

pub async fn bulk(state: &AppState, caller: &Caller, body: BulkRequest) -> ApiResult<BulkResult> {
    gate(caller)?;
    let ids = thread_ids(&body.thread_ids)?;
    one_of("action", &body.action, &BULK_ACTIONS)?;
    let now = state.clock.now_ms();
    let mut args = Args::default();
    let mut sets = Vec::new();
    let mut label = None;
    match body.action.as_str() {
        "mark_handled" => status_sets(&mut args, &mut sets, "handled", None),
        "reopen" => status_sets(&mut args, &mut sets, "open", None),
        "snooze" => {
            let h = body
                .snooze_hours
                .ok_or_else(|| ApiError::bad_request("snooze needs snooze_hours (1-720)"))?;
            let h = within("snooze_hours", h, SNOOZE_HOURS)?;
            status_sets(&mut args, &mut sets, "snoozed", Some(now + h * HOUR_MS));
        }
        "assign" => {
            let user = body.assigned_to_user_id.ok_or_else(|| {
                ApiError::bad_request(
                    "assign needs assigned_to_user_id (a member's id, or null to unassign)",
                )
            })?;
            assignee(state, caller, user).await?;
            sets.push(format!(
                "assigned_to_user_id = {}",
                args.push(Arg::OptInt(user))
            ));
        }
        _ => {
            let c = body
                .classification
                .as_deref()
                .ok_or_else(|| ApiError::bad_request("mark_classification needs classification"))?;
            one_of("classification", c, &CLASSIFICATIONS)?;
            label = Some(c.to_owned());
        }
    }
    let account = caller.account_id;
    let mut tx = state.db.pool.begin().await?;
    let owned = store::touch(&mut tx, account, &ids, now).await?;
    match &label {
        Some(label) => override_labels(&mut tx, account, &owned, label, now).await?,
        None => {
            store::set_threads(&mut tx, account, &owned, args, sets, now).await?;
        }
    }
    tx.commit().await?;
    Ok(BulkResult {
        updated: owned.len() as u64,
        thread_ids: owned,
    })
}

pub async fn reclassify(
    state: &AppState,
    caller: &Caller,
    body: ReclassifyRequest,
) -> ApiResult<ReclassifyResult> {
    gate(caller)?;
    let ids = thread_ids(&body.thread_ids)?;
    let owned = {
        let mut conn = state.db.pool.acquire().await?;
        store::owned_ids(&mut conn, caller.account_id, &ids).await?
    };
    let (queued, preserved_overrides) =
        store::clear_classifications(&state.db, caller.account_id, &owned).await?;
    Ok(ReclassifyResult {
        queued,
        preserved_overrides,
        thread_ids: owned,
        next_run_within_seconds: CLASSIFY_INTERVAL_SECS,
    })
}
