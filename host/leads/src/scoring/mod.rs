//! Scoring (spec/2 "Scoring"; issue 12): being written.

pub mod routes;
