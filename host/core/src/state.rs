//! The application state every handler, service and worker receives.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ipnet::IpNet;

use outreach_plugin_runtime::{PluginKind, PluginRuntime, RuntimeConfig};

use crate::api_keys::ApiKeyService;
use crate::area::Area;
use crate::auth::jwt::JwtKeys;
use crate::config::Config;
use crate::error::{ApiError, ApiResult};
use crate::http::client_ip::parse_net;
use crate::platform::clock::SharedClock;
use crate::platform::jobs::JobQueue;
use crate::platform::limiter::{API_BURST, Limiter};
use crate::platform::mail::Mailer;
use crate::platform::secrets::Secrets;
use crate::platform::shared_limiter::SharedLimiter;
use crate::store::{Backend, Db};
use crate::usage::quota::QuotaCounters;
use crate::usage::recorder::UsageRecorder;

/// Rate limiters shared by all areas.
#[derive(Debug)]
pub struct Limits {
    /// Per API key per minute, plan-dependent, with the 2x short burst
    /// (in this process; see `shared`).
    pub api: Limiter,
    /// Per API key per UTC day, when an operator sets `requests_per_day`.
    pub api_day: Limiter,
    /// On PostgreSQL, the API key and quota limits are kept in the database
    /// and shared by every server (`platform::shared_limiter`); `api`,
    /// `api_day` and the in-process quota counters then go unused.
    pub shared: Option<SharedLimiter>,
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

/// Services that area crates add to the state, by type (see
/// [`AppState::ext`]). The core does not know their types.
pub type Extensions = axum::http::Extensions;

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
    /// The address rules for every user-directed outbound connection (HTTP,
    /// SMTP, IMAP, DNS over TCP): the SSRF guard's policy with the
    /// operator's CIDR allowlist and the test-only loopback allowance.
    pub outbound: outreach_ssrf::GuardPolicy,
    /// The DNS resolver for lookups the server makes itself (warmup checks,
    /// MX records), from `dns_nameservers`.
    pub dns: crate::platform::dns::Dns,
    /// The effective plan limits (spec/1 with the operator's overrides).
    pub limits_table: Arc<crate::accounts::LimitsTable>,
    /// Area crates' services, set once while the state is assembled.
    extensions: OnceLock<Extensions>,
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
    /// `areas` add their services as typed extensions.
    pub async fn build(
        config: Config,
        clock: SharedClock,
        areas: &[Area],
    ) -> anyhow::Result<AppState> {
        AppState::build_with(config, clock, Plugins::Load, areas).await
    }

    /// Like [`AppState::build`]; `plugins` says whether to load the plugin
    /// components. Account and key commands of the CLI need none, and loading
    /// means compiling every component on a fresh data dir.
    pub async fn build_with(
        config: Config,
        clock: SharedClock,
        plugins: Plugins,
        areas: &[Area],
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
        let outbound = crate::platform::outbound::policy(&config)?;
        let dns = crate::platform::dns::Dns::from_config(&config)?;
        let limits_table = Arc::new(config.limits_table()?);
        let artifact_cache = match plugins {
            Plugins::Load => Some(default_plugin_cache(&config)),
            Plugins::LoadCachedIn(cache) => Some(cache),
            Plugins::None => None,
        };
        let loaded = artifact_cache.is_some();
        let plugins = match artifact_cache {
            Some(cache) => {
                start_plugins_with(&config, &outbound, Some(Duration::from_secs(2)), cache).await?
            }
            None => PluginRuntime::new(RuntimeConfig {
                load_first_party: false,
                watch_interval: None,
                ..RuntimeConfig::default()
            })
            .await
            .map_err(|e| anyhow::anyhow!("starting the plugin runtime: {e}"))?,
        };
        if loaded {
            check_chosen_plugins(&config, &plugins)?;
        }
        let minute = Duration::from_secs(60);
        let state = AppState(Arc::new(Shared {
            db: db.clone(),
            jobs: JobQueue::new(db.clone(), clock.clone()),
            mailer: Mailer::new(&config.smtp)?,
            keys: ApiKeyService::new(db.clone(), clock.clone(), &config.key_prefix),
            limits: Arc::new(Limits {
                api: Limiter::new(minute, Some(API_BURST), clock.clone()),
                api_day: Limiter::new(Duration::from_secs(86_400), None, clock.clone()),
                shared: (db.backend == Backend::Postgres)
                    .then(|| SharedLimiter::new(db.clone(), clock.clone())),
                per_minute: Limiter::new(minute, None, clock.clone()),
                per_five_minutes: Limiter::new(Duration::from_secs(300), None, clock.clone()),
            }),
            usage: UsageRecorder::spawn(
                db.clone(),
                Duration::from_millis(config.usage_flush_interval_ms),
                config.usage_recent_requests,
            ),
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
            outbound,
            dns,
            limits_table,
            extensions: OnceLock::new(),
            config: Arc::new(config),
            clock,
        }));
        let mut extensions = Extensions::new();
        for area in areas {
            (area.extend)(&state, &mut extensions);
        }
        let _ = state.extensions.set(extensions);
        Ok(state)
    }

    /// The service of type `T` an area crate added in its
    /// [`Area::extend`]. Panics when no area added one: that is a wiring
    /// mistake in the server's area list, not a runtime condition.
    pub fn ext<T: Clone + Send + Sync + 'static>(&self) -> &T {
        self.extensions
            .get()
            .and_then(|e| e.get::<T>())
            .unwrap_or_else(|| {
                panic!(
                    "no area added a {} to the state (see outreach::AREAS)",
                    std::any::type_name::<T>()
                )
            })
    }

    /// The effective limits of `plan`.
    pub fn plan_limits(&self, plan: crate::accounts::Plan) -> &crate::accounts::PlanLimits {
        self.limits_table.of(plan)
    }

    /// The reusable "N per minute" check: `rule` names the limit (for example
    /// `enroll`), `who` the user, token or IP it counts against. On
    /// PostgreSQL the count lives in `limit_windows`, so every server shares
    /// the budget (its `minute:` rows are pruned with the others); on SQLite
    /// (one server) it is kept in this process.
    pub async fn limit_per_minute(&self, rule: &str, who: &str, limit: u32) -> ApiResult<()> {
        let scope = format!("{rule}:{who}");
        let Some(shared) = &self.limits.shared else {
            let d = self.limits.per_minute.check(&scope, limit);
            return if d.allowed {
                Ok(())
            } else {
                Err(ApiError::RateLimited {
                    retry_after: d.retry_after_secs,
                })
            };
        };
        let now = self.clock.now_ms();
        let start = now - now.rem_euclid(60_000);
        let grant = shared
            .take(crate::platform::shared_limiter::Window {
                scope: &format!("minute:{scope}"),
                start,
                ends_at: start + 60_000,
                limit: limit.into(),
                burst: None,
            })
            .await?;
        if grant.allowed {
            Ok(())
        } else {
            Err(ApiError::RateLimited {
                retry_after: ((start + 60_000 - now) / 1000).max(1) as u64,
            })
        }
    }
}

/// The plugins the configuration chooses by id are loaded and of the kind
/// the setting needs. A typo would otherwise only show at call time, as a
/// warning per message or domain and a silent fall back to the rules.
fn check_chosen_plugins(config: &Config, plugins: &PluginRuntime) -> anyhow::Result<()> {
    let chosen = [
        (
            "inbox_reply_classifier",
            &config.inbox_reply_classifier,
            PluginKind::ReplyClassifier,
        ),
        (
            "domain_classifier",
            &config.domain_classifier,
            PluginKind::DomainClassifier,
        ),
    ];
    for (setting, id, kind) in chosen {
        if id.is_empty() {
            continue;
        }
        let loaded = plugins.plugins_of_kind(kind);
        if !loaded.contains(id) {
            anyhow::bail!(
                "{setting} = \"{id}\": no loaded {} plugin has that id (loaded: {})",
                kind.as_str(),
                loaded.join(", ")
            );
        }
    }
    Ok(())
}

/// Whether [`AppState::build_with`] loads plugin components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plugins {
    /// Load and watch the plugins folder; precompiled artifacts live in
    /// `<data_dir>/cache/plugins`.
    Load,
    /// Load once with precompiled artifacts in the given folder. Artifacts
    /// are keyed by content and engine hash, so tests share one folder
    /// across their temporary data dirs.
    LoadCachedIn(PathBuf),
    None,
}

/// Starts the plugin runtime: first-party components embedded in the binary,
/// plus the operator's plugins folder, watched every `watch` when given, with
/// precompiled artifacts in `<data_dir>/cache/plugins`.
pub async fn start_plugins(
    config: &Config,
    watch: Option<Duration>,
) -> anyhow::Result<PluginRuntime> {
    let outbound = crate::platform::outbound::policy(config)?;
    start_plugins_with(config, &outbound, watch, default_plugin_cache(config)).await
}

fn default_plugin_cache(config: &Config) -> PathBuf {
    config.data_dir.join("cache").join("plugins")
}

/// [`start_plugins`] with the outbound policy (plugins' HTTP import follows
/// it) and the artifact cache given.
async fn start_plugins_with(
    config: &Config,
    outbound: &outreach_ssrf::GuardPolicy,
    watch: Option<Duration>,
    cache_dir: PathBuf,
) -> anyhow::Result<PluginRuntime> {
    let plugins_dir = config.plugins_dir();
    std::fs::create_dir_all(&plugins_dir)?;
    let runtime = PluginRuntime::new(RuntimeConfig {
        plugins_dir: Some(plugins_dir),
        cache_dir: Some(cache_dir),
        guard_policy: outbound.clone(),
        watch_interval: watch,
        ..RuntimeConfig::default()
    })
    .await
    .map_err(|e| anyhow::anyhow!("starting the plugin runtime: {e}"))?;
    Ok(runtime)
}
