//! Rules of the competitor endpoints (Pro and Enterprise).
//!
//! - The domain must already be what spec/2 asks for, a lower-case
//!   registrable domain without protocol or path: `https://Example.com/x`
//!   and `www.example.com` answer 400 naming the form expected, rather
//!   than being silently rewritten.
//! - A domain the pool lacks is added and its enrichment queued; the
//!   account hears when it lands (`domain.enriched`).
//! - The plan's cap (`competitors`) answers 400 and writes nothing; a
//!   domain tracked already answers 409.

use super::competitor_not_found;
use super::model::*;
use super::store::{self, CompetitorRow, NewRow};
use crate::csv_out::{self, CsvFile};
use crate::domains::pipeline;
use crate::domains::service::normalise;
use crate::intelligence::Industry;
use outreach_core::accounts::plans::{Plan, Quota, ensure_quota_after_insert, quota_view};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

/// Longest `notes` (characters).
const MAX_NOTES: usize = 2000;

pub fn view(row: &CompetitorRow) -> Competitor {
    Competitor {
        id: row.id,
        domain: row.domain.clone(),
        industry: row.industry(),
        notes: row.notes.clone(),
        created_at: iso(row.created_at),
        last_checked_at: row.enriched_at.map(iso),
        alert_email: row.alert_email.clone(),
        status: row.status.clone(),
        enrichment: row.has_facts().then(|| CompetitorEnrichment {
            industry: row.pool_industry.clone(),
            country: row.country.clone(),
            confidence: row.confidence,
            website_email: row.website_email.clone(),
            business_type: row.business_type.clone(),
        }),
    }
}

/// The caller's competitor `id`, or 404.
pub async fn owned(state: &AppState, caller: &Caller, id: i64) -> ApiResult<CompetitorRow> {
    caller.require(Plan::Pro)?;
    store::get(&state.db, caller.account_id, id)
        .await?
        .ok_or_else(competitor_not_found)
}

/// `domain` as spec/2 wants it, or 400.
fn competitor_domain(input: &str) -> ApiResult<String> {
    const FORM: &str = "domain must be a lower-case domain without protocol or path, such as \
                        example.com";
    let plain = !input.is_empty()
        && input
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-');
    if !plain {
        return Err(ApiError::bad_request(FORM));
    }
    let normalised = normalise(input)?;
    if normalised != input {
        return Err(ApiError::bad_request(format!(
            "{FORM}; track the registrable domain {normalised}"
        )));
    }
    Ok(normalised)
}

fn check_email(email: &str) -> ApiResult<()> {
    let ok = email.len() <= 254
        && email
            .split_once('@')
            .is_some_and(|(local, host)| !local.is_empty() && host.contains('.'))
        && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request("alert_email is not an email address"))
    }
}

/// `GET /v1/intelligence/competitors`.
pub async fn list(state: &AppState, caller: &Caller) -> ApiResult<CompetitorPage> {
    caller.require(Plan::Pro)?;
    let rows = store::list(&state.db, caller.account_id).await?;
    let (limit, remaining) = quota_view(
        state.plan_limits(caller.plan),
        Quota::Competitors,
        rows.len() as u64,
    );
    let competitors: Vec<Competitor> = rows.iter().map(view).collect();
    Ok(CompetitorPage {
        count: competitors.len(),
        competitors,
        limit,
        remaining,
    })
}

/// `POST /v1/intelligence/competitors`.
pub async fn add(state: &AppState, caller: &Caller, body: NewCompetitor) -> ApiResult<Competitor> {
    caller.require(Plan::Pro)?;
    let domain = competitor_domain(&body.domain)?;
    let industry = Industry::optional(body.industry.as_deref()).map_err(|_| {
        ApiError::bad_request("industry must be an industry of the taxonomy, such as Software")
    })?;
    let notes = body.notes.as_deref().unwrap_or("").trim();
    if notes.chars().count() > MAX_NOTES {
        return Err(ApiError::bad_request(format!(
            "notes must be at most {MAX_NOTES} characters"
        )));
    }
    let alert_email = body
        .alert_email
        .as_deref()
        .map(str::trim)
        .filter(|e| !e.is_empty());
    if let Some(email) = alert_email {
        check_email(email)?;
    }
    let backend = state.db.backend;
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, backend, caller.account_id).await?;
    let new = NewRow {
        domain: &domain,
        industry: industry.as_ref().map(|i| i.name),
        notes,
        alert_email,
    };
    // The record first (a write, which SQLite's locking wants before any
    // read), queued when new, with the account waiting for it.
    let domains = [domain.clone()];
    pipeline::submit_in(
        &mut tx,
        backend,
        &domains,
        "api",
        Some(caller.account_id),
        now,
    )
    .await?;
    let Some(id) = store::insert(&mut tx, caller.account_id, &new, now).await? else {
        return Err(ApiError::Conflict("Competitor already tracked".into()));
    };
    ensure_quota_after_insert(
        &mut tx,
        caller.plan,
        state.plan_limits(caller.plan),
        (Quota::Competitors, "competitors"),
        caller.account_id,
    )
    .await?;
    tx.commit().await?;
    Ok(view(&owned(state, caller, id).await?))
}

/// `DELETE /v1/intelligence/competitors/{id}`.
pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    caller.require(Plan::Pro)?;
    if store::delete(&state.db, caller.account_id, id).await? {
        Ok(())
    } else {
        Err(competitor_not_found())
    }
}

/// `POST /v1/intelligence/competitors/{id}/refresh`: an enrichment of the
/// domain now, whatever its refresh time.
pub async fn refresh(state: &AppState, caller: &Caller, id: i64) -> ApiResult<RefreshAnswer> {
    let row = owned(state, caller, id).await?;
    let queued = pipeline::enrich_now(state, row.domain_id, &row.domain, caller.account_id).await?;
    Ok(RefreshAnswer {
        id: row.id,
        domain: row.domain,
        status: if queued { "queued" } else { "already_queued" }.into(),
    })
}

/// `GET /v1/intelligence/competitors/export`: one line per competitor with
/// its enrichment, every cell safe from formula injection.
pub async fn export(state: &AppState, caller: &Caller) -> ApiResult<CsvFile> {
    let page = list(state, caller).await?;
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let rows = page.competitors.iter().map(|c| {
        let e = c.enrichment.as_ref();
        vec![
            c.id.to_string(),
            c.domain.clone(),
            text(&c.industry),
            c.notes.clone(),
            text(&c.alert_email),
            c.status.clone(),
            c.created_at.clone(),
            text(&c.last_checked_at),
            e.and_then(|e| e.country.clone()).unwrap_or_default(),
            e.map(|e| format!("{:.2}", e.confidence))
                .unwrap_or_default(),
            e.and_then(|e| e.website_email.clone()).unwrap_or_default(),
            e.map(|e| e.business_type.clone()).unwrap_or_default(),
        ]
    });
    csv_out::file(
        "competitors.csv",
        &[
            "id",
            "domain",
            "industry",
            "notes",
            "alert_email",
            "status",
            "created_at",
            "last_checked_at",
            "country",
            "confidence",
            "website_email",
            "business_type",
        ],
        rows,
    )
}
