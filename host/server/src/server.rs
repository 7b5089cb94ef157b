//! `outreach serve`: the API listener, the metrics listener, first-start
//! bootstrap and graceful shutdown.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use outreach_plugin_runtime::PluginRuntime;
use tokio::net::TcpListener;

use outreach_core::accounts::plans::Plan;
use outreach_core::accounts::service::create_account;
use outreach_core::accounts::store::claim_setting;
use outreach_core::config::Config;
use outreach_core::http::app::router;
use outreach_core::platform::clock::SystemClock;
use outreach_core::state::AppState;

pub const BOOTSTRAP_ADMIN_EMAIL: &str = "admin@outreach.local";

/// How long a stopping server keeps trying to write the usage it counted:
/// longer than a backup's or a VACUUM's lock usually lasts, shorter than
/// the usual 90 s a service manager waits before SIGKILL.
const USAGE_FLUSH_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Latency buckets (seconds) of the request and plugin-call histograms:
/// fixed buckets keep memory constant and add up across servers, where
/// summaries would keep samples until scraped and cannot be combined.
const LATENCY_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Installs the Prometheus recorder and runs its upkeep on a timer, so
/// nothing accumulates when nobody scrapes `/metrics`.
fn install_metrics() -> anyhow::Result<PrometheusHandle> {
    let recorder = PrometheusBuilder::new()
        .set_buckets(&LATENCY_BUCKETS)
        .context("metrics buckets")?
        .build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).context("installing the metrics recorder")?;
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    Ok(handle)
}

pub async fn serve(config: Config) -> anyhow::Result<()> {
    let metrics = install_metrics()?;
    let state = AppState::build(config, Arc::new(SystemClock), &crate::AREAS).await?;
    bootstrap_admin(&state).await?;

    let metrics_listener = TcpListener::bind(state.config.metrics_listen)
        .await
        .with_context(|| format!("binding metrics listener {}", state.config.metrics_listen))?;
    println!(
        "metrics on http://{}/metrics",
        metrics_listener.local_addr()?
    );
    tokio::spawn(serve_metrics(
        metrics_listener,
        metrics,
        state.plugins.clone(),
    ));

    let listener = TcpListener::bind(state.config.listen)
        .await
        .with_context(|| format!("binding {}", state.config.listen))?;
    let addr = listener.local_addr()?;
    // Scripts and the end-to-end tests read this line to find a port-0 listener.
    println!("listening on http://{addr}");
    tracing::info!(%addr, database = %outreach_core::store::redact_url(&state.config.database_url()), "serving");

    tokio::spawn(housekeeping(state.clone()));
    for area in &crate::AREAS {
        (area.workers)(&state);
    }
    let app = router(state.clone(), &crate::AREAS);
    // Start-up (plugin compilation above all) is done with its garbage and
    // with most of the code it ran (see `memory`).
    crate::memory::release_free_heap();
    let paged_out = crate::memory::page_out_start_up_code();
    tracing::debug!(bytes = paged_out, "paged out start-up code");
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown_signal())
    .await?;
    // Every request has been answered, so every count is in the recorder.
    // Write them, retrying while the database is locked or busy; what is
    // still unwritten at the deadline is logged, one line per account.
    if let Err(unwritten) = state.usage.flush_within(USAGE_FLUSH_DEADLINE).await {
        tracing::error!(%unwritten, "usage not written before stopping");
    }
    if let Some(shared) = &state.limits.shared
        && let Err(e) = shared.release().await
    {
        tracing::warn!(error = %e, "returning unused limit reservations failed");
    }
    tracing::info!("stopped");
    Ok(())
}

/// On the very first start, creates an Enterprise admin account and prints
/// its API key once. The settings row makes this happen once even when
/// several processes start together on one PostgreSQL database.
async fn bootstrap_admin(state: &AppState) -> anyhow::Result<()> {
    if !claim_setting(&state.db, "bootstrap_admin", BOOTSTRAP_ADMIN_EMAIL).await? {
        return Ok(());
    }
    let created = create_account(state, BOOTSTRAP_ADMIN_EMAIL, Plan::Enterprise, None)
        .await
        .map_err(|e| anyhow::anyhow!("creating the admin account: {e}"))?;
    println!(
        "created admin account {} ({BOOTSTRAP_ADMIN_EMAIL}, enterprise plan)\n\
         admin API key (shown once, store it now): {}",
        created.account_id, created.api_key
    );
    Ok(())
}

/// The private operator listener: Prometheus metrics, and the plugin list
/// with live counters that `outreach plugins list` reads.
async fn serve_metrics(listener: TcpListener, handle: PrometheusHandle, plugins: PluginRuntime) {
    let app = Router::new()
        .route(
            "/metrics",
            axum::routing::get(move || {
                let handle = handle.clone();
                async move { handle.render() }
            }),
        )
        .route(
            "/plugins",
            axum::routing::get(move || {
                let plugins = plugins.clone();
                async move { axum::Json(plugins.list()) }
            }),
        );
    if let Err(e) = axum::serve(listener, app).await {
        tracing::error!(error = %e, "metrics listener failed");
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// Clean-up of rows that only expire: cached vendor results, spent reset
/// tokens, raw usage rows beyond the newest per account, hourly rollups
/// older than 48 hours, daily ones older than 400 days, ended limit
/// windows, dispatched outbox events after 7 days and finished webhook
/// deliveries after 30. Each statement is idempotent and batched, so several servers on
/// one database may run it without coordination; finished workflow runs
/// past `workflow_run_retention_days` are deleted by one server a turn (a
/// settings row decides which). Runs a minute after start, then hourly.
async fn housekeeping(state: AppState) {
    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    let mut every = tokio::time::interval(std::time::Duration::from_secs(3600));
    loop {
        every.tick().await;
        let span = tracing::info_span!("job", name = "housekeeping");
        let _enter = span.enter();
        match prune(&state).await {
            Ok(p) => tracing::info!(
                cache = p.vendor_cache,
                tokens = p.reset_tokens,
                raw_usage = p.usage.raw_usage,
                rollups = p.usage.rollups,
                limit_windows = p.usage.limit_windows,
                outbox_events = p.webhooks.outbox_events,
                webhook_deliveries = p.webhooks.deliveries,
                workflow_runs = p.workflow_runs,
                "pruned expired rows"
            ),
            Err(e) => tracing::error!(error = %e, "pruning failed"),
        }
    }
}

/// Rows removed by one [`prune`] pass.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    pub vendor_cache: u64,
    pub reset_tokens: u64,
    pub usage: outreach_core::usage::housekeeping::Pruned,
    pub webhooks: outreach_automation::webhooks::housekeeping::Pruned,
    /// 0 when another server had this turn.
    pub workflow_runs: u64,
}

/// One pass of [`housekeeping`].
pub async fn prune(state: &AppState) -> anyhow::Result<Pruned> {
    let now = state.clock.now_ms();
    let vendor_cache = outreach_vendors::vendor_keys::store::prune_cache(&state.db, now).await?;
    let reset_tokens = outreach_core::auth::service::prune_reset_tokens(state)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let usage = outreach_core::usage::housekeeping::prune(state).await?;
    let webhooks = outreach_automation::webhooks::housekeeping::prune(state).await?;
    let workflow_runs = outreach_automation::workflows::retention::prune_if_due(state)
        .await?
        .unwrap_or(0);
    Ok(Pruned {
        vendor_cache,
        reset_tokens,
        usage,
        webhooks,
        workflow_runs,
    })
}
