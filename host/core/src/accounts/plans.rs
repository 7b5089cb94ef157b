//! Plan tiers and the one way every area gates features and counts quotas.
//!
//! An area that "needs Starter+" calls [`Caller::require`](crate::http::auth::Caller::require);
//! an area that creates tracked items calls [`ensure_quota_after_insert`]
//! (or [`ensure_quota`] with a count of its own) with the plan's effective
//! limits (`state.plan_limits(plan)`, see `limits.rs`), and reports
//! `limit`/`remaining` with [`quota_view`]. Both
//! answer in the exact shape of spec/1 "Errors" (403 and 400).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::limits::PlanLimits;
use crate::error::{ApiError, ApiResult};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Plan {
    Free,
    Starter,
    Pro,
    Enterprise,
}

impl Plan {
    pub const ALL: [Plan; 4] = [Plan::Free, Plan::Starter, Plan::Pro, Plan::Enterprise];

    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Free => "free",
            Plan::Starter => "starter",
            Plan::Pro => "pro",
            Plan::Enterprise => "enterprise",
        }
    }

    pub fn parse(s: &str) -> Option<Plan> {
        Plan::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// spec/1 "Limits": requests per minute per API key.
    pub fn requests_per_minute(self) -> u32 {
        match self {
            Plan::Free => 10,
            Plan::Starter => 60,
            Plan::Pro => 300,
            Plan::Enterprise => 1_000,
        }
    }

    /// spec/1 "Limits": requests per billing month.
    pub fn monthly_quota(self) -> u64 {
        match self {
            Plan::Free => 100,
            Plan::Starter => 10_000,
            Plan::Pro => 100_000,
            Plan::Enterprise => 999_999,
        }
    }
}

/// Items whose number per account is capped by plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Quota {
    Sequences,
    Alerts,
    Audiences,
    WatchlistEntries,
    Webhooks,
    Workflows,
    SavedConnections,
    ApiKeys,
    LeadLists,
    ListItems,
    ScoringRules,
    Competitors,
    TrackedKeywords,
    /// Not a count of items: automation-platform queries per UTC day
    /// (spec/2 "Limits"), counted by `usage::limits::account_day`.
    AutomationDailyQueries,
}

impl Quota {
    pub const ALL: [Quota; 14] = [
        Quota::Sequences,
        Quota::Alerts,
        Quota::Audiences,
        Quota::WatchlistEntries,
        Quota::Webhooks,
        Quota::Workflows,
        Quota::SavedConnections,
        Quota::ApiKeys,
        Quota::LeadLists,
        Quota::ListItems,
        Quota::ScoringRules,
        Quota::Competitors,
        Quota::TrackedKeywords,
        Quota::AutomationDailyQueries,
    ];

    /// The setting's name in `[limits.<plan>]`.
    pub fn key(self) -> &'static str {
        match self {
            Quota::Sequences => "sequences",
            Quota::Alerts => "alerts",
            Quota::Audiences => "audiences",
            Quota::WatchlistEntries => "watchlist",
            Quota::Webhooks => "webhooks",
            Quota::Workflows => "workflows",
            Quota::SavedConnections => "saved_connections",
            Quota::ApiKeys => "api_keys",
            Quota::LeadLists => "lead_lists",
            Quota::ListItems => "list_items",
            Quota::ScoringRules => "scoring_rules",
            Quota::Competitors => "competitors",
            Quota::TrackedKeywords => "tracked_keywords",
            Quota::AutomationDailyQueries => "automation_daily_queries",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Quota::Sequences => "sequences",
            Quota::Alerts => "alerts",
            Quota::Audiences => "audiences",
            Quota::WatchlistEntries => "watchlist entries",
            Quota::Webhooks => "webhooks",
            Quota::Workflows => "workflows",
            Quota::SavedConnections => "saved connections",
            Quota::ApiKeys => "API keys",
            Quota::LeadLists => "lead lists",
            Quota::ListItems => "items per lead list",
            Quota::ScoringRules => "scoring rules",
            Quota::Competitors => "competitors",
            Quota::TrackedKeywords => "tracked keywords",
            Quota::AutomationDailyQueries => "automation-platform queries a day",
        }
    }

    /// The default cap for `plan`; `None` means unlimited. Alerts,
    /// audiences, watched domains and webhooks follow spec/2 "Limits",
    /// workflows spec/3 and saved connections its 20 per user, lead lists
    /// and their items spec/2 "Lead lists" (per account and per list); the
    /// spec leaves sequences, API keys and scoring rules unstated, so those
    /// figures are ours (docs/decisions/platform.md, "Per-plan item caps";
    /// docs/decisions/scoring.md, "Rules"). Operators override any of them
    /// in `[limits.<plan>]`.
    pub fn default_limit(self, plan: Plan) -> Option<u64> {
        use Plan::*;
        let caps: [Option<u64>; 4] = match self {
            Quota::Sequences => [Some(0), Some(5), Some(50), None],
            Quota::Alerts => [Some(1), Some(5), Some(25), Some(100)],
            Quota::Audiences => [Some(1), Some(3), Some(10), None],
            Quota::WatchlistEntries => [Some(0), Some(10), Some(50), Some(500)],
            Quota::Webhooks => [Some(0), Some(2), Some(10), Some(50)],
            Quota::Workflows => [Some(0), Some(5), Some(25), None],
            Quota::SavedConnections => [Some(20), Some(20), Some(20), Some(20)],
            Quota::ApiKeys => [Some(2), Some(10), Some(50), None],
            // spec/2 "Lead lists": the same for every plan.
            Quota::LeadLists => [Some(50); 4],
            Quota::ListItems => [Some(1_000); 4],
            // Ours: the spec leaves the dashboard's rules uncounted.
            Quota::ScoringRules => [Some(50); 4],
            // spec/2 "Limits"; below Pro the endpoints answer 403 first.
            Quota::Competitors => [Some(0), Some(0), Some(10), Some(100)],
            // Ours: Pro 50, Enterprise 500 (issue 32).
            Quota::TrackedKeywords => [Some(0), Some(0), Some(50), Some(500)],
            // spec/2 "Limits"; Free answers 403 before counting.
            Quota::AutomationDailyQueries => [Some(0), Some(5_000), Some(50_000), Some(1_000_000)],
        };
        caps[match plan {
            Free => 0,
            Starter => 1,
            Pro => 2,
            Enterprise => 3,
        }]
    }
}

/// 400 when creating one more item would exceed the plan's cap.
pub fn ensure_quota(plan: Plan, limits: &PlanLimits, quota: Quota, current: u64) -> ApiResult<()> {
    match limits.quota(quota) {
        Some(limit) if current >= limit => Err(ApiError::BadRequest(format!(
            "Plan limit reached: the {} plan allows {limit} {}",
            plan.as_str(),
            quota.label()
        ))),
        _ => Ok(()),
    }
}

/// [`ensure_quota`] for a row of `table` just inserted on `conn`, the
/// creating transaction: counts the account's rows, the new one included,
/// and answers 400 when those before it had reached the cap (dropping the
/// transaction undoes the insert). The caller locks the account first
/// (`store::lock_account`) and writes before it counts: on SQLite a
/// transaction that reads before its first write fails when another
/// writer commits in between, while one that starts by writing waits.
pub async fn ensure_quota_after_insert(
    conn: &mut sqlx::AnyConnection,
    plan: Plan,
    limits: &PlanLimits,
    (quota, table): (Quota, &'static str),
    account_id: i64,
) -> ApiResult<()> {
    let before = crate::store::count_owned(conn, table, account_id).await? - 1;
    ensure_quota(plan, limits, quota, before)
}

/// `(limit, remaining)` as list endpoints report them; `None` is unlimited
/// and serialises as `null`.
pub fn quota_view(limits: &PlanLimits, quota: Quota, current: u64) -> (Option<u64>, Option<u64>) {
    let limit = limits.quota(quota);
    (limit, limit.map(|l| l.saturating_sub(current)))
}

/// 403 unless `have` is at least `need` (spec/1: "endpoint needs a higher plan").
pub fn require_plan(have: Plan, need: Plan) -> ApiResult<()> {
    if have >= need {
        Ok(())
    } else {
        Err(ApiError::Forbidden)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_gate_and_quota_answer_as_the_spec_says() {
        assert!(require_plan(Plan::Starter, Plan::Starter).is_ok());
        assert!(require_plan(Plan::Enterprise, Plan::Starter).is_ok());
        let err = require_plan(Plan::Free, Plan::Starter).unwrap_err();
        assert_eq!(err.status(), 403);
        assert_eq!(err.to_string(), crate::error::NO_ACCESS);

        let table = crate::accounts::limits::LimitsTable::spec();
        let of = |p| table.of(p);
        assert!(ensure_quota(Plan::Starter, of(Plan::Starter), Quota::Workflows, 4).is_ok());
        let err = ensure_quota(Plan::Starter, of(Plan::Starter), Quota::Workflows, 5).unwrap_err();
        assert_eq!(err.status(), 400);
        assert!(
            ensure_quota(
                Plan::Enterprise,
                of(Plan::Enterprise),
                Quota::Workflows,
                10_000
            )
            .is_ok()
        );
        assert_eq!(
            quota_view(of(Plan::Pro), Quota::Workflows, 3),
            (Some(25), Some(22))
        );
        assert_eq!(
            quota_view(of(Plan::Enterprise), Quota::Workflows, 3),
            (None, None)
        );
        assert_eq!(of(Plan::Starter).quota(Quota::Webhooks), Some(2));
    }

    #[test]
    fn plan_table_matches_spec() {
        let table: Vec<_> = Plan::ALL
            .iter()
            .map(|p| (p.requests_per_minute(), p.monthly_quota()))
            .collect();
        assert_eq!(
            table,
            [(10, 100), (60, 10_000), (300, 100_000), (1_000, 999_999)]
        );
    }
}
