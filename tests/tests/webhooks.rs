//! Webhook deliveries from the real binary to a receiver that verifies them
//! with the libraries receivers use (`@octokit/webhooks-methods` for the
//! `sha256=` header, `standardwebhooks` for the Standard Webhooks headers),
//! and a SIGKILL in the middle of 5,000 deliveries that loses none.
//!
//! Events are put into the outbox directly, as an area's transaction would:
//! no area that records spec/2's events has landed yet.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use outreach_e2e::{Deployment, client, post_json};
use serde_json::{Value, json};

/// The Node receiver of `tests/webhooks/receiver.mjs`.
struct Receiver {
    child: Child,
    base: String,
}

impl Receiver {
    fn start() -> Receiver {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("webhooks");
        assert!(
            dir.join("node_modules/standardwebhooks").is_dir(),
            "run `npm ci` in {} (tests/run.sh does)",
            dir.display()
        );
        let mut child = Command::new("node")
            .arg(dir.join("receiver.mjs"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("starting node");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .expect("receiver port line");
        Receiver {
            child,
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    async fn configure(&self, secret: &str) {
        let r = client()
            .post(format!("{}/config", self.base))
            .json(&json!({"secret": secret}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 204);
    }

    async fn stats(&self) -> Value {
        client()
            .get(format!("{}/stats", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Waits until `n` distinct deliveries have verified and been accepted.
    async fn wait_for(&self, n: u64, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let stats = self.stats().await;
            if stats["unique"].as_u64().unwrap() >= n || Instant::now() > deadline {
                return stats;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn deployment() -> Deployment {
    Deployment::new().with_env("OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK", "true")
}

/// Records `count` events for the account in the outbox, numbered from
/// `first` in `data.i`, in one transaction.
async fn record_events(deployment: &Deployment, account_id: i64, first: i64, count: i64) {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&deployment.database_url())
        .await
        .unwrap();
    let mut tx = conn.begin().await.unwrap();
    for i in first..first + count {
        sqlx::query(
            "INSERT INTO event_outbox (account_id, event_type, data, created_at) VALUES ($1, 'list.item_added', $2, $3)",
        )
        .bind(account_id)
        .bind(json!({"list_id": 1, "domain": format!("d{i}.example"), "i": i}).to_string())
        .bind(1_795_000_000_000i64)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
}

async fn subscribe(server: &outreach_e2e::Server, key: &str, receiver: &Receiver) -> Value {
    let r = post_json(
        &client(),
        &server.url("/v1/webhooks"),
        Some(key),
        &json!({"url": format!("{}/hook", receiver.base), "events": ["*"], "name": "e2e"}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    receiver.configure(r.json["secret"].as_str().unwrap()).await;
    r.json
}

#[tokio::test]
async fn every_delivery_verifies_with_octokit_and_standardwebhooks() {
    let deployment = deployment();
    let account = deployment.create_account("hooks@example.com", "starter");
    let server = deployment.start();
    let receiver = Receiver::start();
    let hook = subscribe(&server, &account.api_key, &receiver).await;

    let test = post_json(
        &client(),
        &server.url(&format!("/v1/webhooks/{}/test", hook["id"])),
        Some(&account.api_key),
        &json!({}),
    )
    .await;
    assert_eq!(test.json["success"], true, "{}", test.text);

    record_events(&deployment, account.account_id, 0, 25).await;
    let stats = receiver.wait_for(26, Duration::from_secs(30)).await;
    assert_eq!(stats["unique"], 26, "{stats}");
    assert_eq!(stats["bad"], json!([]), "{stats}");
    assert_eq!(stats["octokit_ok"], stats["received"], "{stats}");
    assert_eq!(stats["standard_ok"], stats["received"], "{stats}");
    let events: Vec<&str> = stats["delivered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        events.iter().filter(|e| **e == "list.item_added").count(),
        25
    );
    assert_eq!(events.iter().filter(|e| **e == "webhook.test").count(), 1);
}

#[tokio::test]
async fn a_sigkill_during_5000_deliveries_loses_none() {
    let deployment = deployment();
    let account = deployment.create_account("killed-hooks@example.com", "pro");
    let server = deployment.start();
    let receiver = Receiver::start();
    subscribe(&server, &account.api_key, &receiver).await;

    record_events(&deployment, account.account_id, 0, 5000).await;
    let before = receiver.wait_for(100, Duration::from_secs(60)).await;
    drop(server); // SIGKILL with deliveries claimed and in flight
    let at_kill = receiver.stats().await["unique"].as_u64().unwrap();
    assert!(
        (100..5000).contains(&at_kill),
        "the kill should land mid-way: {at_kill} ({})",
        before["unique"]
    );

    // Deliveries the dead server held come back when their leases (15 s)
    // run out; the rest go on at once.
    let _server = deployment.start();
    let stats = receiver.wait_for(5000, Duration::from_secs(120)).await;
    assert_eq!(stats["unique"], 5000, "{}", stats["unique"]);
    let mut seen: Vec<i64> = stats["delivered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["data"]["i"].as_i64().unwrap())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen, (0..5000).collect::<Vec<_>>());
    assert_eq!(stats["bad"], json!([]));
}

/// The automation platform's REST hook: a new-domain subscription gets the
/// records imported after it, through the same signed delivery.
#[tokio::test]
async fn rest_hook_items_verify_with_octokit_and_standardwebhooks() {
    let deployment = deployment();
    let account = deployment.create_account("zaps@example.com", "starter");
    let server = deployment.start();
    let receiver = Receiver::start();
    let r = post_json(
        &client(),
        &server.url("/v1/zapier/hooks"),
        Some(&account.api_key),
        &json!({"event": "new-domain", "target_url": format!("{}/hook", receiver.base)}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    receiver.configure(r.json["secret"].as_str().unwrap()).await;

    let file = deployment.scratch().join("pool.jsonl");
    let lines: String = ["one.example", "two.example", "three.example"]
        .iter()
        .map(|d| {
            format!(
                "{}\n",
                json!({"domain": d, "industry": "Software", "confidence": 0.9})
            )
        })
        .collect();
    std::fs::write(&file, lines).unwrap();
    deployment.cli_ok(&["domains", "import", file.to_str().unwrap()]);

    let stats = receiver.wait_for(3, Duration::from_secs(60)).await;
    assert_eq!(stats["bad"], json!([]), "{stats}");
    assert_eq!(stats["octokit_ok"], 3, "{stats}");
    assert_eq!(stats["standard_ok"], 3, "{stats}");
    let events: Vec<&str> = stats["delivered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["zapier.new-domain"; 3], "{stats}");
}
