//! `plugin.toml`: what a component is, what it may reach, and its limits.

use crate::allow::HostRule;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// The WIT package version this host implements. A plugin built against
/// `0.1.x` loads; any other minor (or major) version is refused, because for
/// a `0.x` package a minor bump may change types.
pub const WIT_API_VERSION: &str = "0.1.0";

/// The seven plugin kinds, one WIT world each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PluginKind {
    LlmProvider,
    EmailVerifier,
    ContactEnricher,
    WorkflowAction,
    TemplatePack,
    ReplyClassifier,
    DomainClassifier,
}

impl PluginKind {
    pub const ALL: [PluginKind; 7] = [
        PluginKind::LlmProvider,
        PluginKind::EmailVerifier,
        PluginKind::ContactEnricher,
        PluginKind::WorkflowAction,
        PluginKind::TemplatePack,
        PluginKind::ReplyClassifier,
        PluginKind::DomainClassifier,
    ];

    /// The WIT world name, which is also the `kind` string of the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::LlmProvider => "llm-provider",
            PluginKind::EmailVerifier => "email-verifier",
            PluginKind::ContactEnricher => "contact-enricher",
            PluginKind::WorkflowAction => "workflow-action",
            PluginKind::TemplatePack => "template-pack",
            PluginKind::ReplyClassifier => "reply-classifier",
            PluginKind::DomainClassifier => "domain-classifier",
        }
    }

    /// Vendor kinds carry a vendor identifier, a list rate and a fallback rank.
    pub fn is_vendor(self) -> bool {
        matches!(
            self,
            PluginKind::LlmProvider | PluginKind::EmailVerifier | PluginKind::ContactEnricher
        )
    }

    /// Whether the kind's world imports `http`. Template packs are pure data
    /// and classifiers (reply and domain) reach a model only through the `ai`
    /// import, so none of them gets network access whatever its manifest says.
    pub fn has_network(self) -> bool {
        !matches!(
            self,
            PluginKind::TemplatePack | PluginKind::ReplyClassifier | PluginKind::DomainClassifier
        )
    }
}

impl fmt::Display for PluginKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Resource limits. Omitted values take the safe defaults below; values
/// above the ceilings are refused rather than silently clamped, so an
/// operator learns about it at load time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Linear memory cap per memory, in MiB.
    #[serde(default = "Limits::default_memory_mb")]
    pub memory_mb: u32,
    /// Guest execution budget in milliseconds (epoch ticks of 10 ms).
    #[serde(default = "Limits::default_cpu_ms")]
    pub cpu_ms: u32,
    /// Wall-clock budget of one call including host HTTP, in milliseconds.
    #[serde(default = "Limits::default_timeout_ms")]
    pub timeout_ms: u32,
}

impl Limits {
    pub const MAX_MEMORY_MB: u32 = 512;
    pub const MAX_CPU_MS: u32 = 60_000;
    pub const MAX_TIMEOUT_MS: u32 = 300_000;

    fn default_memory_mb() -> u32 {
        64
    }
    fn default_cpu_ms() -> u32 {
        1_000
    }
    fn default_timeout_ms() -> u32 {
        30_000
    }
    pub fn memory_bytes(&self) -> usize {
        self.memory_mb as usize * 1024 * 1024
    }
    pub fn cpu(&self) -> Duration {
        Duration::from_millis(self.cpu_ms as u64)
    }
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms as u64)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_mb: Self::default_memory_mb(),
            cpu_ms: Self::default_cpu_ms(),
            timeout_ms: Self::default_timeout_ms(),
        }
    }
}

/// The raw TOML shape; `kind` stays a string so that an unknown kind gets a
/// message listing the known ones instead of a serde enum error.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    id: String,
    kind: String,
    version: String,
    api_version: String,
    vendor: Option<String>,
    list_rate_usd: Option<f64>,
    fallback_rank: Option<u32>,
    #[serde(default)]
    allowed_hosts: Vec<String>,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    example: bool,
}

/// A validated `plugin.toml`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Manifest {
    pub id: String,
    pub kind: PluginKind,
    pub version: String,
    pub api_version: String,
    /// Vendor identifier (vendor kinds only).
    pub vendor: Option<String>,
    /// List price per call in USD (vendor kinds only).
    pub list_rate_usd: Option<f64>,
    /// Position in the fallback chain; lower goes first (vendor kinds only).
    pub fallback_rank: Option<u32>,
    pub allowed_hosts: Vec<HostRule>,
    pub limits: Limits,
    /// An SDK example rather than a product plugin: loaded and callable, but
    /// the server does not offer it to customers unless told to.
    pub example: bool,
}

/// Why a manifest was refused. Each message names the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid plugin manifest: {0}")]
pub struct ManifestError(pub String);

impl Manifest {
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        let raw: RawManifest =
            toml::from_str(text).map_err(|e| ManifestError(e.message().to_string()))?;
        let bad = |m: String| Err(ManifestError(m));
        if raw.id.is_empty()
            || raw.id.len() > 64
            || !raw
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            return bad(format!(
                "id {:?} must be 1-64 characters of a-z, 0-9, '-' and '_'",
                raw.id
            ));
        }
        let Some(kind) = PluginKind::ALL.into_iter().find(|k| k.as_str() == raw.kind) else {
            let known: Vec<&str> = PluginKind::ALL.iter().map(|k| k.as_str()).collect();
            return bad(format!(
                "unknown kind {:?}; known kinds: {}",
                raw.kind,
                known.join(", ")
            ));
        };
        if !api_compatible(&raw.api_version) {
            return bad(format!(
                "api_version {:?} is not compatible with this host, which implements outreach:plugin@{WIT_API_VERSION} (0.1.x)",
                raw.api_version
            ));
        }
        if raw.version.trim().is_empty() {
            return bad("version must not be empty".into());
        }
        if kind.is_vendor() {
            if raw.vendor.as_deref().is_none_or(str::is_empty) {
                return bad(format!("vendor is required for kind {kind}"));
            }
            if raw.fallback_rank.is_none() {
                return bad(format!("fallback_rank is required for kind {kind}"));
            }
            match raw.list_rate_usd {
                Some(r) if r.is_finite() && r >= 0.0 => {}
                _ => {
                    return bad(format!(
                        "list_rate_usd (a non-negative number) is required for kind {kind}"
                    ));
                }
            }
        }
        let l = raw.limits;
        if l.memory_mb == 0 || l.memory_mb > Limits::MAX_MEMORY_MB {
            return bad(format!(
                "limits.memory_mb must be 1-{}",
                Limits::MAX_MEMORY_MB
            ));
        }
        if l.cpu_ms == 0 || l.cpu_ms > Limits::MAX_CPU_MS {
            return bad(format!("limits.cpu_ms must be 1-{}", Limits::MAX_CPU_MS));
        }
        if l.timeout_ms == 0 || l.timeout_ms > Limits::MAX_TIMEOUT_MS {
            return bad(format!(
                "limits.timeout_ms must be 1-{}",
                Limits::MAX_TIMEOUT_MS
            ));
        }
        let allowed_hosts = raw
            .allowed_hosts
            .iter()
            .map(|r| {
                HostRule::parse(r)
                    .map_err(|e| ManifestError(format!("allowed_hosts entry {r:?}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Manifest {
            id: raw.id,
            kind,
            version: raw.version,
            api_version: raw.api_version,
            vendor: raw.vendor,
            list_rate_usd: raw.list_rate_usd,
            fallback_rank: raw.fallback_rank,
            allowed_hosts,
            limits: l,
            example: raw.example,
        })
    }
}

/// `0.1.x` is compatible with `0.1.0`: patch versions only add documentation.
fn api_compatible(v: &str) -> bool {
    let mut parts = v.trim().split('.');
    matches!((parts.next(), parts.next()), (Some("0"), Some("1")))
        && parts.next().is_none_or(|p| p.parse::<u32>().is_ok())
        && parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
id = "acme"
kind = "email-verifier"
version = "1.0.0"
api_version = "0.1.0"
vendor = "acme"
list_rate_usd = 0.005
fallback_rank = 1
allowed_hosts = ["https://api.acme.com"]
"#;

    #[test]
    fn parses_with_default_limits() {
        let m = Manifest::parse(OK).unwrap();
        assert_eq!(m.kind, PluginKind::EmailVerifier);
        assert_eq!(m.limits, Limits::default());
    }

    #[test]
    fn refuses_unknown_kind_and_wrong_api_version() {
        let e = Manifest::parse(&OK.replace("email-verifier", "mail-robot")).unwrap_err();
        assert!(
            e.to_string()
                .contains("unknown kind \"mail-robot\"; known kinds: llm-provider"),
            "{e}"
        );
        let e = Manifest::parse(&OK.replace("0.1.0", "0.2.0")).unwrap_err();
        assert!(
            e.to_string()
                .contains("api_version \"0.2.0\" is not compatible"),
            "{e}"
        );
        assert!(Manifest::parse(&OK.replace("0.1.0", "0.1.7")).is_ok());
        let e = Manifest::parse(&OK.replace("vendor = \"acme\"\n", "")).unwrap_err();
        assert!(e.to_string().contains("vendor is required"), "{e}");
        let e = Manifest::parse(&format!("{OK}\n[limits]\nmemory_mb = 100000\n")).unwrap_err();
        assert!(e.to_string().contains("limits.memory_mb"), "{e}");
        let e = Manifest::parse(&format!("{OK}\nsurprise = 1\n")).unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
    }

    #[test]
    fn reply_classifiers_need_no_vendor_fields() {
        let m = Manifest::parse(
            "id = \"rc\"\nkind = \"reply-classifier\"\nversion = \"1\"\napi_version = \"0.1.0\"\n",
        )
        .unwrap();
        assert_eq!(m.kind, PluginKind::ReplyClassifier);
        assert_eq!(m.kind.as_str(), "reply-classifier");
        assert!(!m.kind.is_vendor() && !m.kind.has_network());
        let e = Manifest::parse(&OK.replace("email-verifier", "mail-robot")).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("template-pack, reply-classifier, domain-classifier"),
            "{e}"
        );
    }

    #[test]
    fn domain_classifiers_need_no_vendor_fields_and_get_no_network() {
        let m = Manifest::parse(
            "id = \"dc\"\nkind = \"domain-classifier\"\nversion = \"1\"\napi_version = \"0.1.0\"\n",
        )
        .unwrap();
        assert_eq!(m.kind, PluginKind::DomainClassifier);
        assert_eq!(m.kind.as_str(), "domain-classifier");
        assert!(!m.kind.is_vendor() && !m.kind.has_network());
    }
}
