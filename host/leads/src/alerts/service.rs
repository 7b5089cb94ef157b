//! The rules of spec/2 "Alerts": checks, the plan cap, partial updates,
//! the Slack URL (checked by the outbound policy, sealed at rest, shown
//! masked), the history pages and the test run.

use sqlx::Row;

use super::model::*;
use super::store::{self, HistoryRow, RuleFields, RuleRow};
use crate::domains::facet_filter::SampleOrder;
use crate::lists::service::check_name;
use outreach_core::accounts::plans::{Quota, ensure_quota_after_insert};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::iso;
use outreach_core::platform::outbound::check_receiver_url;
use outreach_core::state::AppState;
use outreach_core::store::lock_account;

/// Matches an alert test shows.
const TEST_MATCHES: i64 = 10;
pub const MAX_HISTORY_PAGE: i64 = 100;

fn not_found() -> ApiError {
    ApiError::NotFound("Alert not found".to_owned())
}

/// The associated data that ties a sealed Slack URL to its rule.
pub fn slack_aad(rule_id: i64) -> String {
    format!("alert_rules:{rule_id}:slack_webhook_url")
}

/// `https://hooks.slack.com/…`: enough to recognise, nothing to reuse.
fn mask(url: &str) -> String {
    match outreach_ssrf::Url::parse(url) {
        Ok(u) => format!("{}://{}/…", u.scheme(), u.host_str().unwrap_or("")),
        Err(_) => "…".to_owned(),
    }
}

fn view(state: &AppState, row: &RuleRow) -> AlertRule {
    let slack_url = row.slack_webhook_url.as_ref().map(|sealed| {
        state
            .secrets
            .decrypt(&slack_aad(row.id), sealed)
            .map(|u| mask(&u))
            .unwrap_or_else(|_| "…".to_owned())
    });
    AlertRule {
        id: row.id,
        name: row.name.clone(),
        filters: row.filters.clone(),
        delivery_channels: DeliveryChannels {
            email: row.via_email,
            slack: row.via_slack,
            in_app: row.via_in_app,
            slack_webhook_url: slack_url,
        },
        is_active: row.is_active,
        last_triggered_at: row.last_triggered_at.map(iso),
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
    }
}

/// `GET /v1/alerts`.
pub async fn list(state: &AppState, caller: &Caller) -> ApiResult<AlertRuleList> {
    let rows = store::list(&state.db, caller.account_id).await?;
    Ok(AlertRuleList {
        data: rows.iter().map(|r| view(state, r)).collect(),
        plan_limit: state.plan_limits(caller.plan).quota(Quota::Alerts),
        plan: caller.plan.as_str().to_owned(),
    })
}

/// What a rule will store: its channels after `change`, the Slack URL
/// checked (`Some(None)` removes it, `None` keeps the stored one).
struct Channels {
    email: bool,
    slack: bool,
    in_app: bool,
    url: Option<Option<String>>,
}

async fn channels(
    state: &AppState,
    change: AlertChannelsChange,
    old: Option<&RuleRow>,
) -> ApiResult<Channels> {
    let url = match change.slack_webhook_url {
        Some(Some(raw)) => Some(Some(
            check_receiver_url(&state.outbound, &raw, "delivery_channels.slack_webhook_url")
                .await?,
        )),
        other => other,
    };
    let c = Channels {
        email: change.email.or(old.map(|o| o.via_email)).unwrap_or(true),
        slack: change.slack.or(old.map(|o| o.via_slack)).unwrap_or(false),
        in_app: change.in_app.or(old.map(|o| o.via_in_app)).unwrap_or(true),
        url,
    };
    let has_url = match &c.url {
        Some(u) => u.is_some(),
        None => old.is_some_and(|o| o.slack_webhook_url.is_some()),
    };
    if c.slack && !has_url {
        return Err(ApiError::bad_request(
            "delivery_channels.slack_webhook_url is required when slack is on",
        ));
    }
    Ok(c)
}

/// Writes `rule_id`'s fields on `conn`, sealing a new Slack URL.
#[allow(clippy::too_many_arguments)]
async fn write(
    state: &AppState,
    conn: &mut sqlx::AnyConnection,
    caller: &Caller,
    rule_id: i64,
    name: &str,
    filters: &AlertFilters,
    c: &Channels,
    kept_url: Option<&str>,
    is_active: bool,
) -> ApiResult<()> {
    let sealed = match &c.url {
        Some(Some(url)) => Some(state.secrets.encrypt(&slack_aad(rule_id), url)),
        Some(None) => None,
        None => kept_url.map(str::to_owned),
    };
    let fields = RuleFields {
        name,
        filters,
        via_email: c.email,
        via_slack: c.slack,
        via_in_app: c.in_app,
        slack_webhook_url: sealed.as_deref(),
        is_active,
    };
    store::update(
        conn,
        caller.account_id,
        rule_id,
        &fields,
        state.clock.now_ms(),
    )
    .await?;
    Ok(())
}

/// `POST /v1/alerts`.
pub async fn create(state: &AppState, caller: &Caller, body: NewAlertRule) -> ApiResult<AlertRule> {
    let name = check_name(&body.name)?;
    let filters = body.filters.unwrap_or_default().checked()?;
    let c = channels(state, body.delivery_channels.unwrap_or_default(), None).await?;
    let is_active = body.is_active.unwrap_or(true);
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    lock_account(&mut tx, state.db.backend, caller.account_id).await?;
    let fields = RuleFields {
        name: &name,
        filters: &filters,
        via_email: c.email,
        via_slack: c.slack,
        via_in_app: c.in_app,
        slack_webhook_url: None,
        is_active,
    };
    let id = store::insert(&mut tx, caller.account_id, &fields, now).await?;
    let quota = (Quota::Alerts, "alert_rules");
    ensure_quota_after_insert(
        &mut tx,
        caller.plan,
        state.plan_limits(caller.plan),
        quota,
        caller.account_id,
    )
    .await?;
    write(
        state, &mut tx, caller, id, &name, &filters, &c, None, is_active,
    )
    .await?;
    let row = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    tx.commit().await?;
    Ok(view(state, &row))
}

/// `PUT /v1/alerts/{id}`: only the fields sent change.
pub async fn update(
    state: &AppState,
    caller: &Caller,
    id: i64,
    body: UpdateAlertRule,
) -> ApiResult<AlertRule> {
    let name = body.name.as_deref().map(check_name).transpose()?;
    let mut conn = state.db.pool.acquire().await?;
    let old = store::get(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    drop(conn);
    let filters = match body.filters {
        Some(change) => change.over(&old.filters).checked()?,
        None => old.filters.clone(),
    };
    let c = channels(
        state,
        body.delivery_channels.unwrap_or_default(),
        Some(&old),
    )
    .await?;
    let mut tx = state.db.pool.begin().await?;
    let name = name.unwrap_or_else(|| old.name.clone());
    let is_active = body.is_active.unwrap_or(old.is_active);
    let kept = old.slack_webhook_url.as_deref();
    write(
        state, &mut tx, caller, id, &name, &filters, &c, kept, is_active,
    )
    .await?;
    let row = store::get(&mut tx, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    tx.commit().await?;
    Ok(view(state, &row))
}

/// `DELETE /v1/alerts/{id}`. Its history stays (it names the rule).
pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    if store::delete(&state.db, caller.account_id, id).await? {
        Ok(())
    } else {
        Err(not_found())
    }
}

fn entry(row: HistoryRow) -> AlertHistoryEntry {
    AlertHistoryEntry {
        id: row.id,
        alert_id: row.alert_id,
        alert_name: row.alert_name,
        matched_domains: row.matched_domains,
        delivered_via: DeliveredVia {
            email: row.delivered_email,
            in_app: row.in_app,
            slack: row.delivered_slack,
        },
        created_at: iso(row.created_at),
    }
}

/// `GET /v1/alerts/history`.
pub async fn history(
    state: &AppState,
    caller: &Caller,
    q: HistoryQuery,
) -> ApiResult<AlertHistoryPage> {
    let page = q.page.unwrap_or(1);
    if page < 1 {
        return Err(ApiError::bad_request("page must be at least 1"));
    }
    let limit = q.limit.unwrap_or(20);
    if !(1..=MAX_HISTORY_PAGE).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit must be between 1 and {MAX_HISTORY_PAGE}"
        )));
    }
    let offset = (page - 1).saturating_mul(limit);
    let (rows, total) =
        store::history(&state.db, caller.account_id, q.alert_id, limit, offset).await?;
    Ok(AlertHistoryPage {
        data: rows.into_iter().map(entry).collect(),
        total,
        page,
        pages: (total + limit - 1) / limit,
    })
}

fn strings(row: &sqlx::any::AnyRow, column: &str) -> sqlx::Result<Vec<String>> {
    let text: String = row.try_get(column)?;
    Ok(serde_json::from_str(&text).unwrap_or_default())
}

/// `POST /v1/alerts/{id}/test`: the rule over the pool now, nothing
/// written.
pub async fn test(state: &AppState, caller: &Caller, id: i64) -> ApiResult<AlertTestResult> {
    let mut conn = state.db.pool.acquire().await?;
    let rule = store::get(&mut conn, caller.account_id, id)
        .await?
        .ok_or_else(not_found)?;
    drop(conn);
    let filter = rule.filters.compile();
    let matched_count = filter.count(&state.db).await?;
    let rows = filter
        .sample(
            &state.db,
            "d.domain, d.intent_score, d.intent_level, d.alert_signals, d.likely_buys, d.gaps",
            SampleOrder::Intent,
            matched_count,
            TEST_MATCHES,
        )
        .await?;
    let matched_domains = rows
        .iter()
        .map(|r| {
            Ok(AlertTestMatch {
                domain: r.try_get("domain")?,
                intent_score: r.try_get("intent_score")?,
                level: r.try_get("intent_level")?,
                signals: strings(r, "alert_signals")?,
                likely_buys: strings(r, "likely_buys")?,
                gaps: strings(r, "gaps")?,
            })
        })
        .collect::<sqlx::Result<_>>()?;
    Ok(AlertTestResult {
        alert_id: rule.id,
        alert_name: rule.name,
        matched_count,
        matched_domains,
    })
}
