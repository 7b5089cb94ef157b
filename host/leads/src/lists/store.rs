//! SQL of lead lists and their items. Every statement names the account
//! (directly, or through a list the caller has already resolved for it).

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::model::{LeadList, ListItem};
use outreach_core::platform::clock::iso;
use outreach_core::store::{Backend, Db, id_list, placeholder, placeholder_list, value_rows};

/// Rows a multi-row statement writes at once: at most 6 parameters a row,
/// so both backends stay far below their parameter limits.
const CHUNK: usize = 200;

const LIST_COLUMNS: &str = "l.id, l.name, l.description, l.conversion_goal, l.created_at, \
     l.updated_at, (SELECT COUNT(*) FROM list_items i WHERE i.list_id = l.id) AS leads_count";

fn list_from_row(row: &AnyRow) -> sqlx::Result<LeadList> {
    Ok(LeadList {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        leads_count: row.try_get("leads_count")?,
        conversion_goal: row.try_get("conversion_goal")?,
        created_at: iso(row.try_get("created_at")?),
        updated_at: iso(row.try_get("updated_at")?),
    })
}

/// The account's lists, oldest first.
pub async fn lists(db: &Db, account_id: i64) -> sqlx::Result<Vec<LeadList>> {
    let sql =
        format!("SELECT {LIST_COLUMNS} FROM lead_lists l WHERE l.account_id = $1 ORDER BY l.id");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?;
    rows.iter().map(list_from_row).collect()
}

/// One list of the account.
pub async fn list(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
) -> sqlx::Result<Option<LeadList>> {
    let sql =
        format!("SELECT {LIST_COLUMNS} FROM lead_lists l WHERE l.id = $1 AND l.account_id = $2");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(account_id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(list_from_row)
        .transpose()
}

/// The id of the account's first list named `name`, if any.
pub async fn list_named(
    conn: &mut AnyConnection,
    account_id: i64,
    name: &str,
) -> sqlx::Result<Option<i64>> {
    sqlx::query_scalar(
        "SELECT id FROM lead_lists WHERE account_id = $1 AND name = $2 ORDER BY id LIMIT 1",
    )
    .bind(account_id)
    .bind(name)
    .fetch_optional(conn)
    .await
}

/// Whether statements binding `conversion_goal` are cached. They are not:
/// sqlx's `Any` driver sends a null `f64` to PostgreSQL as a `float4`
/// parameter, and a statement first prepared with that null then fails
/// ("incorrect binary data format") when a goal is bound later on the same
/// connection. Preparing each time costs little on these rare writes.
const NULLABLE_FLOAT_CACHE: bool = false;

/// Adds a list; the caller checks the cap in the same transaction.
pub async fn insert_list(
    conn: &mut AnyConnection,
    account_id: i64,
    name: &str,
    description: &str,
    conversion_goal: Option<f64>,
    now: i64,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO lead_lists (account_id, name, description, conversion_goal, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $5) RETURNING id",
    )
    .persistent(NULLABLE_FLOAT_CACHE)
    .bind(account_id)
    .bind(name)
    .bind(description)
    .bind(conversion_goal)
    .bind(now)
    .fetch_one(conn)
    .await
}

/// Writes a list's fields; false when the account has no such list.
pub async fn update_list(
    db: &Db,
    account_id: i64,
    id: i64,
    (name, description, conversion_goal): (&str, &str, Option<f64>),
    now: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE lead_lists SET name = $1, description = $2, conversion_goal = $3, updated_at = $4 \
         WHERE id = $5 AND account_id = $6",
    )
    .persistent(NULLABLE_FLOAT_CACHE)
    .bind(name)
    .bind(description)
    .bind(conversion_goal)
    .bind(now)
    .bind(id)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Stamps the list's `updated_at` and returns its name; `None` when the
/// account has no such list. Being a write, it also holds the list's row
/// for the rest of the transaction (a row lock on PostgreSQL, the write
/// lock on SQLite), so counting items against the cap and inserting them
/// are one step for concurrent requests.
pub async fn touch_list(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
    now: i64,
) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar(
        "UPDATE lead_lists SET updated_at = $1 WHERE id = $2 AND account_id = $3 RETURNING name",
    )
    .bind(now)
    .bind(id)
    .bind(account_id)
    .fetch_optional(conn)
    .await
}

/// Deletes a list and its items.
pub async fn delete_list(conn: &mut AnyConnection, account_id: i64, id: i64) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM list_items WHERE list_id = $1 AND account_id = $2")
        .bind(id)
        .bind(account_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM lead_lists WHERE id = $1 AND account_id = $2")
        .bind(id)
        .bind(account_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// How many items the list holds.
pub async fn count_items(conn: &mut AnyConnection, list_id: i64) -> sqlx::Result<i64> {
    sqlx::query_scalar("SELECT COUNT(*) FROM list_items WHERE list_id = $1")
        .bind(list_id)
        .fetch_one(conn)
        .await
}

const ITEM_COLUMNS: &str = "id, domain, notes, status, added_at, status_changed_at";

fn item_from_row(row: &AnyRow) -> sqlx::Result<ListItem> {
    Ok(ListItem {
        id: row.try_get("id")?,
        domain: row.try_get("domain")?,
        notes: row.try_get("notes")?,
        status: row.try_get("status")?,
        added_at: iso(row.try_get("added_at")?),
        status_changed_at: row.try_get::<Option<i64>, _>("status_changed_at")?.map(iso),
    })
}

/// A page of the list's items, oldest first.
pub async fn items(db: &Db, list_id: i64, limit: i64, offset: i64) -> sqlx::Result<Vec<ListItem>> {
    let sql = format!(
        "SELECT {ITEM_COLUMNS} FROM list_items WHERE list_id = $1 ORDER BY id LIMIT $2 OFFSET $3"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(list_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(&db.pool)
        .await?;
    rows.iter().map(item_from_row).collect()
}

/// Items of the list picked by domain or by id, in no particular order.
pub enum Pick<'a> {
    Domains(&'a [String]),
    Ids(&'a [i64]),
}

/// The picked items of `list_id`.
pub async fn picked_items(
    conn: &mut AnyConnection,
    backend: Backend,
    list_id: i64,
    pick: Pick<'_>,
) -> sqlx::Result<Vec<ListItem>> {
    let mut found = Vec::new();
    match pick {
        Pick::Domains(domains) => {
            for chunk in domains.chunks(CHUNK) {
                let sql = format!(
                    "SELECT {ITEM_COLUMNS} FROM list_items WHERE list_id = {} AND domain IN ({})",
                    placeholder(backend, 1),
                    placeholder_list(backend, 2, chunk.len())
                );
                let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .persistent(false)
                    .bind(list_id);
                for d in chunk {
                    q = q.bind(d);
                }
                for row in q.fetch_all(&mut *conn).await? {
                    found.push(item_from_row(&row)?);
                }
            }
        }
        Pick::Ids(ids) => {
            for chunk in ids.chunks(CHUNK) {
                let sql = format!(
                    "SELECT {ITEM_COLUMNS} FROM list_items WHERE list_id = $1 AND id IN ({})",
                    id_list(chunk)
                );
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .persistent(false)
                    .bind(list_id)
                    .fetch_all(&mut *conn)
                    .await?;
                for row in rows {
                    found.push(item_from_row(&row)?);
                }
            }
        }
    }
    Ok(found)
}

/// Inserts `(domain, notes)` items as discovered; domains the list already
/// holds are left alone. Returns the new items' ids and domains.
pub async fn insert_items(
    conn: &mut AnyConnection,
    backend: Backend,
    account_id: i64,
    list_id: i64,
    items: &[(String, String)],
    now: i64,
) -> sqlx::Result<Vec<(i64, String)>> {
    let mut added = Vec::with_capacity(items.len());
    for chunk in items.chunks(CHUNK) {
        let sql = format!(
            "INSERT INTO list_items (account_id, list_id, domain, notes, status, added_at) \
             VALUES {} ON CONFLICT (list_id, domain) DO NOTHING RETURNING id, domain",
            value_rows(backend, chunk.len(), 6)
        );
        let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql)).persistent(false);
        for (domain, notes) in chunk {
            q = q
                .bind(account_id)
                .bind(list_id)
                .bind(domain)
                .bind(notes)
                .bind(super::DISCOVERED)
                .bind(now);
        }
        let rows: Vec<(i64, String)> = q.fetch_all(&mut *conn).await?;
        added.extend(rows);
    }
    Ok(added)
}

/// Sets the status of the items `ids` and stamps `status_changed_at`.
pub async fn set_status(
    conn: &mut AnyConnection,
    ids: &[i64],
    status: &str,
    now: i64,
) -> sqlx::Result<()> {
    for chunk in ids.chunks(CHUNK) {
        let sql = format!(
            "UPDATE list_items SET status = $1, status_changed_at = $2 WHERE id IN ({})",
            id_list(chunk)
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .bind(status)
            .bind(now)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Sets an item's notes.
pub async fn set_notes(conn: &mut AnyConnection, id: i64, notes: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE list_items SET notes = $1 WHERE id = $2")
        .bind(notes)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes the items `ids`.
pub async fn delete_items(conn: &mut AnyConnection, ids: &[i64]) -> sqlx::Result<()> {
    for chunk in ids.chunks(CHUNK) {
        let sql = format!("DELETE FROM list_items WHERE id IN ({})", id_list(chunk));
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Moves the items `ids` to `list_id`, keeping their status and history.
pub async fn move_items(conn: &mut AnyConnection, ids: &[i64], list_id: i64) -> sqlx::Result<()> {
    for chunk in ids.chunks(CHUNK) {
        let sql = format!(
            "UPDATE list_items SET list_id = $1 WHERE id IN ({})",
            id_list(chunk)
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .bind(list_id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}
