//! Sequence analytics and A/B and multivariate results (spec/1
//! "Analytics", "A/B and multivariate tests"), read from the events of
//! spec/1 "Events" (`sequence_events`) with one GROUP BY per answer.
//!
//! **Counts.** `opened` counts messages opened (an open is recorded once
//! per message). `clicked` counts unique clicks, messages clicked at least
//! once; `total_clicks` (ours) counts every click. Unique clicks are what a
//! rate of sent messages can be made of (a share of messages, never above
//! 100 %), so `click_rate` uses them. `interested_replies` counts replied
//! events whose classification is `interested`. The rollup counts every
//! event of the sequence, including those of steps deleted since;
//! `steps[]` lists the current steps (every type), zeros where nothing
//! happened.
//!
//! **Rates** are count / sent x 100 rounded half up to one decimal, 0 when
//! nothing was sent; computed in integers, so 1/3 is 33.3 and 1/8 is 12.5.
//! A/B and multivariate results add `reply_rate` the same way.
//!
//! **A/B.** `ab-results` answers for any step (zeros, and
//! `ab_test_enabled` false, for a plain step). `ab-winner` takes
//! `{"winner": "a" | "b"}`: anything else, or a step without
//! `ab_test_enabled`, is 400 and changes nothing; it may be chosen again.
//! The sender reads `sequence_steps.ab_winner` and sends only that variant.
//!
//! **Multivariate.** The composite score, `open_rate x 0.3 +
//! click_rate x 0.3 + reply_rate x 0.4`, is computed over the rounded
//! rates, so it is exact to two decimals.
//! `leading_variant` is the highest score among variants sent at least 5
//! times (the earlier variant of the step on a tie), null when none was.
//! `results` has every variant the step has now; sends of a label since
//! removed are not shown.
//!
//! **`has_sufficient_data`** is true when (1) the step has at least two
//! variants and every one was sent at least 30 times, so each proportion
//! has enough trials for the normal approximation; and (2) the leader's
//! margin over the runner-up (the next highest composite) is unlikely to be
//! noise: among the composite's three components (open, unique click and
//! reply proportions), take the one contributing most to the margin,
//! weight x (leader's proportion - runner-up's), and run a pooled
//! two-proportion z-test on it, z = (p1 - p2) / sqrt(p (1 - p) (1/n1 +
//! 1/n2)) with p the pooled proportion. It must reach 2.394: a two-sided
//! 5 % level, Bonferroni-corrected for picking one of three components
//! after looking. A component with no variance (both 0 %) never passes, nor
//! does a leader whose margin is not positive on any component.

pub mod routes;
pub mod service;
pub mod store;

#[cfg(test)]
mod tests;
