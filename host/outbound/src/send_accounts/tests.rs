//! Send accounts through the router against the real mail peers started by
//! `tests/support/mail.sh` (Postfix's smtp-sink and a private Dovecot).

use serde_json::{Value, json};

use super::service::connection;
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;
use outreach_core::testing::mail_peers::{IMAP_PASSWORD, IMAP_PORT, IMAP_USER, SMTP_PORT};

fn connect_body(email: &str) -> Value {
    json!({
        "email": email, "display_name": "Sam Seller",
        "smtp_host": "127.0.0.1", "smtp_port": SMTP_PORT, "smtp_username": IMAP_USER,
        "smtp_password": IMAP_PASSWORD, "smtp_encryption": "none",
        "imap_host": "127.0.0.1", "imap_port": IMAP_PORT,
    })
}

#[tokio::test]
async fn connecting_tests_both_servers_seals_credentials_and_lists() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;

    let r = app
        .post("/v1/send-accounts", key, connect_body("Sam@Acme.io"))
        .await;
    assert_eq!(
        r.status.as_u16(),
        201,
        "{:?} (are the peers up? run tests/support/mail.sh)",
        r.body
    );
    let a = &r.body;
    assert_eq!(
        (
            a["email"].clone(),
            a["provider"].clone(),
            a["status"].clone()
        ),
        (json!("sam@acme.io"), json!("smtp"), json!("active"))
    );
    assert_eq!(
        (a["smtp_verified"].clone(), a["imap_verified"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(
        (a["daily_send_limit"].clone(), a["warmup_enabled"].clone()),
        (json!(50), json!(false))
    );
    assert!(a["id"].is_string());
    assert!(a["message"].is_string());
    let text = r.body.to_string();
    assert!(
        !text.contains(IMAP_PASSWORD) && !text.contains("password"),
        "{text}"
    );

    // Sealed at rest; opened for workers with the imap fields defaulted.
    let id: i64 = a["id"].as_str().unwrap().parse().unwrap();
    let stored: String = sqlx::query_scalar("SELECT credentials FROM send_accounts WHERE id = $1")
        .bind(id)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert!(!stored.contains(IMAP_PASSWORD));
    let c = connection(&app.state, acct.account_id, id).await.unwrap();
    assert_eq!(
        (c.imap.username.as_str(), c.imap.password.as_str()),
        (IMAP_USER, IMAP_PASSWORD)
    );
    assert!(
        connection(&app.state, acct.account_id + 1000, id)
            .await
            .is_err()
    );

    // The same address again: 409.
    assert_eq!(
        app.post("/v1/send-accounts", key, connect_body("sam@acme.io"))
            .await
            .status,
        409
    );

    // A wrong IMAP password: 422 with Dovecot's reason, and nothing stored.
    let mut bad = connect_body("other@acme.io");
    bad["imap_password"] = json!("wrong-password");
    let r = app.post("/v1/send-accounts", key, bad).await;
    assert_eq!(r.status.as_u16(), 422, "{:?}", r.body);
    assert!(
        r.detail().starts_with("IMAP connection test failed"),
        "{}",
        r.detail()
    );
    assert!(!r.detail().contains("wrong-password"));
    // A closed SMTP port: 422.
    let mut closed = connect_body("other@acme.io");
    closed["smtp_port"] = json!(1);
    let r = app.post("/v1/send-accounts", key, closed).await;
    assert_eq!(r.status.as_u16(), 422, "{:?}", r.body);
    assert!(
        r.detail().starts_with("SMTP connection test failed"),
        "{}",
        r.detail()
    );
    // Private and metadata addresses: 400 naming the guard.
    for host in ["10.1.2.3", "169.254.169.254"] {
        let mut blocked = connect_body("other@acme.io");
        blocked["smtp_host"] = json!(host);
        let r = app.post("/v1/send-accounts", key, blocked).await;
        assert_eq!(r.status.as_u16(), 400, "{host}");
        assert!(
            r.detail().contains("Blocked by SSRF guard"),
            "{}",
            r.detail()
        );
    }
    // Missing and invalid fields: 400.
    for (field, value) in [
        ("smtp_host", Value::Null),
        ("smtp_port", json!(70000)),
        ("smtp_encryption", json!("starttls")),
        ("email", json!("nope")),
        ("daily_send_limit", json!(0)),
    ] {
        let mut b = connect_body("other@acme.io");
        if value.is_null() {
            b.as_object_mut().unwrap().remove(field);
        } else {
            b[field] = value;
        }
        assert_eq!(
            app.post("/v1/send-accounts", key, b).await.status,
            400,
            "{field}"
        );
    }

    // Warmup accounts are listed as warming; filters and paging.
    let mut warm = connect_body("warm@acme.io");
    warm["enable_warmup"] = json!(true);
    warm["daily_send_limit"] = json!(20);
    assert_eq!(
        app.post("/v1/send-accounts", key, warm).await.body["status"],
        "warming"
    );
    let all = app.get("/v1/send-accounts", key).await.body;
    assert_eq!(
        (
            all["total"].clone(),
            all["page"].clone(),
            all["per_page"].clone()
        ),
        (json!(2), json!(1), json!(25))
    );
    let warming = app
        .get("/v1/send-accounts?status=warming&per_page=1", key)
        .await
        .body;
    assert_eq!(warming["accounts"][0]["email"], "warm@acme.io");
    assert_eq!(warming["total"], 1);
    let page2 = app
        .get("/v1/send-accounts?page=2&per_page=1", key)
        .await
        .body;
    assert_eq!(page2["accounts"][0]["email"], "warm@acme.io");
    assert_eq!(
        app.get("/v1/send-accounts?provider=smtp", key).await.body["total"],
        2
    );
    for q in ["status=sleeping", "per_page=101", "page=0"] {
        assert_eq!(
            app.get(&format!("/v1/send-accounts?{q}"), key).await.status,
            400,
            "{q}"
        );
    }

    // Tenancy and plans.
    let other = app.account(Plan::Pro).await;
    assert_eq!(
        app.get("/v1/send-accounts", &other.api_key).await.body["total"],
        0
    );
    assert_eq!(
        app.get(&format!("/v1/send-accounts/{id}"), &other.api_key)
            .await
            .status,
        404
    );
    assert_eq!(
        app.call(
            "DELETE",
            &format!("/v1/send-accounts/{id}"),
            Some(&other.api_key),
            None
        )
        .await
        .status,
        404
    );
    let free = app.account(Plan::Free).await;
    assert_eq!(
        app.post(
            "/v1/send-accounts",
            &free.api_key,
            connect_body("f@acme.io")
        )
        .await
        .status,
        403
    );
    assert_eq!(
        app.call(
            "DELETE",
            &format!("/v1/send-accounts/{id}"),
            Some(key),
            None
        )
        .await
        .status,
        204
    );
    assert_eq!(app.get("/v1/send-accounts", key).await.body["total"], 1);
}
