//! Alert rules' part of a pool-evaluation batch. For each active rule the
//! domains the batch made start matching become one history entry (with
//! `last_triggered_at`, `search.alert`, one `domain.new_match` per domain
//! and a delivery job per email or Slack channel); a domain that matched
//! before the event is not new. Hot domains among them give
//! `intent.high_detected` once per account and domain in the batch, not
//! once per rule.

use std::collections::BTreeSet;

use serde_json::json;
use sqlx::AnyConnection;

use super::deliver;
use super::model::AlertMatchedDomain;
use super::store;
use crate::audiences::evaluate::matched;
use crate::domains::facets::PoolEvent;
use outreach_core::events::{self, EventType};
use outreach_core::store::Backend;

/// The intent level that makes a match `intent.high_detected`.
const HOT: &str = "hot";

/// Applies `events` (oldest first) to every active rule on `conn`.
pub async fn apply(
    conn: &mut AnyConnection,
    backend: Backend,
    events: &[PoolEvent],
    now: i64,
) -> sqlx::Result<()> {
    // (account, domain) of hot matches, each announced once.
    let mut hot: BTreeSet<(i64, usize)> = BTreeSet::new();
    for rule in store::active(conn).await? {
        let filter = rule.filters.compile();
        // The latest event of each newly matching domain.
        let mut new: Vec<usize> = Vec::new();
        for (i, event) in events.iter().enumerate() {
            let c = &event.change;
            if matched(&filter, &c.after) && !matched(&filter, &c.before) {
                new.retain(|j| events[*j].change.domain != c.domain);
                new.push(i);
            }
        }
        if new.is_empty() {
            continue;
        }
        let matched_domains: Vec<AlertMatchedDomain> = new
            .iter()
            .map(|i| {
                let c = &events[*i].change;
                AlertMatchedDomain {
                    domain: c.domain.clone(),
                    intent_score: c.after.as_ref().map_or(0, |f| f.intent_score),
                    level: c.level.clone(),
                    signals: c.alert_signals.clone(),
                    likely_buys: c.likely_buys.clone(),
                }
            })
            .collect();
        let history_id = store::insert_history(conn, &rule, &matched_domains, now).await?;
        let data = json!({
            "alert_id": rule.id,
            "alert_name": rule.name,
            "history_id": history_id,
            "matched_domains": matched_domains,
        });
        events::record(conn, rule.account_id, EventType::SearchAlert, &data, now).await?;
        for i in &new {
            let c = &events[*i].change;
            let after = c.after.as_ref();
            let data = json!({
                "alert_id": rule.id,
                "alert_name": rule.name,
                "domain": c.domain,
                "industry": c.monitored.industry,
                "country": after.and_then(|f| f.country.clone()),
                "confidence": after.map_or(0.0, |f| f.confidence as f64 / 100.0),
                "intent_score": after.map_or(0, |f| f.intent_score),
            });
            events::record(conn, rule.account_id, EventType::DomainNewMatch, &data, now).await?;
            if c.level == HOT {
                hot.insert((rule.account_id, *i));
            }
        }
        deliver::enqueue(conn, backend, &rule, history_id, now).await?;
    }
    // One announcement per account and domain, whichever rules matched it.
    let mut announced: BTreeSet<(i64, &str)> = BTreeSet::new();
    for (account_id, i) in hot {
        let c = &events[i].change;
        if !announced.insert((account_id, c.domain.as_str())) {
            continue;
        }
        let data = json!({
            "domain": c.domain,
            "intent_score": c.after.as_ref().map_or(0, |f| f.intent_score),
            "level": c.level,
            "signals": c.alert_signals,
        });
        events::record(conn, account_id, EventType::IntentHighDetected, &data, now).await?;
    }
    Ok(())
}
