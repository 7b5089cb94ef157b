//! Handlers of the three vendor-key families. Key management (create, list,
//! update, delete) is the same for all three, so one macro writes those
//! handlers per family with their own paths and OpenAPI operation ids; the
//! family-specific calls (verify, enrich, cache) follow.

use crate::vendor_keys::service::VendorsExt;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::catalogue::{self, Family, Provider};
use super::keys::{self, CreateKey, KeyWithValidation, UpdateKey, VendorKey};
use super::service::{Actor, normalize_domain};
use super::usage::{self, UsageReport};
use outreach_core::accounts::service::normalize_email;
use outreach_core::error::{ApiError, ApiResult, ErrorBody};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{Json, Path, Query};
use outreach_core::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct VendorKeyList {
    pub keys: Vec<VendorKey>,
}

/// Unknown query parameters are ignored.
#[derive(Debug, Deserialize, IntoParams)]
pub struct DaysQuery {
    /// 1-365, default 30.
    pub days: Option<i64>,
}

/// Writes the create/list/update/delete handlers of one family.
macro_rules! key_management {
    ($module:ident, $family:expr, $tag:literal, $base:literal, $item:literal, $usage:literal) => {
        pub mod $module {
            use super::*;

            pub fn router() -> OpenApiRouter<AppState> {
                OpenApiRouter::new()
                    .routes(routes!(list, create))
                    .routes(routes!(update, delete))
                    .routes(routes!(usage))
            }

            /// Spend, calls and breakdowns over the last `days` days (1-365, default 30).
            #[utoipa::path(get, path = $usage, tag = $tag, operation_id = concat!($tag, "_usage"),
                security(("api_key" = [])), params(DaysQuery),
                responses(
                    (status = 200, description = "Usage", body = UsageReport),
                    (status = 400, description = "Invalid days", body = ErrorBody),
                ))]
            async fn usage(
                State(state): State<AppState>,
                caller: Caller,
                Query(q): Query<DaysQuery>,
            ) -> ApiResult<Json<UsageReport>> {
                let days = q.days.unwrap_or(30);
                Ok(Json(usage::report(&state, caller.account_id, $family, days).await?))
            }

            /// Connects a key after validating it against the vendor; invalid keys are never stored.
            #[utoipa::path(post, path = $base, tag = $tag, operation_id = concat!("create_", $tag, "_key"),
                security(("api_key" = [])), request_body = CreateKey,
                responses(
                    (status = 201, description = "Key validated and stored", body = KeyWithValidation),
                    (status = 400, description = "Unknown provider, bad key, or failed validation", body = ErrorBody),
                    (status = 500, description = "Unexpected validation error", body = ErrorBody),
                ))]
            async fn create(
                State(state): State<AppState>,
                caller: Caller,
                Json(body): Json<CreateKey>,
            ) -> ApiResult<(StatusCode, Json<KeyWithValidation>)> {
                let created = keys::create(&state, caller.account_id, $family, body).await?;
                Ok((StatusCode::CREATED, Json(created)))
            }

            /// The account's keys of this family (never the keys themselves).
            #[utoipa::path(get, path = $base, tag = $tag, operation_id = concat!("list_", $tag, "_keys"),
                security(("api_key" = [])),
                responses((status = 200, description = "Keys", body = VendorKeyList)))]
            async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<VendorKeyList>> {
                Ok(Json(VendorKeyList {
                    keys: keys::list(&state, caller.account_id, $family).await?,
                }))
            }

            /// Relabels, (de)activates, rotates or revalidates a key.
            #[utoipa::path(put, path = $item, tag = $tag, operation_id = concat!("update_", $tag, "_key"),
                security(("api_key" = [])), params(("key_id" = i64, Path, description = "Key id")),
                request_body = UpdateKey,
                responses(
                    (status = 200, description = "Updated key", body = KeyWithValidation),
                    (status = 400, description = "Invalid input or failed validation", body = ErrorBody),
                    (status = 404, description = "No such key", body = ErrorBody),
                ))]
            async fn update(
                State(state): State<AppState>,
                caller: Caller,
                Path(key_id): Path<i64>,
                Json(body): Json<UpdateKey>,
            ) -> ApiResult<Json<KeyWithValidation>> {
                Ok(Json(keys::update(&state, caller.account_id, $family, key_id, body).await?))
            }

            /// Deletes a key; work falls through to the next key of the chain.
            #[utoipa::path(delete, path = $item, tag = $tag, operation_id = concat!("delete_", $tag, "_key"),
                security(("api_key" = [])), params(("key_id" = i64, Path, description = "Key id")),
                responses(
                    (status = 204, description = "Deleted"),
                    (status = 404, description = "No such key", body = ErrorBody),
                ))]
            async fn delete(
                State(state): State<AppState>,
                caller: Caller,
                Path(key_id): Path<i64>,
            ) -> ApiResult<StatusCode> {
                keys::delete(&state, caller.account_id, $family, key_id).await?;
                Ok(StatusCode::NO_CONTENT)
            }
        }
    };
}

key_management!(
    ai_keys,
    Family::Ai,
    "ai",
    "/v1/ai/providers",
    "/v1/ai/providers/{key_id}",
    "/v1/ai/providers/usage"
);
key_management!(
    verifier_keys,
    Family::Verifier,
    "email-verifiers",
    "/v1/email-verifiers/providers",
    "/v1/email-verifiers/providers/{key_id}",
    "/v1/email-verifiers/usage"
);
key_management!(
    enricher_keys,
    Family::Enricher,
    "contact-enrichers",
    "/v1/contact-enrichers/providers",
    "/v1/contact-enrichers/providers/{key_id}",
    "/v1/contact-enrichers/usage"
);

/// Authenticated vendor routes.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(ai_keys::router())
        .merge(verifier_keys::router())
        .merge(enricher_keys::router())
        .routes(routes!(known_models))
        .routes(routes!(verify))
        .routes(routes!(verify_bulk))
        .routes(routes!(enrich))
        .routes(routes!(enrich_bulk))
        .routes(routes!(get_cached, evict_cached))
}

/// Routes without authentication (spec/1 Authentication rule 6).
pub fn public_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(verifier_providers))
        .routes(routes!(enricher_providers))
}

const BULK_VERIFY_MAX: usize = 500;
const BULK_VERIFY_CHUNK: usize = 10;
const BULK_ENRICH_MAX: usize = 200;
const BULK_ENRICH_CHUNK: usize = 5;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyRequest {
    pub email: String,
}

/// Verifies one address through the key chain (cached 7 days per user).
#[utoipa::path(post, path = "/v1/email-verifiers/verify", tag = "email-verifiers",
    security(("api_key" = [])), request_body = VerifyRequest,
    responses(
        (status = 200, description = "Verification result", body = Object),
        (status = 400, description = "Malformed email or no keys configured", body = ErrorBody),
        (status = 502, description = "Every active vendor failed", body = ErrorBody),
    ))]
async fn verify(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<VerifyRequest>,
) -> ApiResult<Json<Value>> {
    let email = normalize_email(&body.email)?;
    Ok(Json(
        state
            .vendors()
            .verify(&Actor::from(&caller), &email, "manual")
            .await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyBulkRequest {
    /// 1-500 addresses.
    pub emails: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BulkResults {
    pub count: usize,
    /// A result, or `{email|domain, error}` for an item that failed.
    #[schema(value_type = Vec<Object>)]
    pub results: Vec<Value>,
}

/// Runs `work` over `items` in chunks of `chunk` concurrent calls; one
/// item's failure becomes `{<field>: item, error}` and does not fail the call.
async fn in_chunks<F, Fut>(items: Vec<String>, chunk: usize, field: &str, work: F) -> Vec<Value>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = ApiResult<Value>>,
{
    let mut out = Vec::with_capacity(items.len());
    for group in items.chunks(chunk) {
        let results = futures::future::join_all(group.iter().map(|item| work(item.clone()))).await;
        for (item, result) in group.iter().zip(results) {
            out.push(result.unwrap_or_else(|e| json!({ field: item, "error": e.to_string() })));
        }
    }
    out
}

fn check_bulk(len: usize, max: usize, what: &str) -> ApiResult<()> {
    if len == 0 || len > max {
        return Err(ApiError::bad_request(format!(
            "{what} must hold 1-{max} items"
        )));
    }
    Ok(())
}

/// Verifies up to 500 addresses, 10 concurrent calls at a time.
#[utoipa::path(post, path = "/v1/email-verifiers/verify-bulk", tag = "email-verifiers",
    security(("api_key" = [])), request_body = VerifyBulkRequest,
    responses(
        (status = 200, description = "One result or error per address, in order", body = BulkResults),
        (status = 400, description = "Empty or oversize list, or no keys configured", body = ErrorBody),
    ))]
async fn verify_bulk(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<VerifyBulkRequest>,
) -> ApiResult<Json<BulkResults>> {
    check_bulk(body.emails.len(), BULK_VERIFY_MAX, "emails")?;
    // One chain (key rows, decryption) for the whole list, not one per address.
    let chain = state
        .vendors()
        .chain(caller.account_id, Family::Verifier)
        .await?;
    let actor = Actor::from(&caller);
    let results = in_chunks(body.emails, BULK_VERIFY_CHUNK, "email", |email| {
        let (state, actor, chain) = (&state, &actor, &chain);
        async move {
            let email = normalize_email(&email)?;
            state
                .vendors()
                .verify_on(chain, actor, &email, "manual")
                .await
        }
    })
    .await;
    Ok(Json(BulkResults {
        count: results.len(),
        results,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KnownProviders {
    /// In fallback order, with list rates.
    pub providers: Vec<Provider>,
}

/// Email verifier vendors and list rates (no authentication).
#[utoipa::path(get, path = "/v1/email-verifiers/known-providers", tag = "email-verifiers",
    responses((status = 200, description = "Vendors", body = KnownProviders)))]
async fn verifier_providers(State(state): State<AppState>) -> Json<KnownProviders> {
    Json(KnownProviders {
        providers: catalogue::providers(&state, Family::Verifier),
    })
}

/// Contact enricher vendors and list rates (no authentication).
#[utoipa::path(get, path = "/v1/contact-enrichers/known-providers", tag = "contact-enrichers",
    responses((status = 200, description = "Vendors", body = KnownProviders)))]
async fn enricher_providers(State(state): State<AppState>) -> Json<KnownProviders> {
    Json(KnownProviders {
        providers: catalogue::providers(&state, Family::Enricher),
    })
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnrichRequest {
    /// Protocol and path are stripped.
    pub domain: String,
    #[serde(default)]
    pub force_refresh: bool,
}

/// Enriches one domain through the key chain (cached 30 days per user).
#[utoipa::path(post, path = "/v1/contact-enrichers/enrich", tag = "contact-enrichers",
    security(("api_key" = [])), request_body = EnrichRequest,
    responses(
        (status = 200, description = "Enrichment result", body = Object),
        (status = 400, description = "Malformed domain or no keys configured", body = ErrorBody),
        (status = 404, description = "The vendor knows no company at this domain", body = ErrorBody),
        (status = 502, description = "Every active vendor failed", body = ErrorBody),
    ))]
async fn enrich(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<EnrichRequest>,
) -> ApiResult<Json<Value>> {
    let domain = normalize_domain(&body.domain)?;
    Ok(Json(
        state
            .vendors()
            .enrich(&Actor::from(&caller), &domain, body.force_refresh, "manual")
            .await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnrichBulkRequest {
    /// 1-200 domains.
    pub domains: Vec<String>,
    #[serde(default)]
    pub force_refresh: bool,
}

// An explicit id: the default (the function's name) is taken by
// `POST /v1/enrichment/bulk`, and operationIds are unique (http::openapi).
/// Enriches up to 200 domains, 5 concurrent calls at a time.
#[utoipa::path(post, path = "/v1/contact-enrichers/enrich-bulk", tag = "contact-enrichers",
    operation_id = "contact_enrichers_enrich_bulk", security(("api_key" = [])), request_body = EnrichBulkRequest,
    responses(
        (status = 200, description = "One result or error per domain, in order", body = BulkResults),
        (status = 400, description = "Empty or oversize list, or no keys configured", body = ErrorBody),
    ))]
async fn enrich_bulk(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<EnrichBulkRequest>,
) -> ApiResult<Json<BulkResults>> {
    check_bulk(body.domains.len(), BULK_ENRICH_MAX, "domains")?;
    let chain = state
        .vendors()
        .chain(caller.account_id, Family::Enricher)
        .await?;
    let actor = Actor::from(&caller);
    let force = body.force_refresh;
    let results = in_chunks(body.domains, BULK_ENRICH_CHUNK, "domain", |domain| {
        let (state, actor, chain) = (&state, &actor, &chain);
        async move {
            let domain = normalize_domain(&domain)?;
            state
                .vendors()
                .enrich_on(chain, actor, &domain, force, "manual")
                .await
        }
    })
    .await;
    Ok(Json(BulkResults {
        count: results.len(),
        results,
    }))
}

/// The freshest unexpired cached enrichment of a domain for the caller.
#[utoipa::path(get, path = "/v1/contact-enrichers/cache/{domain}", tag = "contact-enrichers",
    security(("api_key" = [])), params(("domain" = String, Path, description = "Domain")),
    responses(
        (status = 200, description = "Cached result with _cached_at and _expires_at", body = Object),
        (status = 400, description = "Malformed domain", body = ErrorBody),
        (status = 404, description = "Nothing cached", body = ErrorBody),
    ))]
async fn get_cached(
    State(state): State<AppState>,
    caller: Caller,
    Path(domain): Path<String>,
) -> ApiResult<Json<Value>> {
    let domain = normalize_domain(&domain)?;
    state
        .vendors()
        .cached_enrichment(&Actor::from(&caller), &domain)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("cache entry"))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Evicted {
    pub evicted: u64,
    pub domain: String,
}

/// Evicts the caller's cached enrichments of a domain (there is no global flush).
#[utoipa::path(delete, path = "/v1/contact-enrichers/cache/{domain}", tag = "contact-enrichers",
    security(("api_key" = [])), params(("domain" = String, Path, description = "Domain")),
    responses(
        (status = 200, description = "How many rows were evicted", body = Evicted),
        (status = 400, description = "Malformed domain", body = ErrorBody),
    ))]
async fn evict_cached(
    State(state): State<AppState>,
    caller: Caller,
    Path(domain): Path<String>,
) -> ApiResult<Json<Evicted>> {
    let domain = normalize_domain(&domain)?;
    let evicted = state
        .vendors()
        .evict_enrichment(&Actor::from(&caller), &domain)
        .await?;
    Ok(Json(Evicted { evicted, domain }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KnownModels {
    pub providers: Vec<Provider>,
}

/// Providers in fallback order with their models, prices and validation defaults.
#[utoipa::path(get, path = "/v1/ai/providers/known-models", tag = "ai", security(("api_key" = [])),
    responses((status = 200, description = "Providers and models", body = KnownModels)))]
async fn known_models(State(state): State<AppState>, _caller: Caller) -> Json<KnownModels> {
    Json(KnownModels {
        providers: catalogue::providers(&state, Family::Ai),
    })
}
