//! The effective limits of each plan: spec/1's defaults, overridden by the
//! operator's `[limits.<plan>]` sections (an integer or `"unlimited"` per
//! setting). Everything that enforces or reports a plan limit reads this
//! table, so headers, `/v1/usage/rate-limits` and every `limit`/`remaining`
//! field show the same effective values.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::plans::{Plan, Quota};

/// A setting's value in `[limits.<plan>]`: a number, or the string
/// `"unlimited"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LimitSetting {
    Number(i64),
    Text(String),
}

/// The limits of one plan; `None` is unlimited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanLimits {
    pub requests_per_minute: Option<u64>,
    /// The operator's daily cap per API key (`requests_per_day`), enforced.
    /// Unset by default: the minute window alone bounds a day.
    pub daily_cap: Option<u64>,
    pub monthly_quota: Option<u64>,
    quotas: [Option<u64>; Quota::ALL.len()],
}

impl PlanLimits {
    /// `requests_per_day` as reported: the daily cap, else the most the
    /// minute window lets through in a day; `None` is unlimited.
    pub fn requests_per_day(&self) -> Option<u64> {
        self.daily_cap
            .or(self.requests_per_minute.map(|r| r * 1440))
    }

    /// The per-area cap of `quota`; `None` is unlimited.
    pub fn quota(&self, quota: Quota) -> Option<u64> {
        self.quotas[quota as usize]
    }
}

/// The limits of every plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitsTable([PlanLimits; 4]);

/// Every setting a `[limits.<plan>]` section may hold.
pub const SETTINGS: [&str; 17] = [
    "requests_per_minute",
    "requests_per_day",
    "monthly_quota",
    "sequences",
    "alerts",
    "audiences",
    "watchlist",
    "webhooks",
    "workflows",
    "saved_connections",
    "api_keys",
    "lead_lists",
    "list_items",
    "scoring_rules",
    "competitors",
    "tracked_keywords",
    "automation_daily_queries",
];

/// Settings that may not be zero: a plan that admits no request at all is
/// a suspended account, which has its own command.
const NONZERO: [&str; 3] = ["requests_per_minute", "requests_per_day", "monthly_quota"];

impl Default for LimitsTable {
    fn default() -> Self {
        LimitsTable::spec()
    }
}

impl LimitsTable {
    /// spec/1 "Limits" and the per-area caps of `Quota::default_limit`.
    pub fn spec() -> LimitsTable {
        LimitsTable(Plan::ALL.map(|plan| PlanLimits {
            requests_per_minute: Some(plan.requests_per_minute() as u64),
            daily_cap: None,
            monthly_quota: Some(plan.monthly_quota()),
            quotas: Quota::ALL.map(|q| q.default_limit(plan)),
        }))
    }

    /// The spec's table with `overrides` applied: `plan -> setting -> value`.
    /// Unknown plans or settings, negative numbers, zero where a limit of
    /// zero makes no sense, and text other than `"unlimited"` are refused
    /// with the setting's name.
    pub fn with_overrides(
        overrides: &BTreeMap<String, BTreeMap<String, LimitSetting>>,
    ) -> Result<LimitsTable, String> {
        let mut table = LimitsTable::spec();
        for (plan_name, settings) in overrides {
            let plan = Plan::parse(plan_name).ok_or_else(|| {
                format!("limits.{plan_name}: unknown plan (use free, starter, pro or enterprise)")
            })?;
            let limits = &mut table.0[plan as usize];
            for (key, value) in settings {
                let name = format!("limits.{plan_name}.{key}");
                let value = match value {
                    LimitSetting::Number(n) if *n < 0 => {
                        return Err(format!("{name}: must not be negative (got {n})"));
                    }
                    LimitSetting::Number(0) if NONZERO.contains(&key.as_str()) => {
                        return Err(format!("{name}: must be at least 1, or \"unlimited\""));
                    }
                    LimitSetting::Number(n) => Some(*n as u64),
                    LimitSetting::Text(t) if t == "unlimited" => None,
                    LimitSetting::Text(t) => {
                        return Err(format!(
                            "{name}: must be a whole number or \"unlimited\" (got {t:?})"
                        ));
                    }
                };
                match key.as_str() {
                    "requests_per_minute" => limits.requests_per_minute = value,
                    "requests_per_day" => limits.daily_cap = value,
                    "monthly_quota" => limits.monthly_quota = value,
                    other => {
                        let quota = Quota::ALL
                            .into_iter()
                            .find(|q| q.key() == other)
                            .ok_or_else(|| {
                                format!("{name}: unknown setting (known: {})", SETTINGS.join(", "))
                            })?;
                        limits.quotas[quota as usize] = value;
                    }
                }
            }
        }
        Ok(table)
    }

    pub fn of(&self, plan: Plan) -> &PlanLimits {
        &self.0[plan as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> Result<LimitsTable, String> {
        let overrides: BTreeMap<String, BTreeMap<String, LimitSetting>> =
            toml::from_str(toml_text).map_err(|e| e.to_string())?;
        LimitsTable::with_overrides(&overrides)
    }

    #[test]
    fn defaults_are_the_spec_and_overrides_apply_per_plan() {
        let spec = LimitsTable::spec();
        assert_eq!(spec.of(Plan::Pro).requests_per_minute, Some(300));
        assert_eq!(spec.of(Plan::Pro).requests_per_day(), Some(300 * 1440));
        assert_eq!(spec.of(Plan::Free).monthly_quota, Some(100));
        assert_eq!(spec.of(Plan::Starter).quota(Quota::Workflows), Some(5));

        let t = parse(
            "[pro]\nrequests_per_minute = 5000\nmonthly_quota = \"unlimited\"\nworkflows = 100\n\
             [free]\nrequests_per_day = 500\nsequences = 3\n",
        )
        .unwrap();
        let pro = t.of(Plan::Pro);
        assert_eq!(pro.requests_per_minute, Some(5000));
        assert_eq!(pro.requests_per_day(), Some(5000 * 1440));
        assert_eq!(pro.daily_cap, None);
        assert_eq!(pro.monthly_quota, None);
        assert_eq!(pro.quota(Quota::Workflows), Some(100));
        let free = t.of(Plan::Free);
        assert_eq!(free.requests_per_day(), Some(500));
        assert_eq!(free.daily_cap, Some(500));
        assert_eq!(free.quota(Quota::Sequences), Some(3));
        assert_eq!(t.of(Plan::Starter), spec.of(Plan::Starter));
    }

    #[test]
    fn the_settings_list_names_every_quota() {
        for q in Quota::ALL {
            assert!(SETTINGS.contains(&q.key()), "{}", q.key());
        }
        assert_eq!(SETTINGS.len(), NONZERO.len() + Quota::ALL.len());
    }

    #[test]
    fn bad_values_name_the_setting() {
        for (text, needle) in [
            ("[gold]\nmonthly_quota = 5", "limits.gold: unknown plan"),
            (
                "[pro]\nmonthly_qouta = 5",
                "limits.pro.monthly_qouta: unknown setting",
            ),
            (
                "[pro]\nmonthly_quota = -1",
                "limits.pro.monthly_quota: must not be negative",
            ),
            (
                "[pro]\nrequests_per_minute = 0",
                "limits.pro.requests_per_minute: must be at least 1",
            ),
            (
                "[pro]\nwebhooks = \"lots\"",
                "limits.pro.webhooks: must be a whole number",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
        // Zero is a meaningful cap for per-area items.
        assert_eq!(
            parse("[pro]\nwebhooks = 0")
                .unwrap()
                .of(Plan::Pro)
                .quota(Quota::Webhooks),
            Some(0)
        );
    }
}
