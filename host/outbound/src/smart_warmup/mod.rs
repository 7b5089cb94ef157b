//! Smart warmup (spec/3 "Smart warmup"): send accounts with warmup enabled
//! form a pool and build reputation by writing to, opening, rescuing and
//! answering each other's mail.
//!
//! - **Membership** (`service.rs`): connecting with `enable_warmup`, or
//!   `POST .../smart-warmup/start`, adds a member (`active`; the send
//!   account is `warming`). `pause` (active to paused), `resume` (paused or
//!   failed to active, the ramp shifted by the time it stood still), `stop`
//!   (leaves the pool; the account is `active` again). The pool itself
//!   moves a member to `completed` when the target volume has held
//!   `hold_days` (the account is `active`), to `failed` after
//!   [`exchange::MAX_AUTH_FAILURES`] consecutive SMTP or IMAP login
//!   refusals (the account is `error`), and to `paused` when its address
//!   bounces pool mail hard (`warmup.member_paused` to its owner).
//! - **The ramp** (`ramp.rs`): the daily volume and its slots over the
//!   working hours.
//! - **Writing** (`writing.rs`, `phrases.rs`): personas, the
//!   `warmup_pool_generator` action on the account's AI key, else the
//!   phrase bank; the marker header and the body token.
//! - **Storage**: `store.rs` (members, leases), `messages.rs` (pool
//!   messages, the daily-limit send each takes).
//! - **The exchange** (`exchange.rs`): sends what each member's slots allow,
//!   answers first, new threads to the least-used partners (at most
//!   [`MAX_PAIR_THREADS_PER_WEEK`] a week per pair), within the account's
//!   daily limit shared with sequences.
//! - **The recipient side** (`recipient.rs`): IMAP, rescuing from spam,
//!   reading, flagging, deciding answers, noticing bounce reports.
//! - **Figures** (`stats.rs`): status and pool statistics live, analytics
//!   from the roll-up refreshed every `analytics_refresh_seconds`.
//!
//! Both sides are due-time indexes on `smart_warmup_members` with leases,
//! so several servers share the pool and a member is worked by one at a
//! time. Warmup messages never reach the unified inbox: its ingest leaves
//! out any message carrying a pool token (`inbox/ingest.rs`).

pub mod exchange;
pub mod messages;
pub mod phrases;
pub mod ramp;
pub mod recipient;
pub mod routes;
pub mod service;
pub mod stats;
pub mod store;
pub mod writing;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use tracing::Instrument;

use outreach_core::state::AppState;

/// New threads one member starts with the same partner in seven days.
pub const MAX_PAIR_THREADS_PER_WEEK: i64 = 10;

/// The pool's shared pieces, a typed extension of the state.
#[derive(Clone)]
pub struct SmartWarmup {
    /// This process's lease owner name.
    pub owner: Arc<str>,
}

impl SmartWarmup {
    pub fn new() -> SmartWarmup {
        SmartWarmup {
            owner: format!("smart-warmup-{}", uuid::Uuid::new_v4().simple()).into(),
        }
    }
}

impl Default for SmartWarmup {
    fn default() -> Self {
        SmartWarmup::new()
    }
}

/// One round of everything the pool does now (tests drive it with the
/// injected clock; the workers run the same steps on their own loops).
pub async fn run_once(state: &AppState) -> anyhow::Result<(usize, usize)> {
    let found = recipient::pass(state).await?;
    let sent = exchange::pass(state).await?;
    Ok((sent, found))
}

/// The loops `outreach serve` starts: the exchange and the recipient side
/// look at their due-time indexes every second (a due member waits at
/// most that long; retries after a refused login come 30 s apart), and
/// the analytics refresh runs every `analytics_refresh_seconds`.
pub fn start_workers(state: &AppState) {
    let every = Duration::from_secs(1);
    let s = state.clone();
    tokio::spawn(
        async move {
            loop {
                if let Err(e) = exchange::pass(&s).await {
                    tracing::warn!(error = ?e, "smart warmup exchange pass failed");
                }
                tokio::time::sleep(every).await;
            }
        }
        .instrument(tracing::info_span!("job", name = "smart_warmup.exchange")),
    );
    let s = state.clone();
    tokio::spawn(
        async move {
            loop {
                if let Err(e) = recipient::pass(&s).await {
                    tracing::warn!(error = ?e, "smart warmup recipient pass failed");
                }
                tokio::time::sleep(every).await;
            }
        }
        .instrument(tracing::info_span!("job", name = "smart_warmup.recipient")),
    );
    let s = state.clone();
    let refresh = Duration::from_secs(state.config.smart_warmup.analytics_refresh_seconds);
    tokio::spawn(
        async move {
            loop {
                if let Err(e) = stats::refresh(&s, false).await {
                    tracing::warn!(error = ?e, "smart warmup analytics refresh failed");
                }
                tokio::time::sleep(refresh).await;
            }
        }
        .instrument(tracing::info_span!("job", name = "smart_warmup.analytics")),
    );
}
