//! SQL of the sender: the claim, what a plan reads, and the writes a plan
//! makes. Every statement runs on the plan's transaction.
//!
//! Statements whose text depends on the batch (a row of placeholders per
//! item) are not kept in the connection's statement cache
//! (`persistent(false)`): each batch size is a different statement, and a
//! cache of a hundred large multi-row programs per connection grew the
//! server by megabytes for statements rarely run twice. The recorder's
//! statements do the same.

use std::collections::HashMap;

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use outreach_core::store::{Backend, id_list};

/// A claimed enrollment.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: i64,
    pub account_id: i64,
    pub sequence_id: i64,
    pub domain: String,
    pub contact_email: String,
    pub metadata: String,
    pub current_step: i64,
    /// When the current step fell due.
    pub due_at: i64,
}

fn claimed(r: &AnyRow) -> sqlx::Result<Claimed> {
    Ok(Claimed {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        sequence_id: r.try_get("sequence_id")?,
        domain: r.try_get("domain")?,
        contact_email: r.try_get("contact_email")?,
        metadata: r.try_get("metadata")?,
        current_step: r.try_get("current_step")?,
        due_at: r.try_get("next_send_at")?,
    })
}

/// Leases up to `limit` due enrollments of active sequences to `owner`
/// until `lease_until`, oldest due first. PostgreSQL skips rows another
/// server is claiming (`FOR UPDATE SKIP LOCKED`); SQLite's single writer
/// makes the one statement atomic. An expired lease (its server died) is
/// claimable again, but never by its own holder: a live server's lease can
/// only have run out because its renewal came late, and its send may still
/// be in flight or its answer still on the way to the database.
pub async fn claim(
    conn: &mut AnyConnection,
    backend: Backend,
    owner: &str,
    now: i64,
    lease_until: i64,
    limit: i64,
) -> sqlx::Result<Vec<Claimed>> {
    let lock = match backend {
        Backend::Postgres => "FOR UPDATE OF e SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "UPDATE enrollments SET lease_owner = $1, lease_until = $2 WHERE id IN (
             SELECT e.id FROM enrollments e JOIN sequences s ON s.id = e.sequence_id
             WHERE e.status = 'active' AND e.next_send_at <= $3
               AND (e.lease_until IS NULL OR e.lease_until < $3) AND s.status = 'active'
               AND (e.lease_owner IS NULL OR e.lease_owner <> $1)
             ORDER BY e.next_send_at LIMIT $4 {lock})
         RETURNING id, account_id, sequence_id, domain, contact_email, metadata, current_step,
                   next_send_at"
    );
    let mut rows: Vec<Claimed> = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(owner)
        .bind(lease_until)
        .bind(now)
        .bind(limit)
        .fetch_all(conn)
        .await?
        .iter()
        .map(claimed)
        .collect::<sqlx::Result<_>>()?;
    rows.sort_by_key(|c| (c.due_at, c.id));
    Ok(rows)
}

/// Extends every lease `owner` holds to `until`: a live server's sends in
/// flight (queued behind a slow mailbox, say) keep their enrollments, and
/// only a dead server's leases run out.
pub async fn renew_leases(
    db: &outreach_core::store::Db,
    owner: &str,
    until: i64,
) -> sqlx::Result<u64> {
    let done = sqlx::query(
        "UPDATE enrollments SET lease_until = $1 WHERE lease_owner = $2 AND lease_until < $1",
    )
    .bind(until)
    .bind(owner)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected())
}

/// On PostgreSQL, locks the sequences of a batch so that two servers
/// planning sends of one sequence count its daily cap one after the other
/// (SQLite's writer lock already serialises plans).
pub async fn lock_sequences(
    conn: &mut AnyConnection,
    backend: Backend,
    ids: &[i64],
) -> sqlx::Result<()> {
    if backend == Backend::Postgres && !ids.is_empty() {
        let sql = format!(
            "SELECT id FROM sequences WHERE id IN ({}) ORDER BY id FOR UPDATE",
            id_list(ids)
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .fetch_all(conn)
            .await?;
    }
    Ok(())
}

/// Today's reserved sends per sequence.
pub async fn sent_on_day(
    conn: &mut AnyConnection,
    sequence_ids: &[i64],
    day: i64,
) -> sqlx::Result<HashMap<i64, i64>> {
    if sequence_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let sql = format!(
        "SELECT sequence_id, sent FROM sequence_days WHERE day = $1 AND sequence_id IN ({})",
        id_list(sequence_ids)
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(day)
        .fetch_all(conn)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
}

/// A send account as the planner sees it.
#[derive(Debug, Clone)]
pub struct Mailbox {
    pub id: i64,
    pub email: String,
    pub display_name: Option<String>,
    pub status: String,
    pub daily_send_limit: i64,
    /// Today's count (0 when the stored count is of an earlier day).
    pub sent_today: i64,
    /// When the account's status last changed (an error's time).
    pub updated_at: i64,
}

/// The send accounts `ids` of `account_id`, locked on PostgreSQL (their
/// daily counters are reserved in this transaction).
pub async fn mailboxes(
    conn: &mut AnyConnection,
    backend: Backend,
    ids: &[i64],
    today: i64,
) -> sqlx::Result<HashMap<i64, Mailbox>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let lock = if backend == Backend::Postgres {
        "ORDER BY id FOR UPDATE"
    } else {
        ""
    };
    let sql = format!(
        "SELECT id, email, display_name, status, daily_send_limit, emails_sent_today, sent_day,
                updated_at FROM send_accounts WHERE id IN ({}) {lock}",
        id_list(ids)
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .fetch_all(conn)
        .await?;
    let mut out = HashMap::new();
    for r in &rows {
        let sent_day: i64 = r.try_get("sent_day")?;
        let count: i64 = r.try_get("emails_sent_today")?;
        let m = Mailbox {
            id: r.try_get("id")?,
            email: r.try_get("email")?,
            display_name: r.try_get("display_name")?,
            status: r.try_get("status")?,
            daily_send_limit: r.try_get("daily_send_limit")?,
            sent_today: if sent_day == today { count } else { 0 },
            updated_at: r.try_get("updated_at")?,
        };
        out.insert(m.id, m);
    }
    Ok(out)
}

/// A sequence's pool entry: send account, rotation position, last use.
#[derive(Debug, Clone)]
pub struct PoolEntry {
    pub send_account_id: i64,
    pub position: i64,
    pub is_active: bool,
    pub last_used_at: Option<i64>,
}

/// The pools of `sequence_ids`, each in position order.
pub async fn pools(
    conn: &mut AnyConnection,
    sequence_ids: &[i64],
) -> sqlx::Result<HashMap<i64, Vec<PoolEntry>>> {
    let mut out: HashMap<i64, Vec<PoolEntry>> = HashMap::new();
    if sequence_ids.is_empty() {
        return Ok(out);
    }
    let sql = format!(
        "SELECT sequence_id, send_account_id, position, is_active, last_used_at
         FROM sequence_mailboxes WHERE sequence_id IN ({}) ORDER BY sequence_id, position",
        id_list(sequence_ids)
    );
    for r in sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .fetch_all(conn)
        .await?
    {
        out.entry(r.try_get("sequence_id")?)
            .or_default()
            .push(PoolEntry {
                send_account_id: r.try_get("send_account_id")?,
                position: r.try_get("position")?,
                is_active: r.try_get::<i64, _>("is_active")? != 0,
                last_used_at: r.try_get("last_used_at")?,
            });
    }
    Ok(out)
}

/// Sends and bounces of each send account since `since` (the pool skips
/// accounts over their bounce threshold).
pub async fn recent_bounces(
    conn: &mut AnyConnection,
    send_account_ids: &[i64],
    since: i64,
) -> sqlx::Result<HashMap<i64, (i64, i64)>> {
    let mut out: HashMap<i64, (i64, i64)> = HashMap::new();
    if send_account_ids.is_empty() {
        return Ok(out);
    }
    let sql = format!(
        "SELECT send_account_id, event_type, COUNT(*) FROM sequence_events
         WHERE send_account_id IN ({}) AND created_at >= $1
           AND event_type IN ('sent', 'bounced')
         GROUP BY send_account_id, event_type",
        id_list(send_account_ids)
    );
    for r in sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(since)
        .fetch_all(conn)
        .await?
    {
        let e = out.entry(r.try_get(0)?).or_default();
        let n: i64 = r.try_get(2)?;
        if r.try_get::<String, _>(1)? == "sent" {
            e.0 = n;
        } else {
            e.1 = n;
        }
    }
    Ok(out)
}

/// A message the sender wrote for an enrollment's step.
#[derive(Debug, Clone)]
pub struct MessageRow {
    pub id: i64,
    pub enrollment_id: i64,
    pub step_id: i64,
    pub step_position: i64,
    pub send_account_id: Option<i64>,
    pub variant: Option<String>,
    pub message_id: String,
    pub subject: Option<String>,
    pub status: String,
    pub created_at: i64,
    pub sent_at: Option<i64>,
}

/// Every message of the enrollments `ids`, oldest first (the first is the
/// thread's root; a step's existing row makes a retry reuse it).
pub async fn messages_of(
    conn: &mut AnyConnection,
    ids: &[i64],
) -> sqlx::Result<HashMap<i64, Vec<MessageRow>>> {
    let mut out: HashMap<i64, Vec<MessageRow>> = HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let sql = format!(
        "SELECT id, enrollment_id, step_id, step_position, send_account_id, variant, message_id,
                subject, status, created_at, sent_at
         FROM sequence_messages WHERE enrollment_id IN ({}) ORDER BY id",
        id_list(ids)
    );
    for r in sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .fetch_all(conn)
        .await?
    {
        let m = MessageRow {
            id: r.try_get("id")?,
            enrollment_id: r.try_get("enrollment_id")?,
            step_id: r.try_get("step_id")?,
            step_position: r.try_get("step_position")?,
            send_account_id: r.try_get("send_account_id")?,
            variant: r.try_get("variant")?,
            message_id: r.try_get("message_id")?,
            subject: r.try_get("subject")?,
            status: r.try_get("status")?,
            created_at: r.try_get("created_at")?,
            sent_at: r.try_get("sent_at")?,
        };
        out.entry(m.enrollment_id).or_default().push(m);
    }
    Ok(out)
}

/// The (step id, event type) pairs recorded for each enrollment, for step
/// conditions (opened, clicked, replied).
pub async fn engagement_of(
    conn: &mut AnyConnection,
    ids: &[i64],
) -> sqlx::Result<HashMap<i64, Vec<(i64, String)>>> {
    let mut out: HashMap<i64, Vec<(i64, String)>> = HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let sql = format!(
        "SELECT DISTINCT enrollment_id, step_id, event_type FROM sequence_events
         WHERE enrollment_id IN ({}) AND event_type IN ('opened', 'clicked', 'replied')",
        id_list(ids)
    );
    for r in sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .fetch_all(conn)
        .await?
    {
        let step: Option<i64> = r.try_get(1)?;
        out.entry(r.try_get(0)?)
            .or_default()
            .push((step.unwrap_or(0), r.try_get(2)?));
    }
    Ok(out)
}

/// A new message row, written before the SMTP transaction.
#[derive(Debug, Clone)]
pub struct NewMessage {
    pub account_id: i64,
    pub sequence_id: i64,
    pub enrollment_id: i64,
    pub step_id: i64,
    pub step_position: i64,
    pub send_account_id: i64,
    pub variant: Option<String>,
    pub message_id: String,
    pub to_email: String,
    pub at: i64,
}

/// Inserts a plan's new message rows, a multi-row statement per 256;
/// returns each row's id by enrollment (a plan makes one send per
/// enrollment).
pub async fn insert_messages(
    conn: &mut AnyConnection,
    backend: Backend,
    rows: &[NewMessage],
) -> sqlx::Result<HashMap<i64, i64>> {
    let mut ids = HashMap::with_capacity(rows.len());
    for chunk in rows.chunks(256) {
        let sql = format!(
            "INSERT INTO sequence_messages (account_id, sequence_id, enrollment_id, step_id, \
                 step_position, send_account_id, variant, message_id, to_email, status, \
                 created_at) VALUES {} RETURNING id, enrollment_id",
            outreach_core::store::value_rows(backend, chunk.len(), 11)
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for m in chunk {
            q = q
                .bind(m.account_id)
                .bind(m.sequence_id)
                .bind(m.enrollment_id)
                .bind(m.step_id)
                .bind(m.step_position)
                .bind(m.send_account_id)
                .bind(m.variant.clone())
                .bind(m.message_id.clone())
                .bind(m.to_email.clone())
                .bind("sending")
                .bind(m.at);
        }
        for r in q.fetch_all(&mut *conn).await? {
            ids.insert(r.try_get::<i64, _>(1)?, r.try_get::<i64, _>(0)?);
        }
    }
    Ok(ids)
}

/// A deferred message planned again, possibly on another mailbox of the pool.
pub async fn requeue_message(
    conn: &mut AnyConnection,
    id: i64,
    send_account_id: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE sequence_messages SET status = 'sending', send_account_id = $1 WHERE id = $2",
    )
    .bind(send_account_id)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Stores what was rendered: the subject (threading reads it) and the
/// original links (click redirects go only to these).
pub async fn set_message_content(
    conn: &mut AnyConnection,
    id: i64,
    subject: &str,
    links: &[String],
) -> sqlx::Result<()> {
    sqlx::query("UPDATE sequence_messages SET subject = $1, links = $2 WHERE id = $3")
        .bind(subject)
        .bind(serde_json::to_string(links).unwrap_or_else(|_| "[]".into()))
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Where an enrollment goes after a plan that sends nothing for it now.
pub async fn reschedule(
    conn: &mut AnyConnection,
    id: i64,
    current_step: i64,
    next_send_at: i64,
    last_step_at: Option<i64>,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE enrollments SET current_step = $1, next_send_at = $2,
             last_step_at = COALESCE($3, last_step_at), lease_owner = NULL, lease_until = NULL,
             updated_at = $4
         WHERE id = $5",
    )
    .bind(current_step)
    .bind(next_send_at)
    .bind(last_step_at)
    .bind(now)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Moves an enrollment with no step left to completed.
pub async fn complete(
    conn: &mut AnyConnection,
    id: i64,
    current_step: i64,
    now: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE enrollments SET status = 'completed', current_step = $1, next_send_at = NULL,
             lease_owner = NULL, lease_until = NULL, updated_at = $2
         WHERE id = $3 AND status = 'active'",
    )
    .bind(current_step)
    .bind(now)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// An open task for a non-email actionable step (once per enrollment and step).
pub async fn insert_task(
    conn: &mut AnyConnection,
    c: &Claimed,
    step_id: i64,
    step_type: &str,
    title: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO enrollment_tasks (account_id, sequence_id, enrollment_id, step_id, step_type,
             status, title, created_at)
         VALUES ($1, $2, $3, $4, $5, 'open', $6, $7) ON CONFLICT DO NOTHING",
    )
    .bind(c.account_id)
    .bind(c.sequence_id)
    .bind(c.id)
    .bind(step_id)
    .bind(step_type)
    .bind(title)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// Reserves `n` of a send account's sends of `day` (a negative `n` releases
/// them; a release for a day the counter has left changes nothing).
pub async fn reserve_mailbox(
    conn: &mut AnyConnection,
    id: i64,
    n: i64,
    day: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE send_accounts SET
             emails_sent_today = CASE
                 WHEN sent_day = $1 AND emails_sent_today + $2 > 0 THEN emails_sent_today + $2
                 WHEN sent_day = $1 THEN 0
                 WHEN $2 > 0 THEN $2
                 ELSE emails_sent_today END,
             sent_day = CASE WHEN $2 > 0 THEN $1 ELSE sent_day END
         WHERE id = $3",
    )
    .bind(day)
    .bind(n)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Remembers where a pool's rotation stands.
pub async fn touch_pool_entry(
    conn: &mut AnyConnection,
    sequence_id: i64,
    send_account_id: i64,
    at: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE sequence_mailboxes SET last_used_at = $1
         WHERE sequence_id = $2 AND send_account_id = $3",
    )
    .bind(at)
    .bind(sequence_id)
    .bind(send_account_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// The suppression reason for each claimed address the account suppresses
/// (by the address or its `@domain` entry): an address suppressed after it
/// was enrolled (an unsubscribe or bounce in another sequence, a manual
/// entry) is not sent to.
pub async fn suppression_reasons(
    db: &outreach_core::store::Db,
    claimed: &[Claimed],
) -> sqlx::Result<HashMap<i64, String>> {
    use crate::suppression::address::parse;
    let mut out = HashMap::new();
    let mut by_account: HashMap<i64, Vec<(i64, crate::suppression::address::Target)>> =
        HashMap::new();
    for c in claimed {
        if let Some(t) = parse(&c.contact_email) {
            by_account.entry(c.account_id).or_default().push((c.id, t));
        }
    }
    for (account_id, targets) in by_account {
        let list: Vec<_> = targets.iter().map(|(_, t)| t.clone()).collect();
        let hits = crate::suppression::store::suppressed(db, account_id, &list).await?;
        if hits.is_empty() {
            continue;
        }
        let mut keys: Vec<String> = Vec::new();
        for (_, t) in targets.iter().filter(|(_, t)| hits.contains(&t.email)) {
            keys.push(t.email.clone());
            keys.push(format!("@{}", t.domain));
        }
        let sql = format!(
            "SELECT email, reason FROM suppression_entries WHERE account_id = {} AND email IN ({})",
            outreach_core::store::placeholder(db.backend, 1),
            outreach_core::store::placeholder_list(db.backend, 2, keys.len())
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
            .persistent(false)
            .bind(account_id);
        for k in &keys {
            q = q.bind(k.clone());
        }
        let reasons: HashMap<String, String> = q
            .fetch_all(&db.pool)
            .await?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<sqlx::Result<_>>()?;
        for (id, t) in &targets {
            let reason = reasons
                .get(&t.email)
                .or_else(|| reasons.get(&format!("@{}", t.domain)));
            if let Some(reason) = reason {
                out.insert(*id, reason.clone());
            }
        }
    }
    Ok(out)
}

/// Ends an enrollment whose address became suppressed: `bounced` for a
/// bounce or invalid entry, `unsubscribed` for the others.
pub async fn end_suppressed(
    conn: &mut AnyConnection,
    id: i64,
    reason: &str,
    now: i64,
) -> sqlx::Result<()> {
    let status = if matches!(reason, "bounce" | "invalid") {
        "bounced"
    } else {
        "unsubscribed"
    };
    sqlx::query(
        "UPDATE enrollments SET status = $1, next_send_at = NULL, lease_owner = NULL,
             lease_until = NULL, updated_at = $2 WHERE id = $3 AND status = 'active'",
    )
    .bind(status)
    .bind(now)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}
