//! The one comparison of a record's monitored fields with a watch's
//! snapshot. `GET .../check` (the record as it stands) and the pool
//! evaluation (each saved revision) both call [`observe`], so a change is
//! recorded the same way whoever notices it first.

use serde_json::json;
use sqlx::AnyConnection;

use super::model::FieldChange;
use super::store::{self, WatchRow};
use crate::domains::facets::Monitored;
use outreach_core::events::{self, EventType};
use outreach_core::store::Backend;

/// Compares `current`, the record's monitored fields at `revision`, with
/// the watch's snapshot, on `conn` (the caller's transaction, which holds
/// the watch's row):
///
/// - no snapshot yet: `current` becomes the baseline, with no change
///   records (the record's first facts are not a change);
/// - otherwise one change record per differing field, the counters, and
///   one `watchlist.change` with the changes whose preference is on (none
///   when every such preference is off).
///
/// Either way the snapshot moves to `current` at `revision` and the watch
/// is stamped checked; `watch` is updated to match, so a caller applying
/// several revisions compares each with the one before. Returns every
/// changed field, preferences aside.
pub async fn observe(
    conn: &mut AnyConnection,
    backend: Backend,
    watch: &mut WatchRow,
    current: &Monitored,
    revision: i64,
    now: i64,
) -> sqlx::Result<Vec<FieldChange>> {
    let changes = match &watch.snapshot {
        Some(old) => current.changes_from(old),
        None => Vec::new(),
    };
    let account_id = watch.account_id;
    store::insert_changes(conn, backend, account_id, watch.id, &changes, now).await?;
    let changed = changes.len() as i64;
    store::save_snapshot(conn, watch.id, current, revision, changed, now).await?;
    let alerted: Vec<_> = changes
        .iter()
        .filter(|(field, _, _)| watch.preferences.covers(field))
        .map(|(field, old, new)| json!({"field": field, "old": old, "new": new}))
        .collect();
    if !alerted.is_empty() {
        let data = json!({"watchlist_id": watch.id, "domain": watch.domain, "changes": alerted});
        events::record(conn, account_id, EventType::WatchlistChange, &data, now).await?;
    }
    watch.snapshot = Some(current.clone());
    watch.snapshot_revision = revision;
    watch.last_checked_at = Some(now);
    watch.total_changes += changed;
    if changed > 0 {
        watch.last_changed_at = Some(now);
    }
    Ok(changes
        .into_iter()
        .map(|(field, old, new)| FieldChange {
            field: field.to_string(),
            old,
            new,
        })
        .collect())
}
