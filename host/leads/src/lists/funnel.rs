//! `GET /v1/lists/{list_id}/funnel` and `.../funnel/export` (spec/2 "Lead
//! lists", funnel paragraph).
//!
//! - `percentage` = count / total x 100; `rate` = to.count / from.count x
//!   100 for adjacent stages, from the current counts exactly as the spec
//!   gives it (so a rate may pass 100 when more items sit in the later
//!   stage); 0 when the divisor is 0. Both rounded to two decimals.
//! - `avg_days_in_stage`: the mean length in days of every stay in the
//!   stage by the list's current items, from the stage history (a stay
//!   still running counts up to now). An item without history rows falls
//!   back as the spec says: one stay in its current stage since
//!   `status_changed_at`, else `added_at`. A stage nobody stayed in shows 0.

use serde::Serialize;
use utoipa::ToSchema;

use super::history::{self, ItemTimes};
use super::{STAGES, service};
use crate::csv_out::{self, CsvFile};
use outreach_core::error::ApiResult;
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;

const DAY_MS: f64 = 86_400_000.0;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FunnelStage {
    pub stage: String,
    pub count: i64,
    /// count / total x 100.
    pub percentage: f64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FunnelConversion {
    pub from: String,
    pub to: String,
    /// to.count / from.count x 100.
    pub rate: f64,
}

/// Mean days per stay in each stage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
pub struct DaysInStage {
    pub discovered: f64,
    pub contacted: f64,
    pub qualified: f64,
    pub converted: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Funnel {
    pub total: i64,
    pub stages: Vec<FunnelStage>,
    pub conversions: Vec<FunnelConversion>,
    pub avg_days_in_stage: DaysInStage,
    pub conversion_goal: Option<f64>,
}

/// `part / whole x 100`, two decimals; 0 when `whole` is 0.
pub fn percent(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 * 10_000.0 / whole as f64).round() / 100.0
}

/// Counts in stage order from `(stage, count)` rows.
pub fn counts_in_order(rows: &[(String, i64)]) -> [i64; 4] {
    STAGES.map(|s| rows.iter().find(|(st, _)| st == s).map_or(0, |r| r.1))
}

/// The funnel of one list.
pub async fn funnel(state: &AppState, caller: &Caller, list_id: i64) -> ApiResult<Funnel> {
    let list = service::get(state, caller, list_id).await?;
    let counts =
        counts_in_order(&history::stage_counts(&state.db, caller.account_id, Some(list_id)).await?);
    let total: i64 = counts.iter().sum();
    let (items, rows) = history::list_times(&state.db, list_id).await?;
    let days = avg_days_in_stage(&items, &rows, state.clock.now_ms());
    Ok(Funnel {
        total,
        stages: STAGES
            .iter()
            .zip(counts)
            .map(|(s, count)| FunnelStage {
                stage: s.to_string(),
                count,
                percentage: percent(count, total),
            })
            .collect(),
        conversions: (0..3)
            .map(|i| FunnelConversion {
                from: STAGES[i].into(),
                to: STAGES[i + 1].into(),
                rate: percent(counts[i + 1], counts[i]),
            })
            .collect(),
        avg_days_in_stage: days,
        conversion_goal: list.conversion_goal,
    })
}

/// The mean stay per stage (see the module docs). `history` is sorted by
/// item, then by when each row was written.
pub fn avg_days_in_stage(
    items: &[ItemTimes],
    history: &[(i64, Option<String>, i64)],
    now: i64,
) -> DaysInStage {
    let mut total_ms = [0f64; 4];
    let mut stays = [0u32; 4];
    let mut add = |stage: &str, from: i64, to: i64| {
        if let Some(i) = STAGES.iter().position(|s| *s == stage) {
            total_ms[i] += (to - from).max(0) as f64;
            stays[i] += 1;
        }
    };
    let mut rows = history.iter().peekable();
    for item in items {
        // Skip rows of items no longer listed (the join keeps none, but the
        // order makes this cheap to guard).
        while rows.peek().is_some_and(|r| r.0 < item.id) {
            rows.next();
        }
        let mut own = Vec::new();
        while let Some(r) = rows.next_if(|r| r.0 == item.id) {
            own.push(r);
        }
        if own.is_empty() {
            add(
                &item.status,
                item.status_changed_at.unwrap_or(item.added_at),
                now,
            );
            continue;
        }
        for (k, (_, stage, entered)) in own.iter().enumerate() {
            let left = own.get(k + 1).map_or(now, |next| next.2);
            if let Some(stage) = stage {
                add(stage, *entered, left);
            }
        }
    }
    let mean = |i: usize| {
        if stays[i] == 0 {
            0.0
        } else {
            (total_ms[i] / f64::from(stays[i]) / DAY_MS * 100.0).round() / 100.0
        }
    };
    DaysInStage {
        discovered: mean(0),
        contacted: mean(1),
        qualified: mean(2),
        converted: mean(3),
    }
}

/// `GET .../funnel/export`: every item of the list as CSV.
pub async fn export(state: &AppState, caller: &Caller, list_id: i64) -> ApiResult<CsvFile> {
    service::get(state, caller, list_id).await?;
    let items = super::store::items(&state.db, list_id, i64::MAX, 0).await?;
    let rows = items.into_iter().map(|i| {
        vec![
            i.domain,
            i.status,
            i.notes,
            i.added_at,
            i.status_changed_at.unwrap_or_default(),
        ]
    });
    csv_out::file(
        &format!("list-{list_id}-funnel.csv"),
        &["Domain", "Status", "Notes", "Added At", "Status Changed At"],
        rows,
    )
}
