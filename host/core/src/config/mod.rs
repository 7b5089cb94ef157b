//! Configuration: built-in defaults, then an optional TOML file (`--config`),
//! then `OUTREACH_*` environment variables, each layer overriding the previous.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

mod smart_warmup;
pub use smart_warmup::SmartWarmupConfig;

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// The whole server configuration. Every field has a default so that
/// `outreach serve` with no configuration at all runs an embedded instance.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address of the API listener.
    pub listen: SocketAddr,
    /// Address of the Prometheus metrics listener (kept off the API port so it
    /// can stay private).
    pub metrics_listen: SocketAddr,
    /// Folder for the SQLite file, the master key and the plugins folder.
    pub data_dir: PathBuf,
    /// `sqlite://...` or `postgres://...`; empty means `<data_dir>/outreach.db`.
    pub database_url: String,
    /// Folder scanned for operator-supplied plugin components; empty means
    /// `<data_dir>/plugins`.
    pub plugins_dir: String,
    /// Public base URL, used in links the server hands out (approval pages,
    /// incoming-webhook URLs, password-reset mails).
    pub public_base_url: String,
    /// Fixed service prefix of every API key (`<prefix>_...`).
    pub key_prefix: String,
    /// Peers allowed to set `X-Forwarded-For`; requests from anyone else are
    /// judged by their socket address only.
    pub trusted_proxies: Vec<String>,
    /// Base64 of a 32-byte master key. When empty, a key is generated into
    /// `<data_dir>/master.key` (mode 0600) on first start.
    pub encryption_key: String,
    /// Older master keys (base64), kept so that rows encrypted before a
    /// rotation still decrypt. Their versions are 1..=n in list order; the
    /// current key's version is n + 1.
    pub previous_encryption_keys: Vec<String>,
    /// Usage rows are written in batches: at most this many milliseconds apart.
    pub usage_flush_interval_ms: u64,
    /// Maximum request body size in bytes.
    pub max_body_bytes: usize,
    /// Base-URL overrides for vendor adapters, by vendor identifier (for
    /// example a regional endpoint, or a local stub in tests). Without an
    /// entry an adapter talks to its vendor's public API.
    pub vendor_base_urls: std::collections::BTreeMap<String, String>,
    /// Networks (CIDR) that user-directed outbound connections may reach
    /// although they are private (a self-hosted mail server or gateway).
    /// Cloud metadata endpoints stay refused.
    pub outbound_allow_cidrs: Vec<String>,
    /// Lets every user-directed outbound connection (webhooks, mail, crawler,
    /// workflow HTTP, plugins) reach loopback, and nothing else. For tests
    /// against local peers only; never enable it in production.
    pub unsafe_outbound_allow_loopback: bool,
    /// The earlier name of `unsafe_outbound_allow_loopback`, kept as an
    /// alias: either one set opens loopback for all outbound connections.
    pub unsafe_plugins_allow_loopback: bool,
    /// Offers the SDK example vendors (manifests with `example = true`) as
    /// providers. For tests and plugin development.
    pub offer_example_vendors: bool,
    /// DNS servers for the lookups the server makes itself (SPF, DKIM,
    /// DMARC and blacklist checks, MX records): `ip` or `ip:port` (IPv6 as
    /// `[addr]:port`). Empty means the system's resolver configuration.
    pub dns_nameservers: Vec<String>,
    /// How long the sequence sender holds the enrollments it claimed, in
    /// seconds: a server that dies leaves its claimed sends for this long
    /// before another server takes them. Longer than any SMTP transaction.
    pub sender_lease_secs: u64,
    /// SMTP connections the sequence sender keeps open per send account
    /// (1-50). Hosted mailboxes limit concurrent sessions per user (about
    /// ten at the large providers); own servers allow more.
    pub sender_connections_per_account: u64,
    /// Seconds between two polls of a send account's IMAP INBOX for replies
    /// (1-3600). Servers that offer IDLE report new mail sooner.
    pub inbox_poll_interval_secs: u64,
    /// Calls a workflow's incoming webhook token accepts per minute, across
    /// servers (spec/3: 30).
    pub workflow_webhook_calls_per_minute: u32,
    /// Days a finished workflow run (with its stream events) is kept; the
    /// hourly housekeeping deletes older ones (spec/3: 90 by default).
    pub workflow_run_retention_days: u32,
    /// `authserv-id`s of receiving servers whose `Authentication-Results`
    /// headers the inbox trusts for its spoofing check; replies without one
    /// are checked by the inbox itself (DKIM, SPF).
    pub inbox_trusted_authserv_ids: Vec<String>,
    /// The reply-classifier plugin the inbox uses for human replies, by
    /// plugin id. Empty: the LLM classifier when the account has an AI key,
    /// else the rules classifier.
    pub inbox_reply_classifier: String,
    /// Test-only: points the crawler at another base URL for a domain
    /// (`domain = "http://127.0.0.1:8080"`), so tests serve fake sites
    /// locally; loopback still needs `unsafe_outbound_allow_loopback`.
    pub crawler_base_url_overrides: std::collections::BTreeMap<String, String>,
    /// The `domain-classifier` plugin (by id) the enrichment pipeline uses;
    /// empty: the first-party rules classifier.
    pub domain_classifier: String,
    /// The account whose AI keys an AI domain classifier runs on (0: none;
    /// the pool is global, so no asking account pays).
    pub domain_classifier_account_id: i64,
    /// Where the IANA RDAP bootstrap files (`dns.json`, `ipv4.json`,
    /// `ipv6.json`) are read; tests point it at a local server whose files
    /// name local RDAP servers.
    pub rdap_bootstrap_url: String,
    /// Days after which an enriched domain is enriched again (1-3650).
    pub domain_refresh_age_days: u64,
    /// Re-enrichments the installation starts per hour at most (new domains
    /// are not counted): the refresh's rate cap.
    pub domain_refresh_per_hour: u64,
    pub smtp: SmtpConfig,
    /// `[sheets]`: the OAuth 2.0 client the spreadsheet export connects
    /// accounts with, and the provider's endpoints.
    pub sheets: SheetsConfig,
    /// `[smart_warmup]`: the pool of send accounts that warm each other up.
    pub smart_warmup: SmartWarmupConfig,
    /// Raw requests kept per account for recent activity (at least 10);
    /// older raw rows are deleted, their counts live on in the rollups.
    pub usage_recent_requests: u64,
    /// `[limits.<plan>]`: the operator's overrides of plan limits, by the
    /// spec's names; an integer or `"unlimited"` (see `accounts::limits`).
    pub limits: std::collections::BTreeMap<
        String,
        std::collections::BTreeMap<String, crate::accounts::limits::LimitSetting>,
    >,
    /// `tracing` filter, e.g. `info` or `outreach=debug`.
    pub log: String,
}

/// Outgoing mail for dashboard messages such as password-reset links.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct SmtpConfig {
    /// Empty disables sending; the message is then written to the log instead.
    pub host: String,
    pub port: u16,
    pub username: String,
    pub password: String,
    pub from: String,
    /// `starttls`, `tls` or `none`.
    pub security: String,
}

/// The spreadsheet service (Google Sheets) as an OAuth 2.0 client
/// registered by the operator. Empty `client_id` leaves the export off:
/// `GET /v1/sheets/connect` says the operator has not configured it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SheetsConfig {
    pub client_id: String,
    pub client_secret: String,
    /// Where the browser is sent to consent.
    pub authorization_url: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_url: String,
    /// Where a token is revoked when an account disconnects.
    pub revocation_url: String,
    /// The Sheets REST API (`/v4/spreadsheets`).
    pub api_base_url: String,
}

impl Default for SheetsConfig {
    fn default() -> Self {
        SheetsConfig {
            client_id: String::new(),
            client_secret: String::new(),
            authorization_url: "https://accounts.google.com/o/oauth2/v2/auth".into(),
            token_url: "https://oauth2.googleapis.com/token".into(),
            revocation_url: "https://oauth2.googleapis.com/revoke".into(),
            api_base_url: "https://sheets.googleapis.com".into(),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:8080".parse().unwrap(),
            metrics_listen: "127.0.0.1:9464".parse().unwrap(),
            data_dir: PathBuf::from("./data"),
            database_url: String::new(),
            plugins_dir: String::new(),
            public_base_url: "http://127.0.0.1:8080".into(),
            key_prefix: "otr".into(),
            trusted_proxies: Vec::new(),
            encryption_key: String::new(),
            previous_encryption_keys: Vec::new(),
            usage_flush_interval_ms: 1000,
            max_body_bytes: 2 * 1024 * 1024,
            vendor_base_urls: Default::default(),
            outbound_allow_cidrs: Vec::new(),
            unsafe_outbound_allow_loopback: false,
            unsafe_plugins_allow_loopback: false,
            offer_example_vendors: false,
            dns_nameservers: Vec::new(),
            sender_lease_secs: 300,
            sender_connections_per_account: 4,
            inbox_poll_interval_secs: 60,
            workflow_webhook_calls_per_minute: 30,
            workflow_run_retention_days: 90,
            inbox_trusted_authserv_ids: Vec::new(),
            crawler_base_url_overrides: Default::default(),
            rdap_bootstrap_url: "https://data.iana.org/rdap/".into(),
            domain_classifier: String::new(),
            domain_classifier_account_id: 0,
            domain_refresh_age_days: 30,
            domain_refresh_per_hour: 600,
            inbox_reply_classifier: String::new(),
            smtp: SmtpConfig {
                port: 587,
                security: "starttls".into(),
                ..SmtpConfig::default()
            },
            sheets: SheetsConfig::default(),
            smart_warmup: SmartWarmupConfig::default(),
            usage_recent_requests: 10,
            limits: Default::default(),
            log: "info".into(),
        }
    }
}

impl Config {
    /// Loads defaults, then `file` when given, then the environment.
    pub fn load(file: Option<&Path>) -> anyhow::Result<Config> {
        let mut config = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading config file {}", path.display()))?;
                toml::from_str(&text)
                    .with_context(|| format!("parsing config file {}", path.display()))?
            }
            None => Config::default(),
        };
        config.apply_env(|name| std::env::var(name).ok())?;
        Ok(config)
    }

    /// Applies `OUTREACH_*` overrides read through `get`, so tests can pass a map.
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        fn parse<T: std::str::FromStr>(name: &str, v: String) -> anyhow::Result<T>
        where
            T::Err: std::fmt::Display,
        {
            v.parse::<T>()
                .map_err(|e| anyhow::anyhow!("invalid {name}={v}: {e}"))
        }
        let list = |v: String| -> Vec<String> {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        // `key=value` pairs, comma-separated, into a map.
        let pairs = |name: &str,
                     shape: &str,
                     v: String,
                     map: &mut std::collections::BTreeMap<String, String>|
         -> anyhow::Result<()> {
            for pair in list(v) {
                let (key, value) = pair
                    .split_once('=')
                    .ok_or_else(|| anyhow::anyhow!("{name} entries are {shape}"))?;
                map.insert(key.trim().to_string(), value.trim().to_string());
            }
            Ok(())
        };
        if let Some(v) = get("OUTREACH_LISTEN") {
            self.listen = parse("OUTREACH_LISTEN", v)?;
        }
        if let Some(v) = get("OUTREACH_METRICS_LISTEN") {
            self.metrics_listen = parse("OUTREACH_METRICS_LISTEN", v)?;
        }
        if let Some(v) = get("OUTREACH_DATA_DIR") {
            self.data_dir = PathBuf::from(v);
        }
        if let Some(v) = get("OUTREACH_DATABASE_URL") {
            self.database_url = v;
        }
        if let Some(v) = get("OUTREACH_PLUGINS_DIR") {
            self.plugins_dir = v;
        }
        if let Some(v) = get("OUTREACH_PUBLIC_BASE_URL") {
            self.public_base_url = v;
        }
        if let Some(v) = get("OUTREACH_KEY_PREFIX") {
            self.key_prefix = v;
        }
        if let Some(v) = get("OUTREACH_TRUSTED_PROXIES") {
            self.trusted_proxies = list(v);
        }
        if let Some(v) = get("OUTREACH_ENCRYPTION_KEY") {
            self.encryption_key = v;
        }
        if let Some(v) = get("OUTREACH_PREVIOUS_ENCRYPTION_KEYS") {
            self.previous_encryption_keys = list(v);
        }
        if let Some(v) = get("OUTREACH_USAGE_FLUSH_INTERVAL_MS") {
            self.usage_flush_interval_ms = parse("OUTREACH_USAGE_FLUSH_INTERVAL_MS", v)?;
        }
        if let Some(v) = get("OUTREACH_MAX_BODY_BYTES") {
            self.max_body_bytes = parse("OUTREACH_MAX_BODY_BYTES", v)?;
        }
        if let Some(v) = get("OUTREACH_VENDOR_BASE_URLS") {
            pairs(
                "OUTREACH_VENDOR_BASE_URLS",
                "vendor=url",
                v,
                &mut self.vendor_base_urls,
            )?;
        }
        if let Some(v) = get("OUTREACH_CRAWLER_BASE_URL_OVERRIDES") {
            pairs(
                "OUTREACH_CRAWLER_BASE_URL_OVERRIDES",
                "domain=url",
                v,
                &mut self.crawler_base_url_overrides,
            )?;
        }
        if let Some(v) = get("OUTREACH_DOMAIN_CLASSIFIER") {
            self.domain_classifier = v;
        }
        if let Some(v) = get("OUTREACH_DOMAIN_CLASSIFIER_ACCOUNT_ID") {
            self.domain_classifier_account_id = parse("OUTREACH_DOMAIN_CLASSIFIER_ACCOUNT_ID", v)?;
        }
        if let Some(v) = get("OUTREACH_RDAP_BOOTSTRAP_URL") {
            self.rdap_bootstrap_url = v;
        }
        if let Some(v) = get("OUTREACH_DOMAIN_REFRESH_AGE_DAYS") {
            self.domain_refresh_age_days = parse("OUTREACH_DOMAIN_REFRESH_AGE_DAYS", v)?;
        }
        if let Some(v) = get("OUTREACH_DOMAIN_REFRESH_PER_HOUR") {
            self.domain_refresh_per_hour = parse("OUTREACH_DOMAIN_REFRESH_PER_HOUR", v)?;
        }
        if let Some(v) = get("OUTREACH_OUTBOUND_ALLOW_CIDRS") {
            self.outbound_allow_cidrs = list(v);
        }
        if let Some(v) = get("OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK") {
            self.unsafe_outbound_allow_loopback =
                parse("OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK", v)?;
        }
        if let Some(v) = get("OUTREACH_UNSAFE_PLUGINS_ALLOW_LOOPBACK") {
            self.unsafe_plugins_allow_loopback =
                parse("OUTREACH_UNSAFE_PLUGINS_ALLOW_LOOPBACK", v)?;
        }
        if let Some(v) = get("OUTREACH_OFFER_EXAMPLE_VENDORS") {
            self.offer_example_vendors = parse("OUTREACH_OFFER_EXAMPLE_VENDORS", v)?;
        }
        if let Some(v) = get("OUTREACH_DNS_NAMESERVERS") {
            self.dns_nameservers = list(v);
        }
        if let Some(v) = get("OUTREACH_SENDER_LEASE_SECS") {
            self.sender_lease_secs = parse("OUTREACH_SENDER_LEASE_SECS", v)?;
        }
        if let Some(v) = get("OUTREACH_SENDER_CONNECTIONS_PER_ACCOUNT") {
            self.sender_connections_per_account =
                parse("OUTREACH_SENDER_CONNECTIONS_PER_ACCOUNT", v)?;
        }
        if let Some(v) = get("OUTREACH_INBOX_POLL_INTERVAL_SECS") {
            self.inbox_poll_interval_secs = parse("OUTREACH_INBOX_POLL_INTERVAL_SECS", v)?;
        }
        if let Some(v) = get("OUTREACH_WORKFLOW_WEBHOOK_CALLS_PER_MINUTE") {
            self.workflow_webhook_calls_per_minute =
                parse("OUTREACH_WORKFLOW_WEBHOOK_CALLS_PER_MINUTE", v)?;
        }
        if let Some(v) = get("OUTREACH_WORKFLOW_RUN_RETENTION_DAYS") {
            self.workflow_run_retention_days = parse("OUTREACH_WORKFLOW_RUN_RETENTION_DAYS", v)?;
        }
        if let Some(v) = get("OUTREACH_INBOX_TRUSTED_AUTHSERV_IDS") {
            self.inbox_trusted_authserv_ids = list(v);
        }
        if let Some(v) = get("OUTREACH_INBOX_REPLY_CLASSIFIER") {
            self.inbox_reply_classifier = v;
        }
        if let Some(v) = get("OUTREACH_SMTP_HOST") {
            self.smtp.host = v;
        }
        if let Some(v) = get("OUTREACH_SMTP_PORT") {
            self.smtp.port = parse("OUTREACH_SMTP_PORT", v)?;
        }
        if let Some(v) = get("OUTREACH_SMTP_USERNAME") {
            self.smtp.username = v;
        }
        if let Some(v) = get("OUTREACH_SMTP_PASSWORD") {
            self.smtp.password = v;
        }
        if let Some(v) = get("OUTREACH_SMTP_FROM") {
            self.smtp.from = v;
        }
        if let Some(v) = get("OUTREACH_SMTP_SECURITY") {
            self.smtp.security = v;
        }
        if let Some(v) = get("OUTREACH_USAGE_RECENT_REQUESTS") {
            self.usage_recent_requests = parse("OUTREACH_USAGE_RECENT_REQUESTS", v)?;
        }
        // OUTREACH_LIMITS_<PLAN>_<SETTING>, e.g. OUTREACH_LIMITS_PRO_MONTHLY_QUOTA=unlimited.
        for plan in crate::accounts::Plan::ALL {
            for key in crate::accounts::limits::SETTINGS {
                let name = format!("OUTREACH_LIMITS_{}_{}", plan.as_str(), key).to_uppercase();
                if let Some(v) = get(&name) {
                    let setting = match v.trim().parse::<i64>() {
                        Ok(n) => crate::accounts::limits::LimitSetting::Number(n),
                        Err(_) => crate::accounts::limits::LimitSetting::Text(v.trim().to_string()),
                    };
                    self.limits
                        .entry(plan.as_str().to_string())
                        .or_default()
                        .insert(key.to_string(), setting);
                }
            }
        }
        let sheets = [
            ("CLIENT_ID", &mut self.sheets.client_id),
            ("CLIENT_SECRET", &mut self.sheets.client_secret),
            ("AUTHORIZATION_URL", &mut self.sheets.authorization_url),
            ("TOKEN_URL", &mut self.sheets.token_url),
            ("REVOCATION_URL", &mut self.sheets.revocation_url),
            ("API_BASE_URL", &mut self.sheets.api_base_url),
        ];
        for (name, field) in sheets {
            if let Some(v) = get(&format!("OUTREACH_SHEETS_{name}")) {
                *field = v;
            }
        }
        self.smart_warmup.apply_env(&get)?;
        if let Some(v) = get("OUTREACH_LOG") {
            self.log = v;
        }
        self.validate()
    }

    fn validate(&self) -> anyhow::Result<()> {
        self.smart_warmup.validate()?;
        anyhow::ensure!(
            !self.key_prefix.is_empty()
                && self.key_prefix.chars().all(|c| c.is_ascii_alphanumeric()),
            "key_prefix must be non-empty ASCII letters and digits"
        );
        anyhow::ensure!(
            ["starttls", "tls", "none"].contains(&self.smtp.security.as_str()),
            "smtp.security must be starttls, tls or none"
        );
        anyhow::ensure!(
            self.sender_lease_secs >= 1,
            "sender_lease_secs must be at least 1"
        );
        anyhow::ensure!(
            (1..=50).contains(&self.sender_connections_per_account),
            "sender_connections_per_account must be 1-50"
        );
        anyhow::ensure!(
            (1..=3600).contains(&self.inbox_poll_interval_secs),
            "inbox_poll_interval_secs must be 1-3600"
        );
        anyhow::ensure!(
            self.workflow_webhook_calls_per_minute >= 1,
            "workflow_webhook_calls_per_minute must be at least 1"
        );
        anyhow::ensure!(
            (1..=3650).contains(&self.workflow_run_retention_days),
            "workflow_run_retention_days must be 1-3650"
        );
        anyhow::ensure!(
            (1..=3650).contains(&self.domain_refresh_age_days),
            "domain_refresh_age_days must be 1-3650"
        );
        anyhow::ensure!(
            self.rdap_bootstrap_url.starts_with("https://")
                || self.rdap_bootstrap_url.starts_with("http://"),
            "rdap_bootstrap_url must be an http(s) URL"
        );
        for proxy in &self.trusted_proxies {
            crate::http::client_ip::parse_net(proxy)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("trusted_proxies entry {proxy}"))?;
        }
        anyhow::ensure!(
            self.usage_recent_requests >= 10,
            "usage_recent_requests must be at least 10 (recent activity shows 10)"
        );
        self.limits_table()?;
        self.outbound_allow_nets()?;
        self.dns_nameserver_addrs()?;
        Ok(())
    }

    /// `dns_nameservers`, parsed; port 53 where an entry names none. An
    /// entry that is neither an address nor `address:port` is an error
    /// naming the setting and the entry.
    pub fn dns_nameserver_addrs(&self) -> anyhow::Result<Vec<SocketAddr>> {
        self.dns_nameservers
            .iter()
            .map(|entry| {
                let text = entry.trim();
                text.parse::<SocketAddr>()
                    .or_else(|_| {
                        text.parse::<std::net::IpAddr>()
                            .map(|ip| SocketAddr::new(ip, 53))
                    })
                    .map_err(|_| {
                        anyhow::anyhow!(
                            "dns_nameservers entry {entry:?} must be an IP address or ip:port \
                             (IPv6 with a port as [addr]:port)"
                        )
                    })
            })
            .collect()
    }

    /// `outbound_allow_cidrs`, parsed; an entry that is not an address or
    /// range is an error naming it.
    pub fn outbound_allow_nets(&self) -> anyhow::Result<Vec<ipnet::IpNet>> {
        self.outbound_allow_cidrs
            .iter()
            .map(|net| {
                crate::http::client_ip::parse_net(net)
                    .map_err(anyhow::Error::msg)
                    .with_context(|| format!("outbound_allow_cidrs entry {net}"))
            })
            .collect()
    }

    /// The effective plan limits: spec/1's, overridden by `[limits.<plan>]`.
    pub fn limits_table(&self) -> anyhow::Result<crate::accounts::LimitsTable> {
        crate::accounts::LimitsTable::with_overrides(&self.limits).map_err(anyhow::Error::msg)
    }

    /// Whether user-directed outbound connections may reach loopback (the
    /// test-only setting or its older alias).
    pub fn outbound_allows_loopback(&self) -> bool {
        self.unsafe_outbound_allow_loopback || self.unsafe_plugins_allow_loopback
    }

    /// The effective database URL (the embedded SQLite file when unset).
    pub fn database_url(&self) -> String {
        if self.database_url.is_empty() {
            format!("sqlite://{}", self.data_dir.join("outreach.db").display())
        } else {
            self.database_url.clone()
        }
    }

    /// The effective plugins folder.
    pub fn plugins_dir(&self) -> PathBuf {
        if self.plugins_dir.is_empty() {
            self.data_dir.join("plugins")
        } else {
            PathBuf::from(&self.plugins_dir)
        }
    }
}

/// The commented default configuration printed by `outreach config print-default`.
pub const DEFAULT_TOML: &str = r#"# Outreach configuration. Every setting is optional; the values shown are the
# defaults. Each can also be set with an environment variable, which wins over
# this file: OUTREACH_<NAME> in upper case (for example OUTREACH_LISTEN).

# Address of the HTTP API.
listen = "127.0.0.1:8080"

# Address of the Prometheus metrics endpoint (GET /metrics). Keep it private.
metrics_listen = "127.0.0.1:9464"

# Folder holding the SQLite database, the master encryption key and plugins.
data_dir = "./data"

# Empty: embedded SQLite at <data_dir>/outreach.db.
# PostgreSQL: "postgres://user:password@host:5432/outreach" (several servers may
# share one PostgreSQL database).
database_url = ""

# Operator-supplied plugin components (name.wasm + name.toml). Empty: <data_dir>/plugins.
plugins_dir = ""

# Base URL clients use to reach this server; used in links the server sends.
public_base_url = "http://127.0.0.1:8080"

# Prefix of every API key: <key_prefix>_...
key_prefix = "otr"

# Reverse proxies whose X-Forwarded-For header is believed (IPs or CIDR ranges).
trusted_proxies = []

# Base64 of a 32-byte AES-256 key for secrets at rest. Empty: generated into
# <data_dir>/master.key on first start (mode 0600). To rotate, move the old key
# to previous_encryption_keys and set a new one here.
encryption_key = ""
previous_encryption_keys = []

# Usage records are written in batches at most this many milliseconds apart.
usage_flush_interval_ms = 1000

# Raw requests kept per account for recent activity (at least 10). Counts per
# hour (kept 48 hours), per day (kept 400 days) and billable totals per month
# (kept for good) are maintained as the requests are recorded.
usage_recent_requests = 10

# Largest accepted request body, in bytes.
max_body_bytes = 2097152

# tracing filter, for example "info" or "outreach=debug,info".
log = "info"

# Private networks (CIDR) that user-directed outbound connections may reach:
# webhooks, send accounts' SMTP and IMAP servers, the crawler, workflow HTTP
# and plugins. For self-hosted mail servers or gateways on your own network,
# for example ["10.0.5.0/24"]. Cloud metadata endpoints stay refused.
outbound_allow_cidrs = []

# TESTS ONLY: lets every user-directed outbound connection reach loopback
# (127.0.0.0/8, ::1) and nothing else, so tests can use local peers. Never
# enable in production.
unsafe_outbound_allow_loopback = false

# The earlier name of unsafe_outbound_allow_loopback (an alias; either one
# opens loopback for all outbound connections).
unsafe_plugins_allow_loopback = false

# Offers the SDK example vendors (example-verifier, example-enricher) as
# providers, for tests and plugin development.
offer_example_vendors = false

# DNS servers for the lookups the server makes itself: SPF, DKIM and DMARC
# records and blacklist (DNSBL) queries of the warmup checks, MX records.
# Entries are IP addresses with an optional port, for example
# ["192.0.2.53", "192.0.2.54:5353", "[2001:db8::53]:53"]. Empty: the system's
# resolver configuration (/etc/resolv.conf). Blacklists such as Spamhaus refuse
# queries that come through large public resolvers, so point this at your own
# recursive resolver. Environment: OUTREACH_DNS_NAMESERVERS, comma-separated.
dns_nameservers = []

# Seconds the sequence sender holds the enrollments it claimed. A server that
# dies mid-send leaves its claimed sends for this long; another server then
# resends each with the same Message-ID. Keep it above the longest SMTP
# transaction (the sender gives each SMTP command 30 s). Environment:
# OUTREACH_SENDER_LEASE_SECS.
sender_lease_secs = 300

# SMTP connections the sequence sender keeps open per send account, 1-50.
# Hosted mailboxes limit concurrent sessions per user (about ten at the large
# providers); a server of your own may allow more. Environment:
# OUTREACH_SENDER_CONNECTIONS_PER_ACCOUNT.
sender_connections_per_account = 4

# Seconds between two polls of each send account's IMAP INBOX for replies,
# 1-3600. Servers that offer IDLE report new mail between polls. Environment:
# OUTREACH_INBOX_POLL_INTERVAL_SECS.
inbox_poll_interval_secs = 60

# Calls each workflow's incoming webhook token accepts per minute, counted
# across servers on PostgreSQL (spec/3: 30); the 31st answers 429. Environment:
# OUTREACH_WORKFLOW_WEBHOOK_CALLS_PER_MINUTE.
workflow_webhook_calls_per_minute = 30

# Days a finished workflow run is kept, with its stream events, 1-3650
# (spec/3: 90). One server an hour deletes older runs. Environment:
# OUTREACH_WORKFLOW_RUN_RETENTION_DAYS.
workflow_run_retention_days = 90

# authserv-ids (the first word of an Authentication-Results header) of the
# receiving mail servers whose SPF, DKIM and DMARC verdicts the inbox trusts
# when it checks replies for spoofing, for example ["mx.google.com"]. Replies
# without a trusted header are checked by the inbox itself (DKIM and SPF
# against the Received chain). Environment: OUTREACH_INBOX_TRUSTED_AUTHSERV_IDS,
# comma-separated.
inbox_trusted_authserv_ids = []

# The reply-classifier plugin (by id) the inbox uses for human replies. Empty:
# the first-party LLM classifier when the account has an AI key, else the
# rules classifier. Bounces, complaints and auto-replies are always labelled
# by the rules classifier. Environment: OUTREACH_INBOX_REPLY_CLASSIFIER.
inbox_reply_classifier = ""

# The domain-classifier plugin (by id) that gives pool records their industry,
# sub-industry and business type. Empty: the first-party rules classifier
# (domain-classifier-rules); "domain-classifier-llm" asks a model, on the AI
# keys of domain_classifier_account_id (0: none, and the rules decide). The
# rules classifier also decides whenever the chosen one fails. Environment:
# OUTREACH_DOMAIN_CLASSIFIER, OUTREACH_DOMAIN_CLASSIFIER_ACCOUNT_ID.
domain_classifier = ""
domain_classifier_account_id = 0

# Where the enrichment pipeline reads IANA's RDAP bootstrap files (dns.json,
# ipv4.json, ipv6.json), which name each registry's RDAP server. Environment:
# OUTREACH_RDAP_BOOTSTRAP_URL.
rdap_bootstrap_url = "https://data.iana.org/rdap/"

# Days after which an enriched domain of the pool is enriched again, 1-3650,
# oldest first. Environment: OUTREACH_DOMAIN_REFRESH_AGE_DAYS.
domain_refresh_age_days = 30

# Re-enrichments the installation starts per hour at most (domains new to the
# pool are not held back), so a large pool's refresh does not crawl the web
# in bursts. Environment: OUTREACH_DOMAIN_REFRESH_PER_HOUR.
domain_refresh_per_hour = 600

# Base-URL overrides for vendor adapters, by vendor identifier, for example
# openai = "https://my-gateway.example.com". Without an entry an adapter uses
# its vendor's public API.
[vendor_base_urls]

# Test-only: the crawler fetches a domain's pages from another base URL, for
# example "acme.example" = "http://127.0.0.1:8080", so tests serve fake sites
# locally (loopback also needs unsafe_outbound_allow_loopback). Environment:
# OUTREACH_CRAWLER_BASE_URL_OVERRIDES as domain=url pairs, comma-separated.
[crawler_base_url_overrides]

# Plan limits. Each plan's defaults are spec/1's (requests per minute and
# monthly quota) and the per-area caps; override any of them per plan with an
# integer or "unlimited". Settings: requests_per_minute, requests_per_day (a
# daily cap per API key; unset, the minute window bounds the day),
# monthly_quota, sequences, alerts, audiences, watchlist, webhooks, workflows,
# saved_connections, api_keys, lead_lists (per account, default 50),
# list_items (per lead list, default 1000), scoring_rules (per account, default
# 50), competitors (Pro 10, Enterprise 100), tracked_keywords (Pro 50,
# Enterprise 500), automation_daily_queries (queries a UTC day on the
# /v1/zapier routes: Starter 5000, Pro 50000, Enterprise 1000000). Environment: OUTREACH_LIMITS_<PLAN>_<SETTING>, for example
# OUTREACH_LIMITS_PRO_MONTHLY_QUOTA=unlimited. For example:
#
# [limits.pro]
# requests_per_minute = 1000
# monthly_quota = "unlimited"
# webhooks = 25
[limits]

[sheets]
# The OAuth 2.0 client of the spreadsheet export (Google Sheets), registered
# by the operator as a "Web application" in the provider's console with the
# redirect URI <public_base_url>/v1/sheets/oauth/callback and the scope
# https://www.googleapis.com/auth/drive.file. Empty client_id: the export
# endpoints answer that the operator has not configured it. The endpoints
# default to the provider's public ones. Environment:
# OUTREACH_SHEETS_<SETTING>, for example OUTREACH_SHEETS_CLIENT_ID.
client_id = ""
client_secret = ""
authorization_url = "https://accounts.google.com/o/oauth2/v2/auth"
token_url = "https://oauth2.googleapis.com/token"
revocation_url = "https://oauth2.googleapis.com/revoke"
api_base_url = "https://sheets.googleapis.com"

[smart_warmup]
# The smart warmup pool: send accounts with warmup enabled exchange mail with
# each other. tick_seconds: how often each member's schedule and mailbox are
# looked at. working_hours (HH-HH, in timezone, an IANA zone): the hours each
# day's messages are spread over; spread_over_day = false sends each day's
# volume as soon as it is due, whatever the hour (small pools, tests). The
# ramp: start_volume messages on the first day, daily_increase more each
# day up to target_volume, held hold_days before the warmup is completed.
# analytics_refresh_seconds: how often the analytics roll-up is refreshed.
# Environment: OUTREACH_SMART_WARMUP_<SETTING>, for example
# OUTREACH_SMART_WARMUP_SPREAD_OVER_DAY=false.
tick_seconds = 60
working_hours = "08-18"
timezone = "UTC"
spread_over_day = true
start_volume = 2
daily_increase = 2
target_volume = 40
hold_days = 14
analytics_refresh_seconds = 900

[smtp]
# SMTP server for dashboard mail (password resets). Empty host: the message is
# written to the log instead of being sent.
host = ""
port = 587
username = ""
password = ""
from = ""
# starttls, tls or none
security = "starttls"
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn printed_default_parses_to_the_built_in_default() {
        let parsed: Config = toml::from_str(DEFAULT_TOML).unwrap();
        let built_in = Config::default();
        assert_eq!(
            serde_json::to_value(&parsed).unwrap(),
            serde_json::to_value(&built_in).unwrap()
        );
    }

    #[test]
    fn environment_overrides_file_values() {
        let mut config: Config = toml::from_str("listen = \"127.0.0.1:9000\"").unwrap();
        let env: HashMap<&str, &str> = [
            ("OUTREACH_LISTEN", "0.0.0.0:7000"),
            ("OUTREACH_DATA_DIR", "/tmp/x"),
            ("OUTREACH_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.1"),
        ]
        .into();
        config
            .apply_env(|k| env.get(k).map(|v| v.to_string()))
            .unwrap();
        assert_eq!(config.listen.to_string(), "0.0.0.0:7000");
        assert_eq!(config.database_url(), "sqlite:///tmp/x/outreach.db");
        assert_eq!(config.trusted_proxies.len(), 2);
    }

    #[test]
    fn sheets_settings_come_from_the_file_or_the_environment() {
        let mut config: Config =
            toml::from_str("[sheets]\nclient_id = \"file-id\"\ntoken_url = \"http://t\"").unwrap();
        assert_eq!(config.sheets.token_url, "http://t");
        assert_eq!(config.sheets.api_base_url, "https://sheets.googleapis.com");
        let env: HashMap<&str, &str> = [
            ("OUTREACH_SHEETS_CLIENT_ID", "env-id"),
            ("OUTREACH_SHEETS_CLIENT_SECRET", "shh"),
            ("OUTREACH_SHEETS_API_BASE_URL", "http://127.0.0.1:1"),
        ]
        .into();
        config
            .apply_env(|k| env.get(k).map(|v| v.to_string()))
            .unwrap();
        assert_eq!(config.sheets.client_id, "env-id");
        assert_eq!(config.sheets.client_secret, "shh");
        assert_eq!(config.sheets.api_base_url, "http://127.0.0.1:1");
        assert_eq!(config.sheets.token_url, "http://t");
    }

    #[test]
    fn smart_warmup_settings_come_from_the_file_or_the_environment() {
        let mut config: Config =
            toml::from_str("[smart_warmup]\nworking_hours = \"09-17\"\nspread_over_day = false")
                .unwrap();
        assert_eq!(config.smart_warmup.working_hours, "09-17");
        assert!(!config.smart_warmup.spread_over_day);
        assert_eq!(config.smart_warmup.target_volume, 40);
        let env: HashMap<&str, &str> = [
            ("OUTREACH_SMART_WARMUP_TARGET_VOLUME", "60"),
            ("OUTREACH_SMART_WARMUP_TIMEZONE", "Europe/Berlin"),
            ("OUTREACH_SMART_WARMUP_SPREAD_OVER_DAY", "true"),
        ]
        .into();
        config
            .apply_env(|k| env.get(k).map(|v| v.to_string()))
            .unwrap();
        assert_eq!(config.smart_warmup.target_volume, 60);
        assert_eq!(config.smart_warmup.timezone, "Europe/Berlin");
        assert!(config.smart_warmup.spread_over_day);
        for (name, value) in [
            ("OUTREACH_SMART_WARMUP_WORKING_HOURS", "18-08"),
            ("OUTREACH_SMART_WARMUP_TIMEZONE", "Mars/Olympus"),
            ("OUTREACH_SMART_WARMUP_START_VOLUME", "0"),
            ("OUTREACH_SMART_WARMUP_TICK_SECONDS", "soon"),
        ] {
            let mut c = Config::default();
            assert!(
                c.apply_env(|k| (k == name).then(|| value.to_string()))
                    .is_err(),
                "{name}"
            );
        }
    }

    #[test]
    fn dns_nameservers_come_from_the_file_or_the_environment() {
        let mut config: Config =
            toml::from_str("dns_nameservers = [\"192.0.2.53\", \"[2001:db8::1]:5353\"]").unwrap();
        config.apply_env(|_| None).unwrap();
        assert_eq!(
            config.dns_nameserver_addrs().unwrap(),
            vec![
                "192.0.2.53:53".parse::<SocketAddr>().unwrap(),
                "[2001:db8::1]:5353".parse().unwrap()
            ]
        );
        config
            .apply_env(|k| {
                (k == "OUTREACH_DNS_NAMESERVERS").then(|| "127.0.0.1:5300, ::1".to_string())
            })
            .unwrap();
        assert_eq!(
            config.dns_nameserver_addrs().unwrap(),
            vec![
                "127.0.0.1:5300".parse::<SocketAddr>().unwrap(),
                "[::1]:53".parse().unwrap()
            ]
        );
        assert!(Config::default().dns_nameserver_addrs().unwrap().is_empty());
    }

    #[test]
    fn malformed_dns_nameservers_are_refused_by_name() {
        let mut config: Config = toml::from_str("dns_nameservers = [\"dns.example\"]").unwrap();
        let err = config.apply_env(|_| None).unwrap_err().to_string();
        assert!(
            err.contains("dns_nameservers") && err.contains("dns.example"),
            "{err}"
        );
        let mut config = Config::default();
        let err = config
            .apply_env(|k| (k == "OUTREACH_DNS_NAMESERVERS").then(|| "10.0.0.1:99999".to_string()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("dns_nameservers"), "{err}");
    }

    #[test]
    fn workflow_run_retention_comes_from_the_file_or_the_environment() {
        assert_eq!(Config::default().workflow_run_retention_days, 90);
        let mut config: Config = toml::from_str("workflow_run_retention_days = 30").unwrap();
        config.apply_env(|_| None).unwrap();
        assert_eq!(config.workflow_run_retention_days, 30);
        config
            .apply_env(|k| (k == "OUTREACH_WORKFLOW_RUN_RETENTION_DAYS").then(|| "7".to_string()))
            .unwrap();
        assert_eq!(config.workflow_run_retention_days, 7);
        let err = config
            .apply_env(|k| (k == "OUTREACH_WORKFLOW_RUN_RETENTION_DAYS").then(|| "0".to_string()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("workflow_run_retention_days"), "{err}");
    }

    #[test]
    fn bad_values_are_refused() {
        let mut config = Config::default();
        assert!(
            config
                .apply_env(|k| (k == "OUTREACH_LISTEN").then(|| "nope".to_string()))
                .is_err()
        );
        assert!(toml::from_str::<Config>("unknown_key = 1").is_err());
    }
}
