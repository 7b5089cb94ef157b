//! Handlers of spec/3 "Sequence warmup" (ten endpoints).

use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::blacklist::BlacklistReport;
use super::checks::{self, HealthReport, SequenceDeliverability};
use super::dns_guide::DnsGuide;
use super::model::{AdjustInput, PresetInput, WarmupDashboard, WarmupSettings, WarmupState};
use super::service;
use outreach_core::error::{ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path};
use outreach_core::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(dashboard))
        .routes(routes!(preset))
        .routes(routes!(adjust))
        .routes(routes!(pause))
        .routes(routes!(resume))
        .routes(routes!(reset))
        .routes(routes!(health))
        .routes(routes!(blacklist))
        .routes(routes!(dns_guide))
        .routes(routes!(deliverability))
}

/// The ramp's state, formulas and the last 30 days.
#[utoipa::path(get, path = "/v1/sequence-warmup/{sequence_id}/dashboard", tag = "sequence-warmup", operation_id = "sequence_warmup_dashboard",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "The dashboard", body = WarmupDashboard),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn dashboard(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<WarmupDashboard>> {
    Ok(Json(
        service::dashboard(&state, &caller, sequence_id).await?,
    ))
}

/// Applies a preset (conservative, moderate, aggressive) or marks the values custom.
#[utoipa::path(post, path = "/v1/sequence-warmup/{sequence_id}/preset", tag = "sequence-warmup", operation_id = "sequence_warmup_preset",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    request_body = PresetInput,
    responses(
        (status = 200, description = "The values now in force", body = WarmupSettings),
        (status = 400, description = "Unknown preset or body field", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn preset(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
    Json(body): Json<PresetInput>,
) -> ApiResult<Json<WarmupSettings>> {
    Ok(Json(
        service::preset(&state, &caller, sequence_id, body).await?,
    ))
}

/// Sets start volume, increment or daily limit; the preset becomes custom.
#[utoipa::path(post, path = "/v1/sequence-warmup/{sequence_id}/adjust", tag = "sequence-warmup", operation_id = "sequence_warmup_adjust",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    request_body = AdjustInput,
    responses(
        (status = 200, description = "The values now in force", body = WarmupSettings),
        (status = 400, description = "No field, a value out of range or an unknown field; nothing changed", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn adjust(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
    Json(body): Json<AdjustInput>,
) -> ApiResult<Json<WarmupSettings>> {
    Ok(Json(
        service::adjust(&state, &caller, sequence_id, body).await?,
    ))
}

/// Freezes the ramp (warmup off, pause stamped).
#[utoipa::path(post, path = "/v1/sequence-warmup/{sequence_id}/pause", tag = "sequence-warmup", operation_id = "sequence_warmup_pause",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "Paused", body = WarmupState),
        (status = 400, description = "Warmup is already inactive", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<WarmupState>> {
    Ok(Json(service::pause(&state, &caller, sequence_id).await?))
}

/// Re-enables the ramp and moves its start forward by the pause.
#[utoipa::path(post, path = "/v1/sequence-warmup/{sequence_id}/resume", tag = "sequence-warmup", operation_id = "sequence_warmup_resume",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "Running again", body = WarmupState),
        (status = 400, description = "Warmup was never started", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<WarmupState>> {
    Ok(Json(service::resume(&state, &caller, sequence_id).await?))
}

/// Wipes the ramp's start, pause and effective-limit log.
#[utoipa::path(post, path = "/v1/sequence-warmup/{sequence_id}/reset", tag = "sequence-warmup", operation_id = "sequence_warmup_reset",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "Reset", body = WarmupState),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn reset(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<WarmupState>> {
    Ok(Json(service::reset(&state, &caller, sequence_id).await?))
}

/// SPF, DKIM (common selectors) and DMARC of the from_email domain.
#[utoipa::path(get, path = "/v1/sequence-warmup/{sequence_id}/health", tag = "sequence-warmup", operation_id = "sequence_warmup_health",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "The three checks and a recommendation", body = HealthReport),
        (status = 400, description = "The sequence has no from_email", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn health(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<HealthReport>> {
    Ok(Json(checks::health(&state, &caller, sequence_id).await?))
}

/// DNS blacklists for the domain and its mail server; cached 24 h per domain.
#[utoipa::path(get, path = "/v1/sequence-warmup/{sequence_id}/blacklist", tag = "sequence-warmup", operation_id = "sequence_warmup_blacklist",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "One result per list asked", body = BlacklistReport),
        (status = 400, description = "The sequence has no from_email", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn blacklist(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<BlacklistReport>> {
    Ok(Json(checks::blacklist(&state, &caller, sequence_id).await?))
}

/// SPF, DKIM and DMARC records to publish, tailored to the domain and SMTP host.
#[utoipa::path(get, path = "/v1/sequence-warmup/{sequence_id}/dns-guide", tag = "sequence-warmup", operation_id = "sequence_warmup_dns_guide",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "The three records", body = DnsGuide),
        (status = 400, description = "The sequence has no from_email", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn dns_guide(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<DnsGuide>> {
    Ok(Json(checks::dns_guide(&state, &caller, sequence_id).await?))
}

/// Health, blacklist and dashboard together, with a score and recommendations.
#[utoipa::path(get, path = "/v1/sequence-warmup/{sequence_id}/deliverability", tag = "sequence-warmup", operation_id = "sequence_warmup_deliverability",
    security(("api_key" = [])), params(("sequence_id" = i64, Path, description = "Sequence id")),
    responses(
        (status = 200, description = "The merged report", body = SequenceDeliverability),
        (status = 400, description = "The sequence has no from_email", body = ErrorBody),
        (status = 403, description = "Starter+ only", body = ErrorBody),
        (status = 404, description = "No such sequence", body = ErrorBody),
    ))]
async fn deliverability(
    State(state): State<AppState>,
    caller: Caller,
    Path(sequence_id): Path<i64>,
) -> ApiResult<Json<SequenceDeliverability>> {
    Ok(Json(
        checks::deliverability(&state, &caller, sequence_id).await?,
    ))
}
