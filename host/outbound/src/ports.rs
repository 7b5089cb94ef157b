//! [`OutboundPort`] for workflows (`outreach_core::ports`): enrolment in
//! sequences and automatic answers to inbox replies.
//!
//! - **Enroll** is `POST /v1/sequences/{id}/enroll` through
//!   `enrollment::service::enroll_candidates`: Starter+ ('No access...'
//!   otherwise), 'Sequence not found' for an unknown or other account's
//!   sequence, then the endpoint's rules (address checks, role addresses,
//!   suppression, contacts already live, verification with the account's
//!   verifier keys, the metadata size limit). A contact's `email` (or
//!   `contact_email`) is the address and `domain` the company domain; every
//!   other field is enrollment metadata (template tokens), with the fields
//!   of a `metadata` object merged in. Like `enroll-csv`, a call is not held
//!   to the JSON endpoint's 1,000 contacts, and the per-user 10 requests a
//!   minute do not apply (a workflow is no API user).
//! - **Auto reply**: the inbox has no reply endpoint, so the answer goes
//!   out as a test send does, over one SMTP connection of the reply's own
//!   mailbox (`sender::lanes::send_once`, under the outbound policy). For
//!   each item's `domain` (repeats once) the account's latest reply from an
//!   address at that domain (kind `reply`, classified, not held as
//!   suspected spoofing, its label, a manual override first, in
//!   `only_classes`, any label when empty) gets one answer. It is skipped
//!   when it was answered automatically before, when its mailbox is gone,
//!   or when its sender is on the suppression list. The reply is claimed
//!   (`inbox_replies.auto_replied_at`) before sending and released if the
//!   message cannot be sent, so two runs never answer it twice and a failed
//!   one can be retried. Subject and body go through the rendering engine
//!   for the reply's enrollment (its metadata, the account's enrichment
//!   cache), else for the sender's address alone; an empty subject becomes
//!   `Re: <their subject>`, and the answer threads under their message
//!   (`In-Reply-To`, `References`). A body without markup is plain text:
//!   escaped, its line breaks kept. Nothing is tracked, and the answer
//!   counts against no sending limit (as a test send). The answer is
//!   `{replied, skipped}`, plus `errors` (`[{domain, detail}]`, counted in
//!   `skipped`) when a send failed.

use std::collections::HashSet;
use std::time::SystemTime;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use crate::enrollment::service::{Candidate, check_metadata, enroll_candidates};
use crate::inbox::service::CLASSIFICATIONS;
use crate::inbox::store::{self as inbox, AutoReplyTarget};
use crate::mail::MailError;
use crate::rendering::{Contact, render_email};
use crate::send_accounts::service::connection;
use crate::sender::compose::{build, subject_line};
use crate::sender::lanes::send_once;
use crate::sender::plan::Job;
use crate::sender::record::SmtpResult;
use crate::sequences::service::owned_by;
use crate::suppression::address::parse_address;
use crate::suppression::store as suppression;
use crate::tracking::TrackingOptions;
use outreach_core::accounts::plans::{Plan, require_plan};
use outreach_core::error::ApiError;
use outreach_core::platform::clock::ms_to_datetime;
use outreach_core::ports::{Actor, AutoReply, OutboundPort, PortError, PortResult};
use outreach_core::state::AppState;

/// The outbound crate's [`OutboundPort`], added to the state by
/// `crate::AREA`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SequencesPort;

/// An endpoint's refusal as the port's: its detail, or the internal cause.
fn refused(e: ApiError) -> PortError {
    match e {
        ApiError::Internal(cause) => PortError::Internal(cause),
        other => PortError::Refused(other.to_string()),
    }
}

/// Whose vendor keys and caches a workflow's work uses: the account's.
fn vendor_actor(actor: Actor) -> outreach_vendors::Actor {
    outreach_vendors::Actor {
        account_id: actor.account_id,
        user_key: format!("workflow:{}", actor.account_id),
    }
}

/// A contact of a workflow as the enroll rules take it.
fn candidate(contact: &Value) -> Candidate {
    let text = |key: &str| contact.get(key).and_then(Value::as_str);
    let mut metadata = Map::new();
    if let Some(fields) = contact.as_object() {
        for (key, value) in fields {
            match (key.as_str(), value) {
                ("email" | "contact_email" | "domain", _) => {}
                ("metadata", Value::Object(inner)) => {
                    metadata.extend(inner.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                _ => {
                    metadata.insert(key.clone(), value.clone());
                }
            }
        }
    }
    Candidate {
        original: text("email")
            .or_else(|| text("contact_email"))
            .unwrap_or_default()
            .to_owned(),
        domain: text("domain").map(str::to_owned),
        metadata: Value::Object(metadata).to_string(),
    }
}

async fn enroll(
    state: &AppState,
    actor: Actor,
    sequence_id: i64,
    contacts: &[Value],
) -> PortResult<Value> {
    let sequence = owned_by(state, actor.account_id, actor.plan, sequence_id)
        .await
        .map_err(refused)?;
    if contacts.is_empty() {
        return Ok(json!({"enrolled": 0, "skipped": 0}));
    }
    let candidates: Vec<Candidate> = contacts.iter().map(candidate).collect();
    for c in &candidates {
        check_metadata(&c.metadata).map_err(refused)?;
    }
    let result = enroll_candidates(state, &vendor_actor(actor), &sequence, candidates)
        .await
        .map_err(refused)?;
    Ok(json!({"enrolled": result.enrolled, "skipped": result.skipped}))
}

/// An item's `domain` as a host name to match addresses against: lower
/// case, without `www.`; `None` when absent or not a domain.
fn item_domain(item: &Value) -> Option<String> {
    let d = item.get("domain")?.as_str()?.trim().to_ascii_lowercase();
    let d = d
        .trim_start_matches("www.")
        .trim_end_matches('.')
        .to_owned();
    let plain = d
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    (plain && d.contains('.') && parse_address(&format!("x@{d}")).is_some()).then_some(d)
}

/// What became of one domain's reply.
enum Answered {
    Sent,
    Skipped,
    Failed(String),
}

/// A body without markup as HTML: escaped, line breaks kept.
fn body_html(body: &str) -> String {
    if body.contains('<') {
        return body.to_owned();
    }
    body.replace('&', "&amp;")
        .replace('>', "&gt;")
        .replace("\r\n", "\n")
        .replace('\n', "<br>\n")
}

async fn answer(
    state: &AppState,
    actor: Actor,
    reply: &AutoReply,
    domain: &str,
) -> PortResult<Answered> {
    let db = &state.db;
    let account_id = actor.account_id;
    let found = inbox::latest_reply_from(db, account_id, domain, &reply.only_classes)
        .await
        .map_err(anyhow::Error::from)?;
    let Some(target) = found else {
        return Ok(Answered::Skipped);
    };
    let (Some(send_account_id), None) = (target.send_account_id, target.auto_replied_at) else {
        return Ok(Answered::Skipped);
    };
    let Some(to) = parse_address(&target.from_email) else {
        return Ok(Answered::Skipped);
    };
    let suppressed = suppression::suppressed(db, account_id, std::slice::from_ref(&to))
        .await
        .map_err(anyhow::Error::from)?;
    if !suppressed.is_empty() {
        return Ok(Answered::Skipped);
    }
    let mailbox = crate::send_accounts::store::get(db, account_id, send_account_id)
        .await
        .map_err(anyhow::Error::from)?;
    let Some(mailbox) = mailbox else {
        return Ok(Answered::Skipped);
    };
    let now = state.clock.now_ms();
    if !inbox::claim_auto_reply(db, account_id, target.id, now)
        .await
        .map_err(anyhow::Error::from)?
    {
        return Ok(Answered::Skipped);
    }
    let sent = send(state, actor, reply, &target, &mailbox, to.email).await;
    match sent {
        Ok(message_id) => {
            inbox::auto_replied(db, account_id, target.id, &message_id)
                .await
                .map_err(anyhow::Error::from)?;
            Ok(Answered::Sent)
        }
        Err(detail) => {
            inbox::release_auto_reply(db, account_id, target.id)
                .await
                .map_err(anyhow::Error::from)?;
            Ok(Answered::Failed(detail))
        }
    }
}

/// Renders, composes and sends the answer to `target` from its mailbox;
/// the answer's Message-ID, or why it was not sent.
async fn send(
    state: &AppState,
    actor: Actor,
    reply: &AutoReply,
    target: &AutoReplyTarget,
    mailbox: &crate::send_accounts::store::SendAccountRow,
    to: String,
) -> Result<String, String> {
    let account_id = actor.account_id;
    let enrollment = match (target.sequence_id, target.enrollment_id) {
        (Some(s), Some(e)) => crate::enrollment::store::get(&state.db, account_id, s, e)
            .await
            .map_err(|e| format!("reading the enrollment failed: {e}"))?,
        _ => None,
    };
    let contact = match enrollment {
        Some(e) => Contact {
            email: to.clone(),
            domain: e.domain,
            metadata: serde_json::from_str(&e.metadata).unwrap_or_default(),
        },
        None => Contact {
            email: to.clone(),
            domain: target.domain.clone(),
            metadata: Map::new(),
        },
    };
    let rendered = render_email(
        state,
        &vendor_actor(actor),
        &reply.subject,
        &body_html(&reply.body),
        &contact,
    )
    .await
    .map_err(|e| format!("rendering failed: {e}"))?;
    let theirs = (target.message_id.clone(), target.subject.clone());
    let subject = subject_line(&rendered.subject, Some(&theirs));
    let from_domain = mailbox
        .email
        .rsplit_once('@')
        .map_or("localhost", |(_, d)| d);
    let message_id = format!("otr.auto.{}@{from_domain}", uuid::Uuid::new_v4().simple());
    // A Job shaped like the sender's, so the message is composed the same
    // way; nothing is tracked.
    let job = Job {
        message_row_id: 0,
        message_id: message_id.clone(),
        account_id,
        sequence_id: target.sequence_id.unwrap_or(0),
        enrollment_id: target.enrollment_id.unwrap_or(0),
        step_id: 0,
        variant: None,
        send_account_id: mailbox.id,
        reserved_day: None,
        from_email: mailbox.email.clone(),
        from_name: mailbox.display_name.clone(),
        contact: Contact {
            email: to,
            domain: contact.domain,
            metadata: Map::new(),
        },
        subject_template: String::new(),
        body_template: String::new(),
        thread: (!target.message_id.is_empty()).then_some(theirs),
        tracking: TrackingOptions {
            opens: false,
            clicks: false,
            unsubscribe: false,
        },
        next_delay_ms: None,
        enrichment: None,
    };
    let date = SystemTime::from(ms_to_datetime(state.clock.now_ms()));
    let message = build(
        &job,
        &subject,
        &rendered.body_html,
        &rendered.body_text,
        None,
        date,
    )?;
    let server = connection(state, account_id, mailbox.id)
        .await
        .map_err(|e| format!("the mailbox's credentials could not be read: {e}"))?;
    let result = send_once(state, &server, message.envelope(), &message.formatted())
        .await
        .map_err(|e| match e {
            MailError::Blocked(m) | MailError::Failed(m) => m,
        })?;
    match result {
        SmtpResult::Delivered => Ok(message_id),
        SmtpResult::Bounced(m) | SmtpResult::Deferred(m) | SmtpResult::AccountFailed(m) => Err(m),
    }
}

async fn auto_reply(
    state: &AppState,
    actor: Actor,
    reply: &AutoReply,
    items: &[Value],
) -> PortResult<Value> {
    // The inbox, like sequences, is Starter+.
    require_plan(actor.plan, Plan::Starter).map_err(refused)?;
    if let Some(bad) = reply
        .only_classes
        .iter()
        .find(|c| !CLASSIFICATIONS.contains(&c.as_str()))
    {
        return Err(PortError::Refused(format!(
            "only_classes must be among {} (got '{}')",
            CLASSIFICATIONS.join(", "),
            bad.chars().take(40).collect::<String>()
        )));
    }
    let mut seen = HashSet::new();
    let (mut replied, mut skipped) = (0, 0);
    let mut errors = Vec::new();
    for item in items {
        let Some(domain) = item_domain(item).filter(|d| seen.insert(d.clone())) else {
            skipped += 1;
            continue;
        };
        match answer(state, actor, reply, &domain).await? {
            Answered::Sent => replied += 1,
            Answered::Skipped => skipped += 1,
            Answered::Failed(detail) => {
                tracing::info!(account_id = actor.account_id, %domain, %detail,
                    "automatic reply not sent");
                skipped += 1;
                errors.push(json!({"domain": domain, "detail": detail}));
            }
        }
    }
    let mut answer = json!({"replied": replied, "skipped": skipped});
    if !errors.is_empty() {
        answer["errors"] = Value::Array(errors);
    }
    Ok(answer)
}

impl OutboundPort for SequencesPort {
    fn enroll<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        sequence_id: i64,
        contacts: &'a [Value],
    ) -> BoxFuture<'a, PortResult<Value>> {
        Box::pin(enroll(state, actor, sequence_id, contacts))
    }

    fn auto_reply<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
        reply: &'a AutoReply,
        items: &'a [Value],
    ) -> BoxFuture<'a, PortResult<Value>> {
        Box::pin(auto_reply(state, actor, reply, items))
    }

    fn sequence_ids<'a>(
        &'a self,
        state: &'a AppState,
        actor: Actor,
    ) -> BoxFuture<'a, anyhow::Result<Vec<i64>>> {
        Box::pin(async move {
            Ok(
                sqlx::query_scalar("SELECT id FROM sequences WHERE account_id = $1 ORDER BY id")
                    .bind(actor.account_id)
                    .fetch_all(&state.db.pool)
                    .await?,
            )
        })
    }
}

#[cfg(test)]
mod tests;
