//! The suppression list through the router, on either backend.

use serde_json::json;

use super::address::parse;
use super::store::suppressed;
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

const PATH: &str = "/v1/sequences/suppression";

#[tokio::test]
async fn entries_are_lowercased_idempotent_paged_and_per_account() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;

    let r = app
        .post(PATH, key, json!({"email": " Jane@Acme.COM "}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(
        (
            r.body["email"].clone(),
            r.body["domain"].clone(),
            r.body["reason"].clone()
        ),
        (json!("jane@acme.com"), json!("acme.com"), json!("manual"))
    );
    let again = app
        .post(
            PATH,
            key,
            json!({"email": "jane@acme.com", "reason": "bounce"}),
        )
        .await;
    assert_eq!(again.status, 200);
    assert_eq!(
        (again.body["id"].clone(), again.body["reason"].clone()),
        (r.body["id"].clone(), json!("manual"))
    );

    for (body, detail) in [
        (json!({"email": "not-an-address"}), "valid address"),
        (json!({"email": "x@acme.com", "reason": "spam"}), "reason"),
        (json!({}), "email"),
    ] {
        let r = app.post(PATH, key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}");
        assert!(r.detail().contains(detail), "{}", r.detail());
    }

    let imported = app
        .post(&format!("{PATH}/import"), key, json!({"emails": ["a@x.com", "A@X.com", "bad", "jane@acme.com", "@Competitor.io", "b@x.com"]}))
        .await;
    assert_eq!(imported.status, 200, "{:?}", imported.body);
    assert_eq!(
        (
            imported.body["added"].clone(),
            imported.body["skipped"].clone()
        ),
        (json!(3), json!(3))
    );
    let too_many = vec!["a@x.com"; 10_001];
    assert_eq!(
        app.post(&format!("{PATH}/import"), key, json!({"emails": too_many}))
            .await
            .status,
        400
    );

    let page = app.get(&format!("{PATH}?limit=2&offset=1"), key).await;
    assert_eq!(page.body["total"], 4);
    assert_eq!(page.body["entries"].as_array().unwrap().len(), 2);
    assert_eq!(app.get(&format!("{PATH}?limit=0"), key).await.status, 400);

    // A domain entry suppresses every address there; enrollment asks this.
    let targets: Vec<_> = ["sales@competitor.io", "jane@acme.com", "joe@acme.com"]
        .iter()
        .map(|e| parse(e).unwrap())
        .collect();
    let hits = suppressed(&app.state.db, acct.account_id, &targets)
        .await
        .unwrap();
    assert_eq!(hits, vec!["sales@competitor.io", "jane@acme.com"]);

    // Other accounts neither see nor delete these; Free gets 403.
    let other = app.account(Plan::Pro).await;
    assert_eq!(app.get(PATH, &other.api_key).await.body["total"], 0);
    assert!(
        suppressed(&app.state.db, other.account_id, &targets)
            .await
            .unwrap()
            .is_empty()
    );
    let id = r.body["id"].as_i64().unwrap();
    assert_eq!(
        app.call(
            "DELETE",
            &format!("{PATH}/{id}"),
            Some(&other.api_key),
            None
        )
        .await
        .status,
        404
    );
    let free = app.account(Plan::Free).await;
    assert_eq!(app.get(PATH, &free.api_key).await.status, 403);
    assert_eq!(
        app.call("DELETE", &format!("{PATH}/{id}"), Some(key), None)
            .await
            .status,
        204
    );
    assert_eq!(
        app.call("DELETE", &format!("{PATH}/{id}"), Some(key), None)
            .await
            .status,
        404
    );
    assert_eq!(app.get(PATH, key).await.body["total"], 3);
}
