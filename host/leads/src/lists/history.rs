//! SQL of the funnel's stage history (`list_item_stages`) and the counts
//! the funnel endpoints read. A history row says an item entered a stage at
//! a time; a row without a stage says it left the account's lists. Rows
//! outlive their items, so past weeks stay as they were.

use sqlx::AnyConnection;

use outreach_core::store::{Backend, Db, value_rows};

/// One history row to write: the list, the item, the stage entered (`None`:
/// removed).
pub type StageRow<'a> = (i64, i64, Option<&'a str>);

/// Writes history rows, all at `now`.
pub async fn record(
    conn: &mut AnyConnection,
    backend: Backend,
    account_id: i64,
    rows: &[StageRow<'_>],
    now: i64,
) -> sqlx::Result<()> {
    for chunk in rows.chunks(200) {
        let sql = format!(
            "INSERT INTO list_item_stages (account_id, list_id, item_id, status, entered_at) VALUES {}",
            value_rows(backend, chunk.len(), 5)
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for (list_id, item_id, status) in chunk {
            q = q
                .bind(account_id)
                .bind(*list_id)
                .bind(*item_id)
                .bind(status.map(str::to_string))
                .bind(now);
        }
        q.execute(&mut *conn).await?;
    }
    Ok(())
}

/// Records that every item of a list being deleted left the lists.
pub async fn record_list_removed(
    conn: &mut AnyConnection,
    account_id: i64,
    list_id: i64,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO list_item_stages (account_id, list_id, item_id, status, entered_at) \
         SELECT account_id, list_id, id, CAST(NULL AS TEXT), CAST($1 AS BIGINT) FROM list_items \
         WHERE list_id = $2 AND account_id = $3",
    )
    .bind(now)
    .bind(list_id)
    .bind(account_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Items per stage now: of one list, or of all the account's lists.
pub async fn stage_counts(
    db: &Db,
    account_id: i64,
    list_id: Option<i64>,
) -> sqlx::Result<Vec<(String, i64)>> {
    match list_id {
        Some(id) => {
            sqlx::query_as(
                "SELECT status, COUNT(*) FROM list_items WHERE account_id = $1 AND list_id = $2 \
                 GROUP BY status",
            )
            .bind(account_id)
            .bind(id)
            .fetch_all(&db.pool)
            .await
        }
        None => {
            sqlx::query_as(
                "SELECT status, COUNT(*) FROM list_items WHERE account_id = $1 GROUP BY status",
            )
            .bind(account_id)
            .fetch_all(&db.pool)
            .await
        }
    }
}

/// An item of a list as the time-in-stage arithmetic needs it.
#[derive(Debug, Clone)]
pub struct ItemTimes {
    pub id: i64,
    pub status: String,
    pub added_at: i64,
    pub status_changed_at: Option<i64>,
}

/// The list's items and the history of each, in order (`(item_id, stage,
/// entered_at)` sorted by item, then by when written).
pub async fn list_times(
    db: &Db,
    list_id: i64,
) -> sqlx::Result<(Vec<ItemTimes>, Vec<(i64, Option<String>, i64)>)> {
    let items: Vec<(i64, String, i64, Option<i64>)> = sqlx::query_as(
        "SELECT id, status, added_at, status_changed_at FROM list_items WHERE list_id = $1 ORDER BY id",
    )
    .bind(list_id)
    .fetch_all(&db.pool)
    .await?;
    let history = sqlx::query_as(
        "SELECT h.item_id, h.status, h.entered_at FROM list_item_stages h \
         JOIN list_items i ON i.id = h.item_id WHERE i.list_id = $1 ORDER BY h.item_id, h.id",
    )
    .bind(list_id)
    .fetch_all(&db.pool)
    .await?;
    let items = items
        .into_iter()
        .map(|(id, status, added_at, status_changed_at)| ItemTimes {
            id,
            status,
            added_at,
            status_changed_at,
        })
        .collect();
    Ok((items, history))
}

/// Items per stage as they stood at `at`: each item's last history row
/// written at or before `at` (rows of one instant in the order written),
/// items whose last row says they left not counted.
pub async fn stage_counts_at(
    db: &Db,
    account_id: i64,
    at: i64,
) -> sqlx::Result<Vec<(String, i64)>> {
    sqlx::query_as(
        "SELECT h.status, COUNT(*) FROM list_item_stages h \
         JOIN (SELECT item_id, MAX(id) AS id FROM list_item_stages \
               WHERE account_id = $1 AND entered_at <= $2 GROUP BY item_id) last ON last.id = h.id \
         WHERE h.status IS NOT NULL GROUP BY h.status",
    )
    .bind(account_id)
    .bind(at)
    .fetch_all(&db.pool)
    .await
}

/// How many times each stage was entered in `[from, to)`.
pub async fn entries_between(
    db: &Db,
    account_id: i64,
    from: i64,
    to: i64,
) -> sqlx::Result<Vec<(String, i64)>> {
    sqlx::query_as(
        "SELECT status, COUNT(*) FROM list_item_stages \
         WHERE account_id = $1 AND entered_at >= $2 AND entered_at < $3 AND status IS NOT NULL \
         GROUP BY status",
    )
    .bind(account_id)
    .bind(from)
    .bind(to)
    .fetch_all(&db.pool)
    .await
}
