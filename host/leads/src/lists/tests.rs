//! Lead lists through the router, on the backend the suite runs
//! (`OUTREACH_TEST_BACKEND`): fields and caps, items with the pool, stage
//! changes with their history and events, tenancy.

use serde_json::{Value, json};

use crate::testkit::{add_domains, findings, new_list, outbox, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::events::EventType;
use outreach_core::testing::TestApp;

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |_| {}).await
}

fn domains_of(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["domain"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn lists_are_created_read_updated_and_deleted_within_their_limits() {
    let app = app().await;
    // Enterprise: the test makes more requests than Free's 10 a minute.
    let a = app.account(Plan::Enterprise).await;
    let key = &a.api_key;

    let r = app
        .post(
            "/v1/lists",
            key,
            json!({"name": "  Q4 targets ", "description": "EU SaaS", "conversion_goal": 12.5}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = r.body["id"].as_i64().unwrap();
    assert_eq!(r.body["name"], "Q4 targets");
    assert_eq!(r.body["description"], "EU SaaS");
    assert_eq!(r.body["leads_count"], 0);
    assert_eq!(r.body["conversion_goal"], 12.5);
    assert_eq!(r.body["created_at"], "2026-11-21T12:00:00Z");

    for (body, detail) in [
        (json!({"name": ""}), "name must be 1 to 200 characters"),
        (
            json!({"name": "x".repeat(201)}),
            "name must be 1 to 200 characters",
        ),
        (
            json!({"name": "ok", "description": "d".repeat(1001)}),
            "description must be at most 1000 characters",
        ),
        (
            json!({"name": "ok", "conversion_goal": 101}),
            "conversion_goal must be a percentage between 0 and 100",
        ),
    ] {
        let r = app.post("/v1/lists", key, body).await;
        assert_eq!(r.status, 400);
        assert_eq!(r.detail(), detail);
    }
    let r = app
        .post("/v1/lists", key, json!({"name": "ok", "colour": "red"}))
        .await;
    assert_eq!(r.status, 400);
    // 200 characters are fine, and so are 1000 of description.
    let r = app
        .post(
            "/v1/lists",
            key,
            json!({"name": "é".repeat(200), "description": "d".repeat(1000)}),
        )
        .await;
    assert_eq!(r.status, 201);

    let r = app
        .call(
            "PUT",
            &format!("/v1/lists/{id}"),
            Some(key),
            Some(json!({"name": "Renamed", "conversion_goal": null})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["name"], "Renamed");
    assert_eq!(r.body["description"], "EU SaaS");
    assert!(r.body["conversion_goal"].is_null());

    let r = app.get("/v1/lists", key).await;
    assert_eq!(r.body["count"], 2);
    assert_eq!(r.body["data"][0]["name"], "Renamed");

    // 50 lists an account: the 51st is refused and not written.
    for n in 2..50 {
        new_list(&app, key, &format!("L{n}")).await;
    }
    let r = app
        .post("/v1/lists", key, json!({"name": "one too many"}))
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.detail().starts_with("Plan limit reached"),
        "{}",
        r.detail()
    );
    assert!(r.detail().contains("50 lead lists"), "{}", r.detail());
    assert_eq!(app.get("/v1/lists", key).await.body["count"], 50);

    let r = app
        .call("DELETE", &format!("/v1/lists/{id}"), Some(key), None)
        .await;
    assert_eq!(r.status, 204);
    let r = app.get(&format!("/v1/lists/{id}"), key).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.detail(), "Lead list not found");
}

#[tokio::test]
async fn another_accounts_list_is_not_found_on_every_route() {
    let app = app().await;
    let owner = app.account(Plan::Pro).await;
    let other = app.account(Plan::Pro).await;
    let list = new_list(&app, &owner.api_key, "Mine").await;
    add_domains(&app, &owner.api_key, list, &["acme.com"]).await;
    let key = &other.api_key;
    let calls: Vec<(&str, String, Option<Value>)> = vec![
        ("GET", format!("/v1/lists/{list}"), None),
        ("GET", format!("/v1/lists/{list}/enriched"), None),
        (
            "PUT",
            format!("/v1/lists/{list}"),
            Some(json!({"name": "x"})),
        ),
        ("DELETE", format!("/v1/lists/{list}"), None),
        (
            "POST",
            format!("/v1/lists/{list}/items"),
            Some(json!({"items": [{"domain": "b.com"}]})),
        ),
        ("DELETE", format!("/v1/lists/{list}/items/acme.com"), None),
        (
            "PUT",
            format!("/v1/lists/{list}/items/acme.com/status"),
            Some(json!({"status": "contacted"})),
        ),
        (
            "PATCH",
            format!("/v1/lists/{list}/items/1"),
            Some(json!({"status": "contacted"})),
        ),
        (
            "POST",
            format!("/v1/lists/{list}/bulk-status"),
            Some(json!({"status": "contacted", "domains": ["acme.com"]})),
        ),
        ("GET", format!("/v1/lists/{list}/funnel"), None),
        ("GET", format!("/v1/lists/{list}/funnel/export"), None),
        (
            "POST",
            "/v1/bulk/delete".into(),
            Some(json!({"list_id": list, "domain_ids": ["acme.com"]})),
        ),
        (
            "POST",
            "/v1/bulk/archive".into(),
            Some(json!({"source_list_id": list, "domain_ids": ["acme.com"]})),
        ),
    ];
    for (method, path, body) in calls {
        let r = app.call(method, &path, Some(key), body).await;
        assert_eq!(r.status, 404, "{method} {path}: {:?}", r.body);
        assert_eq!(r.detail(), "Lead list not found", "{method} {path}");
    }
    // Nothing moved for the owner.
    let r = app.get(&format!("/v1/lists/{list}"), &owner.api_key).await;
    assert_eq!(r.body["leads_count"], 1);
    assert_eq!(r.body["items"][0]["status"], "discovered");
    assert_eq!(app.get("/v1/lists", key).await.body["count"], 0);
}

#[tokio::test]
async fn items_are_normalised_deduplicated_and_their_domains_queued() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "Pipeline").await;
    seed(&app, "known.io", findings("Software", 40)).await;

    let items = json!({"items": [
        {"domain": "https://www.Acme.com/pricing", "notes": "met at expo"},
        {"domain": "acme.com"},
        {"domain": "KNOWN.io"},
    ]});
    let r = app
        .post(&format!("/v1/lists/{list}/items"), key, items)
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.body, json!({"added": 2, "skipped": 1, "leads_count": 2}));
    let r = add_domains(&app, key, list, &["acme.com", "beta.io"]).await;
    assert_eq!(r.body, json!({"added": 1, "skipped": 1, "leads_count": 3}));

    let r = app.get(&format!("/v1/lists/{list}"), key).await;
    assert_eq!(
        domains_of(&r.body["items"]),
        ["acme.com", "known.io", "beta.io"]
    );
    assert_eq!(r.body["items"][0]["notes"], "met at expo");
    assert_eq!(r.body["items"][0]["status"], "discovered");
    assert!(r.body["items"][0]["status_changed_at"].is_null());
    assert_eq!(r.body["items"][0]["added_at"], "2026-11-21T12:00:00Z");

    // The unknown domains joined the pool, queued for enrichment with the
    // account waiting; the known one was left alone.
    let queued: Vec<(String, String, String)> =
        sqlx::query_as("SELECT domain, status, source FROM domains ORDER BY domain")
            .fetch_all(&app.state.db.pool)
            .await
            .unwrap();
    assert_eq!(
        queued[0],
        ("acme.com".into(), "queued".into(), "list".into())
    );
    assert_eq!(
        queued[1],
        ("beta.io".into(), "queued".into(), "list".into())
    );
    assert_eq!(queued[2].1, "enriched");
    let jobs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE queue = 'domain_enrich'")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(jobs, 3, "two list domains and the seeded one");
    let waiting: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM domain_enrichment_requests WHERE account_id = $1")
            .bind(a.account_id)
            .fetch_one(&app.state.db.pool)
            .await
            .unwrap();
    assert_eq!(waiting, 2);

    // One list.item_added per new item, in the order added.
    let added = outbox(&app, a.account_id, EventType::ListItemAdded).await;
    let domains: Vec<&str> = added
        .iter()
        .map(|e| e["domain"].as_str().unwrap())
        .collect();
    assert_eq!(domains, ["acme.com", "known.io", "beta.io"]);
    assert_eq!(added[0]["list_id"], list);
    assert_eq!(added[0]["list_name"], "Pipeline");
    assert!(added[0]["item_id"].is_i64());

    // A bad domain refuses the whole request; so do 0 or 1,001 items.
    let r = add_domains(&app, key, list, &["gamma.io", "not a domain"]).await;
    assert_eq!(r.status, 400);
    assert!(
        r.detail().starts_with("Invalid domain 'not a domain'"),
        "{}",
        r.detail()
    );
    let r = app
        .post(
            &format!("/v1/lists/{list}/items"),
            key,
            json!({"items": []}),
        )
        .await;
    assert_eq!(r.status, 400);
    let many: Vec<String> = (0..1001).map(|i| format!("d{i}.com")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(add_domains(&app, key, list, &many).await.status, 400);
    assert_eq!(
        app.get(&format!("/v1/lists/{list}"), key).await.body["leads_count"],
        3
    );
    assert_eq!(
        outbox(&app, a.account_id, EventType::ListItemAdded)
            .await
            .len(),
        3
    );
}

#[tokio::test]
async fn a_list_holds_1000_items_and_a_request_past_that_writes_nothing() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "Big").await;
    let names: Vec<String> = (0..999).map(|i| format!("company{i}.com")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(
        add_domains(&app, key, list, &names).await.body["leads_count"],
        999
    );

    let r = add_domains(&app, key, list, &["one.com", "two.com"]).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.detail(),
        "Plan limit reached: a lead list holds at most 1000 items (it has 999, this adds 2)"
    );
    let r = add_domains(&app, key, list, &["one.com", "company5.com"]).await;
    assert_eq!(r.status, 201, "a duplicate does not count against the cap");
    assert_eq!(r.body["leads_count"], 1000);
    let r = add_domains(&app, key, list, &["two.com"]).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        outbox(&app, a.account_id, EventType::ListItemAdded)
            .await
            .len(),
        1000
    );
    let pooled: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM domains WHERE domain = 'two.com'")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(pooled, 0, "the refused request added nothing to the pool");
}

#[tokio::test]
async fn stage_changes_stamp_the_item_write_history_and_record_events() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "Funnel").await;
    add_domains(&app, key, list, &["acme.com", "beta.io"]).await;
    crate::testkit::days_pass(&app, 2);

    let r = app
        .call(
            "PUT",
            &format!("/v1/lists/{list}/items/WWW.ACME.COM/status"),
            Some(key),
            Some(json!({"status": "qualified"})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["status"], "qualified");
    assert_eq!(r.body["status_changed_at"], "2026-11-23T12:00:00Z");
    let acme = r.body["id"].as_i64().unwrap();

    // The same stage again changes nothing: no stamp, no event.
    crate::testkit::days_pass(&app, 1);
    let r = app
        .call(
            "PATCH",
            &format!("/v1/lists/{list}/items/{acme}"),
            Some(key),
            Some(json!({"status": "qualified", "notes": "call Ann"})),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status_changed_at"], "2026-11-23T12:00:00Z");
    assert_eq!(r.body["notes"], "call Ann");
    // Backwards is allowed.
    let r = app
        .call(
            "PATCH",
            &format!("/v1/lists/{list}/items/{acme}"),
            Some(key),
            Some(json!({"status": "contacted"})),
        )
        .await;
    assert_eq!(r.body["status"], "contacted");
    assert_eq!(r.body["status_changed_at"], "2026-11-24T12:00:00Z");

    let events = outbox(&app, a.account_id, EventType::ListStatusChanged).await;
    assert_eq!(
        events,
        vec![
            json!({"list_id": list, "item_id": acme, "domain": "acme.com", "old_status": "discovered", "new_status": "qualified"}),
            json!({"list_id": list, "item_id": acme, "domain": "acme.com", "old_status": "qualified", "new_status": "contacted"}),
        ]
    );
    let stages: Vec<(Option<String>, i64)> = sqlx::query_as(
        "SELECT status, entered_at FROM list_item_stages WHERE item_id = $1 ORDER BY id",
    )
    .bind(acme)
    .fetch_all(&app.state.db.pool)
    .await
    .unwrap();
    let day = 86_400_000;
    let start = stages[0].1;
    assert_eq!(
        stages,
        vec![
            (Some("discovered".into()), start),
            (Some("qualified".into()), start + 2 * day),
            (Some("contacted".into()), start + 3 * day),
        ]
    );

    // Bad input changes nothing.
    for (method, path, body, status) in [
        (
            "PUT",
            format!("/v1/lists/{list}/items/acme.com/status"),
            json!({"status": "won"}),
            400,
        ),
        (
            "PUT",
            format!("/v1/lists/{list}/items/gamma.io/status"),
            json!({"status": "contacted"}),
            404,
        ),
        (
            "PATCH",
            format!("/v1/lists/{list}/items/{acme}"),
            json!({}),
            400,
        ),
        (
            "PATCH",
            format!("/v1/lists/{list}/items/999999"),
            json!({"status": "contacted"}),
            404,
        ),
        (
            "PATCH",
            format!("/v1/lists/{list}/items/{acme}"),
            json!({"status": "Contacted"}),
            400,
        ),
    ] {
        let r = app.call(method, &path, Some(key), Some(body)).await;
        assert_eq!(r.status, status, "{method} {path}: {:?}", r.body);
    }
    let r = app
        .call(
            "PUT",
            &format!("/v1/lists/{list}/items/acme.com/status"),
            Some(key),
            Some(json!({"status": "won"})),
        )
        .await;
    assert_eq!(
        r.detail(),
        "status must be one of discovered, contacted, qualified, converted (got 'won')"
    );
    assert_eq!(
        outbox(&app, a.account_id, EventType::ListStatusChanged)
            .await
            .len(),
        2
    );

    // Removing an item by domain leaves a history row saying it left.
    let r = app
        .call(
            "DELETE",
            &format!("/v1/lists/{list}/items/acme.com"),
            Some(key),
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    let r = app
        .call(
            "DELETE",
            &format!("/v1/lists/{list}/items/acme.com"),
            Some(key),
            None,
        )
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.detail(), "List item not found");
    let last: Option<String> = sqlx::query_scalar(
        "SELECT status FROM list_item_stages WHERE item_id = $1 ORDER BY id DESC LIMIT 1",
    )
    .bind(acme)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap();
    assert_eq!(last, None);
    assert_eq!(
        app.get(&format!("/v1/lists/{list}"), key).await.body["leads_count"],
        1
    );
}

#[tokio::test]
async fn bulk_status_moves_by_domain_or_id_and_reports_what_the_list_lacks() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "Bulk").await;
    add_domains(&app, key, list, &["a.com", "b.com", "c.com"]).await;
    let path = format!("/v1/lists/{list}/bulk-status");

    let r = app
        .post(
            &path,
            key,
            json!({"status": "contacted", "domains": ["A.com", "https://b.com/x", "zzz.com"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({"updated": 2, "unchanged": 0, "not_found": ["zzz.com"]})
    );
    let items = app.get(&format!("/v1/lists/{list}"), key).await.body["items"].clone();
    let ids: Vec<i64> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    let r = app
        .post(
            &path,
            key,
            json!({"status": "contacted", "item_ids": [ids[0], ids[2], 424242]}),
        )
        .await;
    assert_eq!(
        r.body,
        json!({"updated": 1, "unchanged": 1, "not_found": ["424242"]})
    );
    assert_eq!(
        outbox(&app, a.account_id, EventType::ListStatusChanged)
            .await
            .len(),
        3
    );

    let five_hundred_one: Vec<String> = (0..501).map(|i| format!("d{i}.com")).collect();
    for body in [
        json!({"status": "contacted", "domains": []}),
        json!({"status": "contacted", "domains": five_hundred_one}),
        json!({"status": "contacted"}),
        json!({"status": "contacted", "domains": ["a.com"], "item_ids": [1]}),
        json!({"status": "lost", "domains": ["a.com"]}),
        json!({"status": "qualified", "domains": ["a.com", "bad domain"]}),
    ] {
        let r = app.post(&path, key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {:?}", r.body);
    }
    let r = app
        .post(&path, key, json!({"status": "qualified", "domains": []}))
        .await;
    assert_eq!(r.detail(), "name 1 to 500 items");
    assert_eq!(
        outbox(&app, a.account_id, EventType::ListStatusChanged)
            .await
            .len(),
        3
    );
    let statuses: Vec<String> = app.get(&format!("/v1/lists/{list}"), key).await.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses, ["contacted", "contacted", "contacted"]);
}

#[tokio::test]
async fn enriched_items_carry_their_lead_and_unknown_domains_nulls() {
    let app = app().await;
    let a = app.account(Plan::Free).await;
    let key = &a.api_key;
    let mut f = findings("Software", 60);
    f.website_email = Some("hello@known.io".into());
    seed(&app, "known.io", f).await;
    let list = new_list(&app, key, "Leads").await;
    add_domains(&app, key, list, &["known.io", "fresh.io"]).await;

    let r = app.get(&format!("/v1/lists/{list}/enriched"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["id"], list);
    assert_eq!(r.body["name"], "Leads");
    let items = r.body["items"].as_array().unwrap();
    assert_eq!(items[0]["domain"], "known.io");
    assert_eq!(items[0]["status"], "discovered");
    assert_eq!(
        items[0]["lead"],
        json!({"domain": "known.io", "industry": "Software", "business_type": "B2B",
               "confidence": 0.8, "website_email": "hello@known.io", "registrant_country": "DE"})
    );
    assert_eq!(
        items[1]["lead"],
        json!({"domain": "fresh.io", "industry": null, "business_type": null,
               "confidence": null, "website_email": null, "registrant_country": null})
    );
    // Paging, for lists an operator raised past 1,000 items.
    let r = app
        .get(&format!("/v1/lists/{list}?limit=1&offset=1"), key)
        .await;
    assert_eq!(domains_of(&r.body["items"]), ["fresh.io"]);
    assert_eq!(r.body["leads_count"], 2);
    assert_eq!(
        app.get(&format!("/v1/lists/{list}?limit=0"), key)
            .await
            .status,
        400
    );
}

#[tokio::test]
async fn a_goal_binds_after_a_null_goal_on_the_same_connection() {
    // sqlx's `Any` driver binds a null f64 as a PostgreSQL float4; a cached
    // statement first prepared that way refused a goal afterwards.
    let app = app().await;
    let a = app.account(Plan::Free).await;
    let mut conn = app.state.db.pool.acquire().await.unwrap();
    for goal in [None, Some(12.5), None, Some(40.0)] {
        super::store::insert_list(&mut conn, a.account_id, "L", "", goal, 0)
            .await
            .unwrap();
    }
    let goals: Vec<Option<f64>> = sqlx::query_scalar(
        "SELECT conversion_goal FROM lead_lists WHERE account_id = $1 ORDER BY id",
    )
    .bind(a.account_id)
    .fetch_all(&mut *conn)
    .await
    .unwrap();
    assert_eq!(goals, [None, Some(12.5), None, Some(40.0)]);
}
