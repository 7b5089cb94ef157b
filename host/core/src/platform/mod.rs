//! Building blocks shared by every area: time, secrets, rate limiters, the
//! durable job queue, outgoing dashboard mail, Slack posts, the outbound address policy,
//! the limits shared across servers on PostgreSQL, and the DNS resolver.

pub mod clock;
pub mod dns;
pub mod jobs;
pub mod limiter;
pub mod mail;
pub mod outbound;
pub mod secrets;
pub mod shared_limiter;
pub mod slack;
