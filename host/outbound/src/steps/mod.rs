//! Sequence steps (spec/1 "Step"): the seven step types, delays, A/B and
//! multivariate content, conditions on earlier steps, and positions that
//! stay contiguous from 1. `position` on update moves a step; a move must
//! leave every condition pointing at an earlier step.

pub mod model;
pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
