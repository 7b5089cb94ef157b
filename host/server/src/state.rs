//! The application state every handler, service and worker receives.

use std::sync::Arc;
use std::time::Duration;

use ipnet::IpNet;

use outreach_plugin_runtime::{GuardPolicy, PluginRuntime, RuntimeConfig};

use crate::api_keys::ApiKeyService;
use crate::auth::jwt::JwtKeys;
use crate::config::Config;
use crate::error::{ApiError, ApiResult};
use crate::http::client_ip::parse_net;
use crate::platform::clock::SharedClock;
use crate::platform::jobs::JobQueue;
use crate::platform::limiter::{API_BURST, Limiter};
use crate::platform::mail::Mailer;
use crate::platform::secrets::Secrets;
use crate::store::Db;
use crate::usage::quota::QuotaCounters;
use crate::usage::recorder::UsageRecorder;

/// Rate limiters shared by all areas.
#[derive(Debug)]
pub struct Limits {
    /// Per API key per minute, plan-dependent, with the 2x short burst.
    pub api: Limiter,
    /// Any "N per minute" rule keyed by user, token or IP (enroll, test-send,
    /// incoming webhooks, sign-in routes...). Keys are namespaced by rule.
    pub per_minute: Limiter,
    /// Rules counted over five minutes (password reset routes).
    pub per_five_minutes: Limiter,
}

/// The application state. Cloning it (axum does, per request and per
/// extractor) costs one reference-count increment.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What every handler, service and worker shares.
pub struct Shared {
    pub config: Arc<Config>,
    pub db: Db,
    pub clock: SharedClock,
    pub secrets: Arc<Secrets>,
    pub jobs: JobQueue,
    pub mailer: Mailer,
    pub keys: ApiKeyService,
    pub limits: Arc<Limits>,
    pub usage: UsageRecorder,
    pub quota: Arc<QuotaCounters>,
    pub trusted_proxies: Arc<Vec<IpNet>>,
    pub jwt: Arc<JwtKeys>,
    /// The wasm plugin runtime (vendor adapters, workflow actions, template packs).
    pub plugins: PluginRuntime,
}

impl std::fmt::Debug for JwtKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JwtKeys")
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("backend", &self.db.backend)
            .field("listen", &self.config.listen)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// Connects to the database, applies migrations, loads or generates the
    /// master key and starts the usage writer.
    pub async fn build(config: Config, clock: SharedClock) -> anyhow::Result<AppState> {
        AppState::build_with(config, clock, Plugins::Load).await
    }

    /// Like [`AppState::build`]; `plugins` says whether to load the plugin
    /// components. Account and key commands of the CLI need none, and loading
    /// means compiling every component on a fresh data dir.
    pub async fn build_with(
        config: Config,
        clock: SharedClock,
        plugins: Plugins,
    ) -> anyhow::Result<AppState> {
        std::fs::create_dir_all(&config.data_dir)?;
        let db = Db::connect(&config.database_url()).await?;
        crate::store::migrate::run(&db).await?;
        let secrets = Secrets::load_or_generate(
            &config.encryption_key,
            &config.previous_encryption_keys,
            &config.data_dir,
        )?;
        let jwt = JwtKeys::new(&secrets.derive("dashboard-jwt"));
        let plugins = match plugins {
            Plugins::Load => start_plugins(&config, Some(Duration::from_secs(2))).await?,
            Plugins::None => PluginRuntime::new(RuntimeConfig {
                load_first_party: false,
                watch_interval: None,
                ..RuntimeConfig::default()
            })
            .await
            .map_err(|e| anyhow::anyhow!("starting the plugin runtime: {e}"))?,
        };
        let minute = Duration::from_secs(60);
        Ok(AppState(Arc::new(Shared {
            db: db.clone(),
            jobs: JobQueue::new(db.clone(), clock.clone()),
            mailer: Mailer::new(&config.smtp)?,
            keys: ApiKeyService::new(db.clone(), clock.clone(), &config.key_prefix),
            limits: Arc::new(Limits {
                api: Limiter::new(minute, Some(API_BURST), clock.clone()),
                per_minute: Limiter::new(minute, None, clock.clone()),
                per_five_minutes: Limiter::new(Duration::from_secs(300), None, clock.clone()),
            }),
            usage: UsageRecorder::spawn(db, Duration::from_millis(config.usage_flush_interval_ms)),
            quota: Arc::new(QuotaCounters::default()),
            trusted_proxies: Arc::new(
                config
                    .trusted_proxies
                    .iter()
                    .filter_map(|p| parse_net(p).ok())
                    .collect(),
            ),
            secrets: Arc::new(secrets),
            jwt: Arc::new(jwt),
            plugins,
            config: Arc::new(config),
            clock,
        })))
    }

    /// The reusable "N per minute" check: `rule` names the limit (for example
    /// `enroll`), `who` the user, token or IP it counts against.
    pub fn limit_per_minute(&self, rule: &str, who: &str, limit: u32) -> ApiResult<()> {
        let d = self
            .limits
            .per_minute
            .check(&format!("{rule}:{who}"), limit);
        if d.allowed {
            Ok(())
        } else {
            Err(ApiError::RateLimited {
                retry_after: d.retry_after_secs,
            })
        }
    }
}

/// Whether [`AppState::build_with`] loads plugin components.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plugins {
    Load,
    None,
}

/// Starts the plugin runtime: first-party components embedded in the binary,
/// plus the operator's plugins folder, watched every `watch` when given.
pub async fn start_plugins(
    config: &Config,
    watch: Option<Duration>,
) -> anyhow::Result<PluginRuntime> {
    let plugins_dir = config.plugins_dir();
    std::fs::create_dir_all(&plugins_dir)?;
    let guard_policy = if config.unsafe_plugins_allow_loopback {
        tracing::warn!("plugins may reach loopback addresses (unsafe_plugins_allow_loopback)");
        GuardPolicy::allow_loopback_for_tests()
    } else {
        GuardPolicy::strict()
    };
    let runtime = PluginRuntime::new(RuntimeConfig {
        plugins_dir: Some(plugins_dir),
        cache_dir: Some(plugin_cache_dir(config)),
        guard_policy,
        watch_interval: watch,
        ..RuntimeConfig::default()
    })
    .await
    .map_err(|e| anyhow::anyhow!("starting the plugin runtime: {e}"))?;
    Ok(runtime)
}

/// Precompiled components are cached by content and engine hash, so the
/// cache can be shared; tests share one across their temporary data dirs.
fn plugin_cache_dir(config: &Config) -> std::path::PathBuf {
    if cfg!(test) {
        std::env::temp_dir().join("outreach-test-plugin-cache")
    } else {
        config.data_dir.join("cache").join("plugins")
    }
}
