//! SQL for subscriptions, deliveries and attempts. Everything here takes the
//! account id, so no query can reach another tenant's rows.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use outreach_core::store::{Backend, Db, id_list, value_rows};

#[derive(Debug, Clone)]
pub struct WebhookRow {
    pub id: i64,
    pub account_id: i64,
    pub name: Option<String>,
    pub url: String,
    pub events: Vec<String>,
    /// Sealed signing secret (see [`secret_aad`]).
    pub secret: String,
    pub is_active: bool,
    pub failing_since: Option<i64>,
    pub disabled_reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const WEBHOOK_COLUMNS: &str = "id, account_id, name, url, events, secret, is_active, \
     failing_since, disabled_reason, created_at, updated_at";

fn webhook_row(r: &AnyRow) -> sqlx::Result<WebhookRow> {
    let events: String = r.try_get("events")?;
    Ok(WebhookRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        name: r.try_get("name")?,
        url: r.try_get("url")?,
        events: serde_json::from_str(&events).unwrap_or_default(),
        secret: r.try_get("secret")?,
        is_active: r.try_get::<i64, _>("is_active")? != 0,
        failing_since: r.try_get("failing_since")?,
        disabled_reason: r.try_get("disabled_reason")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// Restricts a query to the account's own subscriptions: REST hooks
/// (`rest_hooks/`, made by the automation platform) share the table and
/// the delivery machinery but are neither listed, counted nor sent events.
const OWN: &str = "AND rest_hook IS NULL";
/// The complement of [`OWN`]: the automation platform's REST hooks.
pub const REST_HOOKS: &str = "AND rest_hook IS NOT NULL";

/// The account's own subscriptions as a table, for the plan cap's count.
pub const OWN_WEBHOOKS: &str = "(SELECT account_id FROM webhooks WHERE rest_hook IS NULL) own";

/// The associated data binding a sealed secret to its subscription.
pub fn secret_aad(id: i64) -> String {
    format!("webhooks:{id}:secret")
}

pub struct NewWebhook<'a> {
    pub account_id: i64,
    pub name: Option<&'a str>,
    pub url: &'a str,
    pub events: &'a [String],
    pub now: i64,
}

/// Inserts a subscription on `conn`, the creating transaction, with its
/// secret still empty: the service checks the cap after the insert
/// (`ensure_quota_after_insert`), then seals the secret with the new id
/// ([`seal_secret`]).
pub async fn insert_webhook(conn: &mut AnyConnection, w: NewWebhook<'_>) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO webhooks (account_id, name, url, events, secret, is_active, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, '', 1, $5, $5) RETURNING id",
    )
    .bind(w.account_id)
    .bind(w.name)
    .bind(w.url)
    .bind(serde_json::to_string(w.events).unwrap_or_default())
    .bind(w.now)
    .fetch_one(conn)
    .await
}

/// Stores a subscription's sealed secret.
pub async fn seal_secret(conn: &mut AnyConnection, id: i64, sealed: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE webhooks SET secret = $1 WHERE id = $2")
        .bind(sealed)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn get_webhook(db: &Db, account_id: i64, id: i64) -> sqlx::Result<Option<WebhookRow>> {
    let sql =
        format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1 AND account_id = $2 {OWN}");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(account_id)
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(webhook_row)
        .transpose()
}

pub async fn list_webhooks(db: &Db, account_id: i64) -> sqlx::Result<Vec<WebhookRow>> {
    let sql =
        format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE account_id = $1 {OWN} ORDER BY id");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(webhook_row)
        .collect()
}

/// Writes the changeable fields of `w` (name, url, events, activity and the
/// failure state).
pub async fn update_webhook(db: &Db, w: &WebhookRow, now: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE webhooks SET name = $1, url = $2, events = $3, is_active = $4, \
         failing_since = $5, disabled_reason = $6, updated_at = $7 \
         WHERE id = $8 AND account_id = $9",
    )
    .bind(w.name.as_deref())
    .bind(&w.url)
    .bind(serde_json::to_string(&w.events).unwrap_or_default())
    .bind(w.is_active as i64)
    .bind(w.failing_since)
    .bind(w.disabled_reason.as_deref())
    .bind(now)
    .bind(w.id)
    .bind(w.account_id)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Deletes a subscription with its deliveries and their attempts.
pub async fn delete_webhook(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    delete_where(db, account_id, id, OWN).await
}

/// Deletes the account's row `id` when it is of the kind `which` ([`OWN`]
/// or [`REST_HOOKS`]), with its deliveries and their attempts.
pub async fn delete_where(
    db: &Db,
    account_id: i64,
    id: i64,
    which: &'static str,
) -> sqlx::Result<bool> {
    let sql = format!("DELETE FROM webhooks WHERE id = $1 AND account_id = $2 {which}");
    let done = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(account_id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// An active subscription as the fan-out sees it.
#[derive(Debug, Clone)]
pub struct Subscription {
    pub id: i64,
    pub account_id: i64,
    pub url: String,
    pub events: Vec<String>,
}

/// The active subscriptions of these accounts.
pub async fn active_subscriptions(
    conn: &mut AnyConnection,
    account_ids: &[i64],
) -> sqlx::Result<Vec<Subscription>> {
    if account_ids.is_empty() {
        return Ok(Vec::new());
    }
    let list = id_list(account_ids);
    let sql = format!(
        "SELECT id, account_id, url, events FROM webhooks \
         WHERE is_active = 1 {OWN} AND account_id IN ({list})"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .fetch_all(conn)
        .await?;
    rows.iter()
        .map(|r| {
            let events: String = r.try_get("events")?;
            Ok(Subscription {
                id: r.try_get("id")?,
                account_id: r.try_get("account_id")?,
                url: r.try_get("url")?,
                events: serde_json::from_str(&events).unwrap_or_default(),
            })
        })
        .collect()
}

/// A delivery to write: due at `now`, not tried yet.
pub struct NewDelivery {
    pub account_id: i64,
    pub webhook_id: i64,
    pub url: String,
    pub event_id: Option<i64>,
    pub event_type: String,
    pub payload: String,
}

/// Rows per multi-row insert (8 columns each, well under SQLite's 32,766
/// parameters).
const INSERT_CHUNK: usize = 500;

/// Inserts deliveries on `conn` (the fan-out transaction). A row whose
/// (event, subscription) exists already is skipped.
pub async fn insert_deliveries(
    conn: &mut AnyConnection,
    backend: Backend,
    rows: &[NewDelivery],
    now: i64,
) -> sqlx::Result<()> {
    for chunk in rows.chunks(INSERT_CHUNK) {
        let sql = format!(
            "INSERT INTO webhook_deliveries (account_id, webhook_id, event_id, event_type, url, \
             payload, status, next_attempt_at, created_at, updated_at) \
             VALUES {} ON CONFLICT DO NOTHING",
            value_rows(backend, chunk.len(), 10)
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for d in chunk {
            q = q
                .bind(d.account_id)
                .bind(d.webhook_id)
                .bind(d.event_id)
                .bind(d.event_type.clone())
                .bind(d.url.clone())
                .bind(d.payload.clone())
                .bind("pending")
                .bind(now)
                .bind(now)
                .bind(now);
        }
        q.execute(&mut *conn).await?;
    }
    Ok(())
}

/// A delivery claimed for an attempt, with what the attempt needs.
#[derive(Debug, Clone)]
pub struct ClaimedDelivery {
    pub id: i64,
    pub account_id: i64,
    pub webhook_id: i64,
    pub event_type: String,
    pub payload: String,
    /// Attempts made before this one.
    pub attempt: i64,
    pub status: String,
    pub url: String,
    /// Sealed signing secret.
    pub secret: String,
}

const CLAIMED_COLUMNS: &str = "id, account_id, webhook_id, event_type, payload, attempt, status";

/// Leases up to `limit` due deliveries of active subscriptions to `owner`
/// until `lease_until`. PostgreSQL skips rows other claimers hold; SQLite
/// runs the one statement atomically.
pub async fn claim_due(
    db: &Db,
    owner: &str,
    now: i64,
    lease_until: i64,
    limit: i64,
) -> sqlx::Result<Vec<ClaimedDelivery>> {
    let lock = match db.backend {
        Backend::Postgres => " FOR UPDATE OF d SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "UPDATE webhook_deliveries SET lease_owner = $1, lease_until = $2 WHERE id IN \
         (SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id \
          WHERE d.next_attempt_at <= $3 AND (d.lease_until IS NULL OR d.lease_until < $3) \
          AND w.is_active = 1 ORDER BY d.next_attempt_at, d.id LIMIT $4{lock}) \
         RETURNING {CLAIMED_COLUMNS}"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(owner)
        .bind(lease_until)
        .bind(now)
        .bind(limit)
        .fetch_all(&db.pool)
        .await?;
    with_targets(db, rows).await
}

/// Leases one delivery of the account for a manual attempt, whatever its
/// status, unless another attempt holds it. `Ok(None)`: no such delivery
/// or it is in flight (the caller tells which).
pub async fn claim_one(
    db: &Db,
    account_id: i64,
    webhook_id: i64,
    delivery_id: i64,
    owner: &str,
    now: i64,
    lease_until: i64,
) -> sqlx::Result<Option<ClaimedDelivery>> {
    let sql = format!(
        "UPDATE webhook_deliveries SET lease_owner = $1, lease_until = $2 \
         WHERE id = $3 AND account_id = $4 AND webhook_id = $5 \
         AND (lease_until IS NULL OR lease_until < $6) RETURNING {CLAIMED_COLUMNS}"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(owner)
        .bind(lease_until)
        .bind(delivery_id)
        .bind(account_id)
        .bind(webhook_id)
        .bind(now)
        .fetch_all(&db.pool)
        .await?;
    Ok(with_targets(db, rows).await?.pop())
}

/// Adds each claimed delivery's current URL and sealed secret.
async fn with_targets(db: &Db, rows: Vec<AnyRow>) -> sqlx::Result<Vec<ClaimedDelivery>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let mut ids: Vec<i64> = rows
        .iter()
        .map(|r| r.try_get("webhook_id"))
        .collect::<sqlx::Result<_>>()?;
    ids.sort_unstable();
    ids.dedup();
    let list = id_list(&ids);
    let sql = format!("SELECT id, url, secret FROM webhooks WHERE id IN ({list})");
    let targets: Vec<(i64, String, String)> = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("id")?, r.try_get("url")?, r.try_get("secret")?)))
        .collect::<sqlx::Result<_>>()?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let webhook_id: i64 = r.try_get("webhook_id")?;
        // A subscription deleted since the claim took its deliveries along.
        let Some((_, url, secret)) = targets.iter().find(|t| t.0 == webhook_id) else {
            continue;
        };
        out.push(ClaimedDelivery {
            id: r.try_get("id")?,
            account_id: r.try_get("account_id")?,
            webhook_id,
            event_type: r.try_get("event_type")?,
            payload: r.try_get("payload")?,
            attempt: r.try_get("attempt")?,
            status: r.try_get("status")?,
            url: url.clone(),
            secret: secret.clone(),
        });
    }
    out.sort_by_key(|d| d.id);
    Ok(out)
}

/// Inserts a test delivery already leased to `owner`.
pub async fn insert_leased_delivery(
    db: &Db,
    d: &NewDelivery,
    owner: &str,
    now: i64,
    lease_until: i64,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO webhook_deliveries (account_id, webhook_id, event_id, event_type, url, payload, \
         status, next_attempt_at, lease_owner, lease_until, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', NULL, $7, $8, $9, $9) RETURNING id",
    )
    .bind(d.account_id)
    .bind(d.webhook_id)
    .bind(d.event_id)
    .bind(&d.event_type)
    .bind(&d.url)
    .bind(&d.payload)
    .bind(owner)
    .bind(lease_until)
    .bind(now)
    .fetch_one(&db.pool)
    .await
}
