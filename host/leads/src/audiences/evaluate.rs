//! Audiences' part of a pool-evaluation batch: for every active audience,
//! the domains the batch's events made start matching (counted in
//! `match_count` and `new_since_viewed`, announced by one
//! `audience.updated` per audience) and those that stopped (taken off
//! `match_count`). Events the audience's count already reflects
//! (`counted_through`) are skipped.

use serde_json::json;
use sqlx::AnyConnection;

use super::store;
use crate::domains::facet_filter::FacetFilter;
use crate::domains::facets::{Facets, PoolEvent};
use outreach_core::events::{self, EventType};

/// Whether a record with `facets` (none: no facts) matches.
pub fn matched(filter: &FacetFilter, facets: &Option<Facets>) -> bool {
    facets.as_ref().is_some_and(|f| filter.matches(f))
}

/// Applies `events` (oldest first) to every active audience on `conn`.
pub async fn apply(conn: &mut AnyConnection, events: &[PoolEvent], now: i64) -> sqlx::Result<()> {
    for audience in store::active(conn).await? {
        let filter = audience.filters.compile();
        let mut new_domains: Vec<&str> = Vec::new();
        let mut delta = 0i64;
        for event in events.iter().filter(|e| e.id > audience.counted_through) {
            let before = matched(&filter, &event.change.before);
            let after = matched(&filter, &event.change.after);
            if after && !before {
                delta += 1;
                if !new_domains.contains(&event.change.domain.as_str()) {
                    new_domains.push(&event.change.domain);
                }
            } else if before && !after {
                delta -= 1;
            }
        }
        if delta == 0 && new_domains.is_empty() {
            continue;
        }
        let match_count =
            store::add_matches(conn, audience.id, delta, new_domains.len() as i64).await?;
        if !new_domains.is_empty() {
            let data = json!({
                "audience_id": audience.id,
                "audience_name": audience.name,
                "new_domains": new_domains,
                "match_count": match_count.max(0),
            });
            events::record(
                conn,
                audience.account_id,
                EventType::AudienceUpdated,
                &data,
                now,
            )
            .await?;
        }
    }
    Ok(())
}
