//! Enrollment (spec/1 "Enrollment", "Enrollment status"): the four enroll
//! rules, the CSV variant, and pausing, resuming and dropping a contact.
//! Each enrollment carries its place (`current_step`), when its next step
//! is due (`next_send_at`: enrollment time plus the first step's delays at
//! first), its lead temperature (cold on enroll), engagement score and goal
//! completion, in the shape the sender's due-time index reads.

pub mod csv_file;
pub mod model;
pub mod routes;
pub mod rules;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
