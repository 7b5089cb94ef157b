//! The marketplace through the router on either backend: publishing
//! scrubs secrets and tenancy, search and sort against a brute-force
//! ordering, private entries, installs under the cap, ratings (exact under
//! concurrency), deletion.

use serde_json::{Value, json};

use crate::workflows::tests::{Receiver, app, create, manual};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::{TestAccount, TestApp, TestResponse};

fn memory() -> Value {
    json!([{"type": "cross_run_memory", "config": {"op": "store", "key": "k", "value": 1}}])
}

async fn publish(app: &TestApp, a: &TestAccount, workflow: i64, body: Value) -> TestResponse {
    app.post(
        &format!("/v1/workflows/{workflow}/publish"),
        &a.api_key,
        body,
    )
    .await
}

async fn published(app: &TestApp, a: &TestAccount, workflow: i64, name: &str) -> i64 {
    let r = publish(
        app,
        a,
        workflow,
        json!({"name": name, "category": "outbound"}),
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["id"].as_i64().unwrap()
}

async fn install(app: &TestApp, a: &TestAccount, entry: i64) -> TestResponse {
    app.post(
        &format!("/v1/workflows/marketplace/{entry}/install"),
        &a.api_key,
        json!({}),
    )
    .await
}

async fn rate(app: &TestApp, a: &TestAccount, entry: i64, body: Value) -> TestResponse {
    app.post(
        &format!("/v1/workflows/marketplace/{entry}/rate"),
        &a.api_key,
        body,
    )
    .await
}

#[tokio::test]
async fn publishing_scrubs_every_secret_and_the_authors_ids() {
    let app = app().await;
    let author = app.account(Plan::Enterprise).await;
    let receiver = Receiver::start(json!({})).await;
    let conn = app
        .post(
            "/v1/connections",
            &author.api_key,
            json!({"name": "crm", "base_url": receiver.url, "auth_type": "bearer",
                "headers": {"Authorization": "Bearer conn-secret-1"}}),
        )
        .await;
    assert_eq!(conn.status, 201, "{:?}", conn.body);
    let conn_id = conn.body["id"].as_i64().unwrap();
    let list = app
        .post("/v1/lists", &author.api_key, json!({"name": "Mine"}))
        .await;
    let list_id = list.body["id"].as_i64().unwrap();
    let helper = create(&app, &author.api_key, manual("helper", memory())).await;
    let helper_id = helper["id"].as_i64().unwrap();
    let w = create(
        &app,
        &author.api_key,
        json!({"name": "Leaky", "description": "All the secrets", "trigger_type": "webhook",
        "actions": [
            {"type": "http_request", "config": {"method": "POST",
                "url": "https://api.example.com/v1/push?api_key=SECRET-QUERY-2&page=1",
                "headers": {"Authorization": "Bearer SECRET-BEARER-3",
                    "X-Api-Key": "SECRET-APIKEY-4", "Cookie": "sid=SECRET-COOKIE-5",
                    "X-Shop-Token": "SECRET-TOKEN-6", "Accept": "application/json"},
                "body": {"domain": "{{domain}}", "auth": {"password": "SECRET-PASS-7"},
                    "client_secret": "SECRET-CLIENT-8"}}},
            {"type": "http_request", "config": {"method": "GET", "url": "",
                "connection_id": conn_id}},
            {"type": "conditional_branch", "config": {"branches": [{
                "when": {"field": "industry", "value": "Software"},
                "then": [{"type": "add_to_list", "config": {"list_id": list_id}}]}]}},
            {"type": "sub_workflow", "config": {"workflow_id": helper_id}},
            {"type": "wait_for_approval", "config": {"message": "Send?",
                "slack_url": "https://hooks.slack.com/services/T1/B2/SECRET-SLACK-9"}},
        ]}),
    )
    .await;
    let wid = w["id"].as_i64().unwrap();
    let token = w["webhook_token"].as_str().unwrap().to_owned();
    let r = publish(
        &app,
        &author,
        wid,
        json!({"category": "integrations", "tags": ["CRM", "crm", "sync"]}),
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let entry = r.body["id"].as_i64().unwrap();
    assert_eq!(r.body["name"], "Leaky");
    assert_eq!(r.body["description"], "All the secrets");
    assert_eq!(r.body["tags"], json!(["crm", "sync"]));
    assert_eq!(r.body["difficulty"], "intermediate");
    assert_eq!(r.body["is_public"], true);

    let installer = app.account(Plan::Enterprise).await;
    let seen = app
        .get(
            &format!("/v1/workflows/marketplace/{entry}"),
            &installer.api_key,
        )
        .await;
    assert_eq!(seen.status, 200);
    let installed = install(&app, &installer, entry).await;
    assert_eq!(installed.status, 201, "{:?}", installed.body);
    assert_eq!(installed.body["is_active"], false);
    let iid = installed.body["id"].as_i64().unwrap();
    let workflow = app
        .get(&format!("/v1/workflows/{iid}"), &installer.api_key)
        .await;
    let secrets = [
        "SECRET-QUERY-2",
        "SECRET-BEARER-3",
        "SECRET-APIKEY-4",
        "SECRET-COOKIE-5",
        "SECRET-TOKEN-6",
        "SECRET-PASS-7",
        "SECRET-CLIENT-8",
        "SECRET-SLACK-9",
        "conn-secret-1",
        token.as_str(),
    ];
    // The author's ids are placeholders by name (checked below), so only
    // the secrets' texts are searched for.
    let _ = (list_id, helper_id, conn_id);
    for (what, body) in [
        ("entry", &seen.body),
        ("installed workflow", &workflow.body),
    ] {
        let text = body.to_string();
        for s in secrets {
            assert!(!text.contains(s), "{s} in the {what}: {text}");
        }
        assert!(
            text.contains("application/json"),
            "plain headers stay: {text}"
        );
    }
    assert_ne!(workflow.body["webhook_token"], json!(token));
    let names: Vec<&str> = installed.body["placeholders"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    // `auth` holds the password: the whole object is replaced.
    for n in [
        "url",
        "authorization",
        "x_api_key",
        "cookie",
        "x_shop_token",
        "auth",
        "client_secret",
        "connection_id",
        "list_id",
        "workflow_id",
        "slack_url",
    ] {
        assert!(names.contains(&n), "{n} not in {names:?}");
    }
    // Nothing of the installer's may run on the author's values: activation
    // is refused until every placeholder is filled.
    let exec = app
        .post(
            &format!("/v1/workflows/{iid}/execute"),
            &installer.api_key,
            json!({}),
        )
        .await;
    assert_eq!(exec.status, 400, "{:?}", exec.body);
}

#[tokio::test]
async fn names_are_unique_per_author_and_private_entries_stay_with_their_author() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    let wa = create(&app, &a.api_key, manual("wa", memory())).await["id"]
        .as_i64()
        .unwrap();
    let wb = create(&app, &b.api_key, manual("wb", memory())).await["id"]
        .as_i64()
        .unwrap();
    published(&app, &a, wa, "Same name").await;
    let dup = publish(
        &app,
        &a,
        wa,
        json!({"name": "same NAME", "category": "outbound"}),
    )
    .await;
    assert_eq!(dup.status, 400, "{:?}", dup.body);
    assert!(dup.detail().contains("already"), "{}", dup.detail());
    published(&app, &b, wb, "Same name").await;
    for bad in [
        json!({"category": "gossip"}),
        json!({"category": "outbound", "difficulty": "expert"}),
        json!({"category": "outbound", "tags": ["x".repeat(31)]}),
        json!({"category": "outbound", "name": ""}),
    ] {
        let r = publish(&app, &a, wa, bad.clone()).await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
    }
    assert_eq!(
        publish(&app, &b, wa, json!({"category": "outbound"}))
            .await
            .status,
        404
    );

    let private = publish(
        &app,
        &a,
        wa,
        json!({"name": "Hidden", "category": "monitoring", "is_public": false}),
    )
    .await;
    assert_eq!(private.status, 201);
    let pid = private.body["id"].as_i64().unwrap();
    let path = format!("/v1/workflows/marketplace/{pid}");
    assert_eq!(app.get(&path, &a.api_key).await.status, 200);
    assert_eq!(app.get(&path, &b.api_key).await.status, 404);
    assert_eq!(install(&app, &b, pid).await.status, 404);
    let seen_by_b = app
        .get("/v1/workflows/marketplace?q=hidden", &b.api_key)
        .await;
    assert_eq!(seen_by_b.body["total"], 0);
    let seen_by_a = app
        .get("/v1/workflows/marketplace?q=hidden", &a.api_key)
        .await;
    assert_eq!(seen_by_a.body["total"], 1);
    // Handles: one per author, distinct.
    let ha = private.body["author_handle"].as_str().unwrap().to_owned();
    let list = app.get("/v1/workflows/marketplace", &b.api_key).await;
    let hb: Vec<&str> = list.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["author_handle"] != json!(ha))
        .filter_map(|e| e["author_handle"].as_str())
        .collect();
    assert_eq!(hb.len(), 1, "{:?}", list.body);

    // Only the author deletes; others get 404.
    assert_eq!(
        app.call("DELETE", &path, Some(&b.api_key), None)
            .await
            .status,
        404
    );
    assert_eq!(
        app.call("DELETE", &path, Some(&a.api_key), None)
            .await
            .status,
        204
    );
    assert_eq!(app.get(&path, &a.api_key).await.status, 404);
    assert_eq!(
        app.call("DELETE", &path, Some(&a.api_key), None)
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn installs_count_under_the_cap_and_ratings_need_an_install() {
    let app = app().await;
    let author = app.account(Plan::Pro).await;
    let w = create(&app, &author.api_key, manual("w", memory())).await["id"]
        .as_i64()
        .unwrap();
    let entry = published(&app, &author, w, "Rated").await;
    let rater = app.account(Plan::Starter).await;
    assert_eq!(
        rate(&app, &rater, entry, json!({"rating": 5})).await.status,
        403
    );
    assert_eq!(
        rate(&app, &author, entry, json!({"rating": 5}))
            .await
            .status,
        400
    );
    assert_eq!(install(&app, &rater, entry).await.status, 201);
    for bad in [json!(0), json!(6), json!("5"), json!(2.5)] {
        let r = rate(&app, &rater, entry, json!({"rating": bad})).await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
    }
    let r = rate(&app, &rater, entry, json!({"rating": 5, "review": "Works"})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        (r.body["rating_sum"].clone(), r.body["rating_count"].clone()),
        (json!(5), json!(1))
    );
    let r = rate(&app, &rater, entry, json!({"rating": 2})).await;
    assert_eq!(
        (r.body["rating_sum"].clone(), r.body["rating_count"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(r.body["average_rating"], 2.0);
    let mine = app.get("/v1/workflows/my-ratings", &rater.api_key).await;
    assert_eq!(mine.body["marketplace_ratings"][0]["marketplace_id"], entry);
    assert_eq!(mine.body["marketplace_ratings"][0]["rating"], 2);
    assert_eq!(
        rate(&app, &rater, 999_999, json!({"rating": 3}))
            .await
            .status,
        404
    );

    // Starter's cap is 5: the rater has 1; four more, then a 400 that
    // leaves install_count alone.
    for _ in 0..4 {
        assert_eq!(install(&app, &rater, entry).await.status, 201);
    }
    let before = app
        .get(
            &format!("/v1/workflows/marketplace/{entry}"),
            &rater.api_key,
        )
        .await
        .body["install_count"]
        .clone();
    assert_eq!(before, 5);
    let over = install(&app, &rater, entry).await;
    assert_eq!(over.status, 400, "{:?}", over.body);
    let after = app
        .get(
            &format!("/v1/workflows/marketplace/{entry}"),
            &rater.api_key,
        )
        .await;
    assert_eq!(after.body["install_count"], 5);
}

#[tokio::test]
async fn concurrent_ratings_keep_the_sums_exact() {
    let app = app().await;
    let author = app.account(Plan::Pro).await;
    let w = create(&app, &author.api_key, manual("w", memory())).await["id"]
        .as_i64()
        .unwrap();
    let entry = published(&app, &author, w, "Popular").await;
    let mut raters = Vec::new();
    for _ in 0..8 {
        let r = app.account(Plan::Starter).await;
        assert_eq!(install(&app, &r, entry).await.status, 201);
        raters.push(r);
    }
    let first = futures::future::join_all(
        raters
            .iter()
            .enumerate()
            .map(|(i, r)| rate(&app, r, entry, json!({"rating": (i % 5) as i64 + 1}))),
    )
    .await;
    assert!(
        first.iter().all(|r| r.status == 200),
        "{:?}",
        first.iter().map(|r| &r.body).collect::<Vec<_>>()
    );
    // Every rater changes their mind at once, twice each.
    let second = futures::future::join_all(raters.iter().flat_map(|r| {
        [
            rate(&app, r, entry, json!({"rating": 1})),
            rate(&app, r, entry, json!({"rating": 4})),
        ]
    }))
    .await;
    assert!(second.iter().all(|r| r.status == 200));
    let e = app
        .get(
            &format!("/v1/workflows/marketplace/{entry}"),
            &author.api_key,
        )
        .await;
    let stored: Vec<i64> =
        sqlx::query_scalar("SELECT rating FROM marketplace_ratings WHERE entry_id = $1")
            .bind(entry)
            .fetch_all(&app.state.db.pool)
            .await
            .unwrap();
    assert_eq!(stored.len(), 8);
    assert_eq!(e.body["rating_count"], 8);
    assert_eq!(e.body["rating_sum"], stored.iter().sum::<i64>());
    assert_eq!(e.body["install_count"], 8);
}

/// (sort key) of an entry as the brute force orders it.
fn brute_order(entries: &mut [Value], sort: &str) {
    let f = |e: &Value, k: &str| e[k].as_f64().unwrap();
    let id = |e: &Value| e["id"].as_i64().unwrap();
    entries.sort_by(|a, b| {
        let keys = match sort {
            "newest" => vec![(f(b, "created_ms"), f(a, "created_ms"))],
            "top_rated" => vec![
                (f(b, "exact_average"), f(a, "exact_average")),
                (f(b, "rating_count"), f(a, "rating_count")),
            ],
            _ => vec![(f(b, "install_count"), f(a, "install_count"))],
        };
        keys.iter()
            .map(|(x, y)| x.partial_cmp(y).unwrap())
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(id(b).cmp(&id(a)))
    });
}

#[tokio::test]
async fn search_and_sort_match_a_brute_force_ordering() {
    let app = app().await;
    let authors = [
        app.account(Plan::Enterprise).await,
        app.account(Plan::Enterprise).await,
        app.account(Plan::Enterprise).await,
    ];
    let viewer = app.account(Plan::Starter).await;
    let words = [
        "Enrich",
        "HubSpot sync",
        "Slack digest",
        "Score",
        "Ünïcode Café",
        "Cleanup",
    ];
    let categories = [
        "outbound",
        "enrichment",
        "monitoring",
        "notifications",
        "data-cleanup",
    ];
    let difficulties = ["beginner", "intermediate", "advanced"];
    let mut ids = Vec::new();
    for i in 0..36usize {
        let a = &authors[i % 3];
        let w = create(&app, &a.api_key, manual(&format!("w{i}"), memory())).await["id"]
            .as_i64()
            .unwrap();
        let r = publish(
            &app,
            a,
            w,
            json!({"name": format!("{} {i}", words[i % words.len()]),
                "description": format!("Entry number {i} for {}", words[(i * 7) % words.len()]),
                "category": categories[i % categories.len()],
                "difficulty": difficulties[(i / 2) % 3],
                "is_public": i % 11 != 5}),
        )
        .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        ids.push(r.body["id"].as_i64().unwrap());
        app.clock
            .advance(std::time::Duration::from_secs(1 + (i as u64 * 7) % 5));
    }
    // Spread installs and ratings (ties included) straight in the table,
    // with the sums consistent, as the endpoints keep them.
    for (i, id) in ids.iter().enumerate() {
        let (count, sum) = ((i * 5) % 4, (i * 3) % 4 * 2 + (i * 5) % 4);
        let avg = if count == 0 {
            0.0
        } else {
            sum as f64 / count as f64
        };
        sqlx::query(
            "UPDATE marketplace_entries SET install_count = $1, rating_count = $2, \
             rating_sum = $3, average_rating = $4 WHERE id = $5",
        )
        .bind(((i * 13) % 7) as i64)
        .bind(count as i64)
        .bind(sum as i64)
        .bind(avg)
        .bind(*id)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    }
    // The brute force: every entry the viewer may see, read one by one.
    let mut all = Vec::new();
    for id in &ids {
        let r = app
            .get(&format!("/v1/workflows/marketplace/{id}"), &viewer.api_key)
            .await;
        if r.status == 404 {
            continue;
        }
        let mut e = r.body.clone();
        let (s, c) = (
            e["rating_sum"].as_f64().unwrap(),
            e["rating_count"].as_f64().unwrap(),
        );
        e["exact_average"] = json!(if c == 0.0 { 0.0 } else { s / c });
        let created =
            chrono::DateTime::parse_from_rfc3339(e["created_at"].as_str().unwrap()).unwrap();
        e["created_ms"] = json!(created.timestamp_millis());
        all.push(e);
    }
    assert_eq!(all.len(), 33);
    for sort in ["popular", "newest", "top_rated"] {
        for (q, category) in [
            (None, None),
            (Some("enrich"), None),
            (Some("SLACK"), None),
            (Some("café"), None),
            (Some("sy"), None),
            (None, Some("monitoring")),
            (Some("entry number 1"), Some("outbound")),
            (Some("no such words"), None),
        ] {
            let mut expected: Vec<Value> = all
                .iter()
                .filter(|e| {
                    let text = format!(
                        "{}\n{}",
                        e["name"].as_str().unwrap(),
                        e["description"].as_str().unwrap()
                    )
                    .to_lowercase();
                    q.is_none_or(|q| text.contains(&q.to_lowercase()))
                        && category.is_none_or(|c| e["category"] == c)
                })
                .cloned()
                .collect();
            brute_order(&mut expected, sort);
            let want: Vec<i64> = expected.iter().map(|e| e["id"].as_i64().unwrap()).collect();
            let mut got = Vec::new();
            let mut page = 1;
            loop {
                let mut path = format!("/v1/workflows/marketplace?sort={sort}&limit=7&page={page}");
                if let Some(q) = q {
                    path.push_str(&format!("&q={}", urlencode(q)));
                }
                if let Some(c) = category {
                    path.push_str(&format!("&category={c}"));
                }
                let r = app.get(&path, &viewer.api_key).await;
                assert_eq!(r.status, 200, "{path}: {:?}", r.body);
                assert_eq!(r.body["total"], want.len(), "{path}");
                assert_eq!(r.body["pages"], want.len().div_ceil(7), "{path}");
                let items = r.body["items"].as_array().unwrap();
                got.extend(items.iter().map(|e| e["id"].as_i64().unwrap()));
                if items.len() < 7 {
                    break;
                }
                page += 1;
            }
            assert_eq!(got, want, "sort={sort} q={q:?} category={category:?}");
        }
    }
    let d = app
        .get(
            "/v1/workflows/marketplace?difficulty=advanced&limit=50",
            &viewer.api_key,
        )
        .await;
    assert!(
        d.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["difficulty"] == "advanced")
    );
    for bad in [
        "limit=51",
        "limit=0",
        "page=0",
        "sort=random",
        "category=gossip",
        "difficulty=hard",
    ] {
        let r = app
            .get(&format!("/v1/workflows/marketplace?{bad}"), &viewer.api_key)
            .await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
    }
    let free = app.account(Plan::Free).await;
    assert_eq!(
        app.get("/v1/workflows/marketplace", &free.api_key)
            .await
            .status,
        403
    );
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
