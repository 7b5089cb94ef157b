//! The DNS endpoints of a sequence (health, blacklist, dns-guide,
//! deliverability) and the score and advice both warmup areas share.
//!
//! **Overall score** (0-100, an integer): points earned over points
//! possible. SPF passed 15, DKIM passed 15, DMARC passed 10 plus 5 when it
//! enforces (quarantine or reject); 25 for a clean blacklist check, less 10
//! per list that flags the domain or its mail server (not below 0); and the
//! reputation estimate x 0.30 when there is sending data. Without sending
//! data the reputation part is left out of both sides, so a new domain is
//! scored on its DNS alone.

use serde::Serialize;
use utoipa::ToSchema;

use super::auth_records::{self, AuthCheck, AuthReport, DKIM_SELECTORS};
use super::blacklist::{self, BlacklistReport};
use super::dns_guide::{self, DnsGuide};
use super::model::WarmupDashboard;
use super::service::dashboard_of;
use crate::send_accounts::store as send_accounts;
use crate::sequences::service::owned;
use crate::sequences::store::SequenceRow;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// Bounce rate (percent) above which mailbox providers start filtering.
pub const BOUNCE_WARN_PCT: f64 = 2.0;
/// Complaint rate (percent) above which Gmail and Yahoo start filtering.
pub const COMPLAINT_WARN_PCT: f64 = 0.1;

/// `GET /v1/sequence-warmup/{sequence_id}/health`.
#[derive(Debug, Serialize, ToSchema)]
pub struct HealthReport {
    pub domain: String,
    pub from_email: String,
    pub spf: AuthCheck,
    pub dkim: AuthCheck,
    pub dmarc: AuthCheck,
    /// The selectors probed for DKIM (a key elsewhere is not seen).
    pub dkim_selectors_checked: Vec<String>,
    pub dkim_selectors_found: Vec<String>,
    /// SPF, DKIM and DMARC all passed.
    pub all_passed: bool,
    /// What to fix first, or that nothing needs fixing.
    pub recommendation: String,
    pub checked_at: String,
}

/// `GET /v1/sequence-warmup/{sequence_id}/deliverability`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SequenceDeliverability {
    pub sequence_id: i64,
    pub domain: String,
    pub from_email: String,
    /// 0-100 (formula in the module docs of `sequence_warmup::checks`).
    pub overall_score: i64,
    pub checked_at: String,
    pub health: HealthReport,
    pub blacklist: BlacklistReport,
    pub dashboard: WarmupDashboard,
    pub recommendations: Vec<String>,
}

/// The domain of an address, lower case; None without an `@`.
pub fn domain_of(email: &str) -> Option<String> {
    let (_, domain) = email.trim().rsplit_once('@')?;
    let domain = domain.trim_end_matches('.').to_lowercase();
    (!domain.is_empty()).then_some(domain)
}

/// The sequence's from_email and its domain; 400 when it has none.
fn sender_of(s: &SequenceRow) -> ApiResult<(String, String)> {
    let email = s.from_email.clone().ok_or_else(|| {
        ApiError::bad_request(
            "The sequence has no from_email: set one (a connected send account) to check its domain",
        )
    })?;
    let domain = domain_of(&email)
        .ok_or_else(|| ApiError::bad_request("The sequence's from_email has no domain"))?;
    Ok((email, domain))
}

pub fn health_of(domain: &str, from_email: &str, auth: AuthReport, now: i64) -> HealthReport {
    let all_passed = auth.spf.passed && auth.dkim.passed && auth.dmarc.passed;
    let recommendation = if auth.advice.is_empty() {
        format!("SPF, DKIM and DMARC are in place for {domain}; nothing to change.")
    } else {
        auth.advice.join(" ")
    };
    HealthReport {
        domain: domain.to_string(),
        from_email: from_email.to_string(),
        spf: auth.spf,
        dkim: auth.dkim,
        dmarc: auth.dmarc,
        dkim_selectors_checked: DKIM_SELECTORS.iter().map(|s| s.to_string()).collect(),
        dkim_selectors_found: auth.dkim_selectors_found,
        all_passed,
        recommendation,
        checked_at: iso(now),
    }
}

pub async fn health(state: &AppState, caller: &Caller, id: i64) -> ApiResult<HealthReport> {
    let s = owned(state, caller, id).await?;
    let (email, domain) = sender_of(&s)?;
    let auth = auth_records::check_domain(&state.dns, &domain).await;
    Ok(health_of(&domain, &email, auth, state.clock.now_ms()))
}

pub async fn blacklist(state: &AppState, caller: &Caller, id: i64) -> ApiResult<BlacklistReport> {
    let s = owned(state, caller, id).await?;
    let (_, domain) = sender_of(&s)?;
    blacklist::check(state, &domain).await
}

/// The SMTP host of the sequence's send account (by id, else the account
/// whose address is the from_email).
async fn smtp_host(state: &AppState, s: &SequenceRow, email: &str) -> ApiResult<Option<String>> {
    let account = match s.send_account_id {
        Some(id) => send_accounts::get(&state.db, s.account_id, id).await?,
        None => send_accounts::find_by_email(&state.db, s.account_id, email).await?,
    };
    Ok(account.map(|a| a.smtp_host))
}

pub async fn dns_guide(state: &AppState, caller: &Caller, id: i64) -> ApiResult<DnsGuide> {
    let s = owned(state, caller, id).await?;
    let (email, domain) = sender_of(&s)?;
    let host = smtp_host(state, &s, &email).await?;
    let auth = auth_records::check_domain(&state.dns, &domain).await;
    Ok(dns_guide::guide(&domain, &email, host.as_deref(), &auth))
}

/// The overall score (module docs).
pub fn overall_score(
    auth: &AuthReport,
    blacklist: &BlacklistReport,
    reputation: Option<f64>,
) -> i64 {
    let mut earned = 0.0;
    let mut possible = 70.0;
    for (passed, points) in [
        (auth.spf.passed, 15.0),
        (auth.dkim.passed, 15.0),
        (auth.dmarc.passed, 10.0),
        (
            auth.dmarc.passed
                && matches!(auth.dmarc.policy.as_deref(), Some("quarantine" | "reject")),
            5.0,
        ),
    ] {
        if passed {
            earned += points;
        }
    }
    earned += (25.0 - 10.0 * blacklist.listed_count as f64).max(0.0);
    if let Some(r) = reputation {
        earned += r * 0.30;
        possible += 30.0;
    }
    (earned * 100.0 / possible).round().clamp(0.0, 100.0) as i64
}

/// Advice from the checks and the sending figures, most important first:
/// blacklistings, then DNS authentication, then bounces and complaints.
pub fn recommendations(
    auth: &AuthReport,
    blacklist: &BlacklistReport,
    bounce_rate: Option<f64>,
    complaint_rate: Option<f64>,
) -> Vec<String> {
    let mut out: Vec<String> = blacklist
        .flagged()
        .map(|list| {
            format!(
                "{} is listed on {list}: find the cause (a compromised machine, purchased or stale addresses) and request removal on the list's site.",
                blacklist.ip.as_deref().filter(|_| !blacklist::DOMAIN_LISTS.contains(&list)).unwrap_or(&blacklist.domain)
            )
        })
        .collect();
    out.extend(auth.advice.iter().cloned());
    if let Some(b) = bounce_rate.filter(|b| *b > BOUNCE_WARN_PCT) {
        out.push(format!(
            "The bounce rate is {b:.1}% (above {BOUNCE_WARN_PCT}%): verify addresses before enrolling them and drop hard bounces."
        ));
    }
    if let Some(c) = complaint_rate.filter(|c| *c > COMPLAINT_WARN_PCT) {
        out.push(format!(
            "The complaint rate is {c:.2}% (above {COMPLAINT_WARN_PCT}%): send to people who expect your mail and keep the unsubscribe link."
        ));
    }
    out
}

pub async fn deliverability(
    state: &AppState,
    caller: &Caller,
    id: i64,
) -> ApiResult<SequenceDeliverability> {
    let s = owned(state, caller, id).await?;
    let (email, domain) = sender_of(&s)?;
    let (auth, list) = tokio::join!(
        auth_records::check_domain(&state.dns, &domain),
        blacklist::check(state, &domain)
    );
    let list = list?;
    let dashboard = dashboard_of(state, &s).await?;
    let sent: i64 = dashboard
        .daily_volume_chart
        .iter()
        .map(|d| d.sent_count)
        .sum();
    let (bounced, complaints) = dashboard.daily_volume_chart.iter().fold((0, 0), |t, d| {
        (t.0 + d.bounce_count, t.1 + d.complaint_count)
    });
    let rates = (sent > 0).then(|| {
        (
            super::service::pct(bounced, sent),
            super::service::pct(complaints, sent),
        )
    });
    let mut recs = recommendations(&auth, &list, rates.map(|r| r.0), rates.map(|r| r.1));
    match dashboard.warmup_phase.as_str() {
        "paused" => recs.push("Warmup is paused, so the daily cap is frozen: resume it when the problems above are fixed.".into()),
        "not_started" if !dashboard.warmup_enabled => recs.push(
            "Warmup is off: turn it on (warmup_enabled) for a new domain or mailbox so volume grows gradually.".into(),
        ),
        _ => {}
    }
    let now = state.clock.now_ms();
    let score = overall_score(&auth, &list, rates.map(|_| dashboard.reputation_estimate));
    Ok(SequenceDeliverability {
        sequence_id: s.id,
        domain: domain.clone(),
        from_email: email.clone(),
        overall_score: score,
        checked_at: iso(now),
        health: health_of(&domain, &email, auth, now),
        blacklist: list,
        dashboard,
        recommendations: recs,
    })
}
