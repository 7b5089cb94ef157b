//! Building blocks shared by every area: time, secrets, rate limiters, the
//! durable job queue, outgoing dashboard mail and the outbound address policy.

pub mod clock;
pub mod jobs;
pub mod limiter;
pub mod mail;
pub mod outbound;
pub mod secrets;
