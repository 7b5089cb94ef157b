//! SQL of the marketplace: entries with their authors' handles, installs
//! and ratings. Reads of entries take the reader's account, so an entry
//! that is not public reads as absent to everyone but its author.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::model::{MarketplaceQuery, PublishedDefinition};
use crate::templates::model::MarketplaceRating;
use outreach_core::platform::clock::iso;
use outreach_core::store::{Arg, Args, Backend, Db};

/// A stored entry.
#[derive(Debug, Clone)]
pub struct EntryRow {
    pub id: i64,
    pub account_id: i64,
    pub user_id: i64,
    pub name: String,
    pub description: String,
    pub category: String,
    pub tags: Vec<String>,
    pub difficulty: String,
    pub trigger_type: String,
    pub definition: PublishedDefinition,
    pub author_handle: String,
    pub install_count: i64,
    pub rating_sum: i64,
    pub rating_count: i64,
    pub average_rating: f64,
    pub is_public: bool,
    pub created_at: i64,
}

const COLUMNS: &str = "e.id, e.account_id, e.user_id, e.name, e.description, e.category, e.tags, \
    e.difficulty, e.trigger_type, e.definition, a.handle, e.install_count, e.rating_sum, \
    e.rating_count, e.average_rating, e.is_public, e.created_at";

const FROM: &str =
    "FROM marketplace_entries e JOIN marketplace_authors a ON a.account_id = e.account_id";

fn row(r: &AnyRow) -> sqlx::Result<EntryRow> {
    let tags: String = r.try_get("tags")?;
    let definition: String = r.try_get("definition")?;
    let user_id: Option<i64> = r.try_get("user_id")?;
    let account_id: i64 = r.try_get("account_id")?;
    Ok(EntryRow {
        id: r.try_get("id")?,
        account_id,
        user_id: user_id.unwrap_or(account_id),
        name: r.try_get("name")?,
        description: r.try_get("description")?,
        category: r.try_get("category")?,
        // Written by us from checked values.
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        difficulty: r.try_get("difficulty")?,
        trigger_type: r.try_get("trigger_type")?,
        definition: serde_json::from_str(&definition)
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        author_handle: r.try_get("handle")?,
        install_count: r.try_get("install_count")?,
        rating_sum: r.try_get("rating_sum")?,
        rating_count: r.try_get("rating_count")?,
        average_rating: r.try_get("average_rating")?,
        is_public: r.try_get::<i64, _>("is_public")? != 0,
        created_at: r.try_get("created_at")?,
    })
}

/// The account's handle, choosing one on its first publish: the account
/// name as a slug, else the slug with the account id, else
/// `author-<id>` (docs/decisions/marketplace.md, "Handles").
pub async fn handle(conn: &mut AnyConnection, account_id: i64) -> sqlx::Result<String> {
    if let Some(h) = known_handle(conn, account_id).await? {
        return Ok(h);
    }
    let name: String = sqlx::query_scalar("SELECT name FROM accounts WHERE id = $1")
        .bind(account_id)
        .fetch_one(&mut *conn)
        .await?;
    let base = slug(&name);
    for candidate in [
        base.clone(),
        format!("{base}-{account_id}"),
        format!("author-{account_id}"),
    ] {
        // ON CONFLICT without a target absorbs a handle taken meanwhile by
        // another account, without aborting the transaction on PostgreSQL.
        sqlx::query(
            "INSERT INTO marketplace_authors (account_id, handle) VALUES ($1, $2) \
             ON CONFLICT DO NOTHING",
        )
        .bind(account_id)
        .bind(&candidate)
        .execute(&mut *conn)
        .await?;
        if let Some(h) = known_handle(conn, account_id).await? {
            return Ok(h);
        }
    }
    Err(sqlx::Error::RowNotFound)
}

async fn known_handle(conn: &mut AnyConnection, account_id: i64) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT handle FROM marketplace_authors WHERE account_id = $1")
        .bind(account_id)
        .fetch_optional(conn)
        .await
}

/// Lowercase letters, digits and single hyphens, at most 30 characters;
/// `author` when nothing is left.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 30 {
            break;
        }
    }
    let out = out.trim_matches('-').to_owned();
    if out.is_empty() {
        "author".to_owned()
    } else {
        out
    }
}

/// What publishing writes.
pub struct NewEntry<'a> {
    pub account_id: i64,
    pub user_id: Option<i64>,
    pub name: &'a str,
    pub description: &'a str,
    pub category: &'a str,
    pub tags: &'a [String],
    pub difficulty: &'a str,
    pub trigger_type: &'a str,
    pub definition: &'a PublishedDefinition,
    pub is_public: bool,
}

/// Inserts an entry; `None` when the author has one by that name (any
/// case).
pub async fn insert(
    conn: &mut AnyConnection,
    e: &NewEntry<'_>,
    now: i64,
) -> sqlx::Result<Option<i64>> {
    let search_text = format!("{}\n{}", e.name, e.description).to_lowercase();
    sqlx::query_scalar(
        "INSERT INTO marketplace_entries (account_id, user_id, name, name_key, description, \
         search_text, category, tags, difficulty, trigger_type, definition, is_public, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
         ON CONFLICT (account_id, name_key) DO NOTHING RETURNING id",
    )
    .bind(e.account_id)
    .bind(e.user_id)
    .bind(e.name)
    .bind(e.name.to_lowercase())
    .bind(e.description)
    .bind(search_text)
    .bind(e.category)
    .bind(serde_json::to_string(e.tags).unwrap_or_default())
    .bind(e.difficulty)
    .bind(e.trigger_type)
    .bind(serde_json::to_string(e.definition).unwrap_or_default())
    .bind(i64::from(e.is_public))
    .bind(now)
    .fetch_optional(conn)
    .await
}

/// One entry as `reader` may see it.
pub async fn get(conn: &mut AnyConnection, reader: i64, id: i64) -> sqlx::Result<Option<EntryRow>> {
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE e.id = $1 AND (e.is_public = 1 OR e.account_id = $2)"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(reader)
        .fetch_optional(conn)
        .await?
        .map(|r| row(&r))
        .transpose()
}

/// A quoted FTS5 phrase (a substring, with the trigram tokenizer).
fn phrase(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// `q`, lowercased, when the trigram index can answer it (three
/// characters or more, on SQLite).
fn indexed_q(backend: Backend, q: &MarketplaceQuery) -> Option<String> {
    let text = q.q.as_deref()?.to_lowercase();
    (backend == Backend::Sqlite && text.chars().count() >= 3).then_some(text)
}

/// The `WHERE` of a search's page, its arguments numbered from `$1`. On
/// SQLite the columns carry a unary `+`, which keeps the planner on the
/// sort's index (`INDEXED BY`) instead of an index of these columns.
fn search_filter(backend: Backend, reader: i64, q: &MarketplaceQuery, args: &mut Args) -> String {
    let col = |c: &str| match backend {
        Backend::Sqlite => format!("+e.{c}"),
        Backend::Postgres => format!("e.{c}"),
    };
    let mut clauses = vec![format!(
        "({} = 1 OR {} = {})",
        col("is_public"),
        col("account_id"),
        args.push(Arg::Int(reader))
    )];
    if let Some(c) = &q.category {
        clauses.push(format!(
            "{} = {}",
            col("category"),
            args.push(Arg::Text(c.clone()))
        ));
    }
    if let Some(d) = &q.difficulty {
        clauses.push(format!(
            "{} = {}",
            col("difficulty"),
            args.push(Arg::Text(d.clone()))
        ));
    }
    if indexed_q(backend, q).is_some() {
        // `m`: the trigram index's answer, materialised once by `search`.
        clauses.push("+e.id IN m".to_owned());
    } else if let Some(text) =
        q.q.as_deref()
            .map(str::to_lowercase)
            .filter(|t| !t.is_empty())
    {
        let f = match backend {
            Backend::Sqlite => "instr",
            Backend::Postgres => "strpos",
        };
        clauses.push(format!(
            "{f}(e.search_text, {}) > 0",
            args.push(Arg::Text(text))
        ));
    }
    clauses.join(" AND ")
}

/// The trigram index's query for an indexed `q`: the text, the category
/// and difficulty facets, and no private entry but the reader's.
fn match_expr(text: &str, q: &MarketplaceQuery, reader: i64) -> String {
    let mut expr = format!("search_text : {}", phrase(text));
    if let Some(c) = &q.category {
        expr = format!("({expr} AND facets : {})", phrase(&format!("§c{c}§")));
    }
    if let Some(d) = &q.difficulty {
        expr = format!("({expr} AND facets : {})", phrase(&format!("§d{d}§")));
    }
    format!(
        "{expr} NOT (facets : \"§pv§\" NOT facets : {})",
        phrase(&format!("§o{reader}§"))
    )
}

/// How many entries a search matches. On SQLite with an indexed `q` the
/// trigram index counts alone (its facets column carries category,
/// difficulty and privacy); without `q` two counts over
/// `marketplace_visible` (public, and the reader's private ones) read no
/// rows.
async fn count(db: &Db, reader: i64, q: &MarketplaceQuery) -> sqlx::Result<i64> {
    if let Some(text) = indexed_q(db.backend, q) {
        let expr = match_expr(&text, q, reader);
        return sqlx::query_scalar(
            "SELECT COUNT(*) FROM marketplace_search WHERE marketplace_search MATCH $1",
        )
        .bind(expr)
        .fetch_one(&db.pool)
        .await;
    }
    let mut args = Args::default();
    let mut filters = String::new();
    if let Some(c) = &q.category {
        filters.push_str(&format!(
            " AND category = {}",
            args.push(Arg::Text(c.clone()))
        ));
    }
    if let Some(d) = &q.difficulty {
        filters.push_str(&format!(
            " AND difficulty = {}",
            args.push(Arg::Text(d.clone()))
        ));
    }
    if let Some(text) =
        q.q.as_deref()
            .map(str::to_lowercase)
            .filter(|t| !t.is_empty())
    {
        let f = match db.backend {
            Backend::Sqlite => "instr",
            Backend::Postgres => "strpos",
        };
        filters.push_str(&format!(
            " AND {f}(search_text, {}) > 0",
            args.push(Arg::Text(text))
        ));
    }
    let reader_arg = args.push(Arg::Int(reader));
    let sql = format!(
        "SELECT (SELECT COUNT(*) FROM marketplace_entries WHERE is_public = 1{filters}) + \
         (SELECT COUNT(*) FROM marketplace_entries WHERE is_public = 0{filters} \
         AND account_id = {reader_arg})"
    );
    args.bind_scalar(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)))
        .fetch_one(&db.pool)
        .await
}

/// `ORDER BY` of each sort; each ends on the id so pages never overlap.
pub fn order_by(sort: &str) -> &'static str {
    match sort {
        "newest" => "e.created_at DESC, e.id DESC",
        "top_rated" => "e.average_rating DESC, e.rating_count DESC, e.id DESC",
        _ => "e.install_count DESC, e.id DESC",
    }
}

/// The index each sort walks (the migration's names).
fn sort_index(sort: &str) -> &'static str {
    match sort {
        "newest" => "marketplace_newest",
        "top_rated" => "marketplace_top_rated",
        _ => "marketplace_popular",
    }
}

/// One page of a checked search, and the total it pages through. A page
/// walks the sort's index and tests each entry's facets there, and its
/// `q` against the trigram index's answer, until it has `limit` entries:
/// few steps for a frequent `q`, a bounded index scan for a rare one.
/// Without an indexed `q` (or past the last page) the count is its own
/// query.
pub async fn search(
    db: &Db,
    reader: i64,
    q: &MarketplaceQuery,
    sort: &str,
    limit: i64,
    offset: i64,
) -> sqlx::Result<(Vec<EntryRow>, i64)> {
    let mut args = Args::default();
    // With an indexed `q`, one statement: the index's answer is taken once
    // (`m`), counted, and tested by the page's walk.
    let with = indexed_q(db.backend, q).map(|text| {
        format!(
            "WITH m(id) AS MATERIALIZED (SELECT rowid FROM marketplace_search \
             WHERE marketplace_search MATCH {}) ",
            args.push(Arg::Text(match_expr(&text, q, reader)))
        )
    });
    let filter = search_filter(db.backend, reader, q, &mut args);
    let indexed = match db.backend {
        Backend::Sqlite => format!(" INDEXED BY {}", sort_index(sort)),
        Backend::Postgres => String::new(),
    };
    let (with_sql, total_sql) = match &with {
        Some(w) => (w.as_str(), "(SELECT COUNT(*) FROM m) AS total, "),
        None => ("", ""),
    };
    let sql = format!(
        "{with_sql}SELECT {total_sql}{COLUMNS} FROM marketplace_entries e{indexed} \
         JOIN marketplace_authors a ON a.account_id = e.account_id \
         WHERE {filter} ORDER BY {} LIMIT {limit} OFFSET {offset}",
        order_by(sort)
    );
    let rows = args
        .bind(sqlx::query(sqlx::AssertSqlSafe(sql)))
        .fetch_all(&db.pool)
        .await?;
    let total = match rows.first() {
        Some(r) if with.is_some() => r.try_get("total")?,
        _ => count(db, reader, q).await?,
    };
    let entries = rows.iter().map(row).collect::<sqlx::Result<_>>()?;
    Ok((entries, total))
}

pub async fn record_install(
    conn: &mut AnyConnection,
    entry_id: i64,
    account_id: i64,
    workflow_id: i64,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO marketplace_installs (entry_id, account_id, workflow_id, installed_at) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(entry_id)
    .bind(account_id)
    .bind(workflow_id)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    sqlx::query("UPDATE marketplace_entries SET install_count = install_count + 1 WHERE id = $1")
        .bind(entry_id)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn installed(
    conn: &mut AnyConnection,
    entry_id: i64,
    account_id: i64,
) -> sqlx::Result<bool> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM marketplace_installs WHERE entry_id = $1 AND account_id = $2",
    )
    .bind(entry_id)
    .bind(account_id)
    .fetch_one(conn)
    .await?;
    Ok(n > 0)
}

/// Writes the rater's rating over any earlier one and moves the entry's
/// sum and count by the difference. The caller has locked the rater's
/// account, so one rater's two ratings never race; different raters'
/// updates of the entry row serialise on its row lock.
pub async fn rate(
    conn: &mut AnyConnection,
    entry_id: i64,
    account_id: i64,
    rating: i64,
    review: &str,
    now: i64,
) -> sqlx::Result<()> {
    let old: Option<i64> = sqlx::query_scalar(
        "SELECT rating FROM marketplace_ratings WHERE entry_id = $1 AND account_id = $2",
    )
    .bind(entry_id)
    .bind(account_id)
    .fetch_optional(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO marketplace_ratings (entry_id, account_id, rating, review, created_at, \
         updated_at) VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (entry_id, account_id) \
         DO UPDATE SET rating = excluded.rating, review = excluded.review, \
         updated_at = excluded.updated_at",
    )
    .bind(entry_id)
    .bind(account_id)
    .bind(rating)
    .bind(review)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    let delta = rating - old.unwrap_or(0);
    let added = i64::from(old.is_none());
    // SET expressions read the row's values before the update on both
    // engines, so the average uses the new sum and count.
    sqlx::query(
        "UPDATE marketplace_entries SET rating_sum = rating_sum + $1, \
         rating_count = rating_count + $2, \
         average_rating = (rating_sum + $1) * 1.0 / (rating_count + $2) WHERE id = $3",
    )
    .bind(delta)
    .bind(added)
    .bind(entry_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Deletes the author's entry; false when it is not theirs or gone.
pub async fn delete(db: &Db, account_id: i64, id: i64) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM marketplace_entries WHERE id = $1 AND account_id = $2")
        .bind(id)
        .bind(account_id)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// The account's marketplace ratings, newest change first.
pub async fn ratings_of(db: &Db, account_id: i64) -> sqlx::Result<Vec<MarketplaceRating>> {
    let rows = sqlx::query(
        "SELECT r.entry_id, e.name, r.rating, r.review, r.created_at, r.updated_at \
         FROM marketplace_ratings r JOIN marketplace_entries e ON e.id = r.entry_id \
         WHERE r.account_id = $1 ORDER BY r.updated_at DESC, r.entry_id",
    )
    .bind(account_id)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(MarketplaceRating {
                marketplace_id: r.try_get("entry_id")?,
                name: r.try_get("name")?,
                rating: r.try_get("rating")?,
                review: r.try_get("review")?,
                created_at: iso(r.try_get("created_at")?),
                updated_at: iso(r.try_get("updated_at")?),
            })
        })
        .collect()
}
