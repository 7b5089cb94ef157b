//! What an open, a click and an unsubscribe do: the event of spec/1
//! "Events", the outbox event of spec/2, engagement, goals and the
//! enrollment's status, each in one transaction that first locks the
//! enrollment row.

use serde_json::json;
use sqlx::{Any, Transaction};

use super::store::{self, EnrollmentState, MessageRow};
use crate::sequence_events::{self, Kind, NewEvent};
use crate::suppression::address;
use crate::suppression::store as suppression;
use outreach_core::error::ApiResult;
use outreach_core::events::{self, EventType};
use outreach_core::state::AppState;
use outreach_ssrf::Url;

/// Engagement points of a message's first open.
pub const OPEN_POINTS: i64 = 1;
/// Engagement points of a message's first click.
pub const CLICK_POINTS: i64 = 3;
/// The score from which a cold lead is warm.
pub const WARM_AT: i64 = 3;

/// Where a click goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClickTarget {
    /// The original URL.
    Redirect(String),
    /// The token is valid but its message is gone (enrollment or sequence
    /// deleted): nothing to record and nowhere to send the recipient.
    Gone,
    /// The message has no link with that index.
    NoSuchLink,
}

/// Opens the transaction of a tracking change: the enrollment is locked
/// and read first. None when the enrollment is gone.
async fn begin(
    state: &AppState,
    m: &MessageRow,
) -> ApiResult<Option<(Transaction<'static, Any>, EnrollmentState)>> {
    let mut tx = state.db.pool.begin().await?;
    Ok(store::lock_enrollment(&mut tx, m.enrollment_id)
        .await?
        .map(|e| (tx, e)))
}

fn event(m: &MessageRow, kind: Kind, url: Option<&str>, at: i64) -> NewEvent {
    NewEvent {
        account_id: m.account_id,
        sequence_id: m.sequence_id,
        step_id: Some(m.step_id),
        enrollment_id: Some(m.enrollment_id),
        message_id: Some(m.id),
        send_account_id: m.send_account_id,
        kind,
        variant: m.variant.clone(),
        url: url.map(str::to_owned),
        detail: None,
        at,
    }
}

/// Records the message's open: the first one adds the `opened` event, the
/// engagement points and `sequence.opened`; later ones change nothing.
pub async fn open(state: &AppState, message: i64) -> ApiResult<()> {
    let Some(m) = store::message(&state.db, message).await? else {
        return Ok(());
    };
    let Some((mut tx, e)) = begin(state, &m).await? else {
        return Ok(());
    };
    let now = state.clock.now_ms();
    let fresh = sequence_events::record(&mut tx, &[event(&m, Kind::Opened, None, now)]).await?;
    if fresh[0] {
        store::add_engagement(&mut tx, m.enrollment_id, OPEN_POINTS, WARM_AT, now).await?;
        let data = json!({"sequence_id": m.sequence_id, "enrollment_id": m.enrollment_id,
            "step_id": m.step_id, "email": e.contact_email});
        events::record(&mut tx, m.account_id, EventType::SequenceOpened, &data, now).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Resolves link `link` of the message and records the click. The redirect
/// does not depend on the recording: a failure to record is logged and the
/// recipient still reaches the link.
pub async fn click(state: &AppState, message: i64, link: u32) -> ApiResult<ClickTarget> {
    let Some(m) = store::message(&state.db, message).await? else {
        return Ok(ClickTarget::Gone);
    };
    let Some(url) = m.links.get(link as usize).cloned() else {
        return Ok(ClickTarget::NoSuchLink);
    };
    if let Err(e) = record_click(state, &m, &url).await {
        tracing::warn!(message, error = %e, "click not recorded");
    }
    Ok(ClickTarget::Redirect(url))
}

/// Every click adds a `clicked` event and `sequence.clicked`; the
/// message's first click also adds engagement points. A click meets the
/// goal `click` always and `url_click` when its URL starts with the goal
/// URL: the goal is marked, a live enrollment ends as completed and
/// `sequence.completed` is recorded, in this same transaction.
async fn record_click(state: &AppState, m: &MessageRow, url: &str) -> ApiResult<()> {
    let Some((mut tx, e)) = begin(state, m).await? else {
        return Ok(());
    };
    let now = state.clock.now_ms();
    sequence_events::record(&mut tx, &[event(m, Kind::Clicked, Some(url), now)]).await?;
    if store::latest_click_was_first(&mut tx, m).await? {
        store::add_engagement(&mut tx, m.enrollment_id, CLICK_POINTS, WARM_AT, now).await?;
    }
    let data = json!({"sequence_id": m.sequence_id, "enrollment_id": m.enrollment_id,
        "step_id": m.step_id, "email": e.contact_email, "url": url});
    events::record(
        &mut tx,
        m.account_id,
        EventType::SequenceClicked,
        &data,
        now,
    )
    .await?;
    if !e.goal_completed && meets_goal(&m.goal_type, m.goal_url.as_deref(), url) {
        let metadata = json!({"type": m.goal_type, "url": url, "step_id": m.step_id});
        let met =
            store::complete_goal(&mut tx, m.enrollment_id, &metadata.to_string(), now).await?;
        if met && matches!(e.status.as_str(), "active" | "paused") {
            let data = json!({"sequence_id": m.sequence_id, "enrollment_id": m.enrollment_id,
                "email": e.contact_email});
            events::record(
                &mut tx,
                m.account_id,
                EventType::SequenceCompleted,
                &data,
                now,
            )
            .await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// Whether a click on `url` meets the sequence's goal. Both URLs are
/// compared as the URL parser writes them (lowercased scheme and host, a
/// path of at least `/`), so `https://acme.io` is met by
/// `https://ACME.io/pricing` but not by `https://acme.io.evil.test/`.
pub fn meets_goal(goal_type: &str, goal_url: Option<&str>, url: &str) -> bool {
    match goal_type {
        "click" => true,
        "url_click" => goal_url.is_some_and(|g| {
            let goal = Url::parse(g).map_or_else(|_| g.to_owned(), String::from);
            url.starts_with(&goal)
        }),
        _ => false,
    }
}

/// Unsubscribes the message's recipient: a suppression entry with reason
/// `unsubscribe` (so no sequence of the account mails the address again),
/// then, once per message, the `unsubscribed` event, the enrollment's
/// status and `sequence.unsubscribed` (source `link`). False when the
/// message is gone.
///
/// The suppression entry is written first and on its own (the suppression
/// store's insert runs on the pool): it is idempotent, and writing it
/// before the enrollment change means that a failure in between still
/// stops the mail; the recipient's retry completes the rest.
pub async fn unsubscribe(state: &AppState, message: i64) -> ApiResult<bool> {
    let Some(m) = store::message(&state.db, message).await? else {
        return Ok(false);
    };
    let now = state.clock.now_ms();
    match address::parse_address(&m.to_email) {
        Some(target) => {
            suppression::insert_one(&state.db, m.account_id, &target, "unsubscribe", now).await?;
        }
        None => tracing::warn!(message, "unsubscribe: recipient address does not parse"),
    }
    let Some((mut tx, e)) = begin(state, &m).await? else {
        return Ok(true);
    };
    let fresh =
        sequence_events::record(&mut tx, &[event(&m, Kind::Unsubscribed, None, now)]).await?;
    if fresh[0] {
        store::unsubscribe(&mut tx, m.enrollment_id, now).await?;
        let data = json!({"sequence_id": m.sequence_id, "enrollment_id": m.enrollment_id,
            "email": e.contact_email, "source": "link"});
        events::record(
            &mut tx,
            m.account_id,
            EventType::SequenceUnsubscribed,
            &data,
            now,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::meets_goal;

    #[test]
    fn goals_compare_parsed_urls() {
        let url = "https://acme.io/pricing?x=1";
        assert!(meets_goal("click", None, url));
        assert!(meets_goal(
            "url_click",
            Some("https://acme.io/pricing"),
            url
        ));
        assert!(meets_goal("url_click", Some("HTTPS://ACME.io"), url));
        assert!(!meets_goal("url_click", Some("https://acme.io/docs"), url));
        assert!(!meets_goal(
            "url_click",
            Some("https://acme.io"),
            "https://acme.io.evil.test/"
        ));
        assert!(!meets_goal("url_click", None, url));
        assert!(!meets_goal("reply", None, url));
        assert!(!meets_goal("none", None, url));
    }
}
