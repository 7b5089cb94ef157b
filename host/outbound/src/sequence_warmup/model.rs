//! Request and response bodies of spec/3 "Sequence warmup".

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One UTC day of the dashboard chart.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ChartDay {
    /// `YYYY-MM-DD`.
    pub date: String,
    pub sent_count: i64,
    pub bounce_count: i64,
    pub complaint_count: i64,
    /// The cap recorded for that day; null where none was recorded (before
    /// warmup, days the server was down, or days before a reset).
    pub effective_limit: Option<i64>,
}

/// `GET /v1/sequence-warmup/{sequence_id}/dashboard`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WarmupDashboard {
    pub warmup_enabled: bool,
    pub warmup_started_at: Option<String>,
    pub warmup_paused_at: Option<String>,
    pub warmup_start_volume: i64,
    pub warmup_increment: i64,
    pub daily_send_limit: i64,
    pub current_effective_limit: i64,
    pub days_since_start: i64,
    pub days_until_full_volume: i64,
    /// not_started, ramping, at_limit or paused.
    pub warmup_phase: String,
    /// conservative, moderate, aggressive or custom; null until one is chosen.
    pub warmup_preset: Option<String>,
    /// current_effective_limit as a percentage of daily_send_limit.
    pub warmup_progress_pct: f64,
    /// 100 - bounce_rate x 5 - complaint_rate x 20 over the last 30 days, 0-100.
    pub reputation_estimate: f64,
    /// Null until something was sent in the last 30 days.
    pub estimated_inbox_rate: Option<f64>,
    pub delivered_count_30d: i64,
    pub opened_count_30d: i64,
    /// Today and the 29 days before it, oldest first, zeros on quiet days.
    pub daily_volume_chart: Vec<ChartDay>,
}

/// `POST .../preset`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PresetInput {
    /// conservative, moderate, aggressive or custom.
    pub preset: String,
}

/// `POST .../adjust`: at least one field.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AdjustInput {
    /// 1-1000.
    pub start_volume: Option<i64>,
    /// 1-100.
    pub increment: Option<i64>,
    /// 1-10000.
    pub daily_limit: Option<i64>,
}

/// The answer of preset and adjust.
#[derive(Debug, Serialize, ToSchema)]
pub struct WarmupSettings {
    pub message: String,
    pub warmup_start_volume: i64,
    pub warmup_increment: i64,
    pub daily_send_limit: i64,
    pub warmup_preset: Option<String>,
}

/// The answer of pause, resume and reset: the warmup's state afterwards.
#[derive(Debug, Serialize, ToSchema)]
pub struct WarmupState {
    pub message: String,
    pub warmup_enabled: bool,
    pub warmup_started_at: Option<String>,
    pub warmup_paused_at: Option<String>,
    pub warmup_phase: String,
    pub current_effective_limit: i64,
    pub days_since_start: i64,
}
