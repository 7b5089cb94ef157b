//! The three actions, each through the service its own endpoint uses, so
//! caps, plan gates and errors are that endpoint's: `add-to-list` is
//! `POST /v1/lists/{id}/items` for one domain, `enrich-domain` is `GET
//! /v1/enrichment/domain`, `add-to-watchlist` is `POST /v1/watchlist`.
//! Domains may be URLs; they are reduced to the registrable domain as the
//! lists do.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domains::record::DomainRecord;
use crate::domains::service::{Lookup, lookup, normalise};
use crate::lists::service as lists;
use crate::watchlist::model::NewWatch;
use crate::watchlist::service::{self as watchlist, ALREADY_WATCHED};
use crate::watchlist::store as watches;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;

/// `POST /v1/zapier/actions/add-to-list`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddToList {
    /// A domain or URL.
    pub domain: String,
    pub list_id: i64,
    /// Kept on the list item, as the list's own endpoint keeps it.
    pub notes: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AddedToList {
    pub success: bool,
    /// As normalised.
    pub domain: String,
    pub list_id: i64,
    /// "Added to <list>" or "Already in <list>".
    pub message: String,
}

/// `POST /v1/zapier/actions/enrich-domain`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnrichDomain {
    /// A domain or URL.
    pub domain: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EnrichAnswer {
    pub success: bool,
    pub domain: String,
    /// queued or enriching while the domain is on its way (the account is
    /// told by `domain.enriched`); imported, enriched or failed with the
    /// record.
    pub status: String,
    /// Whole percent; null until known.
    pub confidence: Option<i64>,
    pub industry: Option<String>,
    /// The record, when the pool has one.
    pub record: Option<DomainRecord>,
}

/// `POST /v1/zapier/actions/add-to-watchlist`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddToWatchlist {
    /// A domain or URL.
    pub domain: String,
    /// Any of dns, content, tech, ssl; absent turns every alert on.
    pub alert_types: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WatchAnswer {
    pub success: bool,
    pub domain: String,
    pub watchlist_id: i64,
    /// The alert types the watch raises: tech, content, dns, ssl.
    pub monitoring: Vec<String>,
}

/// The automation platform's alert types.
pub const ALERT_TYPES: [&str; 4] = ["dns", "content", "tech", "ssl"];

/// `add-to-list`.
pub async fn add_to_list(
    state: &AppState,
    caller: &Caller,
    body: AddToList,
) -> ApiResult<AddedToList> {
    let domain = normalise(&body.domain)?;
    let notes = body.notes.unwrap_or_default();
    lists::check_notes(&notes)?;
    let actor = lists::actor(caller);
    let (added, _) = lists::add_to(state, actor, body.list_id, &[(domain.clone(), notes)]).await?;
    let list = lists::get(state, caller, body.list_id).await?;
    let message = if added == 1 {
        format!("Added to {}", list.name)
    } else {
        format!("Already in {}", list.name)
    };
    Ok(AddedToList {
        success: true,
        domain,
        list_id: body.list_id,
        message,
    })
}

/// `enrich-domain`: queues a domain new to the pool (or an imported
/// record's first enrichment) and answers its status; a record the pool
/// has is returned with it.
pub async fn enrich_domain(
    state: &AppState,
    caller: &Caller,
    body: EnrichDomain,
) -> ApiResult<EnrichAnswer> {
    let domain = normalise(&body.domain)?;
    let answer = lookup(state, caller.account_id, std::slice::from_ref(&domain))
        .await?
        .remove(0);
    Ok(match answer {
        Lookup::Ready(record) => EnrichAnswer {
            success: true,
            domain,
            status: record.status.clone(),
            confidence: record.known_confidence_pct(),
            industry: record.industry.clone(),
            record: Some(*record),
        },
        Lookup::Pending(p) => EnrichAnswer {
            success: true,
            domain,
            status: p.status,
            confidence: None,
            industry: None,
            record: None,
        },
    })
}

/// The watch preferences of `alert_types` (industry, email, tech, status):
/// tech is technology changes, content the industry and the site's email,
/// dns and ssl the record's status. None turns every one on.
pub fn preferences(alert_types: Option<&[String]>) -> ApiResult<[bool; 4]> {
    let Some(types) = alert_types else {
        return Ok([true; 4]);
    };
    let mut on = [false; 4];
    for t in types {
        match t.trim().to_ascii_lowercase().as_str() {
            "content" => {
                on[0] = true;
                on[1] = true;
            }
            "tech" => on[2] = true,
            "dns" | "ssl" => on[3] = true,
            _ => {
                return Err(ApiError::bad_request(format!(
                    "alert_types must be among {} (got '{}')",
                    ALERT_TYPES.join(", "),
                    t.chars().take(40).collect::<String>()
                )));
            }
        }
    }
    Ok(on)
}

/// The alert types a watch's preferences raise.
fn monitoring([industry, email, tech, status]: [bool; 4]) -> Vec<String> {
    let mut out = Vec::new();
    if tech {
        out.push("tech");
    }
    if industry || email {
        out.push("content");
    }
    if status {
        out.extend(["dns", "ssl"]);
    }
    out.into_iter().map(String::from).collect()
}

/// `add-to-watchlist`: the watchlist's caps and plan gate; a domain the
/// account watches already answers its watch as it is (the platform may
/// run an action twice).
pub async fn add_to_watchlist(
    state: &AppState,
    caller: &Caller,
    body: AddToWatchlist,
) -> ApiResult<WatchAnswer> {
    let on = preferences(body.alert_types.as_deref())?;
    let domain = normalise(&body.domain)?;
    let new = NewWatch {
        domain: domain.clone(),
        alert_on_industry_change: Some(on[0]),
        alert_on_email_change: Some(on[1]),
        alert_on_tech_change: Some(on[2]),
        alert_on_status_change: Some(on[3]),
    };
    match watchlist::add(state, caller, new).await {
        Ok(w) => Ok(WatchAnswer {
            success: true,
            domain: w.domain,
            watchlist_id: w.id,
            monitoring: monitoring([
                w.alert_on_industry_change,
                w.alert_on_email_change,
                w.alert_on_tech_change,
                w.alert_on_status_change,
            ]),
        }),
        Err(ApiError::Conflict(detail)) if detail == ALREADY_WATCHED => {
            let existing = watches::watches(&state.db, caller.account_id)
                .await?
                .into_iter()
                .find(|w| w.domain == domain)
                .ok_or(ApiError::Conflict(detail))?;
            let p = existing.preferences;
            Ok(WatchAnswer {
                success: true,
                domain,
                watchlist_id: existing.id,
                monitoring: monitoring([p.industry, p.email, p.tech, p.status]),
            })
        }
        Err(e) => Err(e),
    }
}
