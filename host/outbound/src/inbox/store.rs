//! SQL of the thread API (list, counts, detail, update, bulk, reclassify,
//! suggest-reply's context). Every statement is scoped to the account; the
//! collection and classification side is in `reply_store.rs`.
//!
//! Statements with optional parts (filters, the fields an update names) are
//! assembled from clauses numbered `$1..$n` in the order their values are
//! bound; thread id lists are written as integers (`id_list`).

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use outreach_core::store::{Arg, Args, Db, id_list};

pub const THREAD_COLUMNS: &str = "id, thread_id, domain, contact_email, subject, \
     last_received_at, last_classification, last_classification_confidence, message_count, \
     status, assigned_to_user_id, notes, snoozed_until, created_at, updated_at";

#[derive(Debug, Clone)]
pub struct ThreadRow {
    pub id: i64,
    pub thread_id: String,
    pub domain: String,
    pub contact_email: String,
    pub subject: String,
    pub last_received_at: i64,
    pub last_classification: Option<String>,
    pub last_classification_confidence: Option<f64>,
    pub message_count: i64,
    pub status: String,
    pub assigned_to_user_id: Option<i64>,
    pub notes: Option<String>,
    pub snoozed_until: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

fn thread(r: &AnyRow) -> sqlx::Result<ThreadRow> {
    Ok(ThreadRow {
        id: r.try_get("id")?,
        thread_id: r.try_get("thread_id")?,
        domain: r.try_get("domain")?,
        contact_email: r.try_get("contact_email")?,
        subject: r.try_get("subject")?,
        last_received_at: r.try_get("last_received_at")?,
        last_classification: r.try_get("last_classification")?,
        last_classification_confidence: r.try_get("last_classification_confidence")?,
        message_count: r.try_get("message_count")?,
        status: r.try_get("status")?,
        assigned_to_user_id: r.try_get("assigned_to_user_id")?,
        notes: r.try_get("notes")?,
        snoozed_until: r.try_get("snoozed_until")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

const REPLY_COLUMNS: &str = "id, from_email, from_name, subject, body_text, received_at, \
     message_id, in_reply_to, domain, sequence_step_id, kind, spoofing_suspected, \
     classification_label, classification_confidence, manually_overridden_to, \
     classification_model, classification_provider, classified_at";

#[derive(Debug, Clone)]
pub struct ReplyRow {
    pub id: i64,
    pub from_email: String,
    pub from_name: String,
    pub subject: String,
    pub body_text: String,
    pub received_at: i64,
    pub message_id: String,
    pub in_reply_to: String,
    pub domain: String,
    pub sequence_step_id: Option<i64>,
    pub kind: String,
    pub spoofing_suspected: bool,
    pub label: Option<String>,
    pub confidence: Option<f64>,
    pub overridden_to: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub classified_at: Option<i64>,
}

fn reply(r: &AnyRow) -> sqlx::Result<ReplyRow> {
    let spoofing: i64 = r.try_get("spoofing_suspected")?;
    Ok(ReplyRow {
        id: r.try_get("id")?,
        from_email: r.try_get("from_email")?,
        from_name: r.try_get("from_name")?,
        subject: r.try_get("subject")?,
        body_text: r.try_get("body_text")?,
        received_at: r.try_get("received_at")?,
        message_id: r.try_get("message_id")?,
        in_reply_to: r.try_get("in_reply_to")?,
        domain: r.try_get("domain")?,
        sequence_step_id: r.try_get("sequence_step_id")?,
        kind: r.try_get("kind")?,
        spoofing_suspected: spoofing != 0,
        label: r.try_get("classification_label")?,
        confidence: r.try_get("classification_confidence")?,
        overridden_to: r.try_get("manually_overridden_to")?,
        model: r.try_get("classification_model")?,
        provider: r.try_get("classification_provider")?,
        classified_at: r.try_get("classified_at")?,
    })
}

/// The list and counts filters, already checked.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// open, handled or snoozed.
    pub status: Option<String>,
    pub classification: Option<String>,
    /// `Some(None)`: unassigned threads.
    pub assigned_to: Option<Option<i64>>,
    /// Lowercased.
    pub domain: Option<String>,
}

/// `status = 'snoozed'` whose window has not elapsed at `now` (`$n`).
fn still_snoozed(now: &str) -> String {
    format!("(status = 'snoozed' AND snoozed_until IS NOT NULL AND snoozed_until > {now})")
}

/// The status a thread shows at `now`: a snooze whose window elapsed reads
/// as open (spec/1 "Inbox thread status").
fn effective_status(now: &str) -> String {
    format!(
        "CASE WHEN status = 'snoozed' AND NOT {} THEN 'open' ELSE status END",
        still_snoozed(now)
    )
}

/// The WHERE clause of `f` for the account, leaving out the status or the
/// classification filter when asked (the counts facets ignore their own).
fn filter_sql(
    args: &mut Args,
    account_id: i64,
    f: &Filter,
    now: i64,
    with_status: bool,
    with_classification: bool,
) -> String {
    let mut clauses = vec![format!("account_id = {}", args.push(Arg::Int(account_id)))];
    if let Some(status) = f.status.as_deref().filter(|_| with_status) {
        let now = args.push(Arg::Int(now));
        clauses.push(match status {
            "snoozed" => still_snoozed(&now),
            "open" => format!(
                "(status = 'open' OR (status = 'snoozed' AND NOT {}))",
                still_snoozed(&now)
            ),
            other => format!("status = {}", args.push(Arg::Text(other.to_owned()))),
        });
    }
    if let Some(c) = f.classification.as_deref().filter(|_| with_classification) {
        clauses.push(format!(
            "last_classification = {}",
            args.push(Arg::Text(c.to_owned()))
        ));
    }
    match f.assigned_to {
        Some(None) => clauses.push("assigned_to_user_id IS NULL".to_owned()),
        Some(Some(user)) => clauses.push(format!(
            "assigned_to_user_id = {}",
            args.push(Arg::Int(user))
        )),
        None => {}
    }
    if let Some(d) = &f.domain {
        clauses.push(format!("domain = {}", args.push(Arg::Text(d.clone()))));
    }
    clauses.join(" AND ")
}

/// One page of threads, latest reply first, and the total of the filter.
pub async fn list(
    db: &Db,
    account_id: i64,
    f: &Filter,
    now: i64,
    limit: i64,
    offset: i64,
) -> sqlx::Result<(Vec<ThreadRow>, i64)> {
    let mut args = Args::default();
    let filter = filter_sql(&mut args, account_id, f, now, true, true);
    let count_sql = format!("SELECT COUNT(*) FROM inbox_threads WHERE {filter}");
    let total: i64 = args
        .bind(sqlx::query(sqlx::AssertSqlSafe(count_sql)))
        .fetch_one(&db.pool)
        .await?
        .try_get(0)?;
    let limit_p = args.push(Arg::Int(limit));
    let offset_p = args.push(Arg::Int(offset));
    let sql = format!(
        "SELECT {THREAD_COLUMNS} FROM inbox_threads WHERE {filter} \
         ORDER BY last_received_at DESC, id DESC LIMIT {limit_p} OFFSET {offset_p}"
    );
    let rows = args
        .bind(sqlx::query(sqlx::AssertSqlSafe(sql)))
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(thread)
        .collect::<sqlx::Result<_>>()?;
    Ok((rows, total))
}

/// Thread counts of the filter: per effective status (ignoring the status
/// filter) and per last classification (ignoring the classification
/// filter; unclassified threads are in no group).
pub async fn counts(
    db: &Db,
    account_id: i64,
    f: &Filter,
    now: i64,
) -> sqlx::Result<(Vec<(String, i64)>, Vec<(String, i64)>)> {
    let mut args = Args::default();
    let now_p = args.push(Arg::Int(now));
    let filter = filter_sql(&mut args, account_id, f, now, false, true);
    let sql = format!(
        "SELECT s, COUNT(*) AS n FROM (SELECT {} AS s FROM inbox_threads WHERE {filter}) t \
         GROUP BY s",
        effective_status(&now_p)
    );
    let by_status = grouped(db, &args, sql).await?;
    let mut args = Args::default();
    let filter = filter_sql(&mut args, account_id, f, now, true, false);
    let sql = format!(
        "SELECT last_classification, COUNT(*) AS n FROM inbox_threads \
         WHERE {filter} AND last_classification IS NOT NULL GROUP BY last_classification"
    );
    let by_classification = grouped(db, &args, sql).await?;
    Ok((by_status, by_classification))
}

async fn grouped(db: &Db, args: &Args, sql: String) -> sqlx::Result<Vec<(String, i64)>> {
    args.bind(sqlx::query(sqlx::AssertSqlSafe(sql)))
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
}

pub async fn get(db: &Db, account_id: i64, id: i64) -> sqlx::Result<Option<ThreadRow>> {
    get_on(&mut *db.pool.acquire().await?, account_id, id).await
}

pub async fn get_on(
    conn: &mut AnyConnection,
    account_id: i64,
    id: i64,
) -> sqlx::Result<Option<ThreadRow>> {
    let sql =
        format!("SELECT {THREAD_COLUMNS} FROM inbox_threads WHERE id = $1 AND account_id = $2");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(account_id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(thread)
        .transpose()
}

/// The thread's replies, oldest first.
pub async fn replies(db: &Db, account_id: i64, thread_row_id: i64) -> sqlx::Result<Vec<ReplyRow>> {
    let sql = format!(
        "SELECT {REPLY_COLUMNS} FROM inbox_replies WHERE thread_row_id = $1 AND account_id = $2 \
         ORDER BY received_at, id"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(thread_row_id)
        .bind(account_id)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(reply)
        .collect()
}

/// Sets the columns of `sets` (`column = $n` clauses whose values are in
/// `args`) and `updated_at` on the account's threads `ids`; returns how
/// many rows changed.
pub async fn set_threads(
    conn: &mut AnyConnection,
    account_id: i64,
    ids: &[i64],
    mut args: Args,
    mut sets: Vec<String>,
    now: i64,
) -> sqlx::Result<u64> {
    if ids.is_empty() {
        return Ok(0);
    }
    sets.push(format!("updated_at = {}", args.push(Arg::Int(now))));
    let account = args.push(Arg::Int(account_id));
    let sql = format!(
        "UPDATE inbox_threads SET {} WHERE account_id = {account} AND id IN ({})",
        sets.join(", "),
        id_list(ids)
    );
    Ok(args
        .bind(sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false))
        .execute(conn)
        .await?
        .rows_affected())
}

/// Of `ids`, those naming threads of the account, ascending.
pub async fn owned_ids(
    conn: &mut AnyConnection,
    account_id: i64,
    ids: &[i64],
) -> sqlx::Result<Vec<i64>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT id FROM inbox_threads WHERE account_id = $1 AND id IN ({}) ORDER BY id",
        id_list(ids)
    );
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(account_id)
        .fetch_all(conn)
        .await
}

/// Opens a change of the account's threads `ids`: stamps `updated_at` on
/// them and returns those that are the account's, ascending. A write comes
/// first so that the transaction holds SQLite's write lock from its start
/// (a read first could not be upgraded once another writer committed) and
/// PostgreSQL's row locks.
pub async fn touch(
    conn: &mut AnyConnection,
    account_id: i64,
    ids: &[i64],
    now: i64,
) -> sqlx::Result<Vec<i64>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "UPDATE inbox_threads SET updated_at = $1 WHERE account_id = $2 AND id IN ({}) \
         RETURNING id",
        id_list(ids)
    );
    let mut found: Vec<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(now)
        .bind(account_id)
        .fetch_all(conn)
        .await?;
    found.sort_unstable();
    Ok(found)
}

/// Stamps a manual override `label` on the latest reply of each of the
/// account's threads `ids` (the threads then show it with confidence 1.0),
/// and returns the enrollments those replies answered.
pub async fn override_latest(
    conn: &mut AnyConnection,
    account_id: i64,
    ids: &[i64],
    label: &str,
    now: i64,
) -> sqlx::Result<Vec<i64>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let latest = format!(
        "SELECT (SELECT r.id FROM inbox_replies r WHERE r.thread_row_id = t.id \
             ORDER BY r.received_at DESC, r.id DESC LIMIT 1) \
         FROM inbox_threads t WHERE t.account_id = $1 AND t.id IN ({})",
        id_list(ids)
    );
    let replies: Vec<i64> = sqlx::query_scalar::<_, Option<i64>>(sqlx::AssertSqlSafe(latest))
        .persistent(false)
        .bind(account_id)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .flatten()
        .collect();
    let mut enrollments = Vec::new();
    if !replies.is_empty() {
        let stamp = format!(
            "UPDATE inbox_replies SET manually_overridden_to = $1 \
             WHERE account_id = $2 AND id IN ({}) RETURNING enrollment_id",
            id_list(&replies)
        );
        enrollments = sqlx::query_scalar::<_, Option<i64>>(sqlx::AssertSqlSafe(stamp))
            .persistent(false)
            .bind(label)
            .bind(account_id)
            .fetch_all(&mut *conn)
            .await?
            .into_iter()
            .flatten()
            .collect();
    }
    let mut args = Args::default();
    let sets = vec![
        format!(
            "last_classification = {}",
            args.push(Arg::Text(label.to_owned()))
        ),
        "last_classification_confidence = 1.0".to_owned(),
    ];
    set_threads(conn, account_id, ids, args, sets, now).await?;
    enrollments.sort_unstable();
    enrollments.dedup();
    Ok(enrollments)
}

/// Marks the account's enrollments `ids` as hot leads.
pub async fn mark_hot(
    conn: &mut AnyConnection,
    account_id: i64,
    ids: &[i64],
    now: i64,
) -> sqlx::Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "UPDATE enrollments SET lead_temperature = 'hot', updated_at = $1 \
         WHERE account_id = $2 AND id IN ({})",
        id_list(ids)
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(now)
        .bind(account_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Clears the classification of the replies of the account's threads `ids`
/// so the worker labels them again; manual overrides and replies held as
/// suspected spoofing are left alone, and effects are never replayed
/// (`effects_applied_at` stays). Returns (replies cleared, overrides kept).
pub async fn clear_classifications(
    db: &Db,
    account_id: i64,
    ids: &[i64],
) -> sqlx::Result<(u64, i64)> {
    if ids.is_empty() {
        return Ok((0, 0));
    }
    let list = id_list(ids);
    let mut tx = db.pool.begin().await?;
    let cleared = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE inbox_replies SET classification_label = NULL, classification_confidence = NULL, \
             classification_model = NULL, classification_provider = NULL, classified_at = NULL \
         WHERE account_id = $1 AND thread_row_id IN ({list}) \
           AND manually_overridden_to IS NULL AND spoofing_suspected = 0"
    )))
    .persistent(false)
    .bind(account_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    let kept: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT COUNT(*) FROM inbox_replies WHERE account_id = $1 AND thread_row_id IN ({list}) \
           AND manually_overridden_to IS NOT NULL"
    )))
    .persistent(false)
    .bind(account_id)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok((cleared, kept))
}

/// What suggest-reply tells the model about a thread: the newest replies
/// (newest first) and the subject of the sequence email answered.
#[derive(Debug, Clone)]
pub struct SuggestContext {
    /// (from name or address, body text), newest first.
    pub latest: Vec<(String, String)>,
    pub original_subject: Option<String>,
}

pub async fn suggest_context(
    db: &Db,
    account_id: i64,
    thread_row_id: i64,
    replies: i64,
) -> sqlx::Result<SuggestContext> {
    let rows = sqlx::query(
        "SELECT from_name, from_email, body_text, sequence_message_id, sequence_step_id \
         FROM inbox_replies WHERE thread_row_id = $1 AND account_id = $2 \
         ORDER BY received_at DESC, id DESC LIMIT $3",
    )
    .bind(thread_row_id)
    .bind(account_id)
    .bind(replies)
    .fetch_all(&db.pool)
    .await?;
    let mut latest = Vec::with_capacity(rows.len());
    let mut message = None;
    let mut step = None;
    for r in &rows {
        let name: String = r.try_get(0)?;
        let email: String = r.try_get(1)?;
        latest.push((
            if name.trim().is_empty() { email } else { name },
            r.try_get(2)?,
        ));
        message = message.or(r.try_get::<Option<i64>, _>(3)?);
        step = step.or(r.try_get::<Option<i64>, _>(4)?);
    }
    let mut original_subject = None;
    if let Some(m) = message {
        original_subject = sqlx::query_scalar::<_, Option<String>>(
            "SELECT subject FROM sequence_messages WHERE id = $1 AND account_id = $2",
        )
        .bind(m)
        .bind(account_id)
        .fetch_optional(&db.pool)
        .await?
        .flatten();
    }
    if original_subject
        .as_deref()
        .is_none_or(|s| s.trim().is_empty())
        && let Some(s) = step
    {
        original_subject = sqlx::query_scalar::<_, Option<String>>(
            "SELECT subject FROM sequence_steps WHERE id = $1 AND account_id = $2",
        )
        .bind(s)
        .bind(account_id)
        .fetch_optional(&db.pool)
        .await?
        .flatten();
    }
    Ok(SuggestContext {
        latest,
        original_subject: original_subject.filter(|s| !s.trim().is_empty()),
    })
}

/// A reply an automatic answer may go to (`crate::ports`).
#[derive(Debug, Clone)]
pub struct AutoReplyTarget {
    pub id: i64,
    /// The mailbox it arrived at, which the answer is sent from.
    pub send_account_id: Option<i64>,
    pub sequence_id: Option<i64>,
    pub enrollment_id: Option<i64>,
    pub from_email: String,
    pub from_name: String,
    pub subject: String,
    /// Without angle brackets; empty when the message had none.
    pub message_id: String,
    /// The enrollment's company domain, else the sender's.
    pub domain: String,
    pub auto_replied_at: Option<i64>,
}

/// The account's latest reply (kind `reply`, not held as suspected
/// spoofing, classified) from an address at `domain` whose label (its
/// manual override first) is one of `classes`, any label when `classes` is
/// empty. `domain` is a host name, lower case, without `%` or `_`.
pub async fn latest_reply_from(
    db: &Db,
    account_id: i64,
    domain: &str,
    classes: &[String],
) -> sqlx::Result<Option<AutoReplyTarget>> {
    let mut args = Args::default();
    let account = args.push(Arg::Int(account_id));
    let from = args.push(Arg::Text(format!("%@{domain}")));
    let label = "COALESCE(manually_overridden_to, classification_label)";
    let mut filter = format!(
        "account_id = {account} AND from_email LIKE {from} AND kind = 'reply' \
         AND spoofing_suspected = 0 AND {label} IS NOT NULL"
    );
    if !classes.is_empty() {
        let list = args.push_texts(classes);
        filter.push_str(&format!(" AND {label} IN ({list})"));
    }
    let sql = format!(
        "SELECT id, send_account_id, sequence_id, enrollment_id, from_email, from_name, subject, message_id, \
         domain, auto_replied_at FROM inbox_replies WHERE {filter} \
         ORDER BY received_at DESC, id DESC LIMIT 1"
    );
    let row = args
        .bind(sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false))
        .fetch_optional(&db.pool)
        .await?;
    row.map(|r| {
        Ok(AutoReplyTarget {
            id: r.try_get("id")?,
            send_account_id: r.try_get("send_account_id")?,
            sequence_id: r.try_get("sequence_id")?,
            enrollment_id: r.try_get("enrollment_id")?,
            from_email: r.try_get("from_email")?,
            from_name: r.try_get("from_name")?,
            subject: r.try_get("subject")?,
            message_id: r.try_get("message_id")?,
            domain: r.try_get("domain")?,
            auto_replied_at: r.try_get("auto_replied_at")?,
        })
    })
    .transpose()
}

/// Claims reply `id` for an automatic answer by stamping it; false when it
/// was already answered (or is being answered by a concurrent run).
pub async fn claim_auto_reply(db: &Db, account_id: i64, id: i64, now: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE inbox_replies SET auto_replied_at = $1 \
         WHERE id = $2 AND account_id = $3 AND auto_replied_at IS NULL",
    )
    .bind(now)
    .bind(id)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Records the Message-ID of the automatic answer to reply `id`.
pub async fn auto_replied(db: &Db, account_id: i64, id: i64, message_id: &str) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE inbox_replies SET auto_reply_message_id = $1 WHERE id = $2 AND account_id = $3",
    )
    .bind(message_id)
    .bind(id)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Gives up a claim whose answer could not be sent, so a later run tries
/// again.
pub async fn release_auto_reply(db: &Db, account_id: i64, id: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE inbox_replies SET auto_replied_at = NULL \
         WHERE id = $1 AND account_id = $2 AND auto_reply_message_id IS NULL",
    )
    .bind(id)
    .bind(account_id)
    .execute(&db.pool)
    .await?;
    Ok(())
}
