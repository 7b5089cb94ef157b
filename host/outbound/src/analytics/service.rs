//! Rules of spec/1 "Analytics" and "A/B and multivariate tests": counts,
//! rates, the composite score, the leading variant and whether the data
//! suffice.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::store::{self, EventCount};
use crate::sequences::service::owned;
use crate::sequences::store as sequences;
use crate::steps::store::{self as steps, StepRow};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::one_of;
use outreach_core::state::AppState;

/// Sent messages every variant needs before `has_sufficient_data`.
pub const MIN_SENT_PER_VARIANT: i64 = 30;
/// Sent messages a variant needs to lead (spec/1).
pub const MIN_SENT_TO_LEAD: i64 = 5;
/// The z score the leader's margin must reach: two-sided 5 %, Bonferroni
/// over the three components (alpha 0.05 / 3), z for 1 - 0.0167 / 2.
pub const Z_CRITICAL: f64 = 2.394;

/// Counts of one step, one variant or the whole sequence. `clicked` counts
/// unique clicks (messages clicked at least once), `total_clicks` every click.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub sent: i64,
    pub delivered: i64,
    pub opened: i64,
    pub clicked: i64,
    pub total_clicks: i64,
    pub replied: i64,
    pub bounced: i64,
    pub unsubscribed: i64,
}

impl Counts {
    fn add(&mut self, c: &EventCount) {
        match c.event_type.as_str() {
            "sent" => self.sent += c.total,
            "delivered" => self.delivered += c.total,
            "opened" => self.opened += c.unique,
            "clicked" => {
                self.clicked += c.unique;
                self.total_clicks += c.total;
            }
            "replied" => self.replied += c.total,
            "bounced" => self.bounced += c.total,
            "unsubscribed" => self.unsubscribed += c.total,
            _ => {}
        }
    }
}

/// `count / sent x 100` in tenths of a percent, rounded half up; 0 when
/// nothing was sent. Integer arithmetic, so 1/8 is exactly 12.5 and 1/3 is
/// 33.3.
pub fn rate_tenths(count: i64, sent: i64) -> i64 {
    if sent <= 0 {
        return 0;
    }
    let (count, sent) = (i128::from(count.max(0)), i128::from(sent));
    ((2 * count * 1000 + sent) / (2 * sent)) as i64
}

/// spec/1's rate: a percentage with one decimal.
pub fn rate(count: i64, sent: i64) -> f64 {
    rate_tenths(count, sent) as f64 / 10.0
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Rollup {
    pub sent: i64,
    pub delivered: i64,
    pub opened: i64,
    /// Unique clicks: messages clicked at least once.
    pub clicked: i64,
    /// Every click (ours).
    pub total_clicks: i64,
    pub replied: i64,
    pub bounced: i64,
    pub unsubscribed: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StepAnalytics {
    pub step_id: i64,
    pub position: i64,
    pub step_type: String,
    pub subject: Option<String>,
    pub sent: i64,
    pub delivered: i64,
    pub opened: i64,
    /// Unique clicks.
    pub clicked: i64,
    /// Every click (ours).
    pub total_clicks: i64,
    pub replied: i64,
    pub bounced: i64,
    pub unsubscribed: i64,
    /// opened / sent x 100, one decimal; 0 when nothing was sent.
    pub open_rate: f64,
    /// Unique clicks / sent x 100, one decimal; 0 when nothing was sent.
    pub click_rate: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SequenceAnalytics {
    pub sequence_id: i64,
    pub total_enrolled: i64,
    pub active: i64,
    /// Ours: paused enrollments (counted in total_enrolled).
    pub paused: i64,
    pub completed: i64,
    pub bounced_enrollments: i64,
    pub unsubscribed_enrollments: i64,
    pub replied_enrollments: i64,
    pub goal_completed: i64,
    pub rollup: Rollup,
    /// Replies classified interested.
    pub interested_replies: i64,
    pub steps: Vec<StepAnalytics>,
}

pub async fn analytics(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
) -> ApiResult<SequenceAnalytics> {
    let sequence = owned(state, caller, sequence_id).await?;
    let mut out = SequenceAnalytics {
        sequence_id,
        total_enrolled: 0,
        active: 0,
        paused: 0,
        completed: 0,
        bounced_enrollments: 0,
        unsubscribed_enrollments: 0,
        replied_enrollments: 0,
        goal_completed: 0,
        rollup: Rollup {
            sent: 0,
            delivered: 0,
            opened: 0,
            clicked: 0,
            total_clicks: 0,
            replied: 0,
            bounced: 0,
            unsubscribed: 0,
        },
        interested_replies: 0,
        steps: Vec::new(),
    };
    for s in store::enrollments(&state.db, caller.account_id, sequence.id).await? {
        out.total_enrolled += s.count;
        out.goal_completed += s.goal_completed;
        match s.status.as_str() {
            "active" => out.active += s.count,
            "paused" => out.paused += s.count,
            "completed" => out.completed += s.count,
            "bounced" => out.bounced_enrollments += s.count,
            "unsubscribed" => out.unsubscribed_enrollments += s.count,
            "replied" => out.replied_enrollments += s.count,
            _ => {}
        }
    }
    // Events of deleted steps count in the rollup, not in steps[].
    let mut total = Counts::default();
    let mut per_step: HashMap<i64, Counts> = HashMap::new();
    for c in store::by_step(&state.db, caller.account_id, sequence.id).await? {
        total.add(&c);
        out.interested_replies += c.interested;
        if let Some(step) = c.step_id {
            per_step.entry(step).or_default().add(&c);
        }
    }
    out.rollup = Rollup {
        sent: total.sent,
        delivered: total.delivered,
        opened: total.opened,
        clicked: total.clicked,
        total_clicks: total.total_clicks,
        replied: total.replied,
        bounced: total.bounced,
        unsubscribed: total.unsubscribed,
    };
    let mut conn = state.db.pool.acquire().await?;
    for s in steps::list(&mut conn, sequence.id).await? {
        let c = per_step.get(&s.id).copied().unwrap_or_default();
        out.steps.push(StepAnalytics {
            step_id: s.id,
            position: s.position,
            step_type: s.step_type,
            subject: s.subject,
            sent: c.sent,
            delivered: c.delivered,
            opened: c.opened,
            clicked: c.clicked,
            total_clicks: c.total_clicks,
            replied: c.replied,
            bounced: c.bounced,
            unsubscribed: c.unsubscribed,
            open_rate: rate(c.opened, c.sent),
            click_rate: rate(c.clicked, c.sent),
        });
    }
    Ok(out)
}

/// One arm's numbers in A/B and multivariate results.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VariantStats {
    pub sent: i64,
    pub opened: i64,
    /// Unique clicks.
    pub clicked: i64,
    /// Every click (ours).
    pub total_clicks: i64,
    pub replied: i64,
    pub open_rate: f64,
    /// Unique clicks / sent x 100.
    pub click_rate: f64,
    pub reply_rate: f64,
    /// Multivariate only: open_rate x 0.3 + click_rate x 0.3 + reply_rate x 0.4.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub composite_score: Option<f64>,
}

fn stats(c: &Counts) -> VariantStats {
    VariantStats {
        sent: c.sent,
        opened: c.opened,
        clicked: c.clicked,
        total_clicks: c.total_clicks,
        replied: c.replied,
        open_rate: rate(c.opened, c.sent),
        click_rate: rate(c.clicked, c.sent),
        reply_rate: rate(c.replied, c.sent),
        composite_score: None,
    }
}

/// spec/1's composite score in hundredths, from the rounded rates: exact,
/// so `composite_score` is what a client computes from the rates shown.
pub fn composite_hundredths(c: &Counts) -> i64 {
    3 * rate_tenths(c.opened, c.sent)
        + 3 * rate_tenths(c.clicked, c.sent)
        + 4 * rate_tenths(c.replied, c.sent)
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AbVariants {
    pub a: VariantStats,
    pub b: VariantStats,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AbResults {
    pub step_id: i64,
    pub ab_test_enabled: bool,
    /// `a` or `b` once locked; null until chosen.
    pub ab_winner: Option<String>,
    pub variants: AbVariants,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AbWinner {
    /// `a` or `b`.
    pub winner: String,
}

/// The caller's step `step_id` of sequence `sequence_id`, or 404.
async fn owned_step(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    step_id: i64,
) -> ApiResult<StepRow> {
    let sequence = owned(state, caller, sequence_id).await?;
    let mut conn = state.db.pool.acquire().await?;
    steps::list(&mut conn, sequence.id)
        .await?
        .into_iter()
        .find(|s| s.id == step_id)
        .ok_or_else(|| ApiError::not_found("Step"))
}

/// Counts of one step by variant label.
async fn variant_counts(
    state: &AppState,
    caller: &Caller,
    step: &StepRow,
) -> ApiResult<HashMap<String, Counts>> {
    let mut out: HashMap<String, Counts> = HashMap::new();
    for c in store::by_variant(&state.db, caller.account_id, step.sequence_id, step.id).await? {
        if let Some(v) = &c.variant {
            out.entry(v.clone()).or_default().add(&c);
        }
    }
    Ok(out)
}

async fn ab_view(state: &AppState, caller: &Caller, step: StepRow) -> ApiResult<AbResults> {
    let counts = variant_counts(state, caller, &step).await?;
    let of = |v: &str| stats(&counts.get(v).copied().unwrap_or_default());
    Ok(AbResults {
        step_id: step.id,
        ab_test_enabled: step.ab_test_enabled,
        ab_winner: step.ab_winner,
        variants: AbVariants {
            a: of("a"),
            b: of("b"),
        },
    })
}

pub async fn ab_results(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    step_id: i64,
) -> ApiResult<AbResults> {
    let step = owned_step(state, caller, sequence_id, step_id).await?;
    ab_view(state, caller, step).await
}

/// Locks the A/B winner; the sender then sends only that variant. Choosing
/// again replaces the choice. The change runs in a transaction that first
/// touches the sequence row, as step edits do, so it cannot interleave
/// with one.
pub async fn set_ab_winner(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    step_id: i64,
    body: AbWinner,
) -> ApiResult<AbResults> {
    owned_step(state, caller, sequence_id, step_id).await?;
    one_of("winner", &body.winner, &["a", "b"])?;
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    if !sequences::touch(&mut tx, caller.account_id, sequence_id, now).await? {
        return Err(ApiError::not_found("Sequence"));
    }
    let mut step = steps::list(&mut tx, sequence_id)
        .await?
        .into_iter()
        .find(|s| s.id == step_id)
        .ok_or_else(|| ApiError::not_found("Step"))?;
    if !step.ab_test_enabled {
        return Err(ApiError::bad_request("Step does not have an A/B test"));
    }
    step.ab_winner = Some(body.winner);
    steps::update(&mut tx, &step, now).await?;
    tx.commit().await?;
    step.updated_at = now;
    ab_view(state, caller, step).await
}

#[derive(Debug, Serialize, ToSchema)]
pub struct VariantSummary {
    pub label: String,
    pub subject: String,
    pub weight: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MultivariateResults {
    pub step_id: i64,
    pub variants: Vec<VariantSummary>,
    /// By label: every variant of the step, zeros until it is sent.
    pub results: BTreeMap<String, VariantStats>,
    /// Highest composite score among variants sent at least 5 times (the
    /// earlier variant on a tie); null when none was.
    pub leading_variant: Option<String>,
    /// Every variant sent at least 30 times and the leader's margin over
    /// the runner-up significant (see the module docs).
    pub has_sufficient_data: bool,
}

pub async fn multivariate_results(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    step_id: i64,
) -> ApiResult<MultivariateResults> {
    let step = owned_step(state, caller, sequence_id, step_id).await?;
    let variants = step.variants.clone().unwrap_or_default();
    if variants.is_empty() {
        return Err(ApiError::bad_request(
            "Step has no multivariate variants (use ab-results for A/B steps)",
        ));
    }
    let counts = variant_counts(state, caller, &step).await?;
    let arms: Vec<(String, Counts)> = variants
        .iter()
        .map(|v| {
            let c = counts.get(&v.label).copied().unwrap_or_default();
            (v.label.clone(), c)
        })
        .collect();
    let leader = leading(&arms);
    Ok(MultivariateResults {
        step_id: step.id,
        variants: variants
            .into_iter()
            .map(|v| VariantSummary {
                label: v.label,
                subject: v.subject,
                weight: v.weight,
            })
            .collect(),
        results: arms
            .iter()
            .map(|(label, c)| {
                let mut s = stats(c);
                s.composite_score = Some(composite_hundredths(c) as f64 / 100.0);
                (label.clone(), s)
            })
            .collect(),
        leading_variant: leader.map(|i| arms[i].0.clone()),
        has_sufficient_data: leader.is_some_and(|i| sufficient(&arms, i)),
    })
}

/// The index of the leading arm: the highest composite among arms sent at
/// least [`MIN_SENT_TO_LEAD`] times, the earlier one on a tie.
pub fn leading(arms: &[(String, Counts)]) -> Option<usize> {
    let mut best: Option<(usize, i64)> = None;
    for (i, (_, c)) in arms.iter().enumerate() {
        if c.sent < MIN_SENT_TO_LEAD {
            continue;
        }
        let score = composite_hundredths(c);
        if best.is_none_or(|(_, b)| score > b) {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

/// Whether the data support the leader: every arm sent at least
/// [`MIN_SENT_PER_VARIANT`] times, and on the component that contributes
/// most to the leader's composite margin over the runner-up (weight x
/// difference of proportions), a pooled two-proportion z-test of leader
/// against runner-up reaches [`Z_CRITICAL`].
pub fn sufficient(arms: &[(String, Counts)], leader: usize) -> bool {
    if arms.len() < 2 || arms.iter().any(|(_, c)| c.sent < MIN_SENT_PER_VARIANT) {
        return false;
    }
    let Some(runner_up) = arms
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != leader)
        .max_by_key(|(i, (_, c))| (composite_hundredths(c), std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
    else {
        return false;
    };
    let (l, r) = (&arms[leader].1, &arms[runner_up].1);
    let components = [
        (0.3, l.opened, r.opened),
        (0.3, l.clicked, r.clicked),
        (0.4, l.replied, r.replied),
    ];
    let strongest = components
        .iter()
        .map(|&(w, x1, x2)| (w * (share(x1, l.sent) - share(x2, r.sent)), x1, x2))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match strongest {
        Some((margin, x1, x2)) if margin > 0.0 => {
            two_proportion_z(x1, l.sent, x2, r.sent) >= Z_CRITICAL
        }
        _ => false,
    }
}

fn share(x: i64, n: i64) -> f64 {
    x.clamp(0, n) as f64 / n as f64
}

/// The pooled two-proportion z statistic of x1/n1 against x2/n2; 0 when it
/// is undefined (no variance: both proportions 0 or both 1).
pub fn two_proportion_z(x1: i64, n1: i64, x2: i64, n2: i64) -> f64 {
    let (x1, x2) = (x1.clamp(0, n1), x2.clamp(0, n2));
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let pooled = (x1 + x2) as f64 / (n1f + n2f);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1f + 1.0 / n2f)).sqrt();
    if se <= 0.0 || !se.is_finite() {
        return 0.0;
    }
    (x1 as f64 / n1f - x2 as f64 / n2f) / se
}
