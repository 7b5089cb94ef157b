//! [`PoolPort`] for workflows (`outreach_core::ports`): the pool's records,
//! the account's alert rules, audiences and watches, lists, scoring and
//! enrichment, through the same services the endpoints call.
//!
//! - **Records** (`records`, `sample`) are flat JSON objects with exactly
//!   these fields: `domain`, `status` (imported, queued, enriching,
//!   enriched, failed), `company_name`, `industry`, `sub_industry`,
//!   `country` (the registrant's ISO code, else the web server's),
//!   `business_type`, `confidence` (0-1), `intent_score` (0-100),
//!   `intent_level`, `signals` (spec/2's alert signals, then the audience
//!   signals not already named), `tech_stack` (technology names),
//!   `likely_buys`, `website_email`, `employees_range` (text such as
//!   `11-50`: the record holds no `employee_count`), `enriched_at` (RFC 3339
//!   or null). Absent values are null. `business_type` and `confidence`
//!   are null until they are findings (an enrichment, or an import that set
//!   them), as the lists' `/enriched` shows them. A domain the pool holds
//!   only as a name on its way to enrichment is a record with its status
//!   and nulls. `records` reads all of them with one query per 200
//!   domains; `sample` takes the newest records with facts (enriched or
//!   imported) by their last enrichment, else entry in the pool, walking
//!   the facets' index as audience previews do.
//! - **Owns**: alert rules (`Alert`), audiences (`Audience`) and watched
//!   domains (`Watch`) and tracked keywords (`Keyword`) of the account.
//! - **Add to list** is `POST /v1/lists/{id}/items` in one transaction
//!   (`lists::service::add_to`): domains normalised the pool's way, an
//!   item's `notes` kept (the rest of an item is dropped, as the list's
//!   CSV import keeps only the domain), repeats and domains the list holds
//!   skipped, `list.item_added` recorded, the list's item cap refused with
//!   its detail, and 'Lead list not found' for another account's list. An
//!   item without a usable `domain` is skipped rather than failing the
//!   action. There is no 1,000-items-per-request limit: like the CSV import,
//!   one call is bounded by the list's cap.
//! - **Score** resolves the account's rule `rule_<rule_id>` as the scoring
//!   endpoints do ('Scoring rule not found' for an unknown or other
//!   account's rule) and scores the items' domains from one read of the
//!   pool; a domain the pool lacks scores null instead of failing the
//!   batch. The default rules have string ids, so an integer `rule_id`
//!   cannot name them.
//! - **Enrich** is `POST /v1/enrichment/bulk`'s lookup
//!   (`domains::service::lookup`): unknown domains enter the pool and are
//!   queued, an imported record's first enrichment is queued once, and the
//!   account is told (`domain.enriched`) when each lands. The enrichment
//!   endpoints are open to every plan, so there is no plan gate; the
//!   pipeline always runs every stage, so `fields` is only checked against
//!   dns, ssl, whois and tech_stack. `queued` counts the domains now waiting
//!   for an enrichment (queued by this call or already on their way),
//!   `skipped` unusable names, repeats and records already enriched (or
//!   failed: the refresh retries those on its own schedule).

use std::collections::{HashMap, HashSet};

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use crate::domains::facet_filter::{FacetFilter, SampleOrder};
use crate::domains::record::{COLUMNS, DomainRecord, IMPORTED, StoredDomain};
use crate::domains::service::{Lookup, lookup};
use crate::domains::store as pool;
use crate::lists::service as lists;
use crate::scoring::{score, service as scoring};
use outreach_core::error::ApiError;
use outreach_core::ports::{Actor, PoolPort, PortError, PortResult, TriggerTarget};
use outreach_core::state::AppState;

/// The enrichment fields a workflow may name.
pub const ENRICH_FIELDS: [&str; 4] = ["dns", "ssl", "whois", "tech_stack"];

/// The leads crate's [`PoolPort`], added to the state by `crate::AREA`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LeadsPort;

/// An endpoint's refusal as the port's: its detail, or the internal cause.
fn refused(e: ApiError) -> PortError {
    match e {
        ApiError::Internal(cause) => PortError::Internal(cause),
        other => PortError::Refused(other.to_string()),
    }
}

/// The pool's normalisation of an item's `domain`, `None` when absent or
/// unusable.
fn item_domain(item: &Value) -> Option<String> {
    let raw = item.get("domain")?.as_str()?;
    outreach_domain_analysis::domain::normalise(raw).ok()
}

/// A record as workflow conditions read it (the fields are listed in the
/// module docs).
pub fn flatten(r: &DomainRecord) -> Map<String, Value> {
    let mut signals: Vec<&str> = r.alert_signals.iter().map(String::as_str).collect();
    for s in &r.audience_signals {
        if !signals.contains(&s.as_str()) {
            signals.push(s);
        }
    }
    let tech_stack: Vec<&str> = r.technologies.iter().map(|t| t.name.as_str()).collect();
    let country = r.country();
    let flat = json!({
        "domain": r.domain,
        "status": r.status,
        "company_name": r.company_name,
        "industry": r.industry,
        "sub_industry": r.sub_industry,
        "country": country,
        "business_type": r.known_business_type(),
        "confidence": r.known_confidence(),
        "intent_score": r.intent_score,
        "intent_level": r.intent_level,
        "signals": signals,
        "tech_stack": tech_stack,
        "likely_buys": r.likely_buys,
        "website_email": r.website_email,
        "employees_range": r.employees_range,
        "enriched_at": r.enriched_at,
    });
    match flat {
        Value::Object(map) => map,
        _ => unreachable!("json! of an object"),
    }
}

async fn records(
    state: &AppState,
    domains: &[String],
) -> anyhow::Result<HashMap<String, Map<String, Value>>> {
    let mut wanted: Vec<String> = domains
        .iter()
        .filter_map(|d| outreach_domain_analysis::domain::normalise(d).ok())
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    let found = pool::find_many(&state.db, &wanted).await?;
    Ok(found
        .into_iter()
        .map(|s| (s.record.domain.clone(), flatten(&s.record)))
        .collect())
}

async fn sample(state: &AppState, limit: usize) -> anyhow::Result<Vec<Map<String, Value>>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    // No filter: every record with facts matches, so the sample walks the
    // newest-first index and stops at `limit`.
    let rows = FacetFilter::default()
        .sample(&state.db, COLUMNS, SampleOrder::Newest, i64::MAX, limit)
        .await?;
    rows.iter()
        .map(|row| Ok(flatten(&StoredDomain::from_row(row)?.record)))
        .collect()
}

async fn owns(
    state: &AppState,
    actor: Actor,
    target: TriggerTarget,
    id: i64,
) -> anyhow::Result<bool> {
    let mut conn = state.db.pool.acquire().await?;
    let account = actor.account_id;
    Ok(match target {
        TriggerTarget::Alert => crate::alerts::store::get(&mut conn, account, id)
            .await?
            .is_some(),
        TriggerTarget::Audience => crate::audiences::store::get(&mut conn, account, id)
            .await?
            .is_some(),
        TriggerTarget::Watch => crate::watchlist::store::watch(&mut conn, account, id)
            .await?
            .is_some(),
        TriggerTarget::Keyword => crate::intelligence::keywords::store::get(&state.db, account, id)
            .await?
            .is_some(),
    })
}

/// Industries of the account's list domains (by how many domains) and of
/// its audiences' filters (each counted once), most frequent first.
async fn account_industries(state: &AppState, actor: Actor) -> anyhow::Result<Vec<String>> {
    use sqlx::Row;
    let rows = sqlx::query(
        "SELECT d.industry AS industry, COUNT(*) AS n FROM list_items li \
         JOIN domains d ON d.domain = li.domain \
         WHERE li.account_id = $1 AND d.industry IS NOT NULL AND d.industry <> '' \
         GROUP BY d.industry",
    )
    .bind(actor.account_id)
    .fetch_all(&state.db.pool)
    .await?;
    let mut counted: HashMap<String, i64> = HashMap::new();
    for r in &rows {
        counted.insert(r.try_get("industry")?, r.try_get("n")?);
    }
    let filters: Vec<String> =
        sqlx::query_scalar("SELECT filters FROM audiences WHERE account_id = $1")
            .bind(actor.account_id)
            .fetch_all(&state.db.pool)
            .await?;
    for text in filters {
        let f: Value = serde_json::from_str(&text).unwrap_or_default();
        for name in f["industries"].as_array().into_iter().flatten() {
            if let Some(name) = name.as_str() {
                *counted.entry(name.to_owned()).or_default() += 1;
            }
        }
    }
    let mut out: Vec<(String, i64)> = counted.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(out.into_iter().map(|(name, _)| name).collect())
}

async fn add_to_list(
    state: &AppState,
    actor: Actor,
    list_id: i64,
    items: &[Value],
) -> PortResult<Value> {
    let mut seen = HashSet::new();
    let mut rows = Vec::with_capacity(items.len());
    for item in items {
        let Some(domain) = item_domain(item) else {
            continue;
        };
        let notes = item
            .get("notes")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        lists::check_notes(&notes).map_err(refused)?;
        if seen.insert(domain.clone()) {
            rows.push((domain, notes));
        }
    }
    let (added, _) = lists::add_to(state, actor, list_id, &rows)
        .await
        .map_err(refused)?;
    Ok(json!({"added": added, "skipped": items.len() - added}))
}

async fn score_items(
    state: &AppState,
    actor: Actor,
    rule_id: i64,
    mut items: Vec<Value>,
) -> PortResult<Vec<Value>> {
    let id = format!("rule_{rule_id}");
    let rule = scoring::resolve(state, actor.account_id, Some(&id))
        .await
        .map_err(refused)?;
    let domains: Vec<Option<String>> = items.iter().map(item_domain).collect();
    let mut wanted: Vec<String> = domains.iter().flatten().cloned().collect();
    wanted.sort_unstable();
    wanted.dedup();
    let found = pool::find_many(&state.db, &wanted)
        .await
        .map_err(anyhow::Error::from)?;
    let by_domain = pool::by_domain(&found);
    for (item, domain) in items.iter_mut().zip(&domains) {
        let Value::Object(fields) = item else {
            continue;
        };
        let record = domain.as_deref().and_then(|d| by_domain.get(d));
        let (value, breakdown) = match record {
            Some(r) => {
                let result = score::result(&rule, r);
                let breakdown =
                    serde_json::to_value(&result.breakdown).map_err(anyhow::Error::from)?;
                (json!(result.score), breakdown)
            }
            None => (Value::Null, Value::Null),
        };
        fields.insert("score".into(), value);
        fields.insert("score_breakdown".into(), breakdown);
    }
    Ok(items)
}

async fn enrich(
    state: &AppState,
    actor: Actor,
    domains: &[String],
    fields: &[String],
) -> PortResult<Value> {
    if let Some(bad) = fields.iter().find(|f| !ENRICH_FIELDS.contains(&f.as_str())) {
        return Err(PortError::Refused(format!(
            "fields must be among {} (got '{}')",
            ENRICH_FIELDS.join(", "),
            bad.chars().take(40).collect::<String>()
        )));
    }
    let mut wanted: Vec<String> = Vec::with_capacity(domains.len());
    for d in domains {
        if let Ok(d) = outreach_domain_analysis::domain::normalise(d)
            && !wanted.contains(&d)
        {
            wanted.push(d);
        }
    }
    let mut queued = 0;
    // As many per call as the bulk endpoint takes per request.
    for chunk in wanted.chunks(crate::domains::service::MAX_BULK_DOMAINS) {
        let answers = lookup(state, actor.account_id, chunk)
            .await
            .map_err(refused)?;
        queued += answers
            .iter()
            .filter(|a| match a {
                Lookup::Pending(_) => true,
                Lookup::Ready(r) => r.status == IMPORTED,
            })
            .count();
    }
    Ok(json!({"queued": queued, "skipped": domains.len() - queued}))
}

impl PoolPort for LeadsPort {
    fn records<'a>(
        &'a self,
        state: &'a AppState,
        domains: &'a [String],
    ) -> BoxFuture<'a, anyhow::Result<HashMap<String, Map<String, Value>>>> {
        Box::pin(records(state, domains))
    }

    fn trigger_items<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        trigger: &'a str,
        params: &'a Value,
        limit: usize,
    ) -> BoxFuture<'a, PortResult<Vec<Value>>> {
        Box::pin(async move {
            crate::integrations::zapier::triggers::by_name(state, actor, trigger, params, limit)
                .await
                .map_err(refused)
        })
    }

    fn sample<'a>(
        &'a self,
        state: &'a AppState,
        limit: usize,
    ) -> BoxFuture<'a, anyhow::Result<Vec<Map<String, Value>>>> {
        Box::pin(sample(state, limit))
    }

    fn owns<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        target: TriggerTarget,
        id: i64,
    ) -> BoxFuture<'a, anyhow::Result<bool>> {
        Box::pin(owns(state, actor, target, id))
    }

    fn add_to_list<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        list_id: i64,
        items: &'a [Value],
    ) -> BoxFuture<'a, PortResult<Value>> {
        Box::pin(add_to_list(state, actor, list_id, items))
    }

    fn score<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        rule_id: i64,
        items: Vec<Value>,
    ) -> BoxFuture<'a, PortResult<Vec<Value>>> {
        Box::pin(score_items(state, actor, rule_id, items))
    }

    fn account_industries<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
    ) -> BoxFuture<'a, anyhow::Result<Vec<String>>> {
        Box::pin(account_industries(state, actor))
    }

    fn enrich<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        domains: &'a [String],
        fields: &'a [String],
    ) -> BoxFuture<'a, PortResult<Value>> {
        Box::pin(enrich(state, actor, domains, fields))
    }
}

#[cfg(test)]
mod tests;
