//! Helpers the area tests of this crate share.

use serde_json::Value;

use crate::send_accounts::store::{self, SendAccountRow};
use outreach_core::testing::TestApp;

/// A send account written straight to the store (no SMTP or IMAP test),
/// for tests about sequences rather than connecting mailboxes.
pub async fn insert_send_account(app: &TestApp, account_id: i64, email: &str) -> i64 {
    let mut row = send_account_row(app, account_id, email);
    row.display_name = Some("Seller".into());
    row.daily_send_limit = 40;
    store::insert(&app.state.db, &row, |_| "sealed".into())
        .await
        .unwrap()
        .unwrap()
}

/// A plain-SMTP, verified, active send account on loopback.
pub fn send_account_row(app: &TestApp, account_id: i64, email: &str) -> SendAccountRow {
    let now = app.state.clock.now_ms();
    SendAccountRow {
        id: 0,
        account_id,
        email: email.to_lowercase(),
        display_name: Some("Sam Seller".into()),
        provider: "smtp".into(),
        status: "active".into(),
        warmup_enabled: false,
        warmup_progress_pct: 0.0,
        daily_send_limit: 1000,
        emails_sent_today: 0,
        sent_day: 0,
        smtp_host: "127.0.0.1".into(),
        smtp_port: 25,
        smtp_encryption: "none".into(),
        imap_host: "127.0.0.1".into(),
        imap_port: 143,
        credentials: String::new(),
        smtp_verified: true,
        imap_verified: true,
        connected_at: now,
        last_activity_at: None,
        created_at: now,
        updated_at: now,
    }
}

/// Creates a sequence and returns its id.
pub async fn sequence(app: &TestApp, key: &str, body: Value) -> i64 {
    let r = app.post("/v1/sequences", key, body).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["id"].as_i64().unwrap()
}

/// Adds a step and returns its id.
pub async fn step(app: &TestApp, key: &str, sequence_id: i64, body: Value) -> i64 {
    let r = app
        .post(&format!("/v1/sequences/{sequence_id}/steps"), key, body)
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["id"].as_i64().unwrap()
}

/// A send account whose SMTP server is the capture server on `port` (plain,
/// any username, `password`), with credentials sealed as the connect route
/// seals them; returns its id.
pub async fn insert_smtp_account(
    app: &TestApp,
    account_id: i64,
    email: &str,
    port: u16,
    password: &str,
) -> i64 {
    let mut row = send_account_row(app, account_id, email);
    row.smtp_port = port as i64;
    let creds = serde_json::json!({"smtp_username": "seller", "smtp_password": password,
        "imap_username": "seller", "imap_password": password})
    .to_string();
    let secrets = app.state.secrets.clone();
    store::insert(&app.state.db, &row, move |id| {
        secrets.encrypt(&format!("send_account:{id}"), &creds)
    })
    .await
    .unwrap()
    .unwrap()
}

/// Runs `sql` with integer parameters (test set-up and checks).
pub async fn exec(app: &TestApp, sql: &str, params: &[i64]) {
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()));
    for p in params {
        q = q.bind(*p);
    }
    q.execute(&app.state.db.pool).await.unwrap();
}

/// The first column of the first row of `sql` as an integer.
pub async fn scalar(app: &TestApp, sql: &str, params: &[i64]) -> i64 {
    let mut q = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.to_owned()));
    for p in params {
        q = q.bind(*p);
    }
    q.fetch_one(&app.state.db.pool).await.unwrap()
}

/// The first column of the first row of `sql` as text.
pub async fn text(app: &TestApp, sql: &str, params: &[i64]) -> Option<String> {
    let mut q = sqlx::query_scalar::<_, Option<String>>(sqlx::AssertSqlSafe(sql.to_owned()));
    for p in params {
        q = q.bind(*p);
    }
    q.fetch_one(&app.state.db.pool).await.unwrap()
}
