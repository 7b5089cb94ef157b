//! The sending side: each pass leases the members whose send time came,
//! works out how many messages their ramp and the day's slots allow, and
//! sends the answers they owe first, then new threads to partners chosen
//! across the pool.
//!
//! Per message, in order: a send of the account's daily limit is taken
//! (shared with sequence sends, never past the limit) and the message is
//! written as `sending` with its token in one transaction; then SMTP; then
//! its outcome. A refused recipient (5xx) is a hard bounce: the recipient
//! member is paused at once and its owner gets `warmup.member_paused`. A
//! message that never left gives its send back. A crash between the two
//! writes leaves a `sending` row whose send stays taken: the limit can only
//! be undercounted, never exceeded.

use std::collections::HashMap;

use lettre::transport::smtp::client::AsyncSmtpConnection;
use rand::Rng;
use serde_json::json;

use super::messages::{self, NewMessage, PoolMessage};
use super::ramp::offset;
use super::service::{finish, pause_in, plan};
use super::store::{self, Member, Peer, Protocol, Side};
use super::writing::{self, Draft, Envelope, Parent};
use super::{MAX_PAIR_THREADS_PER_WEEK, SmartWarmup};
use crate::mail::{MailError, connect_smtp};
use crate::send_accounts::service::{connection, today};
use crate::sender::lanes::{SMTP_TIMEOUT, send_on};
use crate::sender::record::SmtpResult;
use outreach_core::events::{self, EventType};
use outreach_core::state::AppState;
use outreach_vendors::Actor;

const WEEK_MS: i64 = 7 * 86_400_000;

/// Consecutive authentication failures after which a member fails.
pub const MAX_AUTH_FAILURES: i64 = 3;

/// How soon a refused login is tried again.
pub const AUTH_RETRY_MS: i64 = 30_000;

/// Members one pass of one server sends for at once.
const CONCURRENT_MEMBERS: usize = 32;

/// One pass: the members due now, each sent for. Returns the messages sent.
pub async fn pass(state: &AppState) -> anyhow::Result<usize> {
    let sw = state.ext::<SmartWarmup>();
    let now = state.clock.now_ms();
    let lease = now + 5 * 60_000;
    let due = store::claim(&state.db, Side::Send, &sw.owner, now, lease, 256).await?;
    if due.is_empty() {
        return Ok(0);
    }
    let peers = store::active_peers(&state.db).await?;
    let mut sent = 0;
    let mut tasks = tokio::task::JoinSet::new();
    for m in due {
        while tasks.len() >= CONCURRENT_MEMBERS {
            sent += tasks.join_next().await.and_then(Result::ok).unwrap_or(0);
        }
        let (state, peers, owner) = (state.clone(), peers.clone(), sw.owner.clone());
        tasks.spawn(async move {
            let id = m.send_account_id;
            let (n, next) = match send_for(&state, &m, &peers).await {
                Ok(done) => done,
                Err(e) => {
                    tracing::warn!(send_account_id = id, error = %e, "smart warmup send failed");
                    (0, state.clock.now_ms() + tick_ms(&state))
                }
            };
            if let Err(e) = store::release(&state.db, Side::Send, id, &owner, next).await {
                tracing::error!(send_account_id = id, error = %e, "releasing a warmup member failed");
            }
            n
        });
    }
    while let Some(n) = tasks.join_next().await {
        sent += n.unwrap_or(0);
    }
    Ok(sent)
}

pub fn tick_ms(state: &AppState) -> i64 {
    state.config.smart_warmup.tick_seconds as i64 * 1000
}

/// One outgoing message: an answer to a pool message, or a new thread.
enum Outgoing {
    Reply(PoolMessage),
    Thread(Peer),
}

/// Sends what member `m` owes now; returns the count and when it is due next.
async fn send_for(state: &AppState, m: &Member, peers: &[Peer]) -> anyhow::Result<(usize, i64)> {
    let plan = plan(state);
    let now = state.clock.now_ms();
    let d = plan.ramp_day(m.ramp_origin, now);
    if d >= plan.completion_day() {
        finish(state, m.send_account_id, None).await?;
        return Ok((0, now + tick_ms(state)));
    }
    let day = plan.day(now);
    let (slots_due, next_slot) = plan.due(
        now,
        plan.volume(d),
        plan.volume(d + 1),
        offset(m.send_account_id),
    );
    let next = next_slot.max(now + tick_ms(state));
    note_progress(state, m, plan.progress_pct(d)).await?;
    // The account's sends left today (shared with sequences) bound the
    // work up front, so no message is written for nothing.
    let left: i64 = sqlx::query_scalar(
        "SELECT CASE WHEN sent_day = $1 THEN daily_send_limit - emails_sent_today
                     ELSE daily_send_limit END FROM send_accounts WHERE id = $2",
    )
    .bind(today(state))
    .bind(m.send_account_id)
    .fetch_optional(&state.db.pool)
    .await?
    .unwrap_or(0);
    let budget = (slots_due - m.sent_on(day)).max(0).min(left.max(0));
    if budget == 0 {
        return Ok((0, next));
    }
    // A pool of one has nobody to write to or answer. It looks again at
    // the next tick, not at its next slot (tomorrow's, when the day's slots
    // are all due at once), so a partner that joins later the same day is
    // written to that day.
    if peers.len() < 2 {
        return Ok((0, now + tick_ms(state)));
    }
    let mut work: Vec<Outgoing> = Vec::new();
    for r in messages::due_replies(&state.db, m.send_account_id, now, budget).await? {
        work.push(Outgoing::Reply(r));
    }
    let threads = budget - work.len() as i64;
    if threads > 0 {
        let mut counts = messages::pair_counts(&state.db, m.send_account_id, now - WEEK_MS).await?;
        for _ in 0..threads {
            let Some(peer) = partner(m, peers, &counts) else {
                break;
            };
            *counts.entry(peer.send_account_id).or_default() += 1;
            work.push(Outgoing::Thread(peer.clone()));
        }
    }
    if work.is_empty() {
        return Ok((0, next));
    }
    let server = connection(state, m.account_id, m.send_account_id).await?;
    let mut conn = match connect_smtp(
        &state.outbound,
        &server.smtp,
        server.encryption,
        SMTP_TIMEOUT,
    )
    .await
    {
        Ok(c) => {
            store::note_login(&state.db, m.send_account_id, Protocol::Smtp, None, now).await?;
            c
        }
        Err(e) => return Ok((0, login_failed(state, m, Protocol::Smtp, e, next).await?)),
    };
    let mut sent = 0;
    // A partner that bounced is paused: nothing more goes to it.
    let mut bounced: Vec<i64> = Vec::new();
    for w in work {
        let to = match &w {
            Outgoing::Thread(p) => p.send_account_id,
            Outgoing::Reply(r) => r.sender_id,
        };
        if bounced.contains(&to) {
            continue;
        }
        match send_one(state, m, peers, &mut conn, w, day).await? {
            Step::Sent => sent += 1,
            Step::Bounced => {
                sent += 1;
                bounced.push(to);
            }
            Step::Skipped => {}
            Step::Stop => break,
        }
    }
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), conn.quit()).await;
    Ok((sent, next))
}

/// Keeps the send account's `warmup_progress_pct` with the ramp.
async fn note_progress(state: &AppState, m: &Member, pct: f64) -> sqlx::Result<()> {
    sqlx::query("UPDATE send_accounts SET warmup_progress_pct = $1 WHERE id = $2 AND warmup_progress_pct <> $1")
        .bind(pct)
        .bind(m.send_account_id)
        .execute(&state.db.pool)
        .await?;
    Ok(())
}

/// A refused login counts towards failing the member (retried within 30
/// s); an unreachable server is tried at the next tick. Returns when.
pub async fn login_failed(
    state: &AppState,
    m: &Member,
    protocol: Protocol,
    e: MailError,
    next: i64,
) -> anyhow::Result<i64> {
    let now = state.clock.now_ms();
    let text = e.to_string();
    let auth = text.contains("authentication failed") || text.contains("login failed");
    if !auth {
        tracing::info!(send_account_id = m.send_account_id, error = %text, "warmup mailbox unreachable");
        return Ok(next);
    }
    let failures =
        store::note_login(&state.db, m.send_account_id, protocol, Some(&text), now).await?;
    if failures >= MAX_AUTH_FAILURES {
        finish(state, m.send_account_id, Some(&text)).await?;
        return Ok(now + tick_ms(state));
    }
    Ok(now + AUTH_RETRY_MS.min(tick_ms(state)))
}

/// The partner of a new thread: an active member other than `m` (and not
/// the same address under another tenant) with the fewest threads from `m`
/// this week, under the weekly cap; ties drawn at random.
fn partner<'a>(m: &Member, peers: &'a [Peer], counts: &HashMap<i64, i64>) -> Option<&'a Peer> {
    let eligible: Vec<(&Peer, i64)> = peers
        .iter()
        .filter(|p| {
            p.send_account_id != m.send_account_id && !p.email.eq_ignore_ascii_case(&m.email)
        })
        .map(|p| (p, counts.get(&p.send_account_id).copied().unwrap_or(0)))
        .filter(|(_, n)| *n < MAX_PAIR_THREADS_PER_WEEK)
        .collect();
    let fewest = eligible.iter().map(|(_, n)| *n).min()?;
    let least: Vec<&Peer> = eligible
        .into_iter()
        .filter(|(_, n)| *n == fewest)
        .map(|(p, _)| p)
        .collect();
    Some(least[rand::rng().random_range(0..least.len())])
}

enum Step {
    Sent,
    Bounced,
    Skipped,
    Stop,
}

/// Writes, records and sends one message.
async fn send_one(
    state: &AppState,
    m: &Member,
    peers: &[Peer],
    conn: &mut AsyncSmtpConnection,
    w: Outgoing,
    day: i64,
) -> anyhow::Result<Step> {
    let now = state.clock.now_ms();
    let (peer, parent) = match &w {
        Outgoing::Thread(p) => (p.clone(), None),
        Outgoing::Reply(parent) => {
            match peers.iter().find(|p| p.send_account_id == parent.sender_id) {
                Some(p) => (p.clone(), Some(parent)),
                None => {
                    // The other side left, paused or failed: no answer.
                    let mut c = state.db.pool.acquire().await?;
                    messages::mark_replied(&mut c, parent.id, None).await?;
                    return Ok(Step::Skipped);
                }
            }
        }
    };
    let parent_view = parent.map(|p| Parent {
        subject: p.subject.clone(),
        body: p.body.clone(),
        from_name: peer.name.clone(),
        sent_at: p.sent_at,
    });
    let token = writing::new_token();
    let domain = m
        .email
        .rsplit_once('@')
        .map_or("warmup.invalid", |(_, d)| d);
    // Message-IDs carry no token: a reply's References must not make it look like
    // the messages it answers.
    let message_id = format!("{}@{domain}", uuid::Uuid::new_v4().simple());
    let references: Vec<String> = parent.map(PoolMessage::thread_ids).unwrap_or_default();
    let references_text = (!references.is_empty()).then(|| references.join(" "));
    let actor = Actor {
        account_id: m.account_id,
        user_key: format!("smart_warmup:{}", m.send_account_id),
    };
    let mut draft =
        writing::from_ai(state, &actor, &m.persona, &peer.name, parent_view.as_ref()).await;
    // Draws again while the pool day already has the same text.
    let mut written = None;
    for _ in 0..8 {
        let d: Draft = match draft.take() {
            Some(d) => d,
            None => writing::from_bank(
                &mut rand::rng(),
                &m.persona,
                &peer.name,
                parent_view.as_ref(),
            ),
        };
        let body = writing::body_as_sent(&d, &token, parent_view.as_ref());
        let mut tx = state.db.pool.begin().await?;
        if !messages::take_send(&mut tx, m.send_account_id, today(state)).await? {
            // The account's daily limit is reached: nothing more today.
            return Ok(Step::Stop);
        }
        let hash = d.text_hash();
        let new = NewMessage {
            token: &token,
            thread_token: parent.map_or(token.as_str(), |p| p.thread_token.as_str()),
            depth: parent.map_or(1, |p| p.depth + 1),
            sender: m,
            recipient: &peer,
            message_id: &message_id,
            parent_message_id: parent.map(|p| p.message_id.as_str()),
            references_ids: references_text.as_deref(),
            subject: &d.subject,
            body: &d.body,
            text_hash: &hash,
            source: d.source,
            ai_tokens: d.ai_tokens,
            ai_cost_usd: d.ai_cost_usd,
            day,
            now,
        };
        let Some(id) = messages::insert_message(&mut tx, &new).await? else {
            continue;
        };
        messages::count_send(&mut tx, m.send_account_id, day, 1).await?;
        if let Some(p) = parent {
            messages::mark_replied(&mut tx, p.id, Some(now)).await?;
        }
        tx.commit().await?;
        written = Some((id, d, body));
        break;
    }
    let Some((id, draft, body)) = written else {
        return Ok(Step::Skipped);
    };
    let from_name = m.persona.name.clone();
    let message = writing::compose(
        &Envelope {
            from_email: &m.email,
            from_name: &from_name,
            to_email: &peer.email,
            to_name: &peer.name,
            message_id: &message_id,
            references: &references,
        },
        &draft.subject,
        body,
        &token,
    );
    let result = match message {
        Ok(msg) => {
            let envelope = msg.envelope().clone();
            send_on(conn, &envelope, &msg.formatted()).await
        }
        Err(e) => SmtpResult::AccountFailed(e),
    };
    record_outcome(state, m, &peer, id, day, result).await
}

/// Writes a message's SMTP outcome and what follows from it.
async fn record_outcome(
    state: &AppState,
    m: &Member,
    peer: &Peer,
    id: i64,
    day: i64,
    result: SmtpResult,
) -> anyhow::Result<Step> {
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    let step = match &result {
        SmtpResult::Delivered => {
            messages::finish_message(&mut tx, id, "sent", None).await?;
            Step::Sent
        }
        SmtpResult::Bounced(reason) => {
            messages::finish_message(&mut tx, id, "bounced", Some(reason)).await?;
            member_bounced(
                &mut tx,
                peer.send_account_id,
                peer.account_id,
                &peer.email,
                reason,
                now,
            )
            .await?;
            Step::Bounced
        }
        SmtpResult::Deferred(reason) | SmtpResult::AccountFailed(reason) => {
            messages::finish_message(&mut tx, id, "failed", Some(reason)).await?;
            messages::count_send(&mut tx, m.send_account_id, day, -1).await?;
            crate::sender::store::reserve_mailbox(&mut tx, m.send_account_id, -1, today(state))
                .await?;
            sqlx::query("UPDATE smart_warmup_messages SET replied_at = NULL WHERE message_id = (SELECT parent_message_id FROM smart_warmup_messages WHERE id = $1) AND recipient_id = $2")
                .bind(id)
                .bind(m.send_account_id)
                .execute(&mut *tx)
                .await?;
            Step::Stop
        }
    };
    tx.commit().await?;
    Ok(step)
}

/// A member whose address bounced hard is paused at once and its owner is
/// told (the event is written for that owner only).
pub async fn member_bounced(
    conn: &mut sqlx::AnyConnection,
    send_account_id: i64,
    account_id: i64,
    email: &str,
    reason: &str,
    now: i64,
) -> sqlx::Result<()> {
    let why = format!("Pool mail to this address bounced: {reason}");
    if pause_in(conn, send_account_id, Some(&why), now).await? {
        events::record(
            conn,
            account_id,
            EventType::WarmupMemberPaused,
            &json!({"send_account_id": send_account_id.to_string(), "email": email, "reason": why}),
            now,
        )
        .await?;
    }
    Ok(())
}
