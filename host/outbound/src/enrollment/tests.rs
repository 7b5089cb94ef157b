//! Enrollment through the router, on either backend: the four rules in
//! order, the CSV variant, limits, and the per-contact operations.

use serde_json::{Value, json};

use crate::testkit::{sequence, step};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::stub::{Canned, Stub};
use outreach_core::testing::{TestApp, TestResponse};

fn contacts(emails: &[&str]) -> Value {
    json!({"contacts": emails.iter().map(|e| json!({"domain": "acme.com", "contact_email": e})).collect::<Vec<_>>()})
}

/// Posts `file` as the multipart `file` field of enroll-csv.
pub async fn post_csv(app: &TestApp, key: &str, sequence_id: i64, file: &[u8]) -> TestResponse {
    let path = format!("/v1/sequences/{sequence_id}/enroll-csv");
    app.post_form(&path, key, &[], Some(("contacts.csv", file)))
        .await
}

#[tokio::test]
async fn the_rules_apply_in_order_and_skipped_contacts_keep_their_spelling() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "Rules"})).await;
    step(
        &app,
        key,
        id,
        json!({"subject": "s", "body_html": "b", "delay_hours": 4}),
    )
    .await;
    app.post(
        "/v1/sequences/suppression",
        key,
        json!({"email": "gone@acme.com"}),
    )
    .await;
    app.post(
        "/v1/sequences/suppression",
        key,
        json!({"email": "@rival.io"}),
    )
    .await;
    let path = format!("/v1/sequences/{id}/enroll");

    let r = app
        .post(
            &path,
            key,
            contacts(&[
                "Jane@Acme.com",
                "info@acme.com",
                "not-an-address",
                "Gone@acme.com",
                "ceo@rival.io",
                "JANE@acme.com",
                "joe+news@acme.com",
            ]),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{:?}", r.body);
    assert_eq!(
        (r.body["enrolled"].clone(), r.body["skipped"].clone()),
        (json!(2), json!(5))
    );
    assert_eq!(
        r.body["skipped_emails"],
        json!([
            "info@acme.com",
            "not-an-address",
            "Gone@acme.com",
            "ceo@rival.io",
            "JANE@acme.com"
        ])
    );

    // Already active in this sequence: skipped; paused counts as enrolled too.
    let again = app.post(&path, key, contacts(&["jane@ACME.com"])).await;
    assert_eq!(again.body["skipped_emails"], json!(["jane@ACME.com"]));
    let list = app
        .get(
            &format!("/v1/sequences/{id}/enrollments?status=active"),
            key,
        )
        .await
        .body;
    assert_eq!(list["total"], 2);
    let e = &list["enrollments"][1];
    assert_eq!(
        (
            e["contact_email"].clone(),
            e["domain"].clone(),
            e["status"].clone()
        ),
        (json!("jane@acme.com"), json!("acme.com"), json!("active"))
    );
    let eid = e["id"].as_i64().unwrap();
    let at =
        |v: &Value, f: &str| chrono::DateTime::parse_from_rfc3339(v[f].as_str().unwrap()).unwrap();
    assert_eq!(
        (at(e, "next_send_at") - at(e, "enrolled_at")).num_hours(),
        4
    );

    // Pause, resume at the same place, delete.
    let one = |op: &str| format!("/v1/sequences/{id}/enrollments/{eid}/{op}");
    let p = app.post(&one("pause"), key, json!({})).await;
    assert_eq!(
        (p.status.as_u16(), p.body["status"].clone()),
        (200, json!("paused"))
    );
    assert_eq!(app.post(&one("pause"), key, json!({})).await.status, 400);
    assert_eq!(
        app.post(&path, key, contacts(&["jane@acme.com"]))
            .await
            .body["enrolled"],
        0
    );
    app.clock.advance(std::time::Duration::from_secs(6 * 3600));
    let r = app.post(&one("resume"), key, json!({})).await;
    assert_eq!(
        (
            r.status.as_u16(),
            r.body["status"].clone(),
            r.body["current_step"].clone()
        ),
        (200, json!("active"), json!(1))
    );
    // The step fell due while paused: due now.
    assert_eq!(at(&r.body, "next_send_at"), at(&r.body, "updated_at"));
    assert_eq!(app.post(&one("resume"), key, json!({})).await.status, 400);
    let del = format!("/v1/sequences/{id}/enrollments/{eid}");
    assert_eq!(app.call("DELETE", &del, Some(key), None).await.status, 204);
    assert_eq!(app.call("DELETE", &del, Some(key), None).await.status, 404);
    // Once dropped, the address may be enrolled again.
    assert_eq!(
        app.post(&path, key, contacts(&["jane@acme.com"]))
            .await
            .body["enrolled"],
        1
    );

    // Bad input changes nothing.
    let before = app
        .get(&format!("/v1/sequences/{id}/enrollments"), key)
        .await
        .body["total"]
        .clone();
    let many: Vec<String> = (0..1001).map(|i| format!("p{i}@acme.com")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    for body in [
        json!({"contacts": []}),
        contacts(&many),
        json!({"contacts": [{"contact_email": "a@b.com"}]}),
        json!({"contacts": [{"domain": "b.com", "contact_email": "a@b.com", "metadata": [1]}]}),
    ] {
        assert_eq!(app.post(&path, key, body).await.status, 400);
    }
    assert_eq!(
        app.get(&format!("/v1/sequences/{id}/enrollments?status=bogus"), key)
            .await
            .status,
        400
    );
    assert_eq!(
        app.get(&format!("/v1/sequences/{id}/enrollments"), key)
            .await
            .body["total"],
        before
    );

    // Another account's sequence: 404, and its enrollments are not reachable.
    let other = app.account(Plan::Pro).await;
    assert_eq!(
        app.post(&path, &other.api_key, contacts(&["x@acme.com"]))
            .await
            .status,
        404
    );
    assert_eq!(
        app.post(&one("pause"), &other.api_key, json!({}))
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn the_verifier_chain_skips_invalid_and_enrolls_risky_unknown_and_failures() {
    let stub = Stub::start().await;
    let ev = stub.url("/ev");
    let app = TestApp::with_areas(&[outreach_vendors::AREA, crate::AREA], move |c| {
        c.vendor_base_urls.insert("example-verifier".into(), ev);
    })
    .await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    stub.set("/ev/v1/credits", Canned::json(200, json!({"credits": 10})));
    let r = app
        .post(
            "/v1/email-verifiers/providers",
            key,
            json!({"provider": "example-verifier", "api_key": "verifier-key-0001"}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{:?}", r.body);
    let answer = |result: &str| {
        Canned::json(
            200,
            json!({"result": result, "disposable": false,
        "role": false, "accept_all": false, "score": 50}),
        )
    };
    stub.set("/ev/v1/verify", answer("deliverable"));
    stub.set(
        "/ev/v1/verify?email=bad%40acme.com",
        answer("undeliverable"),
    );
    stub.set("/ev/v1/verify?email=maybe%40acme.com", answer("risky"));
    stub.set("/ev/v1/verify?email=who%40acme.com", answer("unknown"));
    stub.set(
        "/ev/v1/verify?email=down%40acme.com",
        Canned::json(503, json!({"error": "down"})),
    );
    let id = sequence(&app, key, json!({"name": "Verified"})).await;
    app.post(
        "/v1/sequences/suppression",
        key,
        json!({"email": "gone@acme.com"}),
    )
    .await;

    let r = app
        .post(
            &format!("/v1/sequences/{id}/enroll"),
            key,
            contacts(&[
                "ok@acme.com",
                "bad@acme.com",
                "maybe@acme.com",
                "who@acme.com",
                "down@acme.com",
                "gone@acme.com",
            ]),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{:?}", r.body);
    assert_eq!(
        r.body["skipped_emails"],
        json!(["bad@acme.com", "gone@acme.com"])
    );
    assert_eq!(r.body["enrolled"], 4);
    // Listed in request order. Rule 2 comes before rule 3: the suppressed
    // address was never verified.
    assert_eq!(stub.hits("/ev/v1/verify?email=gone"), 0);
    assert_eq!(stub.hits("/ev/v1/verify?email=bad%40acme.com"), 1);
}

#[tokio::test]
async fn ten_enroll_requests_per_user_per_minute() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    // On PostgreSQL the budget is shared by every server: spread the
    // requests over two. SQLite runs one server, which counts in memory.
    let postgres = app.state.db.backend == outreach_core::store::Backend::Postgres;
    let second = if postgres {
        Some(app.another_server().await)
    } else {
        None
    };
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "Limit"})).await;
    let path = format!("/v1/sequences/{id}/enroll");
    for i in 0..10 {
        let server = match &second {
            Some(s) if i % 2 == 1 => s,
            _ => &app,
        };
        let r = server
            .post(&path, key, contacts(&[&format!("p{i}@acme.com")]))
            .await;
        assert_eq!(r.status, 200, "{i}");
    }
    let r = app.post(&path, key, contacts(&["late@acme.com"])).await;
    assert_eq!(r.status, 429);
    assert!(r.header("retry-after").is_some());
    assert_eq!(
        post_csv(
            second.as_ref().unwrap_or(&app),
            key,
            id,
            b"email\nx@acme.com\n"
        )
        .await
        .status,
        429
    );
    app.clock.advance(std::time::Duration::from_secs(61));
    assert_eq!(
        app.post(&path, key, contacts(&["late@acme.com"]))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn concurrent_requests_enroll_each_contact_once_across_servers() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let second = app.another_server().await;
    let acct = app.account(Plan::Enterprise).await;
    let key = acct.api_key.clone();
    let id = sequence(&app, &key, json!({"name": "Race"})).await;
    let emails: Vec<String> = (0..300).map(|i| format!("lead{i}@acme.com")).collect();
    let body = {
        let e: Vec<&str> = emails.iter().map(String::as_str).collect();
        contacts(&e)
    };
    let path = format!("/v1/sequences/{id}/enroll");
    let (a, b) = tokio::join!(
        app.post(&path, &key, body.clone()),
        second.post(&path, &key, body.clone())
    );
    assert_eq!(
        (a.status.as_u16(), b.status.as_u16()),
        (200, 200),
        "{:?} {:?}",
        a.body,
        b.body
    );
    let total = a.body["enrolled"].as_u64().unwrap() + b.body["enrolled"].as_u64().unwrap();
    assert_eq!(
        total, 300,
        "{:?} {:?}",
        a.body["enrolled"], b.body["enrolled"]
    );
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM enrollments WHERE sequence_id = $1")
        .bind(id)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(n, 300);
}

#[tokio::test]
async fn enroll_csv_reads_columns_metadata_and_refuses_bad_files() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "CSV"})).await;
    let file = "First Name,Email,Company\nJane,jane@acme.com,Acme\nJoe,not-an-address,Beta\n\
                Ann,ann@beta.io,Beta\nJane again,JANE@acme.com,Acme\n";
    let r = post_csv(&app, key, id, file.as_bytes()).await;
    assert_eq!(r.status.as_u16(), 200, "{:?}", r.body);
    assert_eq!(r.body["total_in_file"], 4);
    assert_eq!(
        (r.body["enrolled"].clone(), r.body["skipped"].clone()),
        (json!(2), json!(2))
    );
    assert_eq!(
        r.body["skipped_emails"],
        json!(["not-an-address", "JANE@acme.com"])
    );
    let list = app
        .get(&format!("/v1/sequences/{id}/enrollments"), key)
        .await
        .body;
    let ann = list["enrollments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["contact_email"] == "ann@beta.io")
        .unwrap();
    // No domain column: the domain comes from the address.
    assert_eq!(
        (ann["domain"].clone(), ann["metadata"].clone()),
        (
            json!("beta.io"),
            json!({"First Name": "Ann", "Company": "Beta"})
        )
    );

    let tsv = post_csv(
        &app,
        key,
        id,
        b"contact_email\tdomain\nzed@zed.io\tzed.io\n",
    )
    .await;
    assert_eq!(tsv.body["enrolled"], 1, "{:?}", tsv.body);

    let r = post_csv(&app, key, id, b"name,domain\nJane,acme.com\n").await;
    assert_eq!(r.status.as_u16(), 400);
    assert!(r.detail().contains("email column"), "{}", r.detail());
    let mut big = b"email\n".to_vec();
    while big.len() < 6 * 1024 * 1024 {
        big.extend_from_slice(b"someone.with.a.long.name@example-company.com\n");
    }
    let r = post_csv(&app, key, id, &big).await;
    assert_eq!(r.status.as_u16(), 400, "{:?}", r.body);
    assert!(r.detail().contains("5 MB"), "{}", r.detail());
    assert_eq!(
        app.get(&format!("/v1/sequences/{id}/enrollments"), key)
            .await
            .body["total"],
        3
    );
}

#[tokio::test]
async fn large_files_take_the_whole_list_reads_with_the_same_result() {
    // From 1,000 addresses on, suppression and live enrollments are read
    // whole instead of per address: the answer must not change.
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let id = sequence(&app, key, json!({"name": "Big"})).await;
    let suppressed: Vec<String> = (0..10).map(|i| format!("p{}@big.io", i * 7)).collect();
    app.post(
        "/v1/sequences/suppression/import",
        key,
        json!({"emails": suppressed}),
    )
    .await;
    app.post(
        "/v1/sequences/suppression",
        key,
        json!({"email": "@gone.io"}),
    )
    .await;
    let early = app
        .post(
            &format!("/v1/sequences/{id}/enroll"),
            key,
            contacts(&[
                "p1@big.io",
                "p2@big.io",
                "p3@big.io",
                "p4@big.io",
                "p5@big.io",
            ]),
        )
        .await;
    assert_eq!(early.body["enrolled"], 5, "{:?}", early.body);
    let mut file = String::from("email\n");
    for i in 0..1500 {
        file.push_str(&format!("p{i}@big.io\n"));
    }
    file.push_str("x@gone.io\n");
    let r = post_csv(&app, key, id, file.as_bytes()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // 10 suppressed (p0 among them), 5 live already, 1 by domain.
    assert_eq!(
        (r.body["enrolled"].clone(), r.body["skipped"].clone()),
        (json!(1485), json!(16))
    );
    assert_eq!(r.body["skipped_emails"][0], "p0@big.io");
    assert_eq!(r.body["skipped_emails"][15], "x@gone.io");
    assert_eq!(
        app.get(&format!("/v1/sequences/{id}/enrollments"), key)
            .await
            .body["total"],
        1490
    );
}
