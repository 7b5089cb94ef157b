//! Sequence warmup (spec/3): the ramp of daily volume and the deliverability
//! checks around it.

pub mod ramp;
