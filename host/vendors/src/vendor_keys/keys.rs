//! Creating, listing, rotating and deleting vendor keys. A key is validated
//! against its vendor before it is saved; an invalid key is never stored.

use outreach_plugin_runtime::CallError;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::catalogue::{self, Family, Provider};
use super::store::{self, KeyRow, NewKeyRow, key_aad};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// spec/3 "Vendor key": never the key itself.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VendorKey {
    pub id: i64,
    pub provider: String,
    pub label: String,
    pub is_active: bool,
    /// First 4 characters, an ellipsis, last 4.
    pub key_preview: String,
    pub last_validated_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Verifier and enricher keys only; null when the vendor has no credits endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credits_remaining: Option<Option<i64>>,
    /// The compatible AI kind only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation_model: Option<String>,
}

/// What creating or revalidating a key learned from the vendor.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum Validation {
    Ai(AiValidation),
    Credits(CreditsValidation),
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AiValidation {
    pub provider: String,
    pub model: String,
    pub latency_ms: u64,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// What the 1-token completion answered.
    pub echo: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CreditsValidation {
    pub provider: String,
    pub credits_remaining: Option<i64>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct KeyWithValidation {
    pub key: VendorKey,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKey {
    pub provider: String,
    /// 8-512 characters.
    pub api_key: String,
    pub label: Option<String>,
    /// Required for the compatible AI kind.
    pub endpoint_url: Option<String>,
    /// Required for the compatible AI kind.
    pub validation_model: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct UpdateKey {
    pub label: Option<String>,
    pub is_active: Option<bool>,
    /// Rotates the key; the new key is validated before it replaces the old.
    pub api_key: Option<String>,
    /// AI keys only.
    pub endpoint_url: Option<String>,
    /// AI keys only.
    pub validation_model: Option<String>,
    /// True runs a fresh validation and adds the validation block.
    #[serde(default)]
    pub revalidate: bool,
}

pub fn preview(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}...{tail}")
}

fn check_api_key(key: &str) -> ApiResult<()> {
    let n = key.chars().count();
    if !(8..=512).contains(&n) || key.chars().any(char::is_control) {
        return Err(ApiError::bad_request("api_key must be 8-512 characters"));
    }
    Ok(())
}

fn check_label(label: &str) -> ApiResult<()> {
    if label.chars().count() > 200 {
        return Err(ApiError::bad_request(
            "label must be at most 200 characters",
        ));
    }
    Ok(())
}

/// `endpoint_url` must be an absolute http(s) URL; the SSRF guard still
/// checks every address it resolves to when a call is made.
fn check_endpoint(url: &str) -> ApiResult<()> {
    match url::Url::parse(url) {
        Ok(u)
            if ["http", "https"].contains(&u.scheme())
                && u.host().is_some()
                && url.len() <= 2048 =>
        {
            Ok(())
        }
        _ => Err(ApiError::bad_request(
            "endpoint_url must be an absolute http(s) URL",
        )),
    }
}

pub fn view(family: Family, k: &KeyRow) -> VendorKey {
    VendorKey {
        id: k.id,
        provider: k.provider.clone(),
        label: k.label.clone(),
        is_active: k.is_active,
        key_preview: k.key_preview.clone(),
        last_validated_at: k.last_validated_at.map(iso),
        created_at: iso(k.created_at),
        updated_at: iso(k.updated_at),
        credits_remaining: (family != Family::Ai).then_some(k.credits_remaining),
        endpoint_url: k.endpoint_url.clone(),
        validation_model: k.validation_model.clone(),
    }
}

fn unknown_provider(family: Family, state: &AppState, provider: &str) -> ApiError {
    let known: Vec<String> = catalogue::providers(state, family)
        .into_iter()
        .map(|p| p.provider)
        .collect();
    ApiError::bad_request(format!(
        "Unknown provider '{provider}' (known: {})",
        known.join(", ")
    ))
}

/// The base URL a call to `provider` uses: the key's endpoint (compatible
/// kind) or the operator's configured override, else the vendor's own.
pub fn base_url(state: &AppState, provider: &str, endpoint_url: Option<&str>) -> Option<String> {
    endpoint_url
        .map(str::to_string)
        .or_else(|| state.config.vendor_base_urls.get(provider).cloned())
}

/// Asks the vendor whether `api_key` works. Vendor refusals are 400 with the
/// upstream reason; failures of our own machinery are 500.
async fn validate(
    state: &AppState,
    family: Family,
    provider: &Provider,
    api_key: &str,
    endpoint_url: Option<&str>,
    validation_model: Option<&str>,
) -> ApiResult<Validation> {
    let base = base_url(state, &provider.provider, endpoint_url);
    let result = match family {
        Family::Ai => {
            let started = std::time::Instant::now();
            state
                .plugins
                .llm_validate_key(
                    &provider.plugin_id,
                    api_key,
                    base.as_deref(),
                    validation_model,
                )
                .await
                .map(|v| {
                    Validation::Ai(AiValidation {
                        provider: provider.provider.clone(),
                        model: v.model,
                        latency_ms: started.elapsed().as_millis() as u64,
                        prompt_tokens: v.prompt_tokens,
                        completion_tokens: v.completion_tokens,
                        echo: v.echo,
                    })
                })
        }
        Family::Verifier | Family::Enricher => state
            .plugins
            .validate_key(&provider.plugin_id, api_key, base.as_deref())
            .await
            .map(|v| {
                Validation::Credits(CreditsValidation {
                    provider: provider.provider.clone(),
                    credits_remaining: v.credits_remaining,
                })
            }),
    };
    result.map_err(|e| match e {
        CallError::Auth(_)
        | CallError::InvalidInput(_)
        | CallError::Permanent(_)
        | CallError::Transient(_)
        | CallError::RateLimited { .. }
        | CallError::Denied(_) => ApiError::bad_request(format!("Key validation failed: {e}")),
        other => {
            tracing::error!(error = %other, provider = %provider.provider, "unexpected validation error");
            ApiError::Internal(anyhow::anyhow!("Unexpected validation error: {other}"))
        }
    })
}

fn credits_of(v: &Validation) -> Option<i64> {
    match v {
        Validation::Credits(c) => c.credits_remaining,
        Validation::Ai(_) => None,
    }
}

pub async fn create(
    state: &AppState,
    account_id: i64,
    family: Family,
    body: CreateKey,
) -> ApiResult<KeyWithValidation> {
    let provider = catalogue::find(state, family, &body.provider)
        .ok_or_else(|| unknown_provider(family, state, &body.provider))?;
    check_api_key(&body.api_key)?;
    let label = body.label.unwrap_or_default();
    check_label(&label)?;
    let needs_endpoint = provider.supports_endpoint_url == Some(true);
    let (endpoint_url, validation_model) = if needs_endpoint {
        let endpoint = body
            .endpoint_url
            .filter(|u| !u.is_empty())
            .ok_or_else(|| ApiError::bad_request("endpoint_url is required for this provider"))?;
        check_endpoint(&endpoint)?;
        let model = body
            .validation_model
            .filter(|m| !m.is_empty())
            .ok_or_else(|| {
                ApiError::bad_request("validation_model is required for this provider")
            })?;
        (Some(endpoint), Some(model))
    } else {
        if body.endpoint_url.is_some() {
            return Err(ApiError::bad_request(
                "endpoint_url is only accepted for the compatible provider",
            ));
        }
        (None, body.validation_model.filter(|m| !m.is_empty()))
    };
    let validation = validate(
        state,
        family,
        &provider,
        &body.api_key,
        endpoint_url.as_deref(),
        validation_model.as_deref(),
    )
    .await?;
    let now = state.clock.now_ms();
    let secrets = state.secrets.clone();
    let plain = body.api_key.clone();
    let id = store::insert_key(
        &state.db,
        NewKeyRow {
            account_id,
            family,
            provider: &provider.provider,
            label: &label,
            key_preview: &preview(&body.api_key),
            endpoint_url: endpoint_url.as_deref(),
            validation_model: validation_model.as_deref(),
            credits_remaining: credits_of(&validation),
            now,
        },
        move |id| secrets.encrypt(&key_aad(id), &plain),
    )
    .await?;
    let row = get_row(state, account_id, family, id).await?;
    Ok(KeyWithValidation {
        key: view(family, &row),
        validation: Some(validation),
    })
}

async fn get_row(state: &AppState, account_id: i64, family: Family, id: i64) -> ApiResult<KeyRow> {
    store::get_key(&state.db, account_id, family, id)
        .await?
        .ok_or_else(|| ApiError::not_found("key"))
}

pub async fn list(state: &AppState, account_id: i64, family: Family) -> ApiResult<Vec<VendorKey>> {
    Ok(store::list_keys(&state.db, account_id, family)
        .await?
        .iter()
        .map(|k| view(family, k))
        .collect())
}

pub async fn update(
    state: &AppState,
    account_id: i64,
    family: Family,
    id: i64,
    body: UpdateKey,
) -> ApiResult<KeyWithValidation> {
    let mut row = get_row(state, account_id, family, id).await?;
    if family != Family::Ai && (body.endpoint_url.is_some() || body.validation_model.is_some()) {
        return Err(ApiError::bad_request(
            "endpoint_url and validation_model apply to AI keys only",
        ));
    }
    if let Some(label) = &body.label {
        check_label(label)?;
        row.label = label.clone();
    }
    if let Some(active) = body.is_active {
        row.is_active = active;
    }
    if let Some(endpoint) = &body.endpoint_url {
        check_endpoint(endpoint)?;
        row.endpoint_url = Some(endpoint.clone());
    }
    if let Some(model) = &body.validation_model {
        row.validation_model = Some(model.clone()).filter(|m| !m.is_empty());
    }
    let new_key = match &body.api_key {
        Some(k) => {
            check_api_key(k)?;
            Some(k.clone())
        }
        None => None,
    };
    let endpoint_changed = body.endpoint_url.is_some();
    let validation = if body.revalidate || new_key.is_some() || endpoint_changed {
        let provider = catalogue::find(state, family, &row.provider)
            .ok_or_else(|| unknown_provider(family, state, &row.provider))?;
        let plain = match &new_key {
            Some(k) => k.clone(),
            None => state.secrets.decrypt(&key_aad(row.id), &row.api_key)?,
        };
        let v = validate(
            state,
            family,
            &provider,
            &plain,
            row.endpoint_url.as_deref(),
            row.validation_model.as_deref(),
        )
        .await?;
        row.last_validated_at = Some(state.clock.now_ms());
        if family != Family::Ai {
            row.credits_remaining = credits_of(&v);
        }
        Some(v)
    } else {
        None
    };
    if let Some(k) = new_key {
        row.api_key = state.secrets.encrypt(&key_aad(row.id), &k);
        row.key_preview = preview(&k);
    }
    store::save_key(&state.db, account_id, &row, state.clock.now_ms()).await?;
    let row = get_row(state, account_id, family, id).await?;
    Ok(KeyWithValidation {
        key: view(family, &row),
        validation,
    })
}

pub async fn delete(state: &AppState, account_id: i64, family: Family, id: i64) -> ApiResult<()> {
    if !store::delete_key(&state.db, account_id, family, id).await? {
        return Err(ApiError::not_found("key"));
    }
    Ok(())
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn previews_show_first_and_last_four() {
        assert_eq!(preview("sk-abcdefghijklmnop"), "sk-a...mnop");
        assert_eq!(preview("12345678"), "1234...5678");
    }
}
