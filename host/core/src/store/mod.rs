//! The database handle shared by every area's store module.
//!
//! Both backends go through sqlx's `Any` driver so each area writes one SQL text
//! per operation with `$N` placeholders. Where the dialects differ (job claiming,
//! upserts), the area matches on [`Backend`] and keeps both variants side by side.
//! Timestamps are stored as BIGINT milliseconds since the Unix epoch and JSON as
//! TEXT, because those two representations behave identically on both engines.

use std::str::FromStr;
use std::time::Duration;

use anyhow::Context;
use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{AnyPool, Connection, Executor};

mod args;
pub mod migrate;

pub use args::{Arg, Args};

/// Which SQL engine the pool talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The backend of a connection, for statements built on a connection
    /// (a caller's transaction) rather than on a [`Db`].
    pub fn of(conn: &sqlx::AnyConnection) -> Backend {
        if conn.backend_name().eq_ignore_ascii_case("sqlite") {
            Backend::Sqlite
        } else {
            Backend::Postgres
        }
    }
}

/// How long a SQLite connection waits for another one's write lock before
/// failing with SQLITE_BUSY. The usage writer shortens it for its own
/// transaction and restores this value afterwards.
pub const SQLITE_BUSY_TIMEOUT_MS: u64 = 10_000;

/// A PostgreSQL connection idle at least this long is pinged before it is
/// lent again (a server restart or an idle-session timeout closes it).
const PING_AFTER_IDLE: Duration = Duration::from_secs(10);

/// A cloneable database handle: the pool plus the backend it speaks.
#[derive(Clone, Debug)]
pub struct Db {
    pub pool: AnyPool,
    pub backend: Backend,
}

impl Db {
    /// Connects to `url` (`sqlite://...` or `postgres://...`) and applies the
    /// per-connection settings each backend needs.
    pub async fn connect(url: &str) -> anyhow::Result<Db> {
        install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            anyhow::bail!("unsupported database_url scheme (use sqlite:// or postgres://)");
        };
        // sqlx pings a connection before lending it and again when it comes
        // back; the second ping already proves a connection that was used
        // moments ago, so only one idle for a while is pinged before use
        // (the pattern sqlx documents for `before_acquire`). On PostgreSQL
        // each ping was a round trip as long as the query it guarded, and
        // the limiter's block reservations paid it on every request path.
        // A SQLite connection is an in-process handle: nothing to detect.
        let options = AnyPoolOptions::new()
            .acquire_timeout(Duration::from_secs(10))
            .test_before_acquire(false);
        let pool = match backend {
            Backend::Sqlite => {
                // WAL lets readers proceed while one writer commits; the busy timeout
                // makes concurrent writers wait instead of failing with SQLITE_BUSY.
                let url = if url.contains('?') {
                    url.to_string()
                } else {
                    format!("{url}?mode=rwc")
                };
                options
                    .max_connections(8)
                    .after_connect(|conn, _meta| {
                        Box::pin(async move {
                            conn.execute("PRAGMA journal_mode=WAL").await?;
                            conn.execute(sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                                "PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}"
                            ))))
                            .await?;
                            conn.execute("PRAGMA foreign_keys=ON").await?;
                            conn.execute("PRAGMA synchronous=NORMAL").await?;
                            Ok(())
                        })
                    })
                    .connect(&url)
                    .await
            }
            Backend::Postgres => {
                options
                    .max_connections(16)
                    .before_acquire(|conn, meta| {
                        Box::pin(async move {
                            if meta.idle_for >= PING_AFTER_IDLE {
                                conn.ping().await?;
                            }
                            Ok(true)
                        })
                    })
                    .connect(url)
                    .await
            }
        }
        .with_context(|| format!("connecting to {}", redact_url(url)))?;
        Ok(Db { pool, backend })
    }
}

/// Hides the password of a database URL before it reaches a log line.
pub fn redact_url(url: &str) -> String {
    match url::Url::from_str(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// `rows` tuples of `cols` placeholders for a multi-row statement.
///
/// SQLite gets anonymous `?` placeholders: for named ones (`$N`) sqlx asks
/// SQLite for each parameter's name, a linear walk per parameter, which made
/// a 2,600-parameter batch insert quadratic (a quarter of the server's CPU
/// under load). PostgreSQL needs `$N`.
pub fn value_rows(backend: Backend, rows: usize, cols: usize) -> String {
    cells(backend, rows, cols, |p, _| p)
}

/// Like [`value_rows`], with each cell cast to its column's SQL type
/// (`types`, one per column): PostgreSQL cannot infer the parameters' types
/// where no table column gives them, as in a `WITH v(...) AS (VALUES ...)`.
pub fn typed_value_rows(backend: Backend, rows: usize, types: &[&str]) -> String {
    cells(backend, rows, types.len(), |p, c| {
        format!("CAST({p} AS {})", types[c])
    })
}

/// The `n`th (1-based) parameter's placeholder: `?` on SQLite (see
/// [`value_rows`]), `$n` on PostgreSQL. Anonymous placeholders bind in
/// order, so a statement must number its parameters in the order it uses them.
pub fn placeholder(backend: Backend, n: usize) -> String {
    match backend {
        Backend::Sqlite => "?".to_string(),
        Backend::Postgres => format!("${n}"),
    }
}

/// `count` placeholders numbered from `first`, comma-separated, for an
/// `IN (...)` list of text values (see [`placeholder`] on the order).
pub fn placeholder_list(backend: Backend, first: usize, count: usize) -> String {
    (first..first + count)
        .map(|n| placeholder(backend, n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Ids as an SQL list (`1, 2, 3`): integers need no parameters, and one
/// text per list length would fill the statement caches.
pub fn id_list(ids: &[i64]) -> String {
    ids.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Locks the account row, so that counting an account's items against a
/// plan cap and inserting one are a single step for concurrent requests on
/// any server. PostgreSQL locks the row; on SQLite a no-op write takes the
/// database's write lock at once: a transaction that read first and wrote
/// later would fail (`SQLITE_BUSY_SNAPSHOT`) whenever another connection
/// committed in between, where one that starts with its write waits.
pub async fn lock_account(
    conn: &mut sqlx::AnyConnection,
    backend: Backend,
    account_id: i64,
) -> sqlx::Result<()> {
    let sql = match backend {
        Backend::Postgres => "SELECT id FROM accounts WHERE id = $1 FOR UPDATE",
        Backend::Sqlite => "UPDATE accounts SET plan = plan WHERE id = $1",
    };
    sqlx::query(sql).bind(account_id).execute(conn).await?;
    Ok(())
}

/// `rows` parenthesised rows of `cols` placeholders, each written by `cell`
/// from the placeholder and the column index.
fn cells(
    backend: Backend,
    rows: usize,
    cols: usize,
    cell: impl Fn(String, usize) -> String,
) -> String {
    (0..rows)
        .map(|r| {
            let row: Vec<String> = (0..cols)
                .map(|c| cell(placeholder(backend, r * cols + c + 1), c))
                .collect();
            format!("({})", row.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many rows of `table` the account owns, for a plan cap counted inside
/// the transaction that inserts (after [`lock_account`]). `table` is one of
/// ours, never input.
pub async fn count_owned(
    conn: &mut sqlx::AnyConnection,
    table: &'static str,
    account_id: i64,
) -> sqlx::Result<u64> {
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE account_id = $1");
    let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(account_id)
        .fetch_one(conn)
        .await?;
    Ok(n as u64)
}

/// True when a sqlx error is a unique-constraint violation on either backend,
/// which areas map to 409.
pub fn is_unique_violation(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Database(db) => {
            db.is_unique_violation() || db.message().contains("UNIQUE constraint failed")
        }
        _ => false,
    }
}
