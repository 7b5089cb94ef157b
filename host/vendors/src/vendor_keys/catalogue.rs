//! Which vendors exist: read from the loaded plugins, so an operator who drops
//! a new adapter into the plugins folder adds a provider without a release.

use outreach_plugin_runtime::{PluginKind, PluginMetadata};
use serde::Serialize;
use utoipa::ToSchema;

use outreach_core::state::AppState;

/// The three vendor-key families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Ai,
    Verifier,
    Enricher,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Ai => "ai",
            Family::Verifier => "verifier",
            Family::Enricher => "enricher",
        }
    }

    fn plugin_kind(self) -> PluginKind {
        match self {
            Family::Ai => PluginKind::LlmProvider,
            Family::Verifier => PluginKind::EmailVerifier,
            Family::Enricher => PluginKind::ContactEnricher,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ModelPrice {
    pub id: String,
    /// USD per million prompt tokens.
    pub input_usd_per_mtok: f64,
    /// USD per million completion tokens.
    pub output_usd_per_mtok: f64,
}

/// One vendor as the API describes it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Provider {
    /// Lowercase vendor identifier used in requests.
    pub provider: String,
    pub display_name: String,
    /// Position in the fallback order (lower first).
    pub fallback_rank: u32,
    /// List price per call (verifiers and enrichers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_rate_usd: Option<f64>,
    /// `llm` for AI providers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supports_endpoint_url: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_validation_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<ModelPrice>>,
    #[serde(skip)]
    pub plugin_id: String,
}

/// The family's vendors in fallback order. SDK examples are left out unless
/// the operator asked for them.
pub fn providers(state: &AppState, family: Family) -> Vec<Provider> {
    let with_examples = state.config.offer_example_vendors;
    let mut out: Vec<Provider> = state
        .plugins
        .list()
        .into_iter()
        .filter(|p| p.kind == family.plugin_kind() && (with_examples || !p.example))
        .filter_map(|p| {
            let plugin_id = p.id.clone();
            match p.metadata? {
                PluginMetadata::LlmProvider(m) => Some(Provider {
                    provider: m.identifier,
                    display_name: m.display_name,
                    fallback_rank: m.fallback_rank,
                    list_rate_usd: None,
                    kind: Some("llm".into()),
                    supports_endpoint_url: Some(m.requires_endpoint_url),
                    default_validation_model: Some(m.default_validation_model),
                    models: Some(
                        m.models
                            .into_iter()
                            .map(|x| ModelPrice {
                                id: x.id,
                                input_usd_per_mtok: x.input_usd_per_mtok,
                                output_usd_per_mtok: x.output_usd_per_mtok,
                            })
                            .collect(),
                    ),
                    plugin_id,
                }),
                PluginMetadata::EmailVerifier(m) | PluginMetadata::ContactEnricher(m) => {
                    Some(Provider {
                        provider: m.identifier,
                        display_name: m.display_name,
                        fallback_rank: m.fallback_rank,
                        list_rate_usd: Some(m.list_rate_usd),
                        kind: None,
                        supports_endpoint_url: None,
                        default_validation_model: None,
                        models: None,
                        plugin_id,
                    })
                }
                _ => None,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.fallback_rank
            .cmp(&b.fallback_rank)
            .then(a.provider.cmp(&b.provider))
    });
    // Two plugins claiming one identifier: the first in order wins.
    out.dedup_by(|b, a| a.provider == b.provider);
    out
}

pub fn find(state: &AppState, family: Family, provider: &str) -> Option<Provider> {
    providers(state, family)
        .into_iter()
        .find(|p| p.provider == provider)
}

/// Estimated cost of a completion from the provider's model prices; unknown
/// models cost 0 rather than a guess.
pub fn completion_cost(provider: &Provider, model: &str, prompt: u32, completion: u32) -> f64 {
    provider
        .models
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|m| m.id == model || model.starts_with(&m.id))
        .map_or(0.0, |m| {
            (prompt as f64 * m.input_usd_per_mtok + completion as f64 * m.output_usd_per_mtok) / 1e6
        })
}
