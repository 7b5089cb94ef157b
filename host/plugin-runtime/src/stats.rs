//! Per-plugin counters, kept in atomics for `plugins list` and mirrored to
//! the `metrics` facade for the Prometheus endpoint.

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

const LABELS: [&str; 14] = [
    "ok",
    "transient",
    "rate_limited",
    "auth",
    "invalid_input",
    "permanent",
    "timeout",
    "trap",
    "out_of_memory",
    "denied",
    "invalid_output",
    "not_found",
    "wrong_kind",
    "instantiate",
];

/// Upper bounds (µs) of the latency buckets used for percentile estimates.
const BUCKETS_US: [u64; 16] = [
    50,
    100,
    250,
    500,
    1_000,
    2_500,
    5_000,
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    5_000_000,
    u64::MAX,
];

#[derive(Default)]
pub(crate) struct Stats {
    by_result: [AtomicU64; LABELS.len()],
    buckets: [AtomicU64; BUCKETS_US.len()],
    latency_sum_us: AtomicU64,
    latency_max_us: AtomicU64,
    series: Series,
}

/// The plugin's Prometheus series, each looked up on its first use: a
/// lookup builds and hashes its labels, several allocations on every call
/// otherwise. The server installs its recorder before any plugin is called.
#[derive(Default)]
struct Series {
    calls: [OnceLock<metrics::Counter>; LABELS.len()],
    duration: OnceLock<metrics::Histogram>,
    traps: OnceLock<metrics::Counter>,
    timeouts: OnceLock<metrics::Counter>,
}

/// A snapshot of one plugin's counters.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PluginStats {
    pub calls: u64,
    pub ok: u64,
    /// Errors by kind (transient, rate_limited, auth, ..., trap, timeout).
    pub errors: BTreeMap<String, u64>,
    pub traps: u64,
    pub timeouts: u64,
    pub latency_mean_us: u64,
    /// Bucket upper bound containing the median (an estimate).
    pub latency_p50_us: u64,
    pub latency_p99_us: u64,
    pub latency_max_us: u64,
}

impl Stats {
    pub(crate) fn record(&self, plugin: &str, label: &'static str, elapsed: Duration) {
        let i = LABELS.iter().position(|l| *l == label).unwrap_or(0);
        self.by_result[i].fetch_add(1, Relaxed);
        let us = elapsed.as_micros().min(u64::MAX as u128) as u64;
        let b = BUCKETS_US
            .iter()
            .position(|&ub| us <= ub)
            .unwrap_or(BUCKETS_US.len() - 1);
        self.buckets[b].fetch_add(1, Relaxed);
        self.latency_sum_us.fetch_add(us, Relaxed);
        self.latency_max_us.fetch_max(us, Relaxed);
        let series = &self.series;
        let plugin = || plugin.to_string();
        series.calls[i]
            .get_or_init(|| {
                metrics::counter!("outreach_plugin_calls_total", "plugin" => plugin(), "result" => LABELS[i])
            })
            .increment(1);
        series
            .duration
            .get_or_init(|| {
                metrics::histogram!("outreach_plugin_call_duration_seconds", "plugin" => plugin())
            })
            .record(elapsed.as_secs_f64());
        match label {
            "trap" | "out_of_memory" => series
                .traps
                .get_or_init(
                    || metrics::counter!("outreach_plugin_traps_total", "plugin" => plugin()),
                )
                .increment(1),
            "timeout" => series
                .timeouts
                .get_or_init(
                    || metrics::counter!("outreach_plugin_timeouts_total", "plugin" => plugin()),
                )
                .increment(1),
            _ => {}
        }
    }

    pub(crate) fn snapshot(&self) -> PluginStats {
        let counts: Vec<u64> = self.by_result.iter().map(|c| c.load(Relaxed)).collect();
        let calls: u64 = counts.iter().sum();
        let errors = LABELS
            .iter()
            .zip(&counts)
            .skip(1)
            .filter(|(_, n)| **n > 0)
            .map(|(l, n)| (l.to_string(), *n))
            .collect();
        let buckets: Vec<u64> = self.buckets.iter().map(|c| c.load(Relaxed)).collect();
        let pct = |q: f64| {
            let target = ((calls as f64) * q).ceil().max(1.0) as u64;
            let mut seen = 0;
            for (i, n) in buckets.iter().enumerate() {
                seen += n;
                if seen >= target {
                    return BUCKETS_US[i].min(self.latency_max_us.load(Relaxed));
                }
            }
            0
        };
        let idx = |l: &str| counts[LABELS.iter().position(|x| *x == l).unwrap_or(0)];
        PluginStats {
            calls,
            ok: counts[0],
            errors,
            traps: idx("trap") + idx("out_of_memory"),
            timeouts: idx("timeout"),
            latency_mean_us: self
                .latency_sum_us
                .load(Relaxed)
                .checked_div(calls)
                .unwrap_or(0),
            latency_p50_us: if calls == 0 { 0 } else { pct(0.5) },
            latency_p99_us: if calls == 0 { 0 } else { pct(0.99) },
            latency_max_us: self.latency_max_us.load(Relaxed),
        }
    }
}
