//! Tracked keywords (spec/2 "Market intelligence"; Pro 50, Enterprise 500
//! by the `tracked_keywords` setting): endpoints in `routes.rs` and
//! `service.rs`, SQL in `store.rs`, the automaton in `matcher.rs`.
//!
//! When the pipeline saves an enrichment, [`record_matches`] runs the
//! summary through every account's keywords at once and, for each keyword
//! the summary holds and the previous summary did not, records a match and
//! a `keyword.match` event `{keyword_id, keyword, domain, excerpt}` in the
//! save's transaction. A summary that keeps a keyword across
//! re-enrichments matches once; a keyword added later matches the
//! enrichments that follow, not the pool as it stands.

pub mod matcher;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::json;
use sqlx::AnyConnection;

use matcher::Automaton;
use outreach_core::events::{self, EventType};

/// The compiled keywords of this server, rebuilt when the stored version
/// (`tracked_keywords_version`, moved on by every add and delete on any
/// server) differs from the one it was built from. A typed extension.
#[derive(Default, Clone)]
pub struct KeywordIndex {
    built: Arc<Mutex<Option<Built>>>,
}

/// An automaton and the keywords' version it was built from.
type Built = (i64, Arc<Automaton>);

impl KeywordIndex {
    /// The automaton as of `conn`'s view of the keywords.
    pub async fn current(&self, conn: &mut AnyConnection) -> anyhow::Result<Arc<Automaton>> {
        let version = store::version(conn).await?;
        if let Some((v, a)) = self.built.lock().expect("keyword index").as_ref()
            && *v == version
        {
            return Ok(a.clone());
        }
        let automaton = Arc::new(Automaton::new(store::all(conn).await?)?);
        *self.built.lock().expect("keyword index") = Some((version, automaton.clone()));
        Ok(automaton)
    }
}

/// Records the keywords `new` (a domain's summary now) holds that `old`
/// (its summary before this save) did not, on `conn`, the save's
/// transaction. Returns the matches recorded.
pub async fn record_matches(
    conn: &mut AnyConnection,
    index: &KeywordIndex,
    (domain_id, domain): (i64, &str),
    old: Option<&str>,
    new: Option<&str>,
    now: i64,
) -> anyhow::Result<usize> {
    let Some(new) = new.filter(|t| !t.trim().is_empty()) else {
        return Ok(0);
    };
    let automaton = index.current(conn).await?;
    if automaton.is_empty() {
        return Ok(0);
    }
    let before: HashSet<usize> = old
        .map(|t| automaton.find(t).into_iter().map(|f| f.pattern).collect())
        .unwrap_or_default();
    let mut recorded = 0;
    for found in automaton.find(new) {
        if before.contains(&found.pattern) {
            continue;
        }
        let excerpt = found.excerpt(new);
        for tracked in automaton.owners(found.pattern) {
            let at = (domain_id, domain, excerpt.as_str());
            if !store::insert_match(conn, tracked, at, now).await? {
                // Deleted since this server built its automaton.
                continue;
            }
            let data = json!({
                "keyword_id": tracked.id,
                "keyword": tracked.keyword,
                "domain": domain,
                "excerpt": excerpt,
            });
            events::record(
                conn,
                tracked.account_id,
                EventType::KeywordMatch,
                &data,
                now,
            )
            .await?;
            recorded += 1;
        }
    }
    Ok(recorded)
}
