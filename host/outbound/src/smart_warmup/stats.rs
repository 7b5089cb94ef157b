//! The figures: a member's live status, the pool's live statistics, and
//! the analytics read from the roll-up that [`refresh`] rewrites every
//! `analytics_refresh_seconds`.
//!
//! Rates are percentages with one decimal, null while there is nothing to
//! divide by. A message is `sent` once the recipient's server answered
//! (accepted or refused), `delivered` when it was accepted and no report
//! bounced it since, placed in the inbox or in spam where the recipient
//! side first found it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::Row;
use utoipa::{IntoParams, ToSchema};

use super::service::{member_of, plan};
use super::store;
use crate::sequences::service::gate;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

const DAY_MS: i64 = 86_400_000;

/// Days of messages the live rates of a member read.
const STATUS_WINDOW_DAYS: i64 = 30;
/// Days of messages the pool's live rates read.
const POOL_WINDOW_DAYS: i64 = 7;
/// Days the refresh rewrites: a message's placement, bounce report or
/// answer comes within days of its sending.
const REFRESH_DAYS: i64 = 8;
/// Messages are kept this long (the analytics read the roll-up).
const MESSAGE_RETENTION_DAYS: i64 = 100;

fn pct(part: i64, whole: i64) -> Option<f64> {
    (whole > 0).then(|| (part as f64 * 1000.0 / whole as f64).round() / 10.0)
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Persona {
    pub name: String,
    pub tone: String,
    pub industry_context: String,
}

/// Newsletter subscriptions: a feature this server does not have (see the
/// decisions), so always zero.
#[derive(Debug, Serialize, ToSchema)]
pub struct Subscriptions {
    pub active: i64,
    pub newsletters: i64,
    pub engagement_rate: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WarmupDeliverability {
    /// Placed in the inbox, of the messages found (last 30 days).
    pub inbox_rate: Option<f64>,
    /// Placed in spam, of the messages found.
    pub spam_rate: Option<f64>,
    /// Bounced, of the messages sent.
    pub bounce_rate: Option<f64>,
}

/// `GET /v1/send-accounts/{id}/smart-warmup/status`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SmartWarmupStatus {
    pub account_id: String,
    pub email: String,
    /// active, paused, completed, failed; null when the account is not in the pool.
    pub warmup_status: Option<String>,
    pub warmup_started_at: Option<String>,
    pub warmup_progress_pct: f64,
    /// Today's ramp level (0 when not active).
    pub current_daily_volume: i64,
    pub target_daily_volume: i64,
    /// Pool mail this warmup day, replies included.
    pub sent_today: i64,
    /// Mailboxes this one exchanged pool mail with.
    pub pool_count: i64,
    pub persona: Option<Persona>,
    pub subscriptions: Subscriptions,
    pub deliverability: WarmupDeliverability,
    pub next_ramp_up_at: Option<String>,
    /// Why the member was paused by the pool or failed.
    pub last_error: Option<String>,
}

fn no_subscriptions() -> Subscriptions {
    Subscriptions {
        active: 0,
        newsletters: 0,
        engagement_rate: 0.0,
    }
}

pub async fn status(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SmartWarmupStatus> {
    let (row, member) = member_of(state, caller, id).await?;
    let plan = plan(state);
    let now = state.clock.now_ms();
    let since = now - STATUS_WINDOW_DAYS * DAY_MS;
    let r = sqlx::query(
        "SELECT
             SUM(CASE WHEN status IN ('sent', 'bounced') THEN 1 ELSE 0 END),
             SUM(CASE WHEN status = 'bounced' THEN 1 ELSE 0 END),
             SUM(CASE WHEN placement = 'inbox' THEN 1 ELSE 0 END),
             SUM(CASE WHEN placement = 'spam' THEN 1 ELSE 0 END)
         FROM smart_warmup_messages WHERE sender_id = $1 AND sent_at >= $2",
    )
    .bind(id)
    .bind(since)
    .fetch_one(&state.db.pool)
    .await?;
    let n = |i: usize| {
        r.try_get::<Option<i64>, _>(i)
            .map(Option::unwrap_or_default)
    };
    let (sent, bounced, inbox, spam) = (n(0)?, n(1)?, n(2)?, n(3)?);
    let pool_count: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM (
             SELECT recipient_id AS other FROM smart_warmup_messages WHERE sender_id = $1 AND status IN ('sent', 'bounced')
             UNION SELECT sender_id FROM smart_warmup_messages WHERE recipient_id = $1 AND status IN ('sent', 'bounced')
         ) partners",
    )
    .bind(id)
    .fetch_one(&state.db.pool)
    .await?;
    let (volume, progress, next_ramp) = match &member {
        Some(m) if m.status == "active" => {
            let d = plan.ramp_day(m.ramp_origin, now);
            (
                plan.volume(d),
                plan.progress_pct(d),
                plan.next_ramp_up_at(m.ramp_origin, now).map(iso),
            )
        }
        Some(m) if m.status == "completed" => (0, 100.0, None),
        Some(m) => {
            let d = plan.ramp_day(m.ramp_origin, m.paused_at.unwrap_or(now));
            (0, plan.progress_pct(d), None)
        }
        None => (0, row.warmup_progress_pct, None),
    };
    Ok(SmartWarmupStatus {
        account_id: id.to_string(),
        email: row.email,
        warmup_status: member.as_ref().map(|m| m.status.clone()),
        warmup_started_at: member.as_ref().map(|m| iso(m.started_at)),
        warmup_progress_pct: progress,
        current_daily_volume: volume,
        target_daily_volume: plan.target,
        sent_today: member.as_ref().map_or(0, |m| m.sent_on(plan.day(now))),
        pool_count,
        persona: member.as_ref().map(|m| Persona {
            name: m.persona.name.clone(),
            tone: m.persona.tone.clone(),
            industry_context: m.persona.industry_context.clone(),
        }),
        subscriptions: no_subscriptions(),
        deliverability: WarmupDeliverability {
            inbox_rate: pct(inbox, inbox + spam),
            spam_rate: pct(spam, inbox + spam),
            bounce_rate: pct(bounced, sent),
        },
        next_ramp_up_at: next_ramp,
        last_error: member.and_then(|m| m.last_error),
    })
}

/// `GET /v1/send-accounts/warmup-pool/stats`: the whole pool, aggregated;
/// of other tenants nothing but counts and rates.
#[derive(Debug, Serialize, ToSchema)]
pub struct WarmupPoolStats {
    /// Members of every status.
    pub pool_size: i64,
    pub active_participants: i64,
    /// Pool messages sent today (the warmup day), replies included.
    pub daily_emails_exchanged: i64,
    /// Placed in the inbox, of the pool's messages found in the last 7 days.
    pub avg_inbox_rate: Option<f64>,
    /// Answered, of the pool's messages delivered in the last 7 days.
    pub avg_reply_rate: Option<f64>,
    /// Share of members per mailbox provider (`other` for the rest), percent.
    pub provider_distribution: BTreeMap<String, f64>,
    pub your_accounts_in_pool: i64,
    /// Share of members whose inbox rate is at most yours (your messages of
    /// the last 7 days together); null until yours were found.
    pub your_pool_rank_pct: Option<f64>,
}

pub async fn pool_stats(state: &AppState, caller: &Caller) -> ApiResult<WarmupPoolStats> {
    gate(caller)?;
    let now = state.clock.now_ms();
    let today = plan(state).day(now);
    let since = now - POOL_WINDOW_DAYS * DAY_MS;
    let db = &state.db.pool;
    let mut providers: BTreeMap<String, i64> = BTreeMap::new();
    let (mut pool_size, mut active, mut yours) = (0, 0, 0);
    for r in sqlx::query("SELECT provider, status, account_id FROM smart_warmup_members")
        .fetch_all(db)
        .await?
    {
        pool_size += 1;
        *providers.entry(r.try_get(0)?).or_default() += 1;
        active += i64::from(r.try_get::<String, _>(1)? == "active");
        yours += i64::from(r.try_get::<i64, _>(2)? == caller.account_id);
    }
    let exchanged: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM smart_warmup_messages WHERE day = $1 AND status IN ('sent', 'bounced')",
    )
    .bind(today)
    .fetch_one(db)
    .await?;
    // Per sending member: found in the inbox, found at all, delivered, answered.
    let mut rates: Vec<(i64, f64)> = Vec::new();
    let (mut inbox, mut placed, mut delivered, mut answered) = (0, 0, 0, 0);
    let (mut your_inbox, mut your_placed) = (0, 0);
    for r in sqlx::query(
        "SELECT sender_id, sender_account_id,
             SUM(CASE WHEN placement = 'inbox' THEN 1 ELSE 0 END),
             SUM(CASE WHEN placement IS NOT NULL THEN 1 ELSE 0 END),
             SUM(CASE WHEN status = 'sent' THEN 1 ELSE 0 END),
             SUM(CASE WHEN replied_at IS NOT NULL THEN 1 ELSE 0 END)
         FROM smart_warmup_messages WHERE sent_at >= $1 GROUP BY sender_id, sender_account_id",
    )
    .bind(since)
    .fetch_all(db)
    .await?
    {
        let (i, p): (i64, i64) = (r.try_get(2)?, r.try_get(3)?);
        inbox += i;
        placed += p;
        delivered += r.try_get::<i64, _>(4)?;
        answered += r.try_get::<i64, _>(5)?;
        if p > 0 {
            rates.push((r.try_get(0)?, i as f64 / p as f64));
        }
        if r.try_get::<i64, _>(1)? == caller.account_id {
            your_inbox += i;
            your_placed += p;
        }
    }
    let rank = (your_placed > 0 && !rates.is_empty()).then(|| {
        let yours = your_inbox as f64 / your_placed as f64;
        let at_most = rates.iter().filter(|(_, r)| *r <= yours + 1e-9).count();
        (at_most as f64 * 1000.0 / rates.len() as f64).round() / 10.0
    });
    Ok(WarmupPoolStats {
        pool_size,
        active_participants: active,
        daily_emails_exchanged: exchanged,
        avg_inbox_rate: pct(inbox, placed),
        avg_reply_rate: pct(answered, delivered),
        provider_distribution: providers
            .into_iter()
            .map(|(p, n)| (p, pct(n, pool_size).unwrap_or(0.0)))
            .collect(),
        your_accounts_in_pool: yours,
        your_pool_rank_pct: rank,
    })
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct AnalyticsQuery {
    /// 1-90, default 30.
    pub days: Option<i64>,
    /// A recipients' mailbox provider (`google`, `microsoft`, ..., `other`).
    pub provider: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PoolStatsOfAccount {
    pub total_accounts: i64,
    pub active_accounts: i64,
    pub paused_accounts: i64,
    /// Deliverability of the period over all your members, percent.
    pub avg_deliverability: Option<f64>,
    pub avg_warmup_progress: Option<f64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct GenerationCosts {
    pub total_emails_generated: i64,
    pub ai_tokens_used: i64,
    pub estimated_cost_usd: f64,
    pub period_start: String,
    pub period_end: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProviderDeliverability {
    pub provider: String,
    pub sent: i64,
    pub delivered: i64,
    pub bounced: i64,
    pub spam_rate: Option<f64>,
    pub deliverability_pct: Option<f64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ConversationStats {
    pub total_conversations: i64,
    pub avg_replies_per_thread: Option<f64>,
    pub avg_thread_length_days: Option<f64>,
    pub positive_engagement_rate: Option<f64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubscriptionHealth {
    pub active_subscriptions: i64,
    pub newsletters_received: i64,
    pub unsubscribe_rate: f64,
    pub engagement_rate: f64,
}

/// `GET /v1/send-accounts/smart-warmup/analytics`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SmartWarmupAnalytics {
    pub pool_stats: PoolStatsOfAccount,
    pub generation_costs: GenerationCosts,
    pub provider_deliverability: Vec<ProviderDeliverability>,
    pub conversation_stats: ConversationStats,
    pub subscription_health: SubscriptionHealth,
    /// When the roll-up these figures come from was last refreshed.
    pub refreshed_at: Option<String>,
}

/// Deliverability: delivered share of sent times inbox share of found.
fn deliverability(sent: i64, delivered: i64, inbox: i64, spam: i64) -> Option<f64> {
    (sent > 0 && inbox + spam > 0).then(|| {
        let v = delivered as f64 / sent as f64 * inbox as f64 / (inbox + spam) as f64;
        (v * 1000.0).round() / 10.0
    })
}

pub async fn analytics(
    state: &AppState,
    caller: &Caller,
    q: AnalyticsQuery,
) -> ApiResult<SmartWarmupAnalytics> {
    gate(caller)?;
    let days = q.days.unwrap_or(30);
    if !(1..=90).contains(&days) {
        return Err(ApiError::bad_request("days must be between 1 and 90"));
    }
    let provider = q
        .provider
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_ascii_lowercase);
    let plan = plan(state);
    let now = state.clock.now_ms();
    let today = plan.day(now);
    let first = today - days + 1;
    let rows = sqlx::query(
        "SELECT provider, CAST(SUM(sent) AS BIGINT), CAST(SUM(delivered) AS BIGINT), CAST(SUM(bounced) AS BIGINT), CAST(SUM(inbox) AS BIGINT), CAST(SUM(spam) AS BIGINT), CAST(SUM(replies) AS BIGINT), CAST(SUM(engaged) AS BIGINT), CAST(SUM(threads) AS BIGINT), CAST(SUM(thread_messages) AS BIGINT), CAST(SUM(thread_span_ms) AS BIGINT), CAST(SUM(generated) AS BIGINT), CAST(SUM(ai_tokens) AS BIGINT),
             SUM(ai_cost_usd)
         FROM smart_warmup_rollups WHERE account_id = $1 AND day >= $2
         GROUP BY provider ORDER BY provider",
    )
    .bind(caller.account_id)
    .bind(first)
    .fetch_all(&state.db.pool)
    .await?;
    let mut t = [0i64; 12];
    let mut cost = 0.0;
    let mut per_provider = Vec::new();
    for r in &rows {
        let name: String = r.try_get(0)?;
        if provider.as_deref().is_some_and(|p| p != name) {
            continue;
        }
        let mut v = [0i64; 12];
        for (i, slot) in v.iter_mut().enumerate() {
            *slot = r.try_get::<Option<i64>, _>(i + 1)?.unwrap_or(0);
        }
        cost += r.try_get::<Option<f64>, _>(13)?.unwrap_or(0.0);
        for i in 0..12 {
            t[i] += v[i];
        }
        per_provider.push(ProviderDeliverability {
            provider: name,
            sent: v[0],
            delivered: v[1],
            bounced: v[2],
            spam_rate: pct(v[4], v[3] + v[4]),
            deliverability_pct: deliverability(v[0], v[1], v[3], v[4]),
        });
    }
    let [
        sent,
        delivered,
        _bounced,
        inbox,
        spam,
        _replies,
        engaged,
        threads,
        thread_messages,
        span,
        generated,
        tokens,
    ] = t;
    let members = store::of_account(&state.db, caller.account_id).await?;
    let progress: Vec<f64> = members
        .iter()
        .map(|m| match m.status.as_str() {
            "completed" => 100.0,
            "active" => plan.progress_pct(plan.ramp_day(m.ramp_origin, now)),
            _ => plan.progress_pct(plan.ramp_day(m.ramp_origin, m.paused_at.unwrap_or(now))),
        })
        .collect();
    let refreshed_at = outreach_core::accounts::store::setting(&state.db, REFRESHED_AT)
        .await?
        .and_then(|v| v.parse::<i64>().ok())
        .map(iso);
    let date = |day: i64| {
        chrono::NaiveDate::from_num_days_from_ce_opt(day as i32)
            .unwrap_or_default()
            .to_string()
    };
    Ok(SmartWarmupAnalytics {
        pool_stats: PoolStatsOfAccount {
            total_accounts: members.len() as i64,
            active_accounts: members.iter().filter(|m| m.status == "active").count() as i64,
            paused_accounts: members.iter().filter(|m| m.status == "paused").count() as i64,
            avg_deliverability: deliverability(sent, delivered, inbox, spam),
            avg_warmup_progress: (!progress.is_empty()).then(|| {
                (progress.iter().sum::<f64>() * 10.0 / progress.len() as f64).round() / 10.0
            }),
        },
        generation_costs: GenerationCosts {
            total_emails_generated: generated,
            ai_tokens_used: tokens,
            estimated_cost_usd: (cost * 1e6).round() / 1e6,
            period_start: date(first),
            period_end: date(today),
        },
        provider_deliverability: per_provider,
        conversation_stats: ConversationStats {
            total_conversations: threads,
            avg_replies_per_thread: (threads > 0).then(|| {
                ((thread_messages - threads) as f64 * 100.0 / threads as f64).round() / 100.0
            }),
            avg_thread_length_days: (threads > 0)
                .then(|| (span as f64 * 100.0 / threads as f64 / DAY_MS as f64).round() / 100.0),
            positive_engagement_rate: pct(engaged, delivered),
        },
        subscription_health: SubscriptionHealth {
            active_subscriptions: 0,
            newsletters_received: 0,
            unsubscribe_rate: 0.0,
            engagement_rate: 0.0,
        },
        refreshed_at,
    })
}

/// The `settings` key of the last refresh's time.
const REFRESHED_AT: &str = "smart_warmup.analytics_refreshed_at";

/// Rewrites the roll-up of the last [`REFRESH_DAYS`] warmup days from the
/// messages, unless another server refreshed within the period (`force`
/// skips that check), and drops messages past their retention.
pub async fn refresh(state: &AppState, force: bool) -> anyhow::Result<bool> {
    let now = state.clock.now_ms();
    let period = state.config.smart_warmup.analytics_refresh_seconds as i64 * 1000;
    let mut tx = state.db.pool.begin().await?;
    // Claims the period: the row changes only when the last refresh is old
    // enough, so of several servers one refreshes.
    sqlx::query("INSERT INTO settings (key, value) VALUES ($1, '0') ON CONFLICT (key) DO NOTHING")
        .bind(REFRESHED_AT)
        .execute(&mut *tx)
        .await?;
    let claimed = sqlx::query(
        "UPDATE settings SET value = $1 WHERE key = $2
             AND ($3 = 1 OR CAST(value AS BIGINT) <= $4)",
    )
    .bind(now.to_string())
    .bind(REFRESHED_AT)
    .bind(force as i64)
    .bind(now - period)
    .execute(&mut *tx)
    .await?;
    if claimed.rows_affected() == 0 {
        return Ok(false);
    }
    let first = plan(state).day(now) - REFRESH_DAYS;
    sqlx::query("DELETE FROM smart_warmup_rollups WHERE day >= $1")
        .bind(first)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO smart_warmup_rollups (send_account_id, account_id, day, provider, sent,
             delivered, bounced, inbox, spam, replies, engaged, threads, thread_messages,
             thread_span_ms, generated, ai_tokens, ai_cost_usd)
         SELECT m.sender_id, m.sender_account_id, m.day, m.recipient_provider,
             SUM(CASE WHEN m.status IN ('sent', 'bounced') THEN 1 ELSE 0 END),
             SUM(CASE WHEN m.status = 'sent' THEN 1 ELSE 0 END),
             SUM(CASE WHEN m.status = 'bounced' THEN 1 ELSE 0 END),
             SUM(CASE WHEN m.placement = 'inbox' THEN 1 ELSE 0 END),
             SUM(CASE WHEN m.placement = 'spam' THEN 1 ELSE 0 END),
             SUM(CASE WHEN m.replied_at IS NOT NULL THEN 1 ELSE 0 END),
             SUM(CASE WHEN m.status = 'sent' AND (m.is_read = 1 OR m.flagged = 1 OR m.replied_at IS NOT NULL) THEN 1 ELSE 0 END),
             SUM(CASE WHEN m.depth = 1 AND m.status IN ('sent', 'bounced') THEN 1 ELSE 0 END),
             SUM(CASE WHEN m.depth = 1 AND m.status IN ('sent', 'bounced') THEN
                 (SELECT COUNT(*) FROM smart_warmup_messages t
                  WHERE t.thread_token = m.token AND t.status IN ('sent', 'bounced')) ELSE 0 END),
             SUM(CASE WHEN m.depth = 1 AND m.status IN ('sent', 'bounced') THEN
                 (SELECT MAX(t.sent_at) FROM smart_warmup_messages t
                  WHERE t.thread_token = m.token AND t.status IN ('sent', 'bounced')) - m.sent_at
                 ELSE 0 END),
             SUM(CASE WHEN m.status IN ('sent', 'bounced') THEN 1 ELSE 0 END),
             SUM(CASE WHEN m.status IN ('sent', 'bounced') THEN m.ai_tokens ELSE 0 END),
             SUM(CASE WHEN m.status IN ('sent', 'bounced') THEN m.ai_cost_usd ELSE 0 END)
         FROM smart_warmup_messages m WHERE m.day >= $1
         GROUP BY m.sender_id, m.sender_account_id, m.day, m.recipient_provider",
    )
    .bind(first)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM smart_warmup_messages WHERE sent_at < $1")
        .bind(now - MESSAGE_RETENTION_DAYS * DAY_MS)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(true)
}
