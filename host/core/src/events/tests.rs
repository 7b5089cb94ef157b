//! The outbox on both backends: an event exists exactly when its change
//! committed, in order, and each is dispatched once.

use serde_json::json;

use super::{EventType, for_account, mark_dispatched, pending, record};
use crate::accounts::plans::Plan;
use crate::testing::TestApp;

#[test]
fn every_spec_name_round_trips_and_the_example_aliases_map_to_canonical_names() {
    for t in EventType::ALL {
        assert_eq!(EventType::parse(t.as_str()), Some(t));
        assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
    }
    assert_eq!(
        EventType::parse("alert.domain_matched"),
        Some(EventType::SearchAlert)
    );
    assert_eq!(
        EventType::parse("watchlist.domain_changed"),
        Some(EventType::WatchlistChange)
    );
    assert_eq!(
        EventType::parse("sequence.email_replied"),
        Some(EventType::SequenceReplied)
    );
    assert_eq!(EventType::parse("*"), None);
    assert_eq!(EventType::parse("list.deleted"), None);
}

#[tokio::test]
async fn an_event_exists_only_if_its_transaction_commits() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Starter).await;
    let db = &app.state.db;

    let mut tx = db.pool.begin().await.unwrap();
    record(
        &mut tx,
        acct.account_id,
        EventType::ListItemAdded,
        &json!({"domain": "a.com"}),
        1,
    )
    .await
    .unwrap();
    tx.rollback().await.unwrap();
    assert!(
        for_account(db, acct.account_id, 10)
            .await
            .unwrap()
            .is_empty()
    );

    let mut tx = db.pool.begin().await.unwrap();
    let first = record(
        &mut tx,
        acct.account_id,
        EventType::ListItemAdded,
        &json!({"domain": "b.com"}),
        2,
    )
    .await
    .unwrap();
    let second = record(
        &mut tx,
        acct.account_id,
        EventType::ListStatusChanged,
        &json!({"status": "contacted"}),
        3,
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert!(second > first);

    let events = for_account(db, acct.account_id, 10).await.unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].event_type, EventType::ListStatusChanged);
    assert_eq!(events[1].data, json!({"domain": "b.com"}));
    assert_eq!(events[1].created_at, 2);
}

#[tokio::test]
async fn pending_events_come_oldest_first_and_are_dispatched_once() {
    let app = TestApp::new().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    let mut conn = app.state.db.pool.acquire().await.unwrap();
    let mut ids = Vec::new();
    for (i, acct) in [&a, &b, &a].into_iter().enumerate() {
        let id = record(
            &mut conn,
            acct.account_id,
            EventType::DomainEnriched,
            &json!({"n": i}),
            i as i64,
        )
        .await
        .unwrap();
        ids.push(id);
    }
    let work = pending(&mut conn, 10).await.unwrap();
    assert_eq!(work.iter().map(|e| e.id).collect::<Vec<_>>(), ids);
    assert_eq!(work[1].account_id, b.account_id);
    assert_eq!(pending(&mut conn, 2).await.unwrap().len(), 2);

    // Two consumers race for the first event: exactly one wins.
    assert!(mark_dispatched(&mut conn, ids[0], 100).await.unwrap());
    assert!(!mark_dispatched(&mut conn, ids[0], 101).await.unwrap());
    // A dispatch that rolls back leaves the event pending.
    let mut tx = app.state.db.pool.begin().await.unwrap();
    assert!(mark_dispatched(&mut tx, ids[1], 102).await.unwrap());
    tx.rollback().await.unwrap();
    let left: Vec<i64> = pending(&mut conn, 10)
        .await
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(left, ids[1..]);
}

#[tokio::test]
async fn claiming_in_batches_hands_each_event_to_one_caller_in_order() {
    let app = TestApp::new().await;
    let acct = app.account(Plan::Starter).await;
    let db = &app.state.db;
    let mut conn = db.pool.acquire().await.unwrap();
    for i in 0..25 {
        record(
            &mut conn,
            acct.account_id,
            EventType::ListItemAdded,
            &json!({"i": i}),
            1,
        )
        .await
        .unwrap();
    }
    // A row of a type this server does not know stays for the server that does.
    sqlx::query("INSERT INTO event_outbox (account_id, event_type, data, created_at) VALUES ($1, 'future.kind', '{}', 1)")
        .bind(acct.account_id)
        .execute(&mut *conn)
        .await
        .unwrap();
    drop(conn);

    let claimers = (0..4).map(|_| {
        let db = db.clone();
        tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                let mut tx = db.pool.begin().await.unwrap();
                let batch = super::claim_pending(&mut tx, db.backend, 4, 2)
                    .await
                    .unwrap();
                tx.commit().await.unwrap();
                if batch.is_empty() {
                    return got;
                }
                let ids: Vec<i64> = batch.iter().map(|e| e.id).collect();
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
                got.extend(batch.into_iter().map(|e| e.data["i"].as_i64().unwrap()));
            }
        })
    });
    let mut all: Vec<i64> = Vec::new();
    for c in claimers {
        all.extend(c.await.unwrap());
    }
    all.sort();
    assert_eq!(all, (0..25).collect::<Vec<_>>());
    let mut conn = db.pool.acquire().await.unwrap();
    let left = pending(&mut conn, 10).await.unwrap();
    assert!(left.is_empty());
    let unknown: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM event_outbox WHERE dispatched_at IS NULL")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
    assert_eq!(unknown, 1);

    // A claim in a transaction that rolls back leaves the events pending.
    record(
        &mut conn,
        acct.account_id,
        EventType::ListItemAdded,
        &json!({"i": 99}),
        3,
    )
    .await
    .unwrap();
    drop(conn);
    let mut tx = db.pool.begin().await.unwrap();
    assert_eq!(
        super::claim_pending(&mut tx, db.backend, 10, 4)
            .await
            .unwrap()
            .len(),
        1
    );
    tx.rollback().await.unwrap();
    let mut conn = db.pool.acquire().await.unwrap();
    assert_eq!(pending(&mut conn, 10).await.unwrap().len(), 1);
}
