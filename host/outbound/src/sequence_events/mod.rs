//! spec/1 "Events": the per-step, per-message record of what happened to
//! each sequence email (sent, delivered, opened, clicked, replied, bounced,
//! unsubscribed). The sender, tracking and the inbox write them here on the
//! transaction of the change they belong to; analytics and A/B results read
//! them. `sequence_days` keeps the daily sent and bounced counts beside
//! them, so daily limits and the warmup chart never count events.

use sqlx::AnyConnection;

/// The kinds of spec/1 "Events".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Sent,
    Delivered,
    Opened,
    Clicked,
    Replied,
    Bounced,
    Unsubscribed,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Sent,
        Kind::Delivered,
        Kind::Opened,
        Kind::Clicked,
        Kind::Replied,
        Kind::Bounced,
        Kind::Unsubscribed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Sent => "sent",
            Kind::Delivered => "delivered",
            Kind::Opened => "opened",
            Kind::Clicked => "clicked",
            Kind::Replied => "replied",
            Kind::Bounced => "bounced",
            Kind::Unsubscribed => "unsubscribed",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One event to record.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub account_id: i64,
    pub sequence_id: i64,
    pub step_id: Option<i64>,
    pub enrollment_id: Option<i64>,
    /// The `sequence_messages` row.
    pub message_id: Option<i64>,
    pub send_account_id: Option<i64>,
    pub kind: Kind,
    pub variant: Option<String>,
    /// Clicked: the original URL.
    pub url: Option<String>,
    /// Replied: the classification label; bounced: `hard` or `soft`.
    pub detail: Option<String>,
    pub at: i64,
}

/// Records `events` on `conn` (the transaction of the change they belong
/// to). Every kind but `clicked` is kept once per message: a repeat is
/// ignored, and the returned flags say which events were new (the caller
/// writes outbox events and counters for those only). A click is always
/// recorded; `first_of_kind` marks the message's first click (unique clicks).
pub async fn record(conn: &mut AnyConnection, events: &[NewEvent]) -> sqlx::Result<Vec<bool>> {
    let mut fresh = Vec::with_capacity(events.len());
    for e in events {
        fresh.push(record_one(conn, e).await?);
    }
    bump_days(conn, events, &fresh).await?;
    Ok(fresh)
}

async fn record_one(conn: &mut AnyConnection, e: &NewEvent) -> sqlx::Result<bool> {
    let first = if e.kind == Kind::Clicked {
        match e.message_id {
            Some(m) => {
                let seen: Option<i64> = sqlx::query_scalar(
                    "SELECT id FROM sequence_events WHERE message_id = $1 AND event_type = 'clicked' LIMIT 1",
                )
                .bind(m)
                .fetch_optional(&mut *conn)
                .await?;
                seen.is_none()
            }
            None => true,
        }
    } else {
        true
    };
    let done = sqlx::query(
        "INSERT INTO sequence_events (account_id, sequence_id, step_id, enrollment_id, message_id,
             send_account_id, event_type, variant, url, detail, first_of_kind, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING",
    )
    .bind(e.account_id)
    .bind(e.sequence_id)
    .bind(e.step_id)
    .bind(e.enrollment_id)
    .bind(e.message_id)
    .bind(e.send_account_id)
    .bind(e.kind.as_str())
    .bind(e.variant.as_deref())
    .bind(e.url.as_deref())
    .bind(e.detail.as_deref())
    .bind(i64::from(first))
    .bind(e.at)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Adds new bounced events to their sequence's day. Sends are counted by
/// the sender when it reserves them (the daily limit must hold before the
/// message leaves), so `sent` events do not add here.
async fn bump_days(
    conn: &mut AnyConnection,
    events: &[NewEvent],
    fresh: &[bool],
) -> sqlx::Result<()> {
    let mut days: std::collections::BTreeMap<(i64, i64), (i64, i64)> = Default::default();
    for (e, new) in events.iter().zip(fresh) {
        if !new || e.kind != Kind::Bounced {
            continue;
        }
        let d = days
            .entry((e.sequence_id, day_of(e.at)))
            .or_insert((e.account_id, 0));
        d.1 += 1;
    }
    for ((sequence_id, day), (account_id, bounced)) in days {
        add_to_day(conn, sequence_id, day, account_id, 0, bounced, 0).await?;
    }
    Ok(())
}

/// Adds to one sequence day's counters (complaints come from the inbox).
#[allow(clippy::too_many_arguments)]
pub async fn add_to_day(
    conn: &mut AnyConnection,
    sequence_id: i64,
    day: i64,
    account_id: i64,
    sent: i64,
    bounced: i64,
    complaints: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO sequence_days (sequence_id, day, account_id, sent, bounced, complaints)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (sequence_id, day) DO UPDATE SET
             sent = sequence_days.sent + excluded.sent,
             bounced = sequence_days.bounced + excluded.bounced,
             complaints = sequence_days.complaints + excluded.complaints",
    )
    .bind(sequence_id)
    .bind(day)
    .bind(account_id)
    .bind(sent)
    .bind(bounced)
    .bind(complaints)
    .execute(conn)
    .await?;
    Ok(())
}

/// The UTC day (days since the epoch) of a millisecond timestamp.
pub fn day_of(ms: i64) -> i64 {
    ms.div_euclid(86_400_000)
}
