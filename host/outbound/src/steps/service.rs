//! Rules of spec/1 "Step": types, delays, A/B and multivariate fields,
//! conditions on earlier steps, and contiguous positions.
//!
//! Every change runs in one transaction that starts by touching the
//! sequence row: that write locks the sequence (PostgreSQL row lock,
//! SQLite's writer lock), so concurrent step edits of one sequence queue up
//! and positions stay contiguous.

use std::collections::{HashMap, HashSet};

use sqlx::AnyConnection;

use super::model::{CONDITION_TYPES, MAX_STEPS, STEP_TYPES, Step, StepInput, Variant};
use super::store::{self, StepRow};
use crate::sequences::service::owned;
use crate::sequences::store as sequences;
use crate::sequences::store::SequenceRow;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{one_of, within};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// Largest subject and body accepted.
const MAX_SUBJECT_CHARS: usize = 1000;
const MAX_BODY_BYTES: usize = 512 * 1024;

pub fn view(s: StepRow) -> Step {
    Step {
        id: s.id,
        sequence_id: s.sequence_id,
        position: s.position,
        step_type: s.step_type,
        delay_days: s.delay_days,
        delay_hours: s.delay_hours,
        subject: s.subject,
        body_html: s.body_html,
        variant_b_subject: s.variant_b_subject,
        variant_b_body_html: s.variant_b_body_html,
        ab_test_enabled: s.ab_test_enabled,
        ab_winner: s.ab_winner,
        condition_type: s.condition_type,
        condition_step_id: s.condition_step_id,
        variants: s.variants,
        created_at: iso(s.created_at),
        updated_at: iso(s.updated_at),
    }
}

pub async fn list_of(state: &AppState, sequence: &SequenceRow) -> ApiResult<Vec<Step>> {
    let mut conn = state.db.pool.acquire().await?;
    Ok(store::list(&mut conn, sequence.id)
        .await?
        .into_iter()
        .map(view)
        .collect())
}

pub async fn list(state: &AppState, caller: &Caller, sequence_id: i64) -> ApiResult<Vec<Step>> {
    let sequence = owned(state, caller, sequence_id).await?;
    list_of(state, &sequence).await
}

fn apply(s: &mut StepRow, input: StepInput) -> ApiResult<()> {
    if let Some(t) = input.step_type {
        s.step_type = t;
    }
    if let Some(d) = input.delay_days {
        s.delay_days = within("delay_days", d, 0..=3650)?;
    }
    if let Some(h) = input.delay_hours {
        s.delay_hours = within("delay_hours", h, 0..=23)?;
    }
    let set = |field: &mut Option<String>, v: Option<Option<String>>| {
        if let Some(v) = v {
            *field = v;
        }
    };
    set(&mut s.subject, input.subject);
    set(&mut s.body_html, input.body_html);
    set(&mut s.variant_b_subject, input.variant_b_subject);
    set(&mut s.variant_b_body_html, input.variant_b_body_html);
    set(&mut s.condition_type, input.condition_type);
    if let Some(v) = input.ab_test_enabled {
        s.ab_test_enabled = v;
    }
    if let Some(c) = input.condition_step_id {
        s.condition_step_id = c;
    }
    if let Some(v) = input.variants {
        s.variants = v;
    }
    Ok(())
}

fn filled(v: &Option<String>) -> bool {
    v.as_deref().is_some_and(|t| !t.trim().is_empty())
}

fn check_text(field: &str, v: Option<&str>, chars: bool) -> ApiResult<()> {
    let Some(v) = v else { return Ok(()) };
    let (n, max) = if chars {
        (v.chars().count(), MAX_SUBJECT_CHARS)
    } else {
        (v.len(), MAX_BODY_BYTES)
    };
    if n > max {
        let unit = if chars { "characters" } else { "bytes" };
        return Err(ApiError::bad_request(format!(
            "{field} must be at most {max} {unit}"
        )));
    }
    Ok(())
}

fn check_variants(variants: &[Variant]) -> ApiResult<()> {
    if !(2..=10).contains(&variants.len()) {
        return Err(ApiError::bad_request("variants must hold 2 to 10 variants"));
    }
    let mut labels = HashSet::new();
    for v in variants {
        let label = v.label.trim();
        if label.is_empty() || label.chars().count() > 50 || !labels.insert(label.to_owned()) {
            return Err(ApiError::bad_request(
                "variant labels must be unique and 1-50 characters",
            ));
        }
        if v.subject.trim().is_empty() || v.body_html.trim().is_empty() {
            return Err(ApiError::bad_request(
                "every variant needs a subject and a body_html",
            ));
        }
        check_text("variant subject", Some(&v.subject), true)?;
        check_text("variant body_html", Some(&v.body_html), false)?;
        within("variant weight", v.weight, 0..=100)?;
    }
    if variants.iter().map(|v| v.weight).sum::<i64>() != 100 {
        return Err(ApiError::bad_request("variant weights must sum to 100"));
    }
    Ok(())
}

/// Checks one step's own fields.
fn check(s: &StepRow) -> ApiResult<()> {
    one_of("step_type", &s.step_type, &STEP_TYPES)?;
    check_text("subject", s.subject.as_deref(), true)?;
    check_text("variant_b_subject", s.variant_b_subject.as_deref(), true)?;
    check_text("body_html", s.body_html.as_deref(), false)?;
    check_text(
        "variant_b_body_html",
        s.variant_b_body_html.as_deref(),
        false,
    )?;
    let email = s.step_type == "email";
    // An empty subject is allowed on a follow-up, sent as a reply in the
    // thread (`Re: <first subject>`); the first email step needs one
    // (`check_first_subject`, which sees the step's place).
    if email && !filled(&s.body_html) {
        return Err(ApiError::bad_request("email steps need a body_html"));
    }
    if s.ab_test_enabled {
        if !email || !(filled(&s.variant_b_subject) || filled(&s.variant_b_body_html)) {
            return Err(ApiError::bad_request(
                "ab_test_enabled needs an email step with variant_b_subject or variant_b_body_html",
            ));
        }
        if s.variants.is_some() {
            return Err(ApiError::bad_request(
                "a step runs either an A/B test or variants, not both",
            ));
        }
    }
    if let Some(v) = &s.variants {
        if !email {
            return Err(ApiError::bad_request("only email steps have variants"));
        }
        check_variants(v)?;
    }
    match (&s.condition_type, s.condition_step_id) {
        (None, None) => Ok(()),
        (Some(t), Some(_)) => one_of("condition_type", t, &CONDITION_TYPES),
        _ => Err(ApiError::bad_request(
            "condition_type and condition_step_id go together",
        )),
    }
}

/// Checks that every condition in `order` (step ids, first to last) points
/// at an earlier step of the same sequence.
fn check_conditions(order: &[i64], steps: &HashMap<i64, &StepRow>) -> ApiResult<()> {
    for (i, id) in order.iter().enumerate() {
        let Some(target) = steps[id].condition_step_id else {
            continue;
        };
        if !order[..i].contains(&target) {
            return Err(ApiError::bad_request(
                "condition_step_id must be an earlier step of the same sequence",
            ));
        }
    }
    Ok(())
}

/// The detail of a first email step without a subject.
pub const FIRST_SUBJECT_NEEDED: &str = "The first email step of a sequence needs a subject \
     (later email steps may leave it empty to reply in the thread)";

/// The first email step in `order` has a subject: follow-ups without one
/// are sent as `Re: <first subject>`, but the first message has nothing to
/// reply to and would go out as `(no subject)`.
fn check_first_subject(order: &[i64], steps: &HashMap<i64, &StepRow>) -> ApiResult<()> {
    let first = order
        .iter()
        .map(|id| steps[id])
        .find(|s| s.step_type == "email");
    match first {
        Some(s) if !filled(&s.subject) => Err(ApiError::bad_request(FIRST_SUBJECT_NEEDED)),
        _ => Ok(()),
    }
}

/// What activation needs of the stored steps, read once: a step that is not
/// a delay (spec/1 "actionable"), and a subject on the first email step.
pub async fn check_activatable(state: &AppState, sequence_id: i64) -> ApiResult<()> {
    let mut conn = state.db.pool.acquire().await?;
    let steps = store::list(&mut conn, sequence_id).await?;
    if steps.iter().all(|s| s.step_type == "delay") {
        return Err(ApiError::bad_request(
            "Sequence has no actionable steps: add a step that is not a delay",
        ));
    }
    let order: Vec<i64> = steps.iter().map(|s| s.id).collect();
    let by_id: HashMap<i64, &StepRow> = steps.iter().map(|s| (s.id, s)).collect();
    check_first_subject(&order, &by_id)
}

/// Opens the transaction of a step change: touches the sequence (404 when
/// it is not the caller's) and loads its steps.
async fn begin(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
) -> ApiResult<(sqlx::Transaction<'static, sqlx::Any>, Vec<StepRow>)> {
    crate::sequences::service::gate(caller)?;
    let mut tx = state.db.pool.begin().await?;
    if !sequences::touch(
        &mut tx,
        caller.account_id,
        sequence_id,
        state.clock.now_ms(),
    )
    .await?
    {
        return Err(ApiError::not_found("Sequence"));
    }
    let steps = store::list(&mut tx, sequence_id).await?;
    Ok((tx, steps))
}

/// Writes the positions of `order` where they changed (ids not in `steps`,
/// such as a step about to be inserted, are skipped).
async fn repack(conn: &mut AnyConnection, order: &[i64], steps: &[StepRow]) -> ApiResult<()> {
    for (i, id) in order.iter().enumerate() {
        let position = i as i64 + 1;
        if steps.iter().any(|s| s.id == *id && s.position != position) {
            store::set_position(&mut *conn, *id, position).await?;
        }
    }
    Ok(())
}

fn place(position: Option<i64>, last: usize) -> ApiResult<usize> {
    match position {
        None => Ok(last),
        Some(p) => Ok(within("position", p, 1..=last as i64)? as usize),
    }
}

pub async fn create(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    input: StepInput,
) -> ApiResult<Step> {
    let (mut tx, steps) = begin(state, caller, sequence_id).await?;
    if steps.len() >= MAX_STEPS {
        return Err(ApiError::bad_request(format!(
            "a sequence holds at most {MAX_STEPS} steps"
        )));
    }
    let position = place(input.position, steps.len() + 1)?;
    let mut step = StepRow {
        account_id: caller.account_id,
        sequence_id,
        step_type: "email".into(),
        position: position as i64,
        ..StepRow::default()
    };
    apply(&mut step, input)?;
    check(&step)?;
    let mut order: Vec<i64> = steps.iter().map(|s| s.id).collect();
    order.insert(position - 1, 0);
    let mut by_id: HashMap<i64, &StepRow> = steps.iter().map(|s| (s.id, s)).collect();
    by_id.insert(0, &step);
    check_conditions(&order, &by_id)?;
    check_first_subject(&order, &by_id)?;
    // Make room: the steps from `position` on move down one (the new step,
    // id 0 in `order`, is written below).
    repack(&mut tx, &order, &steps).await?;
    store::shift_enrollments(&mut tx, sequence_id, position as i64, 1).await?;
    let now = state.clock.now_ms();
    let id = store::insert(&mut tx, &step, now).await?;
    tx.commit().await?;
    step.id = id;
    step.created_at = now;
    step.updated_at = now;
    Ok(view(step))
}

pub async fn update(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    step_id: i64,
    input: StepInput,
) -> ApiResult<Step> {
    let (mut tx, steps) = begin(state, caller, sequence_id).await?;
    let mut step = steps
        .iter()
        .find(|s| s.id == step_id)
        .cloned()
        .ok_or_else(|| ApiError::not_found("Step"))?;
    let target = place(input.position, steps.len())?;
    apply(&mut step, input)?;
    check(&step)?;
    let mut order: Vec<i64> = steps
        .iter()
        .map(|s| s.id)
        .filter(|id| *id != step_id)
        .collect();
    order.insert(target - 1, step_id);
    let mut by_id: HashMap<i64, &StepRow> = steps.iter().map(|s| (s.id, s)).collect();
    by_id.insert(step_id, &step);
    check_conditions(&order, &by_id)?;
    check_first_subject(&order, &by_id)?;
    repack(&mut tx, &order, &steps).await?;
    step.position = target as i64;
    let now = state.clock.now_ms();
    store::update(&mut tx, &step, now).await?;
    tx.commit().await?;
    step.updated_at = now;
    Ok(view(step))
}

/// Deletes a step: later steps move up, conditions that checked it are
/// dropped, and contacts waiting on a later step keep waiting on it. A
/// deletion that would leave the first email step without a subject is
/// refused.
pub async fn delete(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    step_id: i64,
) -> ApiResult<()> {
    let (mut tx, steps) = begin(state, caller, sequence_id).await?;
    let step = steps
        .iter()
        .find(|s| s.id == step_id)
        .ok_or_else(|| ApiError::not_found("Step"))?;
    let order: Vec<i64> = steps
        .iter()
        .map(|s| s.id)
        .filter(|id| *id != step_id)
        .collect();
    // Deleting the first email step moves the next one into its place.
    let by_id: HashMap<i64, &StepRow> = steps.iter().map(|s| (s.id, s)).collect();
    check_first_subject(&order, &by_id)?;
    store::delete(&mut tx, step_id, state.clock.now_ms()).await?;
    repack(&mut tx, &order, &steps).await?;
    store::shift_enrollments(&mut tx, sequence_id, step.position, -1).await?;
    tx.commit().await?;
    Ok(())
}
