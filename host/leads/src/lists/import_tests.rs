//! `POST /v1/lists/import-csv` through the router: CSV and TSV, headers,
//! byte-order marks, quoting, counts, and the refusals that write nothing.

use serde_json::json;

use crate::testkit::{add_domains, new_list, outbox};
use outreach_core::accounts::plans::Plan;
use outreach_core::events::EventType;
use outreach_core::testing::TestApp;

const PATH: &str = "/v1/lists/import-csv";

/// An upload that must be refused: its fields, its file, the status and
/// the start of the detail.
type Case<'a> = (Vec<(&'a str, String)>, Option<Vec<u8>>, u16, &'a str);

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |_| {}).await
}

async fn list_count(app: &TestApp, key: &str) -> i64 {
    app.get("/v1/lists", key).await.body["count"]
        .as_i64()
        .unwrap()
}

#[tokio::test]
async fn a_csv_with_a_named_column_creates_a_list_and_counts_what_it_skipped() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    let key = &a.api_key;
    let file = "\u{feff}Company,\"Website\",Notes\r\n\
                Acme,https://www.acme.com/about,\"big, \"\"hot\"\" lead\"\r\n\
                Beta,beta.io,\r\n\
                Again,HTTP://ACME.COM,\r\n\
                Broken,not a domain,\r\n\
                ,,\r\n\
                Multi,\"gamma.co.uk\",\"line one\nline two\"\r\n";
    let r = app
        .post_form(
            PATH,
            key,
            &[("list_name", "Expo leads")],
            Some(("expo.csv", file.as_bytes())),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let list = r.body["list_id"].as_i64().unwrap();
    assert_eq!(
        r.body,
        json!({"list_id": list, "list_name": "Expo leads", "domains_added": 3,
               "domains_skipped": 2, "total_in_file": 5})
    );
    let items = app.get(&format!("/v1/lists/{list}"), key).await.body["items"].clone();
    let domains: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["domain"].as_str().unwrap())
        .collect();
    assert_eq!(domains, ["acme.com", "beta.io", "gamma.co.uk"]);
    assert_eq!(
        outbox(&app, a.account_id, EventType::ListItemAdded)
            .await
            .len(),
        3
    );
    let queued: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM domains WHERE status = 'queued'")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(queued, 3);

    // Into the same list by id, as TSV without a named column: the first
    // column, a header line skipped because it is not a domain.
    let tsv = "Site name\tOwner\nbeta.io\tAnn\ndelta.io\tBob\n";
    let r = app
        .post_form(
            PATH,
            key,
            &[("list_id", &list.to_string())],
            Some(("more.tsv", tsv.as_bytes())),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(
        r.body,
        json!({"list_id": list, "list_name": "Expo leads", "domains_added": 1,
               "domains_skipped": 1, "total_in_file": 2})
    );

    // A headerless file starts with data; without a list name the list is
    // named after the file.
    let r = app
        .post_form(
            PATH,
            key,
            &[],
            Some(("partners.csv", b"omega.io\nzeta.io\n")),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.body["list_name"], "partners");
    assert_eq!(r.body["domains_added"], 2);
    assert_eq!(r.body["total_in_file"], 2);
}

#[tokio::test]
async fn unusable_uploads_are_refused_and_write_nothing() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    let other = app.account(Plan::Starter).await;
    let key = &a.api_key;
    let theirs = new_list(&app, &other.api_key, "Theirs").await;

    let binary: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let no_domains = b"name,email\nAnn,ann@x\nBob,bob@y\n".to_vec();
    let big = {
        let mut f = b"domain\n".to_vec();
        while f.len() <= 6 * 1024 * 1024 {
            f.extend_from_slice(b"some-company-name.com\n");
        }
        f
    };
    let cases: Vec<Case> = vec![
        (
            vec![("list_name", "x".into())],
            Some(binary),
            400,
            "The file is not CSV or TSV text",
        ),
        (
            vec![("list_name", "x".into())],
            Some(no_domains),
            400,
            "The file has no usable domain column",
        ),
        (
            vec![("list_name", "x".into())],
            Some(big),
            400,
            "file must be at most 5 MB",
        ),
        (
            vec![("list_name", "x".into())],
            None,
            400,
            "The form needs a file field",
        ),
        (
            vec![("list_name", "x".into()), ("list_id", "1".into())],
            Some(b"a.com\n".to_vec()),
            400,
            "Give list_id",
        ),
        (
            vec![("list_id", "one".into())],
            Some(b"a.com\n".to_vec()),
            400,
            "list_id must be an integer",
        ),
        (
            vec![("list_name", "y".repeat(201))],
            Some(b"a.com\n".to_vec()),
            400,
            "name must be 1 to 200",
        ),
        (
            vec![("list_id", theirs.to_string())],
            Some(b"a.com\n".to_vec()),
            404,
            "Lead list not found",
        ),
    ];
    for (fields, file, status, detail) in cases {
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = app
            .post_form(PATH, key, &fields, file.as_deref().map(|f| ("f.csv", f)))
            .await;
        assert!(
            r.status == status || (status == 400 && r.status == 413),
            "{fields:?}: {} {:?}",
            r.status,
            r.body
        );
        assert!(r.detail().starts_with(detail), "{fields:?}: {}", r.detail());
    }
    assert_eq!(list_count(&app, key).await, 0, "no list was left behind");
    let pooled: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM domains")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(pooled, 0);
}

#[tokio::test]
async fn an_import_past_the_list_cap_is_refused_whole() {
    let app = TestApp::with_areas(&[crate::AREA], |c| {
        c.limits.insert(
            "starter".into(),
            [(
                "list_items".to_string(),
                outreach_core::accounts::limits::LimitSetting::Number(3),
            )]
            .into_iter()
            .collect(),
        );
    })
    .await;
    let a = app.account(Plan::Starter).await;
    let key = &a.api_key;
    let list = new_list(&app, key, "Small").await;
    add_domains(&app, key, list, &["a.com", "b.com"]).await;
    let file = b"domain\nb.com\nc.com\nd.com\n";
    let r = app
        .post_form(
            PATH,
            key,
            &[("list_id", &list.to_string())],
            Some(("f.csv", file)),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.detail(),
        "Plan limit reached: a lead list holds at most 3 items (it has 2, this adds 2)"
    );
    assert_eq!(
        app.get(&format!("/v1/lists/{list}"), key).await.body["leads_count"],
        2
    );
    // A new list that would pass the cap is not created either.
    let r = app
        .post_form(PATH, key, &[("list_name", "New")], Some(("f.csv", file)))
        .await;
    assert_eq!(r.status, 201, "three fit: {:?}", r.body);
    let r = app
        .post_form(
            PATH,
            key,
            &[("list_name", "Newer")],
            Some(("f.csv", b"a.com\nb.com\nc.com\nd.com\n")),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(list_count(&app, key).await, 2);
}
