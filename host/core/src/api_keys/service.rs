//! Creating, listing, revoking and verifying API keys.

use std::sync::Arc;
use std::time::Duration;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use sqlx::Row;
use subtle_eq::ct_eq;
use utoipa::ToSchema;

use sha2::{Digest, Sha256};

use super::cache::{KeyDigest, VerificationCache};
use super::{format, store};
use crate::accounts::plans::Plan;
use crate::error::{ApiError, ApiResult};
use crate::http::client_ip::parse_net;
use crate::platform::clock::{SharedClock, iso};
use crate::store::Db;

/// Endpoint groups a key can be restricted to: the first path segment after
/// `/v1/` of the routes in each area.
pub const ENDPOINT_GROUPS: &[&str] = &[
    "account",
    "ai",
    "alerts",
    "audiences",
    "contact-enrichers",
    "connections",
    "email-verifiers",
    "enrichment",
    "export",
    "inbox",
    "integrations",
    "intelligence",
    "lists",
    "reseller",
    "scoring",
    "search",
    "send-accounts",
    "sequence-warmup",
    "sequences",
    "usage",
    "watchlist",
    "webhooks",
    "workflows",
];

/// Optional restrictions chosen when a key is created.
#[derive(Debug, Clone, Default)]
pub struct Restrictions {
    /// IP addresses or CIDR ranges allowed to use the key; empty allows all.
    pub allowed_ips: Vec<String>,
    /// Endpoint groups the key may call (for example `enrichment`, `search`);
    /// empty allows all.
    pub allowed_endpoint_groups: Vec<String>,
}

/// The body of a key creation. Restrictions are spelled out rather than
/// flattened, so the generated schema and `deny_unknown_fields` agree.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKey {
    /// 1-100 characters.
    pub name: String,
    /// IP addresses or CIDR ranges allowed to use the key; empty allows all.
    #[serde(default)]
    pub allowed_ips: Vec<String>,
    /// Endpoint groups the key may call; empty allows all.
    #[serde(default)]
    pub allowed_endpoint_groups: Vec<String>,
}

impl NewKey {
    pub fn named(name: &str) -> NewKey {
        NewKey {
            name: name.to_string(),
            allowed_ips: Vec::new(),
            allowed_endpoint_groups: Vec::new(),
        }
    }
}

/// A key as listings show it: never the key itself.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct KeyInfo {
    pub id: i64,
    pub name: String,
    /// The key's prefix part and last 4 characters.
    pub key_preview: String,
    pub reseller_client_id: Option<i64>,
    pub allowed_ips: Vec<String>,
    pub allowed_endpoint_groups: Vec<String>,
    /// Requests made with this key (updated within about a second).
    pub request_count: i64,
    pub last_used_at: Option<String>,
    pub revoked_at: Option<String>,
    pub created_at: String,
}

/// A verified key with what the request pipeline needs to authorise it.
#[derive(Debug, Clone)]
pub struct VerifiedKey {
    pub key_id: i64,
    pub account_id: i64,
    pub account_name: String,
    pub account_created_at: i64,
    pub user_id: Option<i64>,
    pub plan: Plan,
    pub account_suspended: bool,
    pub billing_day: u32,
    pub reseller: Option<ResellerClient>,
    pub allowed_ips: Vec<IpNet>,
    pub allowed_groups: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct ResellerClient {
    pub id: i64,
    pub disabled: bool,
    pub monthly_quota: u64,
    pub billing_day: u32,
}

#[derive(Clone)]
pub struct ApiKeyService {
    db: Db,
    clock: SharedClock,
    prefix: String,
    /// Verified keys by hash of the presented key, negative answers included,
    /// so a flood of bad keys does not reach the database either.
    cache: Arc<VerificationCache>,
}

impl std::fmt::Debug for ApiKeyService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeyService")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// How long another server process may keep serving a revoked key or an old
/// plan; the process that makes the change drops its cache at once.
const CACHE_TTL: Duration = Duration::from_secs(30);

impl ApiKeyService {
    pub fn new(db: Db, clock: SharedClock, prefix: &str) -> ApiKeyService {
        ApiKeyService {
            db,
            clock,
            prefix: prefix.to_string(),
            cache: Arc::new(VerificationCache::new(100_000, CACHE_TTL)),
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Drops every cached verification; called after revocations, plan
    /// changes, suspensions and reseller-client changes.
    pub fn invalidate_all(&self) {
        self.cache.invalidate_all();
    }

    /// Creates a key and returns it once, in clear, with its listing.
    pub async fn create(
        &self,
        account_id: i64,
        user_id: Option<i64>,
        reseller_client_id: Option<i64>,
        new: NewKey,
    ) -> ApiResult<(KeyInfo, String)> {
        let name = new.name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(ApiError::bad_request("name must be 1-100 characters"));
        }
        let restrictions = validate_restrictions(Restrictions {
            allowed_ips: new.allowed_ips,
            allowed_endpoint_groups: new.allowed_endpoint_groups,
        })?;
        let (key, lookup) = format::generate(&self.prefix, reseller_client_id);
        let id = store::insert(
            &self.db,
            store::InsertKey {
                account_id,
                user_id,
                reseller_client_id,
                name,
                lookup: &lookup,
                key_hash: &format::hash(&key),
                preview: &format::preview(&key),
                allowed_ips: serde_json::to_string(&restrictions.allowed_ips).unwrap(),
                allowed_groups: serde_json::to_string(&restrictions.allowed_endpoint_groups)
                    .unwrap(),
                now: self.clock.now_ms(),
            },
        )
        .await?;
        let info = self.get(account_id, id).await?;
        Ok((info, key))
    }

    pub async fn get(&self, account_id: i64, key_id: i64) -> ApiResult<KeyInfo> {
        store::get(&self.db, account_id, key_id)
            .await?
            .map(|row| key_info(&row))
            .ok_or_else(|| ApiError::not_found("API key"))
    }

    pub async fn list(&self, account_id: i64) -> ApiResult<Vec<KeyInfo>> {
        Ok(store::list(&self.db, account_id)
            .await?
            .iter()
            .map(key_info)
            .collect())
    }

    pub async fn count_active(&self, account_id: i64) -> ApiResult<u64> {
        Ok(store::count_active(&self.db, account_id).await? as u64)
    }

    /// Revokes one key of the account; 404 for keys of other accounts.
    pub async fn revoke(&self, account_id: i64, key_id: i64) -> ApiResult<()> {
        if !store::revoke(&self.db, account_id, key_id, self.clock.now_ms()).await? {
            return Err(ApiError::not_found("API key"));
        }
        self.invalidate_all();
        Ok(())
    }

    /// Checks a presented key. `None` for anything not a live key of ours.
    pub async fn verify(&self, presented: &str) -> anyhow::Result<Option<Arc<VerifiedKey>>> {
        let Some(parsed) = format::parse(&self.prefix, presented) else {
            return Ok(None);
        };
        let digest: KeyDigest = Sha256::digest(presented.as_bytes()).into();
        if let Some(hit) = self.cache.get(&digest) {
            return Ok(hit);
        }
        // Boxed: the database read's future is large, and every request's
        // future would carry (and move) it for the rare miss.
        Box::pin(self.load(digest, parsed.lookup, parsed.reseller_client_id)).await
    }

    /// A cache miss: reads the key's row and caches the answer.
    async fn load(
        &self,
        digest: KeyDigest,
        lookup: &str,
        reseller_client_id: Option<i64>,
    ) -> anyhow::Result<Option<Arc<VerifiedKey>>> {
        let generation = self.cache.generation();
        let hash = hex::encode(digest);
        let verified = match store::find_for_auth(&self.db, lookup).await? {
            Some(row) => verified_from_row(&row, &hash, reseller_client_id)?,
            None => None,
        };
        let verified = verified.map(Arc::new);
        self.cache.insert(digest, verified.clone(), generation);
        Ok(verified)
    }
}

fn verified_from_row(
    row: &sqlx::any::AnyRow,
    presented_hash: &str,
    presented_client: Option<i64>,
) -> anyhow::Result<Option<VerifiedKey>> {
    let stored_hash: String = row.try_get("key_hash")?;
    let revoked: Option<i64> = row.try_get("revoked_at")?;
    let client_id: Option<i64> = row.try_get("reseller_client_id")?;
    // The client id in the key text must be the row's, or a reseller key could
    // be re-labelled to borrow another client's quota.
    if !ct_eq(stored_hash.as_bytes(), presented_hash.as_bytes())
        || revoked.is_some()
        || client_id != presented_client
    {
        return Ok(None);
    }
    let plan: String = row.try_get("plan")?;
    let status: String = row.try_get("status")?;
    let billing_day: i64 = row.try_get("billing_day")?;
    let reseller = match client_id {
        Some(id) => {
            let created: i64 = row.try_get("client_created_at")?;
            Some(ResellerClient {
                id,
                disabled: row
                    .try_get::<Option<i64>, _>("client_disabled")?
                    .unwrap_or(1)
                    != 0,
                monthly_quota: row.try_get::<Option<i64>, _>("client_quota")?.unwrap_or(0) as u64,
                billing_day: crate::accounts::service::billing_day_of(created),
            })
        }
        None => None,
    };
    Ok(Some(VerifiedKey {
        key_id: row.try_get("id")?,
        account_id: row.try_get("account_id")?,
        account_name: row.try_get("account_name")?,
        account_created_at: row.try_get("account_created_at")?,
        user_id: row.try_get("user_id")?,
        plan: Plan::parse(&plan).unwrap_or(Plan::Free),
        account_suspended: status != "active",
        billing_day: billing_day as u32,
        reseller,
        allowed_ips: store::json_list(row, "allowed_ips")
            .iter()
            .filter_map(|s| parse_net(s).ok())
            .collect(),
        allowed_groups: store::json_list(row, "allowed_groups"),
    }))
}

fn key_info(row: &sqlx::any::AnyRow) -> KeyInfo {
    let ts = |c: &str| row.try_get::<Option<i64>, _>(c).ok().flatten().map(iso);
    KeyInfo {
        id: row.try_get("id").unwrap_or_default(),
        name: row.try_get("name").unwrap_or_default(),
        key_preview: row.try_get("preview").unwrap_or_default(),
        reseller_client_id: row.try_get("reseller_client_id").ok().flatten(),
        allowed_ips: store::json_list(row, "allowed_ips"),
        allowed_endpoint_groups: store::json_list(row, "allowed_groups"),
        request_count: row.try_get("request_count").unwrap_or_default(),
        last_used_at: ts("last_used_at"),
        revoked_at: ts("revoked_at"),
        created_at: ts("created_at").unwrap_or_default(),
    }
}

fn validate_restrictions(r: Restrictions) -> ApiResult<Restrictions> {
    if r.allowed_ips.len() > 100 || r.allowed_endpoint_groups.len() > ENDPOINT_GROUPS.len() {
        return Err(ApiError::bad_request("too many restrictions"));
    }
    let mut ips = Vec::new();
    for ip in &r.allowed_ips {
        let net = parse_net(ip).map_err(|_| {
            ApiError::bad_request(format!("invalid IP address or CIDR range: {ip}"))
        })?;
        ips.push(net.to_string());
    }
    for group in &r.allowed_endpoint_groups {
        if !ENDPOINT_GROUPS.contains(&group.as_str()) {
            return Err(ApiError::bad_request(format!(
                "unknown endpoint group: {group} (known: {})",
                ENDPOINT_GROUPS.join(", ")
            )));
        }
    }
    Ok(Restrictions {
        allowed_ips: ips,
        allowed_endpoint_groups: r.allowed_endpoint_groups,
    })
}

/// Constant-time equality, so response timing does not reveal how much of a
/// hash matched.
mod subtle_eq {
    pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}
