//! `GET /v1/workflows/analytics` (spec/3 "Workflows"): figures over the
//! account's finished runs created in the last `days` UTC calendar days
//! (today included), from two queries: the account's workflows, and one
//! pass over the window's runs (streamed, not loaded at once) that
//! [`Tally`] folds, `actions_executed` included.

use std::collections::{BTreeMap, HashMap};

use futures::TryStreamExt;
use serde::Deserialize;
use sqlx::Row;

use super::model::*;
use outreach_core::accounts::Plan;
use outreach_core::error::ApiResult;
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::within;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

pub const DEFAULT_DAYS: i64 = 30;
pub const MAX_DAYS: i64 = 90;
/// How many workflows `top_workflows` lists.
pub const TOP_WORKFLOWS: usize = 5;

const DAY_MS: i64 = 86_400_000;

/// One finished run, as the tally reads it.
pub struct RunFacts {
    pub workflow_id: i64,
    pub status: String,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    /// The `actions_executed` JSON text.
    pub actions: String,
}

/// The part of an `actions_executed` entry the rates read; serde skips the
/// rest of each entry.
#[derive(Deserialize)]
struct ActionFacts {
    #[serde(rename = "type")]
    action_type: String,
    status: String,
}

/// The figures of a window whose first day is `first_day` (days since the
/// epoch) and which lasts `days` days.
pub struct Tally {
    first_day: i64,
    by_status: WorkflowRunsByStatus,
    by_day: Vec<i64>,
    by_workflow: HashMap<i64, i64>,
    actions: BTreeMap<String, WorkflowActionRate>,
    duration_ms: i64,
    timed: i64,
}

impl Tally {
    pub fn new(first_day: i64, days: i64) -> Tally {
        Tally {
            first_day,
            by_status: WorkflowRunsByStatus::default(),
            by_day: vec![0; days as usize],
            by_workflow: HashMap::new(),
            actions: BTreeMap::new(),
            duration_ms: 0,
            timed: 0,
        }
    }

    pub fn add(&mut self, run: &RunFacts) {
        match run.status.as_str() {
            "success" => self.by_status.success += 1,
            "error" => self.by_status.error += 1,
            "partial" => self.by_status.partial += 1,
            // The query reads finished runs only.
            _ => return,
        }
        let day = run.created_at.div_euclid(DAY_MS) - self.first_day;
        if let Some(n) = usize::try_from(day)
            .ok()
            .and_then(|d| self.by_day.get_mut(d))
        {
            *n += 1;
        }
        *self.by_workflow.entry(run.workflow_id).or_default() += 1;
        if let (Some(start), Some(end)) = (run.started_at, run.finished_at) {
            self.duration_ms += (end - start).max(0);
            self.timed += 1;
        }
        // A record that does not parse (it never should) only loses its
        // actions from the rates.
        let entries: Vec<ActionFacts> = serde_json::from_str(&run.actions).unwrap_or_default();
        for entry in entries {
            let rate = self.actions.entry(entry.action_type).or_default();
            match entry.status.as_str() {
                // A wait that asked for its decision did its job.
                "success" | "waiting" => rate.success += 1,
                "error" => rate.error += 1,
                _ => continue,
            }
            rate.total += 1;
        }
    }

    /// The answer, with the account's workflows `(id, name, is_active)`.
    pub fn finish(mut self, days: i64, workflows: &[(i64, String, bool)]) -> WorkflowAnalytics {
        let names: HashMap<i64, (&str, bool)> = workflows
            .iter()
            .map(|(id, name, active)| (*id, (name.as_str(), *active)))
            .collect();
        let mut leaders: Vec<(i64, i64)> = self.by_workflow.into_iter().collect();
        leaders.sort_by_key(|&(id, runs)| (-runs, id));
        let top_workflows = leaders
            .into_iter()
            .filter_map(|(id, runs)| {
                let (name, is_active) = names.get(&id)?;
                Some(WorkflowRunLeader {
                    id,
                    name: (*name).to_owned(),
                    runs,
                    is_active: *is_active,
                })
            })
            .take(TOP_WORKFLOWS)
            .collect();
        for rate in self.actions.values_mut() {
            rate.success_rate = percent(rate.success, rate.total);
        }
        self.actions.retain(|_, r| r.total > 0);
        let s = &self.by_status;
        WorkflowAnalytics {
            days,
            since: iso(self.first_day * DAY_MS),
            total_workflows: workflows.len() as i64,
            active_workflows: workflows.iter().filter(|w| w.2).count() as i64,
            total_runs: s.success + s.error + s.partial,
            runs_by_status: self.by_status.clone(),
            runs_by_day: self
                .by_day
                .iter()
                .enumerate()
                .map(|(i, &count)| WorkflowRunsOnDay {
                    date: date_of(self.first_day + i as i64),
                    count,
                })
                .collect(),
            top_workflows,
            action_success_rates: self.actions,
            avg_duration_seconds: if self.timed == 0 {
                0.0
            } else {
                // Hundredths of a second (tens of milliseconds), rounded
                // half up.
                ((self.duration_ms + 5 * self.timed) / (10 * self.timed)) as f64 / 100.0
            },
        }
    }
}

/// part / whole x 100 with one decimal, rounded half up in integer
/// arithmetic (as the webhooks' success rate); 0 for an empty whole.
pub fn percent(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    ((part * 2000 + whole) / (2 * whole)) as f64 / 10.0
}

fn date_of(day: i64) -> String {
    chrono::DateTime::from_timestamp_millis(day * DAY_MS)
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

pub async fn analytics(
    state: &AppState,
    caller: &Caller,
    days: Option<i64>,
) -> ApiResult<WorkflowAnalytics> {
    caller.require(Plan::Starter)?;
    let days = within("days", days.unwrap_or(DEFAULT_DAYS), 1..=MAX_DAYS)?;
    let today = state.clock.now_ms().div_euclid(DAY_MS);
    let first_day = today - (days - 1);
    let workflows: Vec<(i64, String, bool)> =
        sqlx::query("SELECT id, name, is_active FROM workflows WHERE account_id = $1")
            .bind(caller.account_id)
            .fetch_all(&state.db.pool)
            .await?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get("id")?,
                    r.try_get("name")?,
                    r.try_get::<i64, _>("is_active")? != 0,
                ))
            })
            .collect::<sqlx::Result<_>>()?;
    let mut tally = Tally::new(first_day, days);
    let mut rows = sqlx::query(
        "SELECT workflow_id, status, created_at, started_at, finished_at, actions_executed \
         FROM workflow_runs WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 \
         AND status IN ('success', 'error', 'partial')",
    )
    .bind(caller.account_id)
    .bind(first_day * DAY_MS)
    .bind((today + 1) * DAY_MS)
    .fetch(&state.db.pool);
    while let Some(r) = rows.try_next().await? {
        tally.add(&RunFacts {
            workflow_id: r.try_get("workflow_id")?,
            status: r.try_get("status")?,
            created_at: r.try_get("created_at")?,
            started_at: r.try_get("started_at")?,
            finished_at: r.try_get("finished_at")?,
            actions: r.try_get("actions_executed")?,
        });
    }
    Ok(tally.finish(days, &workflows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_rounds_half_up_to_one_decimal() {
        assert_eq!(percent(1, 3), 33.3);
        assert_eq!(percent(2, 3), 66.7);
        assert_eq!(percent(1, 8), 12.5);
        assert_eq!(percent(1, 16), 6.3);
        assert_eq!(percent(0, 0), 0.0);
        assert_eq!(percent(5, 5), 100.0);
    }

    #[test]
    fn days_are_utc_dates() {
        assert_eq!(date_of(0), "1970-01-01");
        assert_eq!(date_of(20_000), "2024-10-04");
    }
}
