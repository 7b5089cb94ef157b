//! A send account connected through the real binary against real mail
//! servers: Postfix's smtp-sink and a private Dovecot, started by
//! `tests/support/mail.sh` (tests/run.sh runs it) on fixed loopback ports.
//! Then a sequence sends from it, contacts arrive by CSV and a step
//! previews for one of them.

use outreach_e2e::{Deployment, Reply, client, get, post_json};
use serde_json::{Value, json};

/// The peers of tests/support/mail.sh.
const SMTP_PORT: u16 = 12525;
const IMAP_PORT: u16 = 11143;
const MAIL_USER: &str = "seller@outreach.test";
const MAIL_PASSWORD: &str = "mail-pass-1";

fn mailbox(email: &str, imap_password: &str) -> Value {
    json!({
        "email": email, "display_name": "Sam Seller",
        "smtp_host": "127.0.0.1", "smtp_port": SMTP_PORT, "smtp_encryption": "none",
        "smtp_username": MAIL_USER, "smtp_password": MAIL_PASSWORD,
        "imap_host": "localhost", "imap_port": IMAP_PORT, "imap_password": imap_password,
    })
}

async fn post_csv(url: &str, key: &str, file: &str) -> Reply {
    let boundary = "e2eBoundary7";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"leads.csv\"\r\n\
         Content-Type: text/csv\r\n\r\n{file}\r\n--{boundary}--\r\n"
    );
    let r = client()
        .post(url)
        .bearer_auth(key)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .expect("POST enroll-csv");
    Reply::read(r).await
}

#[tokio::test]
async fn a_mailbox_connects_against_postfix_and_dovecot_and_a_sequence_uses_it() {
    let deployment = Deployment::new().with_env("OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK", "true");
    let account = deployment.create_account("seller@example.com", "starter");
    let server = deployment.start();
    let (http, key) = (client(), account.api_key.as_str());

    let r = post_json(
        &http,
        &server.url("/v1/send-accounts"),
        Some(key),
        &mailbox("Sam@Acme.io", MAIL_PASSWORD),
    )
    .await;
    assert_eq!(
        r.status, 201,
        "{} (are the mail peers up? run tests/support/mail.sh)",
        r.text
    );
    assert_eq!(
        (
            r.json["smtp_verified"].clone(),
            r.json["imap_verified"].clone()
        ),
        (json!(true), json!(true))
    );
    assert!(!r.text.contains(MAIL_PASSWORD));
    assert!(
        !server.log().contains(MAIL_PASSWORD),
        "the password reached the log"
    );

    // Dovecot refuses a wrong password: 422 with its reason.
    let r = post_json(
        &http,
        &server.url("/v1/send-accounts"),
        Some(key),
        &mailbox("other@acme.io", "nope-nope"),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.text);
    assert!(
        r.detail().contains("AUTHENTICATIONFAILED") || r.detail().contains("failed"),
        "{}",
        r.detail()
    );
    let r = post_json(
        &http,
        &server.url("/v1/send-accounts"),
        Some(key),
        &mailbox("sam@acme.io", MAIL_PASSWORD),
    )
    .await;
    assert_eq!(r.status, 409, "{}", r.text);
    let list = get(&http, &server.url("/v1/send-accounts"), Some(key)).await;
    assert_eq!(
        (
            list.json["total"].clone(),
            list.json["accounts"][0]["id"].is_string()
        ),
        (json!(1), true)
    );

    // A sequence sending from it; contacts by CSV; a preview for one.
    let r = post_json(
        &http,
        &server.url("/v1/sequences"),
        Some(key),
        &json!({"name": "E2E", "from_email": "sam@acme.io"}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.json["id"].as_i64().unwrap();
    let r = post_json(
        &http,
        &server.url(&format!("/v1/sequences/{id}/steps")),
        Some(key),
        &json!({"subject": "Hi {{first_name|there}}", "body_html": "<p>About {{company}}</p>"}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let r = post_csv(
        &server.url(&format!("/v1/sequences/{id}/enroll-csv")),
        key,
        "email,first_name,company\njane@acme.com,Jane,Acme & Co\ninfo@acme.com,,\n",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json,
        json!({"enrolled": 1, "skipped": 1, "skipped_emails": ["info@acme.com"], "total_in_file": 2})
    );
    let e = get(
        &http,
        &server.url(&format!("/v1/sequences/{id}/enrollments")),
        Some(key),
    )
    .await;
    let eid = e.json["enrollments"][0]["id"].clone();
    let r = post_json(
        &http,
        &server.url(&format!("/v1/sequences/{id}/preview")),
        Some(key),
        &json!({"step_position": 1, "enrollment_id": eid}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (r.json["subject"].clone(), r.json["body_html"].clone()),
        (json!("Hi Jane"), json!("<p>About Acme &amp; Co</p>"))
    );
    let r = post_json(
        &http,
        &server.url(&format!("/v1/sequences/{id}/activate")),
        Some(key),
        &json!({}),
    )
    .await;
    assert_eq!(r.json["status"], "active", "{}", r.text);
}

#[tokio::test]
async fn without_the_loopback_allowance_the_guard_refuses_the_mail_servers() {
    let deployment = Deployment::new();
    let account = deployment.create_account("guarded@example.com", "pro");
    let server = deployment.start();
    let r = post_json(
        &client(),
        &server.url("/v1/send-accounts"),
        Some(&account.api_key),
        &mailbox("sam@acme.io", MAIL_PASSWORD),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(
        r.detail().contains("Blocked by SSRF guard"),
        "{}",
        r.detail()
    );
}

/// Two mailboxes connected with warmup enabled form the smart warmup pool
/// of the real binary: its workers (started by `serve`) send each its first
/// day's volume through the account's SMTP server, under the
/// `[smart_warmup]` settings given by environment.
#[tokio::test]
async fn mailboxes_connected_with_warmup_exchange_pool_mail_under_the_operators_settings() {
    let deployment = Deployment::new()
        .with_env("OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK", "true")
        .with_env("OUTREACH_SMART_WARMUP_SPREAD_OVER_DAY", "false")
        .with_env("OUTREACH_SMART_WARMUP_TICK_SECONDS", "1")
        .with_env("OUTREACH_SMART_WARMUP_START_VOLUME", "3");
    let account = deployment.create_account("warm@example.com", "starter");
    let server = deployment.start();
    let (http, key) = (client(), account.api_key.as_str());
    let mut ids = Vec::new();
    for email in ["warm-a@acme.io", "warm-b@acme.io"] {
        let mut body = mailbox(email, MAIL_PASSWORD);
        body["enable_warmup"] = json!(true);
        let r = post_json(&http, &server.url("/v1/send-accounts"), Some(key), &body).await;
        assert_eq!(r.status, 201, "{:?}", r.json);
        assert_eq!(r.json["status"], "warming");
        ids.push(r.json["id"].as_str().unwrap().to_owned());
    }
    for id in &ids {
        let url = server.url(&format!("/v1/send-accounts/{id}/smart-warmup/status"));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let status = loop {
            let r = get(&http, &url, Some(key)).await;
            // On a slow machine the polling can reach the Starter plan's
            // per-minute limit before the warmup has sent; wait it out.
            if r.status == 429 && std::time::Instant::now() < deadline {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                continue;
            }
            assert_eq!(r.status, 200, "{:?}", r.json);
            if r.json["sent_today"] == 3 || std::time::Instant::now() > deadline {
                break r.json;
            }
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        };
        assert_eq!(status["sent_today"], 3, "{status}");
        assert_eq!(status["current_daily_volume"], 3);
        assert_eq!(status["warmup_status"], "active");
        assert_eq!(status["pool_count"], 1);
    }
    let r = get(
        &http,
        &server.url("/v1/send-accounts/warmup-pool/stats"),
        Some(key),
    )
    .await;
    assert_eq!(r.json["daily_emails_exchanged"], 6, "{:?}", r.json);
    let r = get(&http, &server.url("/v1/send-accounts"), Some(key)).await;
    assert!(
        r.json["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["emails_sent_today"] == 3)
    );
}
