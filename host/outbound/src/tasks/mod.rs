//! Tasks (ours; spec/1 lists linkedin_connect, linkedin_message,
//! phone_call, manual_task and sms steps but not how they are carried
//! out). When the sender reaches such a step it opens a task on the
//! enrollment and moves on at once, so a task never blocks the sequence.
//! A person completes it with `POST .../tasks/{task_id}/complete`
//! (optionally with notes); completing is idempotent.

pub mod routes;
pub mod service;

#[cfg(test)]
mod tests;
