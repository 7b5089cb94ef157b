//! The suppression list (spec/1 "Suppression entry", "Suppression list"):
//! addresses, and beyond the spec whole domains (`@example.com`), that no
//! sequence of the account may email. Enrollment asks [`store::suppressed`]
//! before it enrolls anyone; bounces, unsubscribes and complaints add
//! entries through [`store::insert_many`] when those areas land.

pub mod address;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
