//! The watchlist's part of the pool evaluation (`crate::evaluation`): each
//! batch of pool events is compared with the snapshots of every account's
//! watches of their domains, in the batch's transaction.

use std::collections::HashMap;

use sqlx::AnyConnection;

use super::observe::observe;
use super::store;
use crate::domains::facets::PoolEvent;
use outreach_core::store::Backend;

/// Applies `events` (one claimed batch) to the watches of their domains, on
/// `conn`, the transaction that consumed them. The watches are found in one
/// query per batch. For each watch, its domain's events go in revision
/// order, and those at or below the snapshot's revision are skipped: two
/// servers may consume one domain's events out of order, and a check may
/// have seen the revision already. A record's first facts become the
/// baseline of a watch without a snapshot.
pub async fn apply(
    conn: &mut AnyConnection,
    backend: Backend,
    events: &[PoolEvent],
    now: i64,
) -> sqlx::Result<()> {
    // Only saves that leave the record with facts carry monitored values.
    let mut by_domain: HashMap<i64, Vec<&PoolEvent>> = HashMap::new();
    for event in events.iter().filter(|e| e.change.after.is_some()) {
        by_domain.entry(event.domain_id).or_default().push(event);
    }
    if by_domain.is_empty() {
        return Ok(());
    }
    for list in by_domain.values_mut() {
        list.sort_by_key(|e| e.change.revision);
    }
    let mut ids: Vec<i64> = by_domain.keys().copied().collect();
    ids.sort_unstable();
    let watches = store::watches_of_domains(conn, backend, &ids).await?;
    for mut watch in watches {
        let Some(list) = by_domain.get(&watch.domain_id) else {
            continue;
        };
        for event in list {
            let revision = event.change.revision;
            if revision <= watch.snapshot_revision {
                continue;
            }
            let monitored = &event.change.monitored;
            observe(conn, backend, &mut watch, monitored, revision, now).await?;
        }
    }
    Ok(())
}
