//! SQL of the REST hooks: their `webhooks` rows (with `rest_hook` set) and
//! the items each has had. Everything a request reaches takes the account
//! id.

use sqlx::{AnyConnection, Row};

use outreach_core::accounts::Plan;
use outreach_core::store::{Backend, Db, placeholder, placeholder_list, value_rows};

pub struct NewHook<'a> {
    pub account_id: i64,
    pub trigger: &'a str,
    pub params: &'a serde_json::Value,
    pub url: &'a str,
    pub now: i64,
    pub first_scan_at: i64,
}

/// Inserts a hook with its secret still empty (sealed with the new id by
/// `webhooks::store::seal_secret`, as a webhook's is).
pub async fn insert(conn: &mut AnyConnection, h: NewHook<'_>) -> sqlx::Result<i64> {
    let events = serde_json::json!([super::event_name(h.trigger)]).to_string();
    sqlx::query_scalar(
        "INSERT INTO webhooks (account_id, name, url, events, secret, is_active, created_at, \
         updated_at, rest_hook, rest_hook_params, rest_hook_scan_at) \
         VALUES ($1, NULL, $2, $3, '', 1, $4, $4, $5, $6, $7) RETURNING id",
    )
    .bind(h.account_id)
    .bind(h.url)
    .bind(events)
    .bind(h.now)
    .bind(h.trigger)
    .bind(h.params.to_string())
    .bind(h.first_scan_at)
    .fetch_one(conn)
    .await
}

/// The account's REST hooks.
pub async fn count(conn: &mut AnyConnection, account_id: i64) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM webhooks WHERE account_id = $1 AND rest_hook IS NOT NULL",
    )
    .bind(account_id)
    .fetch_one(conn)
    .await
}

/// Deletes one of the account's hooks with its deliveries and items.
pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    crate::webhooks::store::delete_where(db, account_id, id, crate::webhooks::store::REST_HOOKS)
        .await
}

/// A hook due for a scan, with its account's plan.
#[derive(Debug, Clone)]
pub struct DueHook {
    pub id: i64,
    pub account_id: i64,
    pub plan: Plan,
    pub trigger: String,
    pub params: serde_json::Value,
    pub url: String,
}

/// Active hooks whose scan is due, oldest due first.
pub async fn due(db: &Db, now: i64, limit: i64) -> sqlx::Result<Vec<DueHook>> {
    let rows = sqlx::query(
        "SELECT w.id AS id, w.account_id AS account_id, a.plan AS plan, w.rest_hook AS rest_hook, \
         w.rest_hook_params AS params, w.url AS url \
         FROM webhooks w JOIN accounts a ON a.id = w.account_id \
         WHERE w.rest_hook IS NOT NULL AND w.is_active = 1 AND w.rest_hook_scan_at <= $1 \
         ORDER BY w.rest_hook_scan_at LIMIT $2",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            let params: Option<String> = r.try_get("params")?;
            let plan: String = r.try_get("plan")?;
            Ok(DueHook {
                id: r.try_get("id")?,
                account_id: r.try_get("account_id")?,
                plan: Plan::parse(&plan).unwrap_or(Plan::Free),
                trigger: r.try_get("rest_hook")?,
                params: params
                    .and_then(|p| serde_json::from_str(&p).ok())
                    .unwrap_or_default(),
                url: r.try_get("url")?,
            })
        })
        .collect()
}

/// Moves a due hook's next scan to `next` unless another process did
/// first: true when this one holds the scan.
pub async fn claim(db: &Db, id: i64, now: i64, next: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE webhooks SET rest_hook_scan_at = $1 WHERE id = $2 AND rest_hook_scan_at <= $3",
    )
    .bind(next)
    .bind(id)
    .bind(now)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Which of `ids` the hook has had already.
pub async fn seen(
    conn: &mut AnyConnection,
    backend: Backend,
    hook_id: i64,
    ids: &[String],
) -> sqlx::Result<Vec<String>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT item_id FROM rest_hook_items WHERE webhook_id = {} AND item_id IN ({})",
        placeholder(backend, 1),
        placeholder_list(backend, 2, ids.len())
    );
    let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(hook_id);
    for id in ids {
        q = q.bind(id.clone());
    }
    q.fetch_all(conn).await
}

/// Records that the hook has had `ids`.
pub async fn mark_seen(
    conn: &mut AnyConnection,
    backend: Backend,
    hook_id: i64,
    ids: &[String],
    now: i64,
) -> sqlx::Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO rest_hook_items (webhook_id, item_id, seen_at) VALUES {} \
         ON CONFLICT DO NOTHING",
        value_rows(backend, ids.len(), 3)
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for id in ids {
        q = q.bind(hook_id).bind(id.clone()).bind(now);
    }
    q.execute(conn).await?;
    Ok(())
}

/// Forgets items seen before `before` that the trigger no longer returns
/// (`window`): they cannot come back, so the table stays the size of the
/// hooks' windows.
pub async fn prune_seen(
    conn: &mut AnyConnection,
    backend: Backend,
    hook_id: i64,
    before: i64,
    window: &[String],
) -> sqlx::Result<u64> {
    let keep = if window.is_empty() {
        String::new()
    } else {
        format!(
            " AND item_id NOT IN ({})",
            placeholder_list(backend, 3, window.len())
        )
    };
    let sql = format!(
        "DELETE FROM rest_hook_items WHERE webhook_id = {} AND seen_at < {}{keep}",
        placeholder(backend, 1),
        placeholder(backend, 2)
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(hook_id)
        .bind(before);
    for id in window {
        q = q.bind(id.clone());
    }
    Ok(q.execute(conn).await?.rows_affected())
}
