//! A hostile `workflow-action` component (`tests/plugins/rust/hostile-action`,
//! type `hostile_action`) dropped into the plugins folder: a component that
//! loops forever, traps or exhausts its memory fails its action (and the run,
//! after its retry), quickly, while a well-behaved run drained alongside it
//! succeeds and the server keeps answering.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;
use outreach_plugin_runtime::fixtures::TEST_GUESTS_DIR;

/// The ceiling on one drain of a hostile run and a normal one: the loop is
/// cut by the 300 ms CPU deadline of its manifest on each of its two
/// attempts (the error says so), well before the 3 s wall-clock timeout;
/// the margin is for loaded CI machines.
const QUICKLY: Duration = Duration::from_secs(10);

/// The workflow areas, with `hostile-action.wasm`/`.toml` in the plugins
/// folder the runtime loads at startup.
async fn hostile_app() -> TestApp {
    TestApp::with_areas(
        &[outreach_leads::AREA, outreach_outbound::AREA, crate::AREA],
        |config| {
            let dir = config.data_dir.join("plugins");
            std::fs::create_dir_all(&dir).unwrap();
            for ext in ["wasm", "toml"] {
                let name = format!("hostile-action.{ext}");
                std::fs::copy(Path::new(TEST_GUESTS_DIR).join(&name), dir.join(&name))
                    .unwrap_or_else(|e| panic!("{name} from {TEST_GUESTS_DIR}: {e}"));
            }
            config.plugins_dir = dir.to_string_lossy().into_owned();
        },
    )
    .await
}

/// A webhook workflow (its incoming call carries the items, so the run
/// needs no pool sample); answers its id and token.
async fn hook(app: &TestApp, key: &str, name: &str, actions: Value) -> (i64, String) {
    let w = create(
        app,
        key,
        json!({"name": name, "trigger_type": "webhook", "actions": actions}),
    )
    .await;
    (
        w["id"].as_i64().unwrap(),
        w["webhook_token"].as_str().unwrap().to_owned(),
    )
}

/// Calls the incoming webhook without draining; answers the queued run's id.
async fn queue(app: &TestApp, token: &str) -> i64 {
    let r = app
        .call(
            "POST",
            &format!("/v1/workflows/incoming/{token}"),
            None,
            Some(json!({"domains": [{"name": "one"}, {"name": "two"}]})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["run_id"].as_i64().unwrap()
}

/// Runs `mode` with one retry next to a well-behaved run in one drain:
/// the hostile run ends `error` after two attempts with an error containing
/// each of `expect`, the other succeeds, the server still answers. Answers how
/// long the drain took.
async fn contained(mode: &str, expect: &[&str]) -> Duration {
    let app = hostile_app().await;
    let a = starter(&app).await;
    let key = &a.api_key;
    let (bad, bad_token) = hook(
        &app,
        key,
        mode,
        json!([{"type": "hostile_action", "config": {"mode": mode},
            "retry": {"attempts": 1, "backoff_seconds": 0}}]),
    )
    .await;
    let (good, good_token) = hook(
        &app,
        key,
        "normal",
        json!([
            {"type": "hostile_action", "config": {"mode": "ok"}},
            {"type": "dedup_by_field", "config": {"field": "name"}},
        ]),
    )
    .await;
    let bad_run = queue(&app, &bad_token).await;
    let good_run = queue(&app, &good_token).await;

    let started = Instant::now();
    drain(&app.state).await.unwrap();
    let took = started.elapsed();
    assert!(took < QUICKLY, "{mode}: the drain took {took:?}");

    let r = run(&app, key, bad, bad_run).await;
    assert_eq!(r["status"], "error", "{mode}: {r}");
    let action = &r["actions_executed"][0];
    assert_eq!(action["type"], "hostile_action", "{r}");
    assert_eq!(action["status"], "error", "{mode}: {r}");
    assert_eq!(action["attempts"], 2, "{mode}: the retry ran: {r}");
    let error = action["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("hostile-action: "), "{mode}: {error}");
    let run_error = r["error"].as_str().unwrap_or_default();
    for part in expect {
        assert!(error.contains(part), "{mode}: {error}");
        assert!(run_error.contains(part), "{mode}: {run_error}");
    }

    let r = run(&app, key, good, good_run).await;
    assert_eq!(r["status"], "success", "{mode}: {r}");
    assert_eq!(r["actions_executed"][0]["status"], "success", "{r}");
    assert_eq!(r["actions_executed"][0]["output_count"], 2, "{r}");
    assert_eq!(r["actions_executed"][1]["output_count"], 2, "{r}");

    let list = app.get("/v1/workflows", key).await;
    assert_eq!(list.status, 200, "{:?}", list.body);
    assert_eq!(list.body["count"], 2, "{:?}", list.body);
    // The component itself still serves calls.
    let again = queue(&app, &good_token).await;
    drain(&app.state).await.unwrap();
    assert_eq!(run(&app, key, good, again).await["status"], "success");
    took
}

#[tokio::test]
async fn a_looping_action_is_cut_by_its_cpu_deadline() {
    let took = contained(
        "loop",
        &["plugin timed out: CPU deadline of 300 ms exceeded"],
    )
    .await;
    eprintln!("hostile_action loop: two attempts and a normal run drained in {took:?}");
}

#[tokio::test]
async fn a_trapping_action_fails_its_action() {
    contained(
        "trap",
        &["plugin trapped", "hostile action panicked on purpose"],
    )
    .await;
}

#[tokio::test]
async fn a_memory_hungry_action_stops_at_its_cap() {
    contained(
        "memory",
        &["plugin ran out of memory: memory cap of 32 MiB reached"],
    )
    .await;
}

#[tokio::test]
async fn the_component_is_listed_and_its_schema_checks_configs() {
    let app = hostile_app().await;
    let a = starter(&app).await;
    let r = app.get("/v1/workflows/action-types", &a.api_key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let hostile = r.body["action_types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "hostile_action")
        .cloned()
        .unwrap_or_else(|| panic!("hostile_action missing: {:?}", r.body));
    assert_eq!(hostile["source"], "plugin", "{hostile}");

    let r = app
        .post(
            "/v1/workflows",
            &a.api_key,
            manual(
                "explode",
                json!([{"type": "hostile_action", "config": {"mode": "explode"}}]),
            ),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(
        r.detail().contains("actions[0].config.mode"),
        "{}",
        r.detail()
    );
}
