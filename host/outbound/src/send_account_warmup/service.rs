//! Rules of the send-account warmup reports (module docs of
//! `send_account_warmup`).

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::store;
use crate::send_accounts::store as send_accounts;
use crate::send_accounts::store::SendAccountRow;
use crate::sequence_events::day_of;
use crate::sequence_warmup::auth_records::{self, AuthCheck};
use crate::sequence_warmup::blacklist;
use crate::sequence_warmup::checks::{domain_of, overall_score, recommendations};
use crate::sequence_warmup::service::{
    DAY_MS, WINDOW_DAYS, date_of, inbox_rate, pct, reputation_formula, round1,
};
use crate::sequence_warmup::store as cache;
use crate::sequences::service::gate;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::within;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// How long a deliverability report is reused (spec/3: 1 hour).
pub const REPORT_CACHE_MS: i64 = 3_600_000;

/// One DNS authentication check, as spec/3 lists it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DnsAuthentication {
    /// SPF, DKIM or DMARC.
    #[serde(rename = "type")]
    pub kind: String,
    pub passed: bool,
    pub details: String,
    pub record: Option<String>,
    /// DKIM: the selector the key was found under.
    pub selector: Option<String>,
    /// DMARC: the `p=` policy.
    pub policy: Option<String>,
}

impl From<AuthCheck> for DnsAuthentication {
    fn from(c: AuthCheck) -> Self {
        DnsAuthentication {
            kind: c.kind,
            passed: c.passed,
            details: c.details,
            record: c.record,
            selector: c.selector,
            policy: c.policy,
        }
    }
}

/// The blacklist check by list name.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BlacklistCheck {
    /// Some list flags the domain or its mail server.
    pub listed: bool,
    pub checked_lists: Vec<String>,
    pub clean_lists: Vec<String>,
    pub flagged_lists: Vec<String>,
}

/// Measured over the last 30 days of the account's sequence events.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Reputation {
    /// 0-100; null until something was sent.
    pub sender_score: Option<f64>,
    /// Percent, heuristic; null until something was sent.
    pub inbox_placement_rate: Option<f64>,
    /// Percent; null while complaints are not recorded per send account.
    pub spam_complaint_rate: Option<f64>,
    /// Percent; null until something was sent.
    pub bounce_rate: Option<f64>,
    /// Null: no WHOIS or RDAP lookups are made.
    pub domain_age_days: Option<i64>,
}

/// `GET /v1/send-accounts/{id}/warmup/deliverability`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AccountDeliverability {
    /// The send account's id, a string as in its other responses.
    pub account_id: String,
    pub email: String,
    /// 0-100 (formula in `sequence_warmup::checks`).
    pub overall_score: i64,
    pub checked_at: String,
    pub dns_authentication: Vec<DnsAuthentication>,
    pub blacklist_check: BlacklistCheck,
    pub reputation: Reputation,
    pub recommendations: Vec<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct HistoryQuery {
    /// 7-180, default 30.
    pub days: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryPoint {
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    /// 0-100.
    pub reputation_score: f64,
    /// Percent; null on a day without sends.
    pub bounce_rate: Option<f64>,
    /// Percent; null while complaints are not recorded per send account.
    pub complaint_rate: Option<f64>,
    pub total_sent: i64,
}

/// `GET /v1/send-accounts/{id}/warmup/reputation-history`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReputationHistory {
    /// The send account's id (an integer here, as spec/3 says).
    pub account_id: i64,
    pub days: i64,
    /// Oldest first; only days with activity.
    pub points: Vec<HistoryPoint>,
}

/// The caller's send account, or 404 (also for other accounts' ids).
async fn owned(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SendAccountRow> {
    gate(caller)?;
    send_accounts::get(&state.db, caller.account_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("Send account"))
}

/// The report from the cache when younger than an hour, otherwise built
/// now and cached.
pub async fn deliverability(
    state: &AppState,
    caller: &Caller,
    id: i64,
) -> ApiResult<AccountDeliverability> {
    let account = owned(state, caller, id).await?;
    let now = state.clock.now_ms();
    let key = format!("deliverability:{}", account.id);
    if let Some(body) = cache::cached(&state.db, &key, now).await?
        && let Ok(report) = serde_json::from_str::<AccountDeliverability>(&body)
    {
        return Ok(report);
    }
    let report = build(state, &account, now).await?;
    let body = serde_json::to_string(&report).map_err(anyhow::Error::from)?;
    cache::cache(&state.db, &key, &body, now, now + REPORT_CACHE_MS).await?;
    Ok(report)
}

async fn build(
    state: &AppState,
    account: &SendAccountRow,
    now: i64,
) -> ApiResult<AccountDeliverability> {
    let domain = domain_of(&account.email)
        .ok_or_else(|| ApiError::bad_request("The send account's address has no domain"))?;
    let since = (day_of(now) - (WINDOW_DAYS - 1)) * DAY_MS;
    let (auth, list, counts) = tokio::join!(
        auth_records::check_domain(&state.dns, &domain),
        blacklist::check(state, &domain),
        store::counts_since(&state.db, account.account_id, account.id, since)
    );
    let (list, counts) = (list?, counts?);
    let bounce_rate = (counts.sent > 0).then(|| round1(pct(counts.bounced, counts.sent)));
    let sender_score = bounce_rate.map(|b| reputation_formula(b, 0.0));
    let mut recs = recommendations(&auth, &list, bounce_rate, None);
    if !account.warmup_enabled && counts.sent < 100 {
        recs.push(
            "This mailbox has little sending history: turn on warmup for the sequences that send from it so volume grows gradually.".into(),
        );
    }
    let checked: Vec<String> = list.results.iter().map(|r| r.list.clone()).collect();
    let flagged: Vec<String> = list.flagged().map(str::to_string).collect();
    let clean = checked
        .iter()
        .filter(|l| !flagged.contains(l))
        .cloned()
        .collect();
    Ok(AccountDeliverability {
        account_id: account.id.to_string(),
        email: account.email.clone(),
        overall_score: overall_score(&auth, &list, sender_score),
        checked_at: iso(now),
        dns_authentication: [auth.spf, auth.dkim, auth.dmarc]
            .into_iter()
            .map(DnsAuthentication::from)
            .collect(),
        blacklist_check: BlacklistCheck {
            listed: !flagged.is_empty(),
            checked_lists: checked,
            clean_lists: clean,
            flagged_lists: flagged,
        },
        reputation: Reputation {
            sender_score,
            inbox_placement_rate: bounce_rate.zip(sender_score).map(|(b, s)| inbox_rate(b, s)),
            spam_complaint_rate: None,
            bounce_rate,
            domain_age_days: None,
        },
        recommendations: recs,
    })
}

pub async fn history(
    state: &AppState,
    caller: &Caller,
    id: i64,
    q: HistoryQuery,
) -> ApiResult<ReputationHistory> {
    gate(caller)?;
    let days = within("days", q.days.unwrap_or(30), 7..=180)?;
    let account = owned(state, caller, id).await?;
    let today = day_of(state.clock.now_ms());
    let rows = store::history(&state.db, account.account_id, account.id, today - days + 1).await?;
    Ok(ReputationHistory {
        account_id: account.id,
        days,
        points: rows
            .into_iter()
            .map(|r| HistoryPoint {
                date: date_of(r.day),
                reputation_score: r.reputation_score,
                bounce_rate: r.bounce_rate,
                complaint_rate: r.complaint_rate,
                total_sent: r.total_sent,
            })
            .collect(),
    })
}
