//! The recorder under a locked database, at shutdown, and its memory bound.
//! On both backends (`OUTREACH_TEST_BACKEND`).

use std::collections::BTreeMap;
use std::time::Duration;

use sqlx::{AnyConnection, Connection, Row};

use super::pending::{CountKey, Pending};
use super::*;
use crate::accounts::plans::Plan;
use crate::store::Backend;
use crate::testing::TestApp;

/// 2026-10-31T23:00:00Z: events from here cross an hour, a day and a month.
const START: i64 = 1_793_487_600_000;

/// Another session holding the lock the writer needs: the write lock on
/// SQLite, an exclusive lock on the rollups on PostgreSQL (which blocks
/// the writer's transaction after it has inserted raw rows).
struct DbLock(AnyConnection);

impl DbLock {
    async fn take(app: &TestApp) -> DbLock {
        let mut conn = AnyConnection::connect(&app.state.config.database_url())
            .await
            .unwrap();
        let sql = match app.state.db.backend {
            Backend::Sqlite => "BEGIN EXCLUSIVE",
            Backend::Postgres => "BEGIN; LOCK TABLE usage_rollups IN ACCESS EXCLUSIVE MODE",
        };
        sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
        DbLock(conn)
    }

    async fn release(mut self) {
        sqlx::raw_sql("COMMIT").execute(&mut self.0).await.unwrap();
        self.0.close().await.unwrap();
    }
}

fn recorder(app: &TestApp, interval: Duration, lock_wait: Duration) -> UsageRecorder {
    UsageRecorder::spawn_with(
        app.state.db.clone(),
        Options {
            interval,
            keep_recent: 10,
            lock_wait,
        },
    )
}

/// The expected contents of the tables for the events recorded.
#[derive(Default)]
struct Expected {
    /// (account, grain, bucket, client, endpoint, billable) → requests
    rollups: BTreeMap<(i64, String, i64, i64, String, i64), i64>,
    /// (account, client, month) → billable requests
    monthly: BTreeMap<(i64, i64, String), i64>,
    /// key id → requests
    keys: BTreeMap<i64, i64>,
    /// account → the newest request's time
    newest: BTreeMap<i64, i64>,
}

/// A `GET` of `endpoint` that succeeded, by `key` of `account`.
fn request(account: i64, key: i64, ts_ms: i64, endpoint: &str) -> UsageEvent {
    UsageEvent {
        account_id: account,
        api_key_id: Some(key),
        reseller_client_id: None,
        ts_ms,
        method: "GET",
        endpoint: interned(endpoint),
        category: interned(endpoint.split('/').nth(2).unwrap_or_default()),
        status: 200,
        response_time_ms: 1,
        filters_summary: None,
        results_count: 0,
        billable: true,
    }
}

/// Records `n` events spread over the accounts and their keys, two
/// endpoints, a reseller client, billable or not, over 90 minutes from
/// [`START`]; `offset` makes each call's events distinct.
fn record(
    rec: &UsageRecorder,
    accounts: &[(i64, i64)],
    n: usize,
    offset: usize,
    expected: &mut Expected,
) {
    for j in 0..n {
        let i = offset + j;
        let (account, key) = accounts[i % accounts.len()];
        let client = if i.is_multiple_of(5) { 77 } else { 0 };
        let endpoint = if i.is_multiple_of(3) {
            "/v1/account"
        } else {
            "/v1/usage/stats"
        };
        let billable = !i.is_multiple_of(7);
        let ts = START + (i as i64 * 7_919) % (90 * 60_000);
        rec.record(UsageEvent {
            reseller_client_id: (client != 0).then_some(client),
            billable,
            ..request(account, key, ts, endpoint)
        });
        for grain in [store::Grain::Hour, store::Grain::Day] {
            let name = if grain == store::Grain::Hour {
                "hour"
            } else {
                "day"
            };
            *expected
                .rollups
                .entry((
                    account,
                    name.into(),
                    grain.bucket(ts),
                    client,
                    endpoint.into(),
                    billable as i64,
                ))
                .or_default() += 1;
        }
        if billable {
            let month = ms_to_datetime(ts).format("%Y-%m").to_string();
            *expected
                .monthly
                .entry((account, client, month))
                .or_default() += 1;
        }
        *expected.keys.entry(key).or_default() += 1;
        expected.newest.insert(account, ts);
    }
}

/// Two accounts with their first key each.
async fn accounts(app: &TestApp) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for _ in 0..2 {
        let acct = app.account(Plan::Pro).await;
        let keys = app.state.keys.list(acct.account_id).await.unwrap();
        out.push((acct.account_id, keys[0].id));
    }
    out
}

/// Compares the rollups, monthly totals, key counters and raw rows of
/// `accounts` with what was recorded.
async fn assert_written(app: &TestApp, accounts: &[(i64, i64)], expected: &Expected) {
    let ids = crate::store::id_list(&accounts.iter().map(|a| a.0).collect::<Vec<_>>());
    let pool = &app.state.db.pool;
    let rollups: BTreeMap<_, i64> = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT account_id, grain, bucket, client_id, endpoint, billable, requests \
         FROM usage_rollups WHERE account_id IN ({ids})"
    )))
    .fetch_all(pool)
    .await
    .unwrap()
    .iter()
    .map(|r| {
        let key: (i64, String, i64, i64, String, i64) =
            (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5));
        (key, r.get(6))
    })
    .collect();
    assert_eq!(rollups, expected.rollups);
    let monthly: BTreeMap<_, i64> = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT account_id, client_id, month, billable_requests FROM usage_monthly_totals \
         WHERE account_id IN ({ids})"
    )))
    .fetch_all(pool)
    .await
    .unwrap()
    .iter()
    .map(|r| ((r.get(0), r.get(1), r.get(2)), r.get(3)))
    .collect();
    assert_eq!(monthly, expected.monthly);
    for (account, key) in accounts {
        let listed = app.state.keys.list(*account).await.unwrap();
        let count = listed.iter().find(|k| k.id == *key).unwrap().request_count;
        assert_eq!(count, expected.keys[key], "key {key}");
        // Recent activity starts with the newest request.
        let rows = store::recent(&app.state.db, *account, 10).await.unwrap();
        assert_eq!(rows.len(), 10);
        assert_eq!(rows[0].get::<i64, _>("ts"), expected.newest[account]);
    }
}

/// While another session holds the database's lock, flushes fail and keep
/// their deltas; once it is released every request is in the rollups, the
/// monthly totals and the key counters exactly once.
#[tokio::test]
async fn a_locked_database_delays_counts_but_loses_none() {
    let app = TestApp::new().await;
    let accounts = accounts(&app).await;
    let rec = recorder(&app, Duration::from_millis(20), Duration::from_millis(100));
    let mut expected = Expected::default();
    record(&rec, &accounts, 500, 0, &mut expected);
    rec.flush().await;
    assert_written(&app, &accounts, &expected).await;

    let lock = DbLock::take(&app).await;
    let mut recorded = 500;
    // Keep recording while at least three flushes fail.
    for _ in 0..1_000 {
        record(&rec, &accounts, 2_000, recorded, &mut expected);
        recorded += 2_000;
        tokio::time::sleep(Duration::from_millis(20)).await;
        if rec.inner.writer.lock().await.failures >= 3 {
            break;
        }
    }
    {
        // Everything since the lock is held in memory: what failed writes
        // carry, and what was counted since.
        let writer = rec.inner.writer.lock().await;
        assert!(writer.failures >= 3, "{}", writer.failures);
        assert!(writer.carried.requests() > 0);
        let counted: i64 = rec
            .inner
            .shards
            .iter()
            .map(|s| s.lock().unwrap().requests())
            .sum();
        assert_eq!(writer.carried.requests() + counted + 500, recorded as i64);
    }
    lock.release().await;
    rec.flush().await;
    assert_written(&app, &accounts, &expected).await;
    assert_eq!(rec.inner.writer.lock().await.failures, 0);
    assert_eq!(rec.inner.unwritten(), Unwritten::default());
}

/// Requests served through the API while the database is locked for a
/// while (shorter than the writer's lock wait, as a backup's lock would
/// be) are all counted once it is released.
#[tokio::test]
async fn requests_during_a_lock_are_all_counted() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Pro).await;
    // Seeds the quota counter, which reads the rollups.
    assert_eq!(app.get("/v1/account", &acct.api_key).await.status, 200);
    app.state.usage.flush().await;
    let lock = DbLock::take(&app).await;
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        lock.release().await;
    });
    for _ in 0..199 {
        assert_eq!(app.get("/v1/account", &acct.api_key).await.status, 200);
    }
    release.await.unwrap();
    app.state.usage.flush().await;
    let stats = app.get("/v1/usage/stats?days=1", &acct.api_key).await.body;
    assert_eq!(stats["total_queries"], 200, "{stats}");
    app.state.usage.flush().await;
    let monthly: i64 = sqlx::query_scalar(
        "SELECT billable_requests FROM usage_monthly_totals WHERE account_id = $1",
    )
    .bind(acct.account_id)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap();
    assert_eq!(monthly, 201);
    let keys = app.state.keys.list(acct.account_id).await.unwrap();
    assert_eq!(keys[0].request_count, 201);
}

/// The shutdown flush writes what the timer has not, retries while the
/// database is locked, and reports what it could not write by its deadline
/// (which a later flush still writes).
#[tokio::test]
async fn the_shutdown_flush_writes_pending_deltas() {
    let app = TestApp::new().await;
    let accounts = accounts(&app).await;
    // The timer fires once at the start, then not within the test.
    let rec = recorder(&app, Duration::from_secs(3600), Duration::from_millis(100));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut expected = Expected::default();
    record(&rec, &accounts, 3_000, 0, &mut expected);
    assert_eq!(rec.flush_within(Duration::from_secs(10)).await, Ok(()));
    assert_written(&app, &accounts, &expected).await;

    // Locked for a second of a five-second deadline: retried until written.
    record(&rec, &accounts, 3_000, 3_000, &mut expected);
    let lock = DbLock::take(&app).await;
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        lock.release().await;
    });
    assert_eq!(rec.flush_within(Duration::from_secs(5)).await, Ok(()));
    release.await.unwrap();
    assert_written(&app, &accounts, &expected).await;

    // Locked past the deadline: reported, kept, written later.
    record(&rec, &accounts, 700, 6_000, &mut expected);
    let lock = DbLock::take(&app).await;
    let unwritten = rec
        .flush_within(Duration::from_millis(600))
        .await
        .unwrap_err();
    assert_eq!(unwritten.requests, 700);
    assert_eq!(unwritten.raw_rows, 20);
    let billable: i64 = (6_000..6_700)
        .filter(|i: &usize| !i.is_multiple_of(7))
        .count() as i64;
    assert_eq!(unwritten.billable.values().sum::<i64>(), billable);
    lock.release().await;
    assert_eq!(rec.flush_within(Duration::from_secs(10)).await, Ok(()));
    assert_written(&app, &accounts, &expected).await;
}

/// Memory is bounded by distinct combinations: a million requests of one
/// combination are one counter and a ring of `keep` raw rows.
#[test]
fn pending_grows_with_combinations_not_requests() {
    let mut pending = Pending::default();
    let event = |ts_ms| request(1, 2, ts_ms, "/v1/account");
    for i in 0..1_000_000 {
        let e = event(START + i);
        pending.add(CountKey::of(&e), e, 10);
    }
    assert_eq!(pending.counts.len(), 1);
    assert_eq!(pending.keys.len(), 1);
    assert_eq!(pending.raw_rows(), 10);
    assert_eq!(pending.requests(), 1_000_000);
    assert_eq!(pending.skipped, 999_990);
    // The ring keeps the newest, oldest first.
    let ring = &pending.recent[&1];
    assert_eq!(ring.back().unwrap().ts_ms, START + 999_999);
    assert_eq!(ring.front().unwrap().ts_ms, START + 999_990);

    // Merging newer deltas sums counters and keeps the newest raw rows.
    let mut newer = Pending::default();
    for i in 0..3 {
        let e = event(START + 2_000_000 + i);
        newer.add(CountKey::of(&e), e, 10);
    }
    let e = event(START + 3_600_000);
    newer.add(CountKey::of(&e), e, 10);
    pending.merge(newer, 10);
    assert_eq!(pending.counts.len(), 2);
    assert_eq!(pending.requests(), 1_000_004);
    assert_eq!(pending.keys[&2].requests, 1_000_004);
    assert_eq!(pending.keys[&2].last_ts, START + 3_600_000);
    assert_eq!(pending.raw_rows(), 10);
    assert_eq!(pending.recent[&1].front().unwrap().ts_ms, START + 999_994);
}

/// The request path's cost: `cargo test -p outreach-core --release
/// record_cost -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn record_cost() {
    let app = TestApp::new().await;
    let rec = recorder(&app, Duration::from_millis(1000), DEFAULT_LOCK_WAIT);
    let n = 2_000_000;
    let events: Vec<UsageEvent> = (0..n)
        .map(|i| {
            request(
                1 + (i % 50) as i64,
                (i % 3_000) as i64,
                START + i as i64,
                "/v1/account",
            )
        })
        .collect();
    let started = std::time::Instant::now();
    for e in events {
        rec.record(e);
    }
    let elapsed = started.elapsed();
    println!(
        "record: {:.0} ns per request ({n} requests, 50 accounts, 3,000 keys)",
        elapsed.as_nanos() as f64 / n as f64
    );
}

/// Every thread gets the one leaked copy of a name, so counters keyed by
/// it meet in one entry whichever worker recorded the request.
#[test]
fn interned_names_are_one_copy_across_threads() {
    let here = interned("/v1/interning-test/{id}");
    let there = std::thread::spawn(|| interned(&String::from("/v1/interning-test/{id}")))
        .join()
        .unwrap();
    assert_eq!(here, "/v1/interning-test/{id}");
    assert!(std::ptr::eq(here, there), "one copy, not two");
    assert!(std::ptr::eq(here, interned("/v1/interning-test/{id}")));
    assert!(!std::ptr::eq(here, interned("/v1/interning-test/{other}")));
}
