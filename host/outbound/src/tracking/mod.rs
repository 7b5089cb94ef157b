//! Open, click and unsubscribe tracking of sequence emails.
//!
//! The sender calls [`track`] on each rendered body: links become
//! `{public_base_url}/t/c/{token}`, an open pixel `/t/o/{token}` and an
//! unsubscribe footer `/t/u/{token}` are appended (`links.rs`). Tokens are
//! signed, compact and URL-safe (`token.rs`), so they cannot be guessed or
//! enumerated; one that does not verify answers 404 and records nothing.
//!
//! The public endpoints (`routes.rs`) record spec/1 "Events" through
//! `crate::sequence_events` and spec/2's outbox events (`service.rs`):
//!
//! - **open**: `opened` once per message, `sequence.opened` with it;
//! - **click**: 302 to the original URL (only URLs of that message, by
//!   index); `clicked` for every click, the message's first one marked
//!   `first_of_kind` (a unique click); `sequence.clicked` for every click;
//! - **unsubscribe**: GET shows a confirmation page and changes nothing;
//!   POST (RFC 8058 one-click, or the page's form) adds a suppression entry
//!   with reason `unsubscribe`, and once per message records
//!   `unsubscribed`, moves the enrollment to `unsubscribed` and records
//!   `sequence.unsubscribed` (source `link`).
//!
//! **Engagement**: a message's first open adds 1 to the enrollment's
//! `engagement_score`, its first click 3; from a score of 3 a cold lead is
//! warm. Nothing here lowers a temperature, and `hot` is left to interested
//! replies (the inbox).
//!
//! **Goals**: a click meets goal `click` on any tracked link, and
//! `url_click` when the clicked URL starts with `goal_url` (both as the URL
//! parser writes them). Meeting it sets `goal_completed`,
//! `goal_completed_at` and `goal_metadata` `{type, url, step_id}`; an active
//! or paused enrollment becomes completed with `sequence.completed`, in the
//! click's transaction. An enrollment that already ended (replied,
//! unsubscribed...) keeps its status and gets no second completion event.
//!
//! Tokens whose message is gone (its enrollment or sequence was deleted,
//! which deletes the messages) record nothing: the pixel still answers its
//! GIF, and a click or unsubscribe answers a page saying the link expired.

pub mod links;
pub mod routes;
pub mod service;
pub mod store;
pub mod token;

pub use links::{Tracked, TrackingOptions, track};
pub use token::{Token, TrackingKey};

#[cfg(test)]
pub(crate) mod tests;
