//! Rules of spec/3 "Sequence warmup": the dashboard and its formulas, the
//! presets, adjust with its ranges, and the phase moves pause, resume and
//! reset.

use super::model::{
    AdjustInput, ChartDay, PresetInput, WarmupDashboard, WarmupSettings, WarmupState,
};
use super::ramp::Ramp;
use super::store;
use crate::sequence_events::day_of;
use crate::sequences::service::owned;
use crate::sequences::store::SequenceRow;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::within;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

pub const DAY_MS: i64 = 86_400_000;

/// Days the dashboard's window covers: today and the 29 before it.
pub const WINDOW_DAYS: i64 = 30;

/// spec/3's presets: (name, start_volume, increment per day, daily_limit).
pub const PRESETS: [(&str, i64, i64, i64); 3] = [
    ("conservative", 5, 2, 30),
    ("moderate", 10, 5, 50),
    ("aggressive", 25, 10, 200),
];

/// The preset names a request may give (`custom` keeps the values).
pub const PRESET_NAMES: [&str; 4] = ["conservative", "moderate", "aggressive", "custom"];

pub fn ramp_of(s: &SequenceRow) -> Ramp {
    Ramp {
        warmup_enabled: s.warmup_enabled,
        daily_send_limit: s.daily_send_limit,
        start_volume: s.warmup_start_volume,
        increment: s.warmup_increment,
        started_at: s.warmup_started_at,
        paused_at: s.warmup_paused_at,
    }
}

/// The phase of spec/3's state table, in this order: no start is
/// not_started, a pause stamp is paused, a cap at the daily limit is
/// at_limit, anything else is ramping.
pub fn phase(s: &SequenceRow, now: i64) -> &'static str {
    if s.warmup_started_at.is_none() {
        "not_started"
    } else if s.warmup_paused_at.is_some() {
        "paused"
    } else if ramp_of(s).current_effective_limit(now) >= s.daily_send_limit {
        "at_limit"
    } else {
        "ramping"
    }
}

/// One decimal, as spec/1's rates.
pub fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// `100 - bounce_rate x 5 - complaint_rate x 20`, rates in percent, clamped
/// to 0-100 (spec/3).
pub fn reputation_formula(bounce_rate: f64, complaint_rate: f64) -> f64 {
    round1((100.0 - bounce_rate * 5.0 - complaint_rate * 20.0).clamp(0.0, 100.0))
}

/// A heuristic inbox rate: the share of sent mail that did not bounce,
/// scaled by the reputation estimate.
pub fn inbox_rate(bounce_rate: f64, reputation: f64) -> f64 {
    round1(((100.0 - bounce_rate) * reputation / 100.0).clamp(0.0, 100.0))
}

/// `part / whole` in percent (0 when `whole` is 0), capped at 100: bounces
/// and complaints of a window may belong to mail sent before it.
pub fn pct(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        0.0
    } else {
        (part as f64 * 100.0 / whole as f64).min(100.0)
    }
}

/// `YYYY-MM-DD` of a UTC day number.
pub fn date_of(day: i64) -> String {
    chrono::DateTime::from_timestamp(day * 86_400, 0)
        .map(|d| d.date_naive().to_string())
        .unwrap_or_default()
}

pub async fn dashboard(state: &AppState, caller: &Caller, id: i64) -> ApiResult<WarmupDashboard> {
    let s = owned(state, caller, id).await?;
    dashboard_of(state, &s).await
}

/// The dashboard of a sequence already checked to be the caller's.
pub async fn dashboard_of(state: &AppState, s: &SequenceRow) -> ApiResult<WarmupDashboard> {
    let now = state.clock.now_ms();
    let today = day_of(now);
    let first = today - (WINDOW_DAYS - 1);
    let rows = store::days(&state.db, s.account_id, s.id, first, today).await?;
    let (delivered, opened) =
        store::delivered_and_opened(&state.db, s.account_id, s.id, first * DAY_MS).await?;
    let (sent, bounced, complaints) = rows.iter().fold((0, 0, 0), |t, r| {
        (t.0 + r.sent, t.1 + r.bounced, t.2 + r.complaints)
    });
    let bounce_rate = pct(bounced, sent);
    let reputation = reputation_formula(bounce_rate, pct(complaints, sent));
    // Every day of the window, quiet days as zeros, so a chart has an even axis.
    let chart = (first..=today)
        .map(|day| {
            let row = rows.iter().find(|r| r.day == day);
            ChartDay {
                date: date_of(day),
                sent_count: row.map_or(0, |r| r.sent),
                bounce_count: row.map_or(0, |r| r.bounced),
                complaint_count: row.map_or(0, |r| r.complaints),
                effective_limit: row.and_then(|r| r.effective_limit),
            }
        })
        .collect();
    let ramp = ramp_of(s);
    let limit = ramp.current_effective_limit(now);
    Ok(WarmupDashboard {
        warmup_enabled: s.warmup_enabled,
        warmup_started_at: s.warmup_started_at.map(iso),
        warmup_paused_at: s.warmup_paused_at.map(iso),
        warmup_start_volume: s.warmup_start_volume,
        warmup_increment: s.warmup_increment,
        daily_send_limit: s.daily_send_limit,
        current_effective_limit: limit,
        days_since_start: ramp.days_since_start(now),
        days_until_full_volume: ramp.days_until_full_volume(now),
        warmup_phase: phase(s, now).into(),
        warmup_preset: s.warmup_preset.clone(),
        warmup_progress_pct: round1(pct(limit, s.daily_send_limit)),
        reputation_estimate: reputation,
        estimated_inbox_rate: (sent > 0).then(|| inbox_rate(bounce_rate, reputation)),
        delivered_count_30d: delivered,
        opened_count_30d: opened,
        daily_volume_chart: chart,
    })
}

fn settings(message: String, s: (i64, i64, i64), preset: &str) -> WarmupSettings {
    WarmupSettings {
        message,
        warmup_start_volume: s.0,
        warmup_increment: s.1,
        daily_send_limit: s.2,
        warmup_preset: Some(preset.into()),
    }
}

pub async fn preset(
    state: &AppState,
    caller: &Caller,
    id: i64,
    input: PresetInput,
) -> ApiResult<WarmupSettings> {
    let s = owned(state, caller, id).await?;
    let name = input.preset.trim().to_lowercase();
    let volumes = if name == "custom" {
        (
            s.warmup_start_volume,
            s.warmup_increment,
            s.daily_send_limit,
        )
    } else {
        let (_, start, inc, limit) =
            PRESETS.into_iter().find(|p| p.0 == name).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "preset must be one of: {}",
                    PRESET_NAMES.join(", ")
                ))
            })?;
        (start, inc, limit)
    };
    if !store::set_volumes(
        &state.db,
        s.account_id,
        s.id,
        volumes,
        &name,
        state.clock.now_ms(),
    )
    .await?
    {
        return Err(ApiError::not_found("Sequence"));
    }
    let message = if name == "custom" {
        "Preset set to custom; change the values with adjust".to_string()
    } else {
        format!("Applied the {name} warmup preset")
    };
    Ok(settings(message, volumes, &name))
}

/// Checks every given field before anything is written; the preset becomes
/// custom.
pub async fn adjust(
    state: &AppState,
    caller: &Caller,
    id: i64,
    input: AdjustInput,
) -> ApiResult<WarmupSettings> {
    let s = owned(state, caller, id).await?;
    if input.start_volume.is_none() && input.increment.is_none() && input.daily_limit.is_none() {
        return Err(ApiError::bad_request(
            "Give at least one of start_volume, increment, daily_limit",
        ));
    }
    let start = match input.start_volume {
        Some(v) => within("start_volume", v, 1..=1000)?,
        None => s.warmup_start_volume,
    };
    let inc = match input.increment {
        Some(v) => within("increment", v, 1..=100)?,
        None => s.warmup_increment,
    };
    let limit = match input.daily_limit {
        Some(v) => within("daily_limit", v, 1..=10_000)?,
        None => s.daily_send_limit,
    };
    let volumes = (start, inc, limit);
    if !store::set_volumes(
        &state.db,
        s.account_id,
        s.id,
        volumes,
        "custom",
        state.clock.now_ms(),
    )
    .await?
    {
        return Err(ApiError::not_found("Sequence"));
    }
    Ok(settings("Warmup adjusted".into(), volumes, "custom"))
}

async fn state_of(
    state: &AppState,
    caller: &Caller,
    id: i64,
    message: String,
) -> ApiResult<WarmupState> {
    let s = owned(state, caller, id).await?;
    let now = state.clock.now_ms();
    let ramp = ramp_of(&s);
    Ok(WarmupState {
        message,
        warmup_enabled: s.warmup_enabled,
        warmup_started_at: s.warmup_started_at.map(iso),
        warmup_paused_at: s.warmup_paused_at.map(iso),
        warmup_phase: phase(&s, now).into(),
        current_effective_limit: ramp.current_effective_limit(now),
        days_since_start: ramp.days_since_start(now),
    })
}

/// Freezes a running ramp. 400 when warmup is inactive: off, never
/// started, or paused already.
pub async fn pause(state: &AppState, caller: &Caller, id: i64) -> ApiResult<WarmupState> {
    let s = owned(state, caller, id).await?;
    let why = if !s.warmup_enabled {
        Some("Warmup is already inactive")
    } else if s.warmup_started_at.is_none() {
        Some("Warmup is inactive: it has not started (it starts when the sequence is active)")
    } else if s.warmup_paused_at.is_some() {
        Some("Warmup is already paused")
    } else {
        None
    };
    if let Some(why) = why {
        return Err(ApiError::bad_request(why));
    }
    // The statement re-checks the rule, so of two racing pauses one wins.
    if !store::pause(&state.db, s.account_id, s.id, state.clock.now_ms()).await? {
        return Err(ApiError::bad_request("Warmup is already inactive"));
    }
    state_of(state, caller, id, "Warmup paused".into()).await
}

/// Re-enables a started ramp, moving its start forward by the pause. 400
/// when it never started.
pub async fn resume(state: &AppState, caller: &Caller, id: i64) -> ApiResult<WarmupState> {
    let s = owned(state, caller, id).await?;
    if s.warmup_started_at.is_none() {
        return Err(ApiError::bad_request(
            "Warmup was never started, so there is nothing to resume",
        ));
    }
    if !store::resume(&state.db, s.account_id, s.id, state.clock.now_ms()).await? {
        return Err(ApiError::bad_request(
            "Warmup was never started, so there is nothing to resume",
        ));
    }
    let message = if s.warmup_paused_at.is_some() {
        "Warmup resumed"
    } else if s.warmup_enabled {
        "Warmup is already running"
    } else {
        "Warmup enabled again"
    };
    state_of(state, caller, id, message.into()).await
}

pub async fn reset(state: &AppState, caller: &Caller, id: i64) -> ApiResult<WarmupState> {
    let s = owned(state, caller, id).await?;
    if !store::reset(&state.db, s.account_id, s.id, state.clock.now_ms()).await? {
        return Err(ApiError::not_found("Sequence"));
    }
    state_of(state, caller, id, "Warmup reset".into()).await
}

/// Logs the cap of every active ramp for the current UTC day (the chart's
/// `effective_limit`); the hourly worker calls it, so the day's last pass
/// leaves the cap that held at its end. Returns how many were written.
pub async fn note_effective_limits(state: &AppState) -> anyhow::Result<usize> {
    let now = state.clock.now_ms();
    let ramps = store::active_ramps(&state.db).await?;
    let limits: Vec<(i64, i64, i64)> = ramps
        .iter()
        .map(|r| (r.id, r.account_id, r.ramp.current_effective_limit(now)))
        .collect();
    store::note_effective_limits(&state.db, day_of(now), &limits).await?;
    Ok(limits.len())
}
