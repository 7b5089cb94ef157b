//! The mailbox pool through the router, on either backend.

use serde_json::json;

use crate::testkit::{insert_send_account, sequence};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

#[tokio::test]
async fn the_pool_is_replaced_atomically_in_order_without_foreign_accounts() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let a = insert_send_account(&app, acct.account_id, "a@acme.io").await;
    let b = insert_send_account(&app, acct.account_id, "b@acme.io").await;
    let other = app.account(Plan::Pro).await;
    let foreign = insert_send_account(&app, other.account_id, "x@rival.io").await;
    let id = sequence(&app, key, json!({"name": "Pool", "send_account_id": a})).await;
    let path = format!("/v1/sequences/{id}/mailbox-pool");

    let r = app
        .call(
            "PUT",
            &path,
            Some(key),
            Some(json!({"send_account_ids": [b, foreign, a, b]})),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{:?}", r.body);
    assert_eq!(r.body, json!({"sequence_id": id, "pool_size": 2}));
    let pool = app.get(&path, key).await.body;
    assert_eq!(pool["sequence_id"], id);
    let entries = pool["pool"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(
        (
            entries[0]["send_account_id"].clone(),
            entries[0]["position"].clone()
        ),
        (json!(b), json!(0))
    );
    assert_eq!(
        (
            entries[1]["from_email"].clone(),
            entries[1]["position"].clone()
        ),
        (json!("a@acme.io"), json!(1))
    );
    assert_eq!(
        (
            entries[1]["daily_limit"].clone(),
            entries[1]["sent_today"].clone()
        ),
        (json!(40), json!(0))
    );
    assert_eq!(entries[1]["is_active"], true);
    assert_eq!(entries[1]["from_name"], "Seller");

    // Clone copies the pool; an empty array reverts to single-mailbox mode.
    let copy = app
        .post(&format!("/v1/sequences/{id}/clone"), key, json!({}))
        .await
        .body["id"]
        .as_i64()
        .unwrap();
    assert_eq!(
        app.get(&format!("/v1/sequences/{copy}/mailbox-pool"), key)
            .await
            .body["pool"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let r = app
        .call(
            "PUT",
            &path,
            Some(key),
            Some(json!({"send_account_ids": []})),
        )
        .await;
    assert_eq!(r.body["pool_size"], 0);
    assert_eq!(app.get(&path, key).await.body["pool"], json!([]));
    assert_eq!(
        app.get(&format!("/v1/sequences/{id}"), key).await.body["send_account_id"],
        a
    );

    // Another account's sequence: 404 both ways; bad bodies: 400.
    assert_eq!(app.get(&path, &other.api_key).await.status, 404);
    let r = app
        .call(
            "PUT",
            &path,
            Some(&other.api_key),
            Some(json!({"send_account_ids": [foreign]})),
        )
        .await;
    assert_eq!(r.status.as_u16(), 404);
    let r = app
        .call(
            "PUT",
            &path,
            Some(key),
            Some(json!({"send_account_ids": "a"})),
        )
        .await;
    assert_eq!(r.status.as_u16(), 400);
}
