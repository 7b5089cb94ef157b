//! Building blocks shared by every area: time, secrets, rate limiters, the
//! durable job queue and outgoing dashboard mail.

pub mod clock;
pub mod jobs;
pub mod limiter;
pub mod mail;
pub mod secrets;
