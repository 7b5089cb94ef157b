//! The reusable vendor service other areas call: complete a prompt, verify
//! an address, enrich a domain, each on the account's own keys, honouring the
//! fallback chain, the per-user cache and the cost ledger.
//!
//! Chain rule (spec/3): active keys are tried in the vendors' fallback order
//! (then oldest key first); the next key is tried only after a transient
//! failure (network, timeout, 429, 5xx). Any other failure ends the chain.

use outreach_plugin_runtime::{
    CallError, Completion, CompletionRequest, EnrichmentResult, VerificationResult,
};
use serde_json::Value;
use std::collections::HashMap;

use super::catalogue::{self, Family, Provider};
use super::keys::base_url;
use super::store::{self, CachePut, KeyRow, VendorCall, key_aad};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

pub const VERIFICATION_TTL_MS: i64 = 7 * 86_400_000;
pub const ENRICHMENT_TTL_MS: i64 = 30 * 86_400_000;
pub const NO_AI_KEY: &str = outreach_core::error::details::NO_BYOK_PROVIDER;

/// Who a vendor call is for: the account (tenancy, ledger) and the user
/// (caches are per user and never shared).
#[derive(Debug, Clone)]
pub struct Actor {
    pub account_id: i64,
    pub user_key: String,
}

impl From<&outreach_core::http::auth::Caller> for Actor {
    fn from(c: &outreach_core::http::auth::Caller) -> Self {
        Actor {
            account_id: c.account_id,
            user_key: c.user_key(),
        }
    }
}

/// A completion with the provider that served it and its estimated cost.
#[derive(Debug, Clone)]
pub struct AiCompletion {
    pub completion: Completion,
    pub provider: String,
    pub cost_estimate_usd: f64,
}

/// A key ready to call: its row, its vendor and the key in clear.
struct LiveKey {
    row: KeyRow,
    provider: Provider,
    api_key: String,
}

pub struct Vendors<'a> {
    state: &'a AppState,
}

/// `state.vendors()`: the vendor service over the application state. A
/// trait because `AppState` belongs to the core, which knows no vendors.
pub trait VendorsExt {
    fn vendors(&self) -> Vendors<'_>;
}

impl VendorsExt for AppState {
    fn vendors(&self) -> Vendors<'_> {
        Vendors { state: self }
    }
}

/// Lower-cases and checks a domain after stripping scheme, credentials,
/// port, path, query and a leading `www.`.
pub fn normalize_domain(input: &str) -> ApiResult<String> {
    let mut d = input.trim().to_lowercase();
    if let Some((_, rest)) = d.split_once("://") {
        d = rest.to_string();
    }
    d = d
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default()
        .rsplit('@')
        .next()
        .unwrap_or_default()
        .split(':')
        .next()
        .unwrap_or_default()
        .trim_end_matches('.')
        .to_string();
    if let Some(rest) = d.strip_prefix("www.") {
        d = rest.to_string();
    }
    let valid = d.len() <= 253
        && d.contains('.')
        && d.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    if valid {
        Ok(d)
    } else {
        Err(ApiError::bad_request(format!("invalid domain: {input}")))
    }
}

/// An account's active keys of one family, decrypted, in chain order. Load
/// it once with [`Vendors::chain`] and reuse it for every item of a bulk call.
pub struct Chain {
    keys: Vec<LiveKey>,
}

impl Vendors<'_> {
    /// The account's chain for `family`; 400 with the family's "no key" text
    /// when it has no active key whose vendor plugin is loaded.
    pub async fn chain(&self, account_id: i64, family: Family) -> ApiResult<Chain> {
        let keys = self.live_keys(account_id, family).await?;
        if keys.is_empty() {
            return Err(ApiError::bad_request(match family {
                Family::Ai => NO_AI_KEY,
                Family::Verifier => "No email verifier keys configured",
                Family::Enricher => "No contact enricher keys configured",
            }));
        }
        Ok(Chain { keys })
    }

    /// Active keys of the family in chain order, decrypted. Keys whose vendor
    /// plugin is not loaded are skipped with a warning.
    async fn live_keys(&self, account_id: i64, family: Family) -> ApiResult<Vec<LiveKey>> {
        let providers = catalogue::providers(self.state, family);
        let mut live = Vec::new();
        for row in store::list_keys(&self.state.db, account_id, family).await? {
            if !row.is_active {
                continue;
            }
            let Some(provider) = providers.iter().find(|p| p.provider == row.provider) else {
                tracing::warn!(provider = %row.provider, "no loaded plugin for vendor key; skipped");
                continue;
            };
            let api_key = self.state.secrets.decrypt(&key_aad(row.id), &row.api_key)?;
            live.push(LiveKey {
                provider: provider.clone(),
                row,
                api_key,
            });
        }
        live.sort_by_key(|k| (k.provider.fallback_rank, k.row.id));
        Ok(live)
    }

    async fn ledger(&self, call: VendorCall) {
        if let Err(e) = store::record_call(&self.state.db, &call).await {
            tracing::error!(error = %e, "recording vendor call failed");
        }
    }

    /// Runs `call` over the chain. Returns the first success, or the error
    /// that ended the chain, with every vendor's reason in the 502 detail.
    async fn run<T, F, Fut>(
        &self,
        actor: &Actor,
        family: Family,
        action_type: &str,
        keys: &[LiveKey],
        call: F,
        describe: impl Fn(&T, &Provider) -> VendorCall,
    ) -> ApiResult<(T, usize)>
    where
        F: Fn(usize) -> Fut,
        Fut: std::future::Future<Output = Result<T, CallError>>,
    {
        let mut reasons = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let started = std::time::Instant::now();
            match call(i).await {
                Ok(value) => {
                    let mut entry = describe(&value, &key.provider);
                    entry.account_id = actor.account_id;
                    entry.family = family.as_str();
                    entry.provider = key.provider.provider.clone();
                    entry.key_id = Some(key.row.id);
                    entry.action_type = action_type.to_string();
                    entry.success = true;
                    entry.ts = self.state.clock.now_ms();
                    self.ledger(entry).await;
                    return Ok((value, i));
                }
                Err(e) => {
                    self.ledger(VendorCall {
                        account_id: actor.account_id,
                        family: family.as_str(),
                        provider: key.provider.provider.clone(),
                        key_id: Some(key.row.id),
                        action_type: action_type.to_string(),
                        latency_ms: started.elapsed().as_millis() as i64,
                        success: false,
                        error: Some(e.to_string()),
                        ts: self.state.clock.now_ms(),
                        ..VendorCall::default()
                    })
                    .await;
                    reasons.push(format!("{}: {e}", key.provider.provider));
                    if e.is_transient() {
                        continue;
                    }
                    return Err(match e {
                        CallError::InvalidInput(m) => ApiError::bad_request(m),
                        CallError::Permanent(m) if m.starts_with("not found") => {
                            ApiError::NotFound(format!("{}: {m}", key.provider.provider))
                        }
                        _ => ApiError::BadGateway(format!("Vendor error: {}", reasons.join("; "))),
                    });
                }
            }
        }
        Err(ApiError::BadGateway(format!(
            "All vendors failed: {}",
            reasons.join("; ")
        )))
    }

    /// One completion on the account's AI keys.
    pub async fn complete(
        &self,
        actor: &Actor,
        action_type: &str,
        request: CompletionRequest,
    ) -> ApiResult<AiCompletion> {
        let keys = self.chain(actor.account_id, Family::Ai).await?.keys;
        let (completion, i) = self
            .run(
                actor,
                Family::Ai,
                action_type,
                &keys,
                |i| {
                    let k = &keys[i];
                    let mut req = request.clone();
                    if req.model.is_empty() {
                        req.model = k
                            .row
                            .validation_model
                            .clone()
                            .or_else(|| k.provider.default_validation_model.clone())
                            .unwrap_or_default();
                    }
                    let base = base_url(
                        self.state,
                        &k.provider.provider,
                        k.row.endpoint_url.as_deref(),
                    );
                    async move {
                        self.state
                            .plugins
                            .llm_complete(&k.provider.plugin_id, &k.api_key, base.as_deref(), req)
                            .await
                    }
                },
                |c: &Completion, p: &Provider| VendorCall {
                    cost_estimate_usd: catalogue::completion_cost(
                        p,
                        &c.model,
                        c.prompt_tokens,
                        c.completion_tokens,
                    ),
                    model: Some(c.model.clone()),
                    prompt_tokens: c.prompt_tokens as i64,
                    completion_tokens: c.completion_tokens as i64,
                    latency_ms: c.latency_ms as i64,
                    ..VendorCall::default()
                },
            )
            .await?;
        let provider = &keys[i].provider;
        let cost = catalogue::completion_cost(
            provider,
            &completion.model,
            completion.prompt_tokens,
            completion.completion_tokens,
        );
        Ok(AiCompletion {
            provider: provider.provider.clone(),
            cost_estimate_usd: cost,
            completion,
        })
    }

    /// Verifies one address (already normalised), from the cache when fresh.
    pub async fn verify(&self, actor: &Actor, email: &str, action_type: &str) -> ApiResult<Value> {
        let chain = self.chain(actor.account_id, Family::Verifier).await?;
        self.verify_on(&chain, actor, email, action_type).await
    }

    /// [`Vendors::verify`] on a chain the caller already loaded.
    pub async fn verify_on(
        &self,
        chain: &Chain,
        actor: &Actor,
        email: &str,
        action_type: &str,
    ) -> ApiResult<Value> {
        let keys = &chain.keys;
        let now = self.state.clock.now_ms();
        if let Some(hit) = store::cache_get(
            &self.state.db,
            &actor.user_key,
            Family::Verifier,
            email,
            now,
        )
        .await?
        {
            let mut v: VerificationResult =
                serde_json::from_str(&hit.result).map_err(anyhow::Error::from)?;
            v.cache_hit = true;
            v.cost_estimate_usd = 0.0;
            self.ledger(VendorCall {
                account_id: actor.account_id,
                family: Family::Verifier.as_str(),
                provider: v.provider.clone(),
                action_type: action_type.to_string(),
                success: true,
                cache_hit: true,
                deliverability: Some(v.deliverability.clone()),
                ts: now,
                ..VendorCall::default()
            })
            .await;
            return Ok(with_cache_times(
                serde_json::to_value(v).map_err(anyhow::Error::from)?,
                &hit,
            ));
        }
        let (result, _) = self
            .run(
                actor,
                Family::Verifier,
                action_type,
                keys,
                |i| {
                    let k = &keys[i];
                    let base = base_url(self.state, &k.provider.provider, None);
                    async move {
                        self.state
                            .plugins
                            .verify_email(&k.provider.plugin_id, &k.api_key, base.as_deref(), email)
                            .await
                    }
                },
                |v: &VerificationResult, _: &Provider| VendorCall {
                    latency_ms: v.latency_ms as i64,
                    cost_estimate_usd: v.cost_estimate_usd,
                    deliverability: Some(v.deliverability.clone()),
                    ..VendorCall::default()
                },
            )
            .await?;
        self.remember(
            actor,
            Family::Verifier,
            email,
            &result.provider,
            &result,
            now,
            VERIFICATION_TTL_MS,
        )
        .await
    }

    /// Enriches one domain (already normalised), from the cache when fresh
    /// unless `force_refresh`. Vendor "not found" answers are not cached.
    pub async fn enrich(
        &self,
        actor: &Actor,
        domain: &str,
        force_refresh: bool,
        action_type: &str,
    ) -> ApiResult<Value> {
        let chain = self.chain(actor.account_id, Family::Enricher).await?;
        self.enrich_on(&chain, actor, domain, force_refresh, action_type)
            .await
    }

    /// [`Vendors::enrich`] on a chain the caller already loaded.
    pub async fn enrich_on(
        &self,
        chain: &Chain,
        actor: &Actor,
        domain: &str,
        force_refresh: bool,
        action_type: &str,
    ) -> ApiResult<Value> {
        let keys = &chain.keys;
        let now = self.state.clock.now_ms();
        if !force_refresh && let Some(hit) = self.cached_enrichment(actor, domain).await? {
            let provider = hit["provider"].as_str().unwrap_or_default().to_string();
            self.ledger(VendorCall {
                account_id: actor.account_id,
                family: Family::Enricher.as_str(),
                provider,
                action_type: action_type.to_string(),
                success: true,
                cache_hit: true,
                ts: now,
                ..VendorCall::default()
            })
            .await;
            return Ok(hit);
        }
        let (result, _) = self
            .run(
                actor,
                Family::Enricher,
                action_type,
                keys,
                |i| {
                    let k = &keys[i];
                    let base = base_url(self.state, &k.provider.provider, None);
                    async move {
                        self.state
                            .plugins
                            .enrich_domain(
                                &k.provider.plugin_id,
                                &k.api_key,
                                base.as_deref(),
                                domain,
                            )
                            .await
                    }
                },
                |e: &EnrichmentResult, _: &Provider| VendorCall {
                    latency_ms: e.latency_ms as i64,
                    cost_estimate_usd: e.cost_estimate_usd,
                    ..VendorCall::default()
                },
            )
            .await?;
        self.remember(
            actor,
            Family::Enricher,
            domain,
            &result.provider,
            &result,
            now,
            ENRICHMENT_TTL_MS,
        )
        .await
    }

    /// Caches a fresh vendor result for this user and returns it as JSON.
    #[allow(clippy::too_many_arguments)]
    async fn remember<T: serde::Serialize>(
        &self,
        actor: &Actor,
        family: Family,
        subject: &str,
        provider: &str,
        result: &T,
        now: i64,
        ttl_ms: i64,
    ) -> ApiResult<Value> {
        let value = serde_json::to_value(result).map_err(anyhow::Error::from)?;
        store::cache_put(
            &self.state.db,
            CachePut {
                account_id: actor.account_id,
                user_key: &actor.user_key,
                family,
                subject,
                provider,
                result: value.to_string(),
                now,
                ttl_ms,
            },
        )
        .await?;
        Ok(value)
    }

    /// The freshest unexpired cached enrichment for this user and domain, as
    /// a cache hit (cost 0) with `_cached_at` and `_expires_at`.
    pub async fn cached_enrichment(&self, actor: &Actor, domain: &str) -> ApiResult<Option<Value>> {
        let now = self.state.clock.now_ms();
        let hit = store::cache_get(
            &self.state.db,
            &actor.user_key,
            Family::Enricher,
            domain,
            now,
        )
        .await?;
        hit.as_ref().map(enrichment_hit).transpose()
    }

    /// The freshest unexpired cached enrichment of `domain` (already
    /// normalised) cached by any user of the account, shaped like
    /// [`Vendors::cached_enrichment`]. For work done on the account's behalf
    /// rather than a user's (the sequence sender renders for the account).
    /// It never calls a vendor and writes no ledger row: the ledger counts
    /// lookups asked of a vendor (calls and their cache hits), and reading
    /// what was enriched earlier, once per email sent, is not one.
    pub async fn cached_enrichment_for_account(
        &self,
        account_id: i64,
        domain: &str,
    ) -> ApiResult<Option<Value>> {
        let mut found = self
            .cached_enrichments_for_account(account_id, &[domain.to_owned()])
            .await?;
        Ok(found.remove(domain))
    }

    /// [`Self::cached_enrichment_for_account`] for many domains at once,
    /// keyed by domain; domains without a fresh entry are absent.
    pub async fn cached_enrichments_for_account(
        &self,
        account_id: i64,
        domains: &[String],
    ) -> ApiResult<HashMap<String, Value>> {
        let now = self.state.clock.now_ms();
        let hits = store::cache_get_many_for_account(
            &self.state.db,
            account_id,
            Family::Enricher,
            domains,
            now,
        )
        .await?;
        hits.iter()
            .map(|(domain, hit)| Ok((domain.clone(), enrichment_hit(hit)?)))
            .collect()
    }

    pub async fn evict_enrichment(&self, actor: &Actor, domain: &str) -> ApiResult<u64> {
        Ok(store::cache_evict(&self.state.db, &actor.user_key, Family::Enricher, domain).await?)
    }
}

/// A cached enrichment row as the API shows a cache hit: cost 0,
/// `_cache_hit` true, with `_cached_at` and `_expires_at`.
fn enrichment_hit(hit: &store::CachedRow) -> ApiResult<Value> {
    let mut e: EnrichmentResult = serde_json::from_str(&hit.result).map_err(anyhow::Error::from)?;
    e.cache_hit = true;
    e.cost_estimate_usd = 0.0;
    Ok(with_cache_times(
        serde_json::to_value(e).map_err(anyhow::Error::from)?,
        hit,
    ))
}

fn with_cache_times(mut v: Value, hit: &store::CachedRow) -> Value {
    v["_cached_at"] = iso(hit.cached_at).into();
    v["_expires_at"] = iso(hit.expires_at).into();
    v
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn domains_are_stripped_and_checked() {
        for (input, want) in [
            ("Acme.com", "acme.com"),
            ("https://www.acme.com/about?x=1", "acme.com"),
            ("http://user:pw@acme.co.uk:8080/", "acme.co.uk"),
            ("acme.com.", "acme.com"),
        ] {
            assert_eq!(normalize_domain(input).unwrap(), want, "{input}");
        }
        for bad in [
            "",
            "acme",
            "a..com",
            "-a.com",
            "ac me.com",
            "http://",
            &"a".repeat(300),
        ] {
            assert!(normalize_domain(bad).is_err(), "{bad}");
        }
    }
}
