//! The event outbox (spec/2 "Events"). Every area records its events here
//! with [`record`], inside the transaction of the change that causes them,
//! so an event exists exactly when its change committed. The consumer (the
//! webhooks fan-out, which workflow triggers will join) takes batches of
//! undispatched rows in id order with [`claim_pending`], inside the
//! transaction that acts on them, so a crash neither loses nor doubles an
//! event. [`pending`] and [`mark_dispatched`] are the one-row form of the
//! same protocol.
//!
//! Consumers must not read "rows after the last id seen": on PostgreSQL ids
//! are handed out at insert but become visible at commit, so a smaller id can
//! appear after a larger one. The dispatched state has no such gap.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{AnyConnection, Row};

use crate::store::{Backend, Db};

#[cfg(test)]
mod tests;

/// The event types of spec/2, with the area that records each (see
/// ARCHITECTURE.md "Events").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventType {
    /// A saved search (alert rule) finds new matches. Alerts, in `outreach-leads`.
    #[serde(rename = "search.alert")]
    SearchAlert,
    /// A tracked keyword is detected. Alerts, in `outreach-leads`.
    #[serde(rename = "keyword.match")]
    KeywordMatch,
    /// An audience has new matching domains. Audiences, in `outreach-leads`.
    #[serde(rename = "audience.updated")]
    AudienceUpdated,
    /// A new domain matches criteria. Alerts, in `outreach-leads`.
    #[serde(rename = "domain.new_match")]
    DomainNewMatch,
    /// Enrichment of a domain completed. Domain pool, in `outreach-leads`.
    #[serde(rename = "domain.enriched")]
    DomainEnriched,
    /// A high-intent domain is detected. Domain pool, in `outreach-leads`.
    #[serde(rename = "intent.high_detected")]
    IntentHighDetected,
    /// A watched domain's data changed. Watchlist, in `outreach-leads`.
    #[serde(rename = "watchlist.change")]
    WatchlistChange,
    /// A domain was added to a lead list. Lists, in `outreach-leads`.
    #[serde(rename = "list.item_added")]
    ListItemAdded,
    /// A list item's funnel status changed. Lists, in `outreach-leads`.
    #[serde(rename = "list.status_changed")]
    ListStatusChanged,
    /// An export job finished. Spreadsheet export, in `outreach-leads`.
    #[serde(rename = "export.completed")]
    ExportCompleted,
    /// A sequence email received a reply. Inbox, in `outreach-outbound`.
    #[serde(rename = "sequence.replied")]
    SequenceReplied,
    /// A sequence email bounced. Inbox, in `outreach-outbound`.
    #[serde(rename = "sequence.bounced")]
    SequenceBounced,
    /// A sequence email was opened. Tracking, in `outreach-outbound`.
    #[serde(rename = "sequence.opened")]
    SequenceOpened,
    /// A link in a sequence email was clicked. Tracking, in `outreach-outbound`.
    #[serde(rename = "sequence.clicked")]
    SequenceClicked,
    /// A contact finished all steps. Sender, in `outreach-outbound`.
    #[serde(rename = "sequence.completed")]
    SequenceCompleted,
    /// A contact unsubscribed. Tracking and inbox, in `outreach-outbound`.
    #[serde(rename = "sequence.unsubscribed")]
    SequenceUnsubscribed,
    /// Beyond spec/2: a webhook subscription was disabled because its
    /// deliveries kept failing for five days. Webhooks, in
    /// `outreach-automation`.
    #[serde(rename = "webhook.disabled")]
    WebhookDisabled,
    /// Beyond spec/2: a smart warmup member was paused because its own
    /// address bounced pool mail. Smart warmup, in `outreach-outbound`.
    #[serde(rename = "warmup.member_paused")]
    WarmupMemberPaused,
}

impl EventType {
    /// Every event type: spec/2's list in its order, then ours.
    pub const ALL: [EventType; 18] = [
        EventType::SearchAlert,
        EventType::KeywordMatch,
        EventType::AudienceUpdated,
        EventType::DomainNewMatch,
        EventType::DomainEnriched,
        EventType::IntentHighDetected,
        EventType::WatchlistChange,
        EventType::ListItemAdded,
        EventType::ListStatusChanged,
        EventType::ExportCompleted,
        EventType::SequenceReplied,
        EventType::SequenceBounced,
        EventType::SequenceOpened,
        EventType::SequenceClicked,
        EventType::SequenceCompleted,
        EventType::SequenceUnsubscribed,
        EventType::WebhookDisabled,
        EventType::WarmupMemberPaused,
    ];

    /// The name on the wire (`list.item_added`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::SearchAlert => "search.alert",
            EventType::KeywordMatch => "keyword.match",
            EventType::AudienceUpdated => "audience.updated",
            EventType::DomainNewMatch => "domain.new_match",
            EventType::DomainEnriched => "domain.enriched",
            EventType::IntentHighDetected => "intent.high_detected",
            EventType::WatchlistChange => "watchlist.change",
            EventType::ListItemAdded => "list.item_added",
            EventType::ListStatusChanged => "list.status_changed",
            EventType::ExportCompleted => "export.completed",
            EventType::SequenceReplied => "sequence.replied",
            EventType::SequenceBounced => "sequence.bounced",
            EventType::SequenceOpened => "sequence.opened",
            EventType::SequenceClicked => "sequence.clicked",
            EventType::SequenceCompleted => "sequence.completed",
            EventType::SequenceUnsubscribed => "sequence.unsubscribed",
            EventType::WebhookDisabled => "webhook.disabled",
            EventType::WarmupMemberPaused => "warmup.member_paused",
        }
    }

    /// Parses a name of spec/2's list, or one of the three names its create
    /// examples use instead (`alert.domain_matched`,
    /// `watchlist.domain_changed`, `sequence.email_replied`), which mean
    /// `search.alert`, `watchlist.change` and `sequence.replied`.
    pub fn parse(name: &str) -> Option<EventType> {
        match name {
            "alert.domain_matched" => Some(EventType::SearchAlert),
            "watchlist.domain_changed" => Some(EventType::WatchlistChange),
            "sequence.email_replied" => Some(EventType::SequenceReplied),
            _ => EventType::ALL.into_iter().find(|t| t.as_str() == name),
        }
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One recorded event.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxEvent {
    pub id: i64,
    pub account_id: i64,
    pub event_type: EventType,
    pub data: Value,
    pub created_at: i64,
}

/// Records an event on `conn`, which should be the transaction of the change
/// that causes it (`&mut *tx`). Returns the event's id.
pub async fn record(
    conn: &mut AnyConnection,
    account_id: i64,
    event_type: EventType,
    data: &Value,
    now_ms: i64,
) -> sqlx::Result<i64> {
    let row = sqlx::query(
        "INSERT INTO event_outbox (account_id, event_type, data, created_at)
         VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(account_id)
    .bind(event_type.as_str())
    .bind(data.to_string())
    .bind(now_ms)
    .fetch_one(conn)
    .await?;
    row.try_get(0)
}

/// Records several events of one type in one statement, on the
/// transaction of the change that causes them (see [`record`]). A batch
/// writer (the sender's recorder) would otherwise pay a round trip per
/// event.
pub async fn record_many(
    conn: &mut AnyConnection,
    backend: Backend,
    event_type: EventType,
    events: &[(i64, Value, i64)],
) -> sqlx::Result<()> {
    // 4 parameters a row; 200 rows stay far below either backend's limit.
    for chunk in events.chunks(200) {
        let sql = format!(
            "INSERT INTO event_outbox (account_id, event_type, data, created_at) VALUES {}",
            crate::store::value_rows(backend, chunk.len(), 4)
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for (account_id, data, at) in chunk {
            q = q
                .bind(*account_id)
                .bind(event_type.as_str())
                .bind(data.to_string())
                .bind(*at);
        }
        q.execute(&mut *conn).await?;
    }
    Ok(())
}

/// Up to `limit` undispatched events, oldest first.
///
/// Several consumers may read the same rows; the one whose
/// [`mark_dispatched`] changes a row owns it (compare the returned count).
pub async fn pending(conn: &mut AnyConnection, limit: i64) -> sqlx::Result<Vec<OutboxEvent>> {
    let rows = sqlx::query(
        "SELECT id, account_id, event_type, data, created_at FROM event_outbox
         WHERE dispatched_at IS NULL ORDER BY id LIMIT $1",
    )
    .bind(limit)
    .fetch_all(conn)
    .await?;
    decode(&rows)
}

/// Takes up to `limit` undispatched events, oldest first, and marks them
/// dispatched in one statement; call it in the transaction that acts on
/// them, so they come back undispatched if that transaction fails. Several
/// consumers may call it at once: on PostgreSQL each skips the rows another
/// has locked, on SQLite writers take turns; either way every event goes to
/// exactly one caller.
pub async fn claim_pending(
    conn: &mut AnyConnection,
    backend: Backend,
    limit: i64,
    now_ms: i64,
) -> sqlx::Result<Vec<OutboxEvent>> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    // Only types this server knows: a newer server's new kinds stay for it.
    static KNOWN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        EventType::ALL
            .iter()
            .map(|t| format!("'{}'", t.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let known = &*KNOWN;
    let sql = format!(
        "UPDATE event_outbox SET dispatched_at = $1 WHERE id IN \
         (SELECT id FROM event_outbox WHERE dispatched_at IS NULL AND event_type IN ({known}) \
          ORDER BY id LIMIT $2{lock}) \
         RETURNING id, account_id, event_type, data, created_at"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(now_ms)
        .bind(limit)
        .fetch_all(conn)
        .await?;
    let mut events = decode(&rows)?;
    // RETURNING promises no order.
    events.sort_by_key(|e| e.id);
    Ok(events)
}

/// Marks one event dispatched; returns whether this call did it (false when
/// another consumer got there first). Call it in the transaction that acts on
/// the event.
pub async fn mark_dispatched(conn: &mut AnyConnection, id: i64, now_ms: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE event_outbox SET dispatched_at = $1 WHERE id = $2 AND dispatched_at IS NULL",
    )
    .bind(now_ms)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The events recorded for one account, newest first (for tests and support).
pub async fn for_account(db: &Db, account_id: i64, limit: i64) -> sqlx::Result<Vec<OutboxEvent>> {
    let mut conn = db.pool.acquire().await?;
    let rows = sqlx::query(
        "SELECT id, account_id, event_type, data, created_at FROM event_outbox
         WHERE account_id = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(account_id)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    let mut events = Vec::with_capacity(rows.len());
    for row in &rows {
        if let Ok(event) = from_row(row)? {
            events.push(event);
        }
    }
    Ok(events)
}

/// Reads outbox rows, skipping (with a warning) any of a type this server
/// does not know. Only `record` writes the table, with a known type, so an
/// unknown name means a newer server wrote it; it is left for that server.
fn decode(rows: &[sqlx::any::AnyRow]) -> sqlx::Result<Vec<OutboxEvent>> {
    let mut events = Vec::with_capacity(rows.len());
    for row in rows {
        match from_row(row)? {
            Ok(event) => events.push(event),
            Err(name) => {
                tracing::warn!(event_type = %name, "outbox row with an unknown event type skipped")
            }
        }
    }
    Ok(events)
}

/// Reads one outbox row; the inner `Err` carries an event type this server
/// does not know.
fn from_row(row: &sqlx::any::AnyRow) -> sqlx::Result<Result<OutboxEvent, String>> {
    let name: String = row.try_get("event_type")?;
    let Some(event_type) = EventType::parse(&name) else {
        return Ok(Err(name));
    };
    let data: String = row.try_get("data")?;
    Ok(Ok(OutboxEvent {
        id: row.try_get("id")?,
        account_id: row.try_get("account_id")?,
        event_type,
        data: serde_json::from_str(&data).unwrap_or(Value::Null),
        created_at: row.try_get("created_at")?,
    }))
}
