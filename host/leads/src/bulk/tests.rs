//! Bulk delete, archive and export through the router.

use serde_json::{Value, json};

use crate::testkit::{add_domains, findings, new_list, outbox, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::events::EventType;
use outreach_core::testing::TestApp;

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |_| {}).await
}

async fn items(app: &TestApp, key: &str, list: i64) -> Vec<(String, String)> {
    app.get(&format!("/v1/lists/{list}"), key).await.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["domain"].as_str().unwrap().into(),
                i["status"].as_str().unwrap().into(),
            )
        })
        .collect()
}

fn many(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("d{i}.com")).collect()
}

#[tokio::test]
async fn bulk_delete_removes_what_the_list_holds() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "L").await;
    add_domains(&app, key, list, &["a.com", "b.com", "c.com"]).await;

    let r = app
        .post(
            "/v1/bulk/delete",
            key,
            json!({"list_id": list, "domain_ids": ["A.com", "https://b.com/", "zzz.com"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body, json!({"removed": 2, "remaining": 1}));
    assert_eq!(
        items(&app, key, list).await,
        [("c.com".to_string(), "discovered".to_string())]
    );

    for body in [
        json!({"list_id": list, "domain_ids": []}),
        json!({"list_id": list, "domain_ids": many(501)}),
        json!({"list_id": list, "domain_ids": ["c.com", "bad domain"]}),
        json!({"list_id": list}),
    ] {
        let r = app.post("/v1/bulk/delete", key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}");
    }
    let r = app
        .post(
            "/v1/bulk/delete",
            key,
            json!({"list_id": list, "domain_ids": many(501)}),
        )
        .await;
    assert_eq!(r.detail(), "domain_ids must hold 1 to 500 domains");
    let r = app
        .post(
            "/v1/bulk/delete",
            key,
            json!({"list_id": 987654, "domain_ids": ["c.com"]}),
        )
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(items(&app, key, list).await.len(), 1);
}

#[tokio::test]
async fn bulk_archive_moves_items_with_their_stage_into_a_list_made_when_missing() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "Active").await;
    add_domains(&app, key, list, &["a.com", "b.com", "c.com"]).await;
    let r = app
        .call(
            "PUT",
            &format!("/v1/lists/{list}/items/a.com/status"),
            Some(key),
            Some(json!({"status": "qualified"})),
        )
        .await;
    assert_eq!(r.status, 200);

    let r = app
        .post(
            "/v1/bulk/archive",
            key,
            json!({"source_list_id": list, "domain_ids": ["a.com", "b.com", "nope.com"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let archive = r.body["archive_list_id"].as_i64().unwrap();
    assert_eq!(r.body["archived"], 2);
    let r = app.get(&format!("/v1/lists/{archive}"), key).await;
    assert_eq!(r.body["name"], "Archived");
    assert_eq!(
        items(&app, key, archive).await,
        [
            ("a.com".to_string(), "qualified".to_string()),
            ("b.com".to_string(), "discovered".to_string())
        ]
    );
    assert_eq!(items(&app, key, list).await.len(), 1);
    let added: Vec<Value> = outbox(&app, a.account_id, EventType::ListItemAdded).await;
    assert_eq!(added.len(), 5, "three adds and two moves into the archive");
    assert_eq!(added[4]["list_id"], archive);
    assert_eq!(added[4]["list_name"], "Archived");

    // The same archive is found by name; a domain it holds already only
    // leaves the source.
    add_domains(&app, key, list, &["a.com"]).await;
    let r = app
        .post(
            "/v1/bulk/archive",
            key,
            json!({"source_list_id": list, "domain_ids": ["a.com", "c.com"]}),
        )
        .await;
    assert_eq!(r.body, json!({"archived": 2, "archive_list_id": archive}));
    assert_eq!(items(&app, key, archive).await.len(), 3);
    assert!(items(&app, key, list).await.is_empty());
    assert_eq!(app.get("/v1/lists", key).await.body["count"], 2);

    // A named archive; the source itself cannot be the archive.
    add_domains(&app, key, list, &["e.com"]).await;
    let r = app
        .post("/v1/bulk/archive", key, json!({"source_list_id": list, "domain_ids": ["e.com"], "archive_list_name": "Lost 2026"}))
        .await;
    assert_eq!(r.status, 200);
    assert_ne!(r.body["archive_list_id"], archive);
    let r = app
        .post(
            "/v1/bulk/archive",
            key,
            json!({"source_list_id": archive, "domain_ids": ["a.com"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.detail(), "The archive list must not be the source list");
    let r = app
        .post(
            "/v1/bulk/archive",
            key,
            json!({"source_list_id": list, "domain_ids": many(501)}),
        )
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn bulk_export_writes_the_default_or_chosen_fields_without_formulas() {
    let app = app().await;
    let a = app.account(Plan::Free).await;
    let key = &a.api_key;
    let mut f = findings("Software", 70);
    f.company_name = Some("=cmd|' /C calc'!A0".into());
    f.phone = Some("+4930123456".into());
    f.technologies = vec![
        crate::domains::record::Technology {
            name: "Stripe".into(),
            categories: vec![],
            version: None,
            confidence: 100,
        },
        crate::domains::record::Technology {
            name: "React".into(),
            categories: vec![],
            version: None,
            confidence: 90,
        },
    ];
    seed(&app, "acme.com", f).await;

    let r = app
        .post(
            "/v1/bulk/export",
            key,
            json!({"domains": ["https://acme.com", "unknown.io"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.header("content-type"), Some("text/csv; charset=utf-8"));
    let Value::String(text) = &r.body else {
        panic!("{:?}", r.body)
    };
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        super::export::DEFAULT_FIELDS
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(
        rows[0].iter().collect::<Vec<_>>(),
        [
            "acme.com",
            "'=cmd|' /C calc'!A0",
            "Software",
            "",
            "DE",
            "",
            "'+4930123456",
            "",
            "B2B",
            "0.80",
            "Stripe; React"
        ]
    );
    assert_eq!(&rows[1][0], "unknown.io");
    assert!(rows[1].iter().skip(1).all(str::is_empty));

    let r = app
        .post(
            "/v1/bulk/export",
            key,
            json!({"domains": ["acme.com"], "fields": ["intent_score", "domain"]}),
        )
        .await;
    assert_eq!(
        r.body,
        Value::String("intent_score,domain\n70,acme.com\n".into())
    );

    for (body, detail) in [
        (
            json!({"domains": ["acme.com"], "fields": ["domain", "password"]}),
            "Unknown export field 'password'",
        ),
        (
            json!({"domains": ["acme.com"], "fields": []}),
            "fields must name at least one field",
        ),
        (
            json!({"domains": []}),
            "domains must hold 1 to 1000 domains",
        ),
        (
            json!({"domains": many(1001)}),
            "domains must hold 1 to 1000 domains",
        ),
    ] {
        let r = app.post("/v1/bulk/export", key, body).await;
        assert_eq!(r.status, 400);
        assert!(r.detail().starts_with(detail), "{}", r.detail());
    }
    let r = app
        .post("/v1/bulk/export", key, json!({"domains": many(1000)}))
        .await;
    assert_eq!(r.status, 200);
}
