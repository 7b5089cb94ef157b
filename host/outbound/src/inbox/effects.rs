//! What a classified reply does to the enrollment it answers, applied once
//! per reply in the transaction that stores its classification (a
//! reclassification relabels a reply but never replays its effects).
//!
//! | Reply | Effect |
//! |---|---|
//! | hard bounce (or the [`SOFT_BOUNCE_LIMIT`]th soft one) | enrollment `bounced`, `bounced` event, suppression (bounce), `sequence.bounced`, auto-pause check |
//! | soft bounce | counted; the step is sent again after [`SOFT_BOUNCE_RETRY_MS`] when nothing later was sent; `sequence.bounced` (soft) |
//! | complaint (ARF) | suppression (complaint), enrollment `unsubscribed`, `unsubscribed` event, `sequence.unsubscribed` (source `complaint`), the day's complaint count |
//! | labelled `unsubscribe` | suppression (unsubscribe), enrollment `unsubscribed`, `unsubscribed` event, `sequence.unsubscribed` (source `reply`) |
//! | labelled `ooo` | the sequence goes on; with a return date the next step waits until the day after it |
//! | any other reply | `replied` event, `sequence.replied`; enrollment `replied` (no further steps) when `stop_on_reply`; `interested` marks the lead hot |
//! | `other` kind (receipts, empty) | nothing |

use serde_json::{Value, json};
use sqlx::{AnyConnection, Row};

use crate::sender::record::auto_pause_if_bouncing;
use crate::sequence_events::{self, Kind, NewEvent, add_to_day, day_of};
use crate::suppression::{address, store as suppression};
use outreach_core::events::{self, EventType};

/// Soft bounces of one enrollment after which the next one counts as hard.
pub const SOFT_BOUNCE_LIMIT: i64 = 3;

/// How long a soft-bounced step waits before it is sent again.
pub const SOFT_BOUNCE_RETRY_MS: i64 = 6 * 3_600_000;

const DAY_MS: i64 = 86_400_000;

/// A classified reply with what its effects need.
#[derive(Debug, Clone)]
pub struct Classified {
    pub reply_id: i64,
    pub account_id: i64,
    pub send_account_id: Option<i64>,
    pub kind: String,
    pub bounce_type: Option<String>,
    pub bounce_reason: Option<String>,
    pub failed_recipient: Option<String>,
    pub return_at: Option<i64>,
    pub sequence_message_id: Option<i64>,
    /// The label in force: a manual override, else the classifier's.
    pub label: String,
}

/// The enrollment and message a reply answers.
struct Target {
    sequence_id: i64,
    enrollment_id: i64,
    step_id: i64,
    step_position: i64,
    variant: Option<String>,
    contact_email: String,
    status: String,
    current_step: i64,
    next_send_at: Option<i64>,
    soft_bounces: i64,
    stop_on_reply: bool,
}

async fn target(conn: &mut AnyConnection, message_id: i64) -> sqlx::Result<Option<Target>> {
    let row = sqlx::query(
        "SELECT m.sequence_id, m.enrollment_id, m.step_id, m.step_position, m.variant,
                e.contact_email, e.status, e.current_step, e.next_send_at, e.soft_bounces,
                s.settings
         FROM sequence_messages m JOIN enrollments e ON e.id = m.enrollment_id
         JOIN sequences s ON s.id = m.sequence_id WHERE m.id = $1",
    )
    .bind(message_id)
    .fetch_optional(conn)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let settings: String = r.try_get(10)?;
    let stop_on_reply = serde_json::from_str::<Value>(&settings)
        .ok()
        .and_then(|s| s.get("stop_on_reply").and_then(Value::as_bool))
        .unwrap_or(true);
    Ok(Some(Target {
        sequence_id: r.try_get(0)?,
        enrollment_id: r.try_get(1)?,
        step_id: r.try_get(2)?,
        step_position: r.try_get(3)?,
        variant: r.try_get(4)?,
        contact_email: r.try_get(5)?,
        status: r.try_get(6)?,
        current_step: r.try_get(7)?,
        next_send_at: r.try_get(8)?,
        soft_bounces: r.try_get(9)?,
        stop_on_reply,
    }))
}

/// Applies `reply`'s effects at `now` on `conn` (the classification's
/// transaction).
pub async fn apply(conn: &mut AnyConnection, reply: &Classified, now: i64) -> sqlx::Result<()> {
    let Some(message_id) = reply.sequence_message_id else {
        return Ok(());
    };
    let Some(t) = target(conn, message_id).await? else {
        return Ok(());
    };
    let ctx = Ctx {
        reply,
        t: &t,
        message_id,
        now,
    };
    match (reply.kind.as_str(), reply.label.as_str()) {
        ("other", _) => Ok(()),
        ("bounce", _) => ctx.bounce(conn).await,
        ("complaint", _) => ctx.unsubscribe(conn, "complaint").await,
        (_, "unsubscribe") => ctx.unsubscribe(conn, "reply").await,
        ("auto_reply", _) | (_, "ooo") => ctx.out_of_office(conn).await,
        _ => ctx.replied(conn).await,
    }
}

struct Ctx<'a> {
    reply: &'a Classified,
    t: &'a Target,
    message_id: i64,
    now: i64,
}

impl Ctx<'_> {
    fn event(&self, kind: Kind, detail: Option<&str>) -> NewEvent {
        NewEvent {
            account_id: self.reply.account_id,
            sequence_id: self.t.sequence_id,
            step_id: Some(self.t.step_id),
            enrollment_id: Some(self.t.enrollment_id),
            message_id: Some(self.message_id),
            send_account_id: self.reply.send_account_id,
            kind,
            variant: self.t.variant.clone(),
            url: None,
            detail: detail.map(str::to_owned),
            at: self.now,
        }
    }

    fn live(&self) -> bool {
        matches!(self.t.status.as_str(), "active" | "paused")
    }

    /// Ends a live enrollment with `status`: no further steps.
    async fn end(&self, conn: &mut AnyConnection, status: &str) -> sqlx::Result<()> {
        sqlx::query(
            "UPDATE enrollments SET status = $1, next_send_at = NULL, lease_owner = NULL,
                 lease_until = NULL, updated_at = $2
             WHERE id = $3 AND status IN ('active', 'paused')",
        )
        .bind(status)
        .bind(self.now)
        .bind(self.t.enrollment_id)
        .execute(conn)
        .await?;
        Ok(())
    }

    async fn suppress(
        &self,
        conn: &mut AnyConnection,
        email: &str,
        reason: &str,
    ) -> sqlx::Result<()> {
        match address::parse_address(email) {
            Some(target) => {
                suppression::add_on(conn, self.reply.account_id, &target, reason, self.now).await?;
            }
            None => tracing::warn!(reply = self.reply.reply_id, "inbox: address does not parse"),
        }
        Ok(())
    }

    async fn bounce(&self, conn: &mut AnyConnection) -> sqlx::Result<()> {
        let soft = self.reply.bounce_type.as_deref() == Some("soft");
        let soft_count = self.t.soft_bounces + i64::from(soft);
        let hard = !soft || soft_count >= SOFT_BOUNCE_LIMIT;
        let email = self
            .reply
            .failed_recipient
            .clone()
            .unwrap_or_else(|| self.t.contact_email.clone());
        let reason = self.reply.bounce_reason.as_deref().unwrap_or("other");
        if soft {
            sqlx::query("UPDATE enrollments SET soft_bounces = soft_bounces + 1 WHERE id = $1")
                .bind(self.t.enrollment_id)
                .execute(&mut *conn)
                .await?;
        }
        if hard {
            sequence_events::record(conn, &[self.event(Kind::Bounced, Some("hard"))]).await?;
            self.end(conn, "bounced").await?;
            self.suppress(conn, &email, "bounce").await?;
        } else if self.t.status == "active" && self.t.current_step == self.t.step_position + 1 {
            // Nothing was sent after the bounced step: send it again later,
            // with the same Message-ID (it never arrived).
            sqlx::query(
                "UPDATE sequence_messages SET status = 'deferred', error = $1 WHERE id = $2",
            )
            .bind(format!("soft bounce: {reason}"))
            .bind(self.message_id)
            .execute(&mut *conn)
            .await?;
            sqlx::query(
                "UPDATE enrollments SET current_step = $1, next_send_at = $2, updated_at = $3
                 WHERE id = $4",
            )
            .bind(self.t.step_position)
            .bind(self.now + SOFT_BOUNCE_RETRY_MS)
            .bind(self.now)
            .bind(self.t.enrollment_id)
            .execute(&mut *conn)
            .await?;
        }
        let data = json!({"sequence_id": self.t.sequence_id, "enrollment_id": self.t.enrollment_id,
            "step_id": self.t.step_id, "email": email,
            "bounce_type": if hard { "hard" } else { "soft" }, "reason": reason,
            "reply_id": self.reply.reply_id});
        events::record(
            conn,
            self.reply.account_id,
            EventType::SequenceBounced,
            &data,
            self.now,
        )
        .await?;
        if hard {
            auto_pause_if_bouncing(conn, self.t.sequence_id, self.now).await?;
        }
        Ok(())
    }

    async fn unsubscribe(&self, conn: &mut AnyConnection, source: &str) -> sqlx::Result<()> {
        let email = match source {
            "complaint" => self
                .reply
                .failed_recipient
                .clone()
                .unwrap_or_else(|| self.t.contact_email.clone()),
            _ => self.t.contact_email.clone(),
        };
        let reason = if source == "complaint" {
            "complaint"
        } else {
            "unsubscribe"
        };
        self.suppress(conn, &email, reason).await?;
        if source == "complaint" {
            add_to_day(
                conn,
                self.t.sequence_id,
                day_of(self.now),
                self.reply.account_id,
                0,
                0,
                1,
            )
            .await?;
        }
        let fresh = sequence_events::record(conn, &[self.event(Kind::Unsubscribed, None)]).await?;
        if self.live() {
            self.end(conn, "unsubscribed").await?;
        }
        if fresh[0] {
            let data = json!({"sequence_id": self.t.sequence_id,
                "enrollment_id": self.t.enrollment_id, "email": email, "source": source,
                "reply_id": self.reply.reply_id});
            events::record(
                conn,
                self.reply.account_id,
                EventType::SequenceUnsubscribed,
                &data,
                self.now,
            )
            .await?;
        }
        Ok(())
    }

    /// The sequence goes on; a named return date delays the next step to
    /// the day after it (the contact reads their backlog on the day itself).
    async fn out_of_office(&self, conn: &mut AnyConnection) -> sqlx::Result<()> {
        let Some(back) = self.reply.return_at else {
            return Ok(());
        };
        let resume = back + DAY_MS;
        if self.t.status != "active" || resume <= self.now {
            return Ok(());
        }
        if self.t.next_send_at.is_some_and(|due| due >= resume) {
            return Ok(());
        }
        sqlx::query(
            "UPDATE enrollments SET next_send_at = $1, updated_at = $2
             WHERE id = $3 AND status = 'active' AND next_send_at IS NOT NULL",
        )
        .bind(resume)
        .bind(self.now)
        .bind(self.t.enrollment_id)
        .execute(conn)
        .await?;
        Ok(())
    }

    async fn replied(&self, conn: &mut AnyConnection) -> sqlx::Result<()> {
        let label = self.reply.label.as_str();
        sequence_events::record(conn, &[self.event(Kind::Replied, Some(label))]).await?;
        if self.t.stop_on_reply && self.live() {
            self.end(conn, "replied").await?;
        }
        if label == "interested" {
            sqlx::query(
                "UPDATE enrollments SET lead_temperature = 'hot', updated_at = $1 WHERE id = $2",
            )
            .bind(self.now)
            .bind(self.t.enrollment_id)
            .execute(&mut *conn)
            .await?;
        }
        let data = json!({"sequence_id": self.t.sequence_id, "enrollment_id": self.t.enrollment_id,
            "step_id": self.t.step_id, "email": self.t.contact_email,
            "reply_id": self.reply.reply_id, "classification": label});
        events::record(
            conn,
            self.reply.account_id,
            EventType::SequenceReplied,
            &data,
            self.now,
        )
        .await?;
        Ok(())
    }
}
