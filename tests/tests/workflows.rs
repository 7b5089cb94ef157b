//! Workflow runs on the real binary: the run stream read by curl while a
//! run is live and after it finished, two servers sharing one queue (each
//! run executed once), and a SIGKILL during 1,000 queued runs (every run
//! finishes; no action before a checkpoint runs again).

use std::collections::HashMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use outreach_e2e::{Deployment, Server, client, get, post_json};
use serde_json::{Value, json};

/// The tests here start servers that work hard; one at a time keeps each
/// one's timing meaningful on a small machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn deployment() -> Deployment {
    Deployment::new()
        .with_env("OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK", "true")
        .with_env("OUTREACH_WORKFLOW_WEBHOOK_CALLS_PER_MINUTE", "100000")
}

/// A receiver on loopback that records `(n, step)` of every call and
/// waits `delay_ms` from the body before answering.
#[derive(Clone)]
struct Receiver {
    url: String,
    calls: Arc<Mutex<Vec<(i64, String)>>>,
}

impl Receiver {
    async fn start() -> Receiver {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let c = calls.clone();
        let app = axum::Router::new().fallback(move |body: Bytes| {
            let c = c.clone();
            async move {
                let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                // `{{trigger.n}}` alone renders as the trigger's JSON number.
                let n = v["n"].as_i64().unwrap_or(-1);
                let delay = v["delay_ms"]
                    .as_str()
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(delay)).await;
                c.lock()
                    .unwrap()
                    .push((n, v["step"].as_str().unwrap_or("").to_owned()));
                axum::Json(json!({"ok": true}))
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { url, calls }
    }

    /// Calls per (n, step).
    fn counts(&self) -> HashMap<(i64, String), usize> {
        let mut out = HashMap::new();
        for call in self.calls.lock().unwrap().iter() {
            *out.entry(call.clone()).or_default() += 1;
        }
        out
    }

    fn distinct(&self, step: &str) -> usize {
        self.counts().keys().filter(|(_, s)| s == step).count()
    }

    async fn wait_for(&self, step: &str, n: usize, within: Duration) -> usize {
        let deadline = Instant::now() + within;
        loop {
            let seen = self.distinct(step);
            if seen >= n || Instant::now() > deadline {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn call(receiver: &Receiver, step: &str, delay_ms: u64) -> Value {
    json!({"type": "http_request", "config": {"method": "POST", "url": receiver.url,
        "body": {"n": "{{trigger.n}}", "step": step, "delay_ms": delay_ms.to_string()}}})
}

/// A webhook-triggered workflow; answers its token.
async fn workflow(server: &Server, key: &str, actions: Value) -> (i64, String) {
    let r = post_json(
        &client(),
        &server.url("/v1/workflows"),
        Some(key),
        &json!({"name": "e2e", "trigger_type": "webhook", "actions": actions}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    (
        r.json["id"].as_i64().unwrap(),
        r.json["webhook_token"].as_str().unwrap().to_owned(),
    )
}

async fn trigger(server: &Server, token: &str, n: i64) -> i64 {
    let r = post_json(
        &client(),
        &server.url(&format!("/v1/workflows/incoming/{token}")),
        None,
        &json!({"n": n, "domains": [format!("d{n}.example")]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.json["run_id"].as_i64().unwrap()
}

/// Queues `count` runs of workflow `id` at once, as the incoming webhook
/// would (numbered in `trigger_data.n`), in one transaction, so the kill
/// lands while most are still queued.
async fn queue_runs(deployment: &Deployment, account_id: i64, id: i64, count: i64) {
    use sqlx::Connection;
    let mut conn = deployment.db().await;
    let mut tx = conn.begin().await.unwrap();
    for n in 0..count {
        let checkpoint = json!({"input": [format!("d{n}.example")]});
        sqlx::query(
            "INSERT INTO workflow_runs (workflow_id, account_id, status, trigger_event, trigger_data, \
             domain_count, checkpoint, due_at, created_at) VALUES ($1, $2, 'queued', 'webhook', $3, 1, $4, 0, 0)",
        )
        .bind(id)
        .bind(account_id)
        .bind(json!({"n": n}).to_string())
        .bind(checkpoint.to_string())
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
}

/// Every run's status, through the API.
async fn statuses(server: &Server, key: &str, id: i64) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    let mut offset = 0;
    loop {
        let r = get(
            &client(),
            &server.url(&format!(
                "/v1/workflows/{id}/runs?limit=100&offset={offset}"
            )),
            Some(key),
        )
        .await;
        let runs = r.json["runs"].as_array().unwrap().clone();
        for run in &runs {
            *out.entry(run["status"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
        if runs.len() < 100 {
            return out;
        }
        offset += 100;
    }
}

/// Waits until the workflow's runs have all finished (or 90 s pass: longer
/// than the 30 s lease a killed server's runs wait out), reading the
/// database rather than polling the API into its rate limit; then answers
/// their statuses through the API.
async fn finished(
    deployment: &Deployment,
    server: &Server,
    key: &str,
    id: i64,
) -> HashMap<String, usize> {
    let mut conn = deployment.db().await;
    let deadline = Instant::now() + Duration::from_secs(90);
    while Instant::now() < deadline {
        let left: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM workflow_runs WHERE workflow_id = $1 AND finished_at IS NULL",
        )
        .bind(id)
        .fetch_one(&mut conn)
        .await
        .unwrap();
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    statuses(server, key, id).await
}

/// `curl -N` on the stream (read with `output`, which blocks: the tests run
/// on a multi-threaded runtime so the receiver keeps answering meanwhile).
fn curl_stream(url: &str, key: &str, last_event_id: Option<&str>) -> std::process::Child {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "-N", "--max-time", "30", "-H"])
        .arg(format!("Authorization: Bearer {key}"));
    if let Some(id) = last_event_id {
        cmd.arg("-H").arg(format!("Last-Event-ID: {id}"));
    }
    cmd.arg(url).stdout(Stdio::piped()).spawn().expect("curl")
}

fn output(mut child: std::process::Child) -> String {
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    child.wait().unwrap();
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_reads_the_stream_of_a_live_run_and_replays_a_finished_one() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let deployment = deployment();
    let account = deployment.create_account("stream@example.com", "starter");
    let server = deployment.start();
    let receiver = Receiver::start().await;
    let actions = json!([
        call(&receiver, "a", 0),
        call(&receiver, "slow", 1500),
        call(&receiver, "b", 0)
    ]);
    let (id, token) = workflow(&server, &account.api_key, actions).await;
    let run_id = trigger(&server, &token, 1).await;
    let url = server.url(&format!("/v1/workflows/{id}/runs/{run_id}/stream"));
    let started = Instant::now();
    let live = curl_stream(&url, &account.api_key, None);
    let text = output(live);
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "the stream stayed open while the run worked"
    );
    let events: Vec<&str> = text
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .collect();
    assert_eq!(events.len(), 4, "{text}\n{}", server.log());
    for (i, event) in events[..3].iter().enumerate() {
        assert!(event.contains("event: action"), "{event}");
        assert!(event.contains(&format!("id: {}", i + 1)), "{event}");
        assert!(event.contains(&format!("\"index\":{i}")), "{event}");
        assert!(event.contains("\"status\":\"success\""), "{event}");
    }
    assert!(events[3].contains("event: run.finished") && events[3].contains("\"success\""));
    let replay = output(curl_stream(&url, &account.api_key, None));
    assert_eq!(replay.matches("event: action").count(), 3, "{replay}");
    let resumed = output(curl_stream(&url, &account.api_key, Some("2")));
    assert_eq!(resumed.matches("event: action").count(), 1, "{resumed}");
    assert!(resumed.contains("id: 3") && resumed.contains("event: run.finished"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_the_runs_and_execute_each_once() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let deployment = deployment();
    let account = deployment.create_account("two@example.com", "pro");
    let first = deployment.start();
    let second = deployment.start();
    let receiver = Receiver::start().await;
    let (id, token) = workflow(&first, &account.api_key, json!([call(&receiver, "a", 2)])).await;
    for n in 0..200 {
        let server = if n % 2 == 0 { &first } else { &second };
        trigger(server, &token, n).await;
    }
    let done = receiver.wait_for("a", 200, Duration::from_secs(120)).await;
    assert_eq!(done, 200);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let counts = receiver.counts();
    assert!(counts.values().all(|c| *c == 1), "a run executed twice");
    let s = finished(&deployment, &second, &account.api_key, id).await;
    assert_eq!(s.get("success"), Some(&200), "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkill_during_1000_queued_runs_repeats_no_checkpointed_action() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let deployment = deployment();
    let account = deployment.create_account("killed-runs@example.com", "pro");
    let server = deployment.start();
    let receiver = Receiver::start().await;
    let actions = json!([call(&receiver, "a", 2), call(&receiver, "b", 2)]);
    let (id, _) = workflow(&server, &account.api_key, actions).await;
    queue_runs(&deployment, account.account_id, id, 1000).await;
    let at = receiver.wait_for("b", 100, Duration::from_secs(60)).await;
    drop(server); // SIGKILL with runs leased and actions in flight
    let at_kill = receiver.distinct("b");
    assert!(
        (100..1000).contains(&at_kill),
        "the kill should land mid-way: {at_kill} ({at})"
    );

    // Runs the dead server held resume when their 30 s leases run out.
    let server = deployment.start();
    let done = receiver.wait_for("b", 1000, Duration::from_secs(180)).await;
    assert_eq!(done, 1000);
    // A `b` the dead server sent before it could checkpoint counts as seen,
    // but its run finishes only when the lease lapses and `b` runs again.
    let s = finished(&deployment, &server, &account.api_key, id).await;
    assert_eq!(s.get("success"), Some(&1000), "{s:?}");
    let counts = receiver.counts();
    for n in 0..1000 {
        let a = counts.get(&(n, "a".to_owned())).copied().unwrap_or(0);
        let b = counts.get(&(n, "b".to_owned())).copied().unwrap_or(0);
        assert!(a >= 1 && b >= 1, "run {n} did not finish: a {a}, b {b}");
        // At most the action in flight at the kill runs again: never the
        // checkpointed `a` once `b` had started.
        assert!(a + b <= 3 && !(a > 1 && b > 1), "run {n}: a {a}, b {b}");
    }
    let repeated: usize = counts.values().filter(|c| **c > 1).count();
    // Four worker lanes claim 32 runs each.
    assert!(
        repeated <= 128,
        "more repeats than runs a server works at once: {repeated}"
    );
}
