//! Workflows (spec/3 "Workflows"): schedules and the http_request action's network part so far.
pub mod cron;
pub mod http_action;
