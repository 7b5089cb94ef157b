//! Services one area crate offers another through the state, without a
//! crate dependency between them.
//!
//! Workflow actions (`outreach-automation`) add to lists, score, enrich and
//! enrol: rules that live in `outreach-leads` and `outreach-outbound`. The
//! crate graph keeps area crates independent (ARCHITECTURE.md, "Crate
//! graph"), so the core names the interface here, the owning crate adds an
//! implementation as a typed extension (`Arc<dyn PoolPort>`,
//! `Arc<dyn OutboundPort>`) in its `Area::extend`, and the workflow engine
//! reads it with `state.ext::<Arc<dyn PoolPort>>()`. Methods take the
//! state as an argument because an extension must not keep a clone of it
//! (ARCHITECTURE.md, "Extending the state").
//!
//! Every method acts for an [`Actor`] (the workflow's owner) under that
//! account's plan caps, exactly as the area's own endpoint would, and
//! answers a refusal the endpoint would answer as [`PortError::Refused`]
//! with the endpoint's detail text, which the run record shows.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use crate::accounts::Plan;
use crate::state::AppState;

/// The account a workflow acts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor {
    pub account_id: i64,
    pub plan: Plan,
}

/// Why a port call did not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// Refused as the area's endpoint would refuse it (an unknown or other
    /// account's id, a plan cap, a Free plan): the text is that endpoint's
    /// error detail.
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

pub type PortResult<T> = Result<T, PortError>;

/// A resource a workflow's trigger_config may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerTarget {
    /// `{alert_id}` of an `intent_alert` trigger.
    Alert,
    /// `{audience_id}` of an `audience_match` trigger.
    Audience,
    /// `{watch_id}` of a `watchlist_change` trigger.
    Watch,
    /// `{keyword_id}` of a `tracked_keyword_match` trigger.
    Keyword,
}

/// The domain pool, lists, scoring and enrichment, for workflows.
pub trait PoolPort: Send + Sync {
    /// The pool's record of each of `domains` that the pool holds, keyed by
    /// the normalised domain, as flat JSON objects with the field names
    /// conditions read (the implementation's doc comment lists them:
    /// `domain`, `industry`, `country`, `confidence`, `intent_score`,
    /// `signals`, `website_email`...). Domains not in the pool are absent
    /// from the map.
    fn records<'a>(
        &'a self,
        state: &'a AppState,
        domains: &'a [String],
    ) -> BoxFuture<'a, anyhow::Result<HashMap<String, Map<String, Value>>>>;

    /// Up to `limit` of the pool's records, newest first, in the shape of
    /// [`PoolPort::records`]: the working set of a run that has no domains.
    fn sample<'a>(
        &'a self,
        state: &'a AppState,
        limit: usize,
    ) -> BoxFuture<'a, anyhow::Result<Vec<Map<String, Value>>>>;

    /// Whether `id` is a `target` of the actor's account (false for an
    /// unknown id or one of another account).
    fn owns<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        target: TriggerTarget,
        id: i64,
    ) -> BoxFuture<'a, anyhow::Result<bool>>;

    /// Adds the items (objects with at least `domain`; other fields are
    /// kept as the list's import keeps them) to lead list `list_id`, as
    /// `POST /v1/lists/{id}/items` does (normalising, skipping duplicates,
    /// the list's item cap). Answers `{added, skipped}` (counts), for the
    /// run record.
    fn add_to_list<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        list_id: i64,
        items: &'a [Value],
    ) -> BoxFuture<'a, PortResult<Value>>;

    /// Scores each item's `domain` with scoring rule `rule_id` (as
    /// `POST /v1/scoring/batch`); answers the items in order, each with
    /// `score` (integer, or null when the domain is not in the pool) and
    /// `score_breakdown` added.
    fn score<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        rule_id: i64,
        items: Vec<Value>,
    ) -> BoxFuture<'a, PortResult<Vec<Value>>>;

    /// Queues enrichment of `domains` with the given `fields` (a subset of
    /// dns, ssl, whois, tech_stack) as `POST /v1/domains/enrich` does, under
    /// the actor's plan. Answers `{queued, skipped}` (counts).
    fn enrich<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        domains: &'a [String],
        fields: &'a [String],
    ) -> BoxFuture<'a, PortResult<Value>>;

    /// The items of automation-platform polling trigger `trigger`
    /// (`new-domain`, `domain-enriched`, `score-threshold`) for the actor,
    /// newest first, at most `limit`, exactly as `GET
    /// /v1/zapier/triggers/<trigger>` answers them with `params` as its
    /// query (`{industry, country, min_confidence}` or `{threshold}`). Each
    /// item has a string `id` that stays the same for the same item, which
    /// the REST hooks' deliverer keys on. An unknown trigger or a bad
    /// parameter is refused with the endpoint's detail.
    fn trigger_items<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        trigger: &'a str,
        params: &'a Value,
        limit: usize,
    ) -> BoxFuture<'a, PortResult<Vec<Value>>>;

    /// The industries the actor's account works in, for template
    /// suggestions: those of the pool records of its lead lists' domains
    /// and those its audiences filter on, most frequent first.
    fn account_industries<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
    ) -> BoxFuture<'a, anyhow::Result<Vec<String>>>;
}

/// Sequences and the inbox, for workflows.
pub trait OutboundPort: Send + Sync {
    /// Enrols `contacts` (objects with `email` and optional `first_name`,
    /// `last_name`, `company`, `domain` and custom fields) in sequence
    /// `sequence_id` as `POST /v1/sequences/{id}/enroll` does (suppression,
    /// duplicates and caps included). Answers `{enrolled, skipped}`.
    fn enroll<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        sequence_id: i64,
        contacts: &'a [Value],
    ) -> BoxFuture<'a, PortResult<Value>>;

    /// Replies from a stored template to the inbox threads of the items'
    /// domains (`auto_reply_template`): for each item, the account's latest
    /// inbound reply from that domain whose classification is in
    /// `only_classes` (any when empty) and that has not had an automatic
    /// reply gets one through its send account. Answers `{replied,
    /// skipped}`.
    fn auto_reply<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        reply: &'a AutoReply,
        items: &'a [Value],
    ) -> BoxFuture<'a, PortResult<Value>>;

    /// The ids of the actor's account's sequences, for template
    /// suggestions (a sequence no workflow enrols into).
    fn sequence_ids<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
    ) -> BoxFuture<'a, anyhow::Result<Vec<i64>>>;
}

/// The config of an `auto_reply_template` action, after templating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoReply {
    pub subject: String,
    pub body: String,
    pub only_classes: Vec<String>,
}

/// The shared handles, as stored in the state's extensions.
pub type SharedPoolPort = Arc<dyn PoolPort>;
pub type SharedOutboundPort = Arc<dyn OutboundPort>;
