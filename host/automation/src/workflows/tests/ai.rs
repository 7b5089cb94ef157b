//! `ai_extract`, `ai_write` and workflow budgets, on an OpenAI key whose
//! calls a stub answers at a known cost: model gpt-4o ($2.50 per million
//! prompt tokens) reporting 100,000 prompt tokens, so $0.25 a call.

use std::time::Duration;

use serde_json::{Value, json};

use super::runs::{call_in, webhook_workflow};
use super::*;
use outreach_core::testing::TestResponse;
use outreach_core::testing::stub::{Canned, Stub};

const LLM: &str = "/oa/v1/chat/completions";

async fn ai_app(stub: &Stub) -> TestApp {
    let base = stub.url("/oa");
    TestApp::with_areas(
        &[
            outreach_vendors::AREA,
            outreach_leads::AREA,
            outreach_outbound::AREA,
            crate::AREA,
        ],
        |c| {
            c.vendor_base_urls.insert("openai".into(), base);
        },
    )
    .await
}

/// The stub's answer: `content` at $0.25, after `delay`.
fn answer_after(stub: &Stub, content: &str, delay: Duration) {
    stub.set(
        LLM,
        Canned::json(
            200,
            json!({"model": "gpt-4o", "choices": [{"message": {"role": "assistant", "content": content},
                "finish_reason": "stop"}], "usage": {"prompt_tokens": 100_000, "completion_tokens": 0}}),
        )
        .after(delay),
    );
}

fn answer(stub: &Stub, content: &str) {
    answer_after(stub, content, Duration::ZERO);
}

/// Answers for `n` domains `d<i>.com`, all but `d3.com`.
fn answers(stub: &Stub, n: usize) {
    answers_after(stub, n, Duration::ZERO);
}

fn answers_after(stub: &Stub, n: usize, delay: Duration) {
    let o: serde_json::Map<String, Value> = (0..n)
        .filter(|i| *i != 3)
        .map(|i| {
            (
                format!("d{i}.com"),
                json!({"industry": format!("ind{i}"), "opener": format!("Hi d{i}.com")}),
            )
        })
        .collect();
    answer_after(stub, &format!("```json\n{}\n```", Value::Object(o)), delay);
}

fn domains(n: usize) -> Value {
    (0..n).map(|i| json!(format!("d{i}.com"))).collect()
}

async fn account_with_key(app: &TestApp, stub: &Stub, plan: Plan) -> TestAccount {
    answer(stub, "OK");
    let acct = app.account(plan).await;
    let k = app
        .post(
            "/v1/ai/providers",
            &acct.api_key,
            json!({"provider": "openai", "api_key": "sk-test-key-123", "validation_model": "gpt-4o"}),
        )
        .await;
    assert_eq!(k.status, 201, "{:?}", k.body);
    acct
}

async fn budget(app: &TestApp, key: &str, id: i64) -> Value {
    let r = app.get(&format!("/v1/workflows/{id}/budget"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body
}

async fn put_budget(app: &TestApp, key: &str, id: i64, body: Value) -> TestResponse {
    app.call(
        "PUT",
        &format!("/v1/workflows/{id}/budget"),
        Some(key),
        Some(body),
    )
    .await
}

async fn is_active(app: &TestApp, key: &str, id: i64) -> bool {
    let r = app.get(&format!("/v1/workflows/{id}"), key).await;
    r.body["is_active"].as_bool().unwrap()
}

async fn ledger(app: &TestApp, account_id: i64, action_type: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM vendor_calls WHERE account_id = $1 AND action_type = $2 AND success = 1",
    )
    .bind(account_id)
    .bind(action_type)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap()
}

fn extract() -> Value {
    json!({"type": "ai_extract", "config": {"prompt": "Find the industry of {{trigger.segment}}",
        "fields": ["industry", "hq_country"]}})
}

#[tokio::test]
async fn ai_extract_and_ai_write_fill_items_in_batches_with_values_in_the_record() {
    let stub = Stub::start().await;
    let app = ai_app(&stub).await;
    let a = account_with_key(&app, &stub, Plan::Starter).await;
    let write = json!({"type": "ai_write", "config": {"prompt": "Write an opener", "output_field": "opener"}});
    let (id, token) = webhook_workflow(&app, &a.api_key, json!([extract(), write])).await;
    answers(&stub, 25);
    let before = stub.hits(LLM);
    let run = call_in(
        &app,
        &a.api_key,
        id,
        &token,
        json!({"domains": domains(25), "segment": "fintech"}),
    )
    .await;
    assert_eq!(run["status"], "success", "{run}");

    // 25 items: 2 extract calls (20 a batch) and 3 write calls (10 a batch).
    assert_eq!(stub.hits(LLM) - before, 5);
    let ex = &run["actions_executed"][0]["result"];
    assert_eq!(
        (ex["calls"].as_i64(), ex["cost_usd"].as_f64()),
        (Some(2), Some(0.5))
    );
    assert_eq!(ex["unanswered"], 1);
    assert_eq!(
        ex["values"][0],
        json!({"domain": "d0.com", "industry": "ind0", "hq_country": null})
    );
    assert_eq!(
        ex["values"][3],
        json!({"domain": "d3.com", "industry": null, "hq_country": null})
    );
    assert_eq!(ex["values"].as_array().unwrap().len(), 25);
    let wr = &run["actions_executed"][1]["result"];
    assert_eq!(
        (wr["calls"].as_i64(), wr["cost_usd"].as_f64()),
        (Some(3), Some(0.75))
    );
    assert_eq!(
        wr["values"][24],
        json!({"domain": "d24.com", "opener": "Hi d24.com"})
    );
    assert_eq!(wr["values"][3]["opener"], Value::Null);

    // The request: the rendered prompt, the items, JSON mode.
    let body = stub.last_body(LLM).unwrap();
    assert_eq!(body["response_format"]["type"], "json_object", "{body}");
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.starts_with("Instruction: Write an opener"), "{user}");
    assert!(user.contains(r#""key":"d20.com""#), "{user}");

    // The ledger has every call under the spec's action names, and the
    // workflow's spend is their cost (tracked without a cap).
    assert_eq!(ledger(&app, a.account_id, "workflow:ai_extract").await, 2);
    assert_eq!(ledger(&app, a.account_id, "workflow:ai_write").await, 3);
    let b = budget(&app, &a.api_key, id).await;
    assert_eq!(b["configured"], false, "{b}");
    assert_eq!(b["month_to_date_spend_usd"], 1.25, "{b}");
    assert_eq!(b["month"], "2026-11");

    // An answer with no JSON is retried (here: no retry block, so it fails).
    answer(&stub, "Sorry, I cannot help with that.");
    let run = call_in(&app, &a.api_key, id, &token, json!({"domains": domains(2)})).await;
    assert_eq!(run["status"], "error", "{run}");
    assert!(
        run["error"].as_str().unwrap().contains("no JSON object"),
        "{run}"
    );
}

#[tokio::test]
async fn a_budget_stops_the_run_at_the_cap_pauses_and_a_reset_lifts_only_its_pause() {
    let stub = Stub::start().await;
    let app = ai_app(&stub).await;
    let a = account_with_key(&app, &stub, Plan::Starter).await;
    // continue_on_error does not let a run go on past the cap.
    let mut first = extract();
    first["continue_on_error"] = json!(true);
    let write =
        json!({"type": "ai_write", "config": {"prompt": "Write", "output_field": "opener"}});
    let (id, token) = webhook_workflow(&app, &a.api_key, json!([first, write])).await;
    let r = put_budget(
        &app,
        &a.api_key,
        id,
        json!({"monthly_cap_usd": 0.5, "auto_pause_on_exceed": true}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["configured"], true);
    assert_eq!(r.body["remaining_usd"], 0.5);

    // 60 items are 3 calls; the second reaches $0.50, so the third is
    // never made.
    answers(&stub, 60);
    let before = stub.hits(LLM);
    let run = call_in(
        &app,
        &a.api_key,
        id,
        &token,
        json!({"domains": domains(60)}),
    )
    .await;
    assert_eq!(stub.hits(LLM) - before, 2);
    assert_eq!(run["status"], "error", "{run}");
    let error = run["error"].as_str().unwrap();
    assert!(error.contains("Workflow budget reached"), "{error}");
    assert_eq!(
        run["actions_executed"].as_array().unwrap().len(),
        1,
        "{run}"
    );
    let b = budget(&app, &a.api_key, id).await;
    assert_eq!(
        (
            b["month_to_date_spend_usd"].as_f64(),
            b["remaining_usd"].as_f64()
        ),
        (Some(0.5), Some(0.0))
    );
    assert_eq!(b["paused_by_budget"], true, "{b}");
    assert!(!is_active(&app, &a.api_key, id).await);

    // The reset zeroes spend and lifts the budget's pause.
    let r = app
        .post(
            &format!("/v1/workflows/{id}/budget/reset"),
            &a.api_key,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["month_to_date_spend_usd"], 0.0);
    assert_eq!(r.body["paused_by_budget"], false);
    assert!(is_active(&app, &a.api_key, id).await);

    // Spent again: paused again; the user resumes, then pauses it
    // themselves: that pause is theirs, and a reset leaves it.
    let run = call_in(
        &app,
        &a.api_key,
        id,
        &token,
        json!({"domains": domains(60)}),
    )
    .await;
    assert_eq!(run["status"], "error", "{run}");
    assert!(!is_active(&app, &a.api_key, id).await);
    for active in [true, false] {
        let r = app
            .call(
                "PUT",
                &format!("/v1/workflows/{id}"),
                Some(&a.api_key),
                Some(json!({"is_active": active})),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
    assert_eq!(
        budget(&app, &a.api_key, id).await["paused_by_budget"],
        false
    );
    let r = app
        .post(
            &format!("/v1/workflows/{id}/budget/reset"),
            &a.api_key,
            json!({}),
        )
        .await;
    assert_eq!(r.body["month_to_date_spend_usd"], 0.0);
    assert!(!is_active(&app, &a.api_key, id).await);
}

#[tokio::test]
async fn spend_starts_again_each_utc_month_and_without_auto_pause_the_workflow_stays_active() {
    let stub = Stub::start().await;
    let app = ai_app(&stub).await;
    let a = account_with_key(&app, &stub, Plan::Starter).await;
    let (id, token) = webhook_workflow(&app, &a.api_key, json!([extract()])).await;
    let r = put_budget(&app, &a.api_key, id, json!({"monthly_cap_usd": 0.3})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["auto_pause_on_exceed"], false);

    // $0.25 is under $0.30, so a second call is made: spend passes the
    // cap by less than one call.
    answers(&stub, 60);
    let run = call_in(
        &app,
        &a.api_key,
        id,
        &token,
        json!({"domains": domains(60)}),
    )
    .await;
    assert_eq!(run["status"], "error", "{run}");
    assert_eq!(
        budget(&app, &a.api_key, id).await["month_to_date_spend_usd"],
        0.5
    );
    assert!(is_active(&app, &a.api_key, id).await);
    let before = stub.hits(LLM);
    let run = call_in(&app, &a.api_key, id, &token, json!({"domains": domains(1)})).await;
    assert_eq!(run["status"], "error", "{run}");
    assert_eq!(stub.hits(LLM), before, "no call once the cap is reached");

    // 2026-11-21 12:00 UTC + 10 days: December, a new month's spend.
    app.clock.advance(Duration::from_secs(10 * 86_400));
    let b = budget(&app, &a.api_key, id).await;
    assert_eq!(
        (b["month"].as_str(), b["month_to_date_spend_usd"].as_f64()),
        (Some("2026-12"), Some(0.0))
    );
    let run = call_in(
        &app,
        &a.api_key,
        id,
        &token,
        json!({"domains": domains(20)}),
    )
    .await;
    assert_eq!(run["status"], "success", "{run}");
    assert_eq!(
        budget(&app, &a.api_key, id).await["month_to_date_spend_usd"],
        0.25
    );
}

#[tokio::test]
async fn budget_input_tenancy_and_plan_are_checked() {
    let stub = Stub::start().await;
    let app = ai_app(&stub).await;
    let a = app.account(Plan::Starter).await;
    let other = app.account(Plan::Starter).await;
    let free = app.account(Plan::Free).await;
    let w = create(&app, &a.api_key, manual("m", json!([extract()]))).await;
    let id = w["id"].as_i64().unwrap();
    let path = format!("/v1/workflows/{id}/budget");

    let b = budget(&app, &a.api_key, id).await;
    assert_eq!(b["configured"], false);
    assert_eq!(b["month_to_date_spend_usd"], 0.0);
    assert_eq!(b["remaining_usd"], Value::Null);
    for bad in [
        json!({"monthly_cap_usd": -1}),
        json!({"monthly_cap_usd": "ten"}),
        json!({}),
    ] {
        let r = put_budget(&app, &a.api_key, id, bad.clone()).await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
        assert!(!r.detail().is_empty(), "{:?}", r.body);
    }
    let r = put_budget(&app, &a.api_key, id, json!({"monthly_cap_usd": 0})).await;
    assert_eq!(
        (r.status.as_u16(), &r.body["configured"]),
        (200, &json!(false))
    );
    let r = put_budget(
        &app,
        &a.api_key,
        id,
        json!({"monthly_cap_usd": 12.5, "auto_pause_on_exceed": true}),
    )
    .await;
    assert_eq!(r.body["monthly_cap_usd"], 12.5);
    let r = app.call("DELETE", &path, Some(&a.api_key), None).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        (&r.body["configured"], &r.body["monthly_cap_usd"]),
        (&json!(false), &json!(0.0))
    );

    // Another account's workflow is not found, whatever the verb.
    for (method, p, body) in [
        ("GET", path.clone(), None),
        ("PUT", path.clone(), Some(json!({"monthly_cap_usd": 1}))),
        ("DELETE", path.clone(), None),
        ("POST", format!("{path}/reset"), Some(json!({}))),
    ] {
        let r = app
            .call(method, &p, Some(&other.api_key), body.clone())
            .await;
        assert_eq!(r.status, 404, "{method} {p}: {:?}", r.body);
        let r = app.call(method, &p, Some(&free.api_key), body).await;
        assert_eq!(r.status, 403, "{method} {p}: {:?}", r.body);
    }
    let r = app.get("/v1/workflows/999999/budget", &a.api_key).await;
    assert_eq!(r.status, 404);

    // A config the action's schema refuses is a 400 on save.
    let r = app
        .post(
            "/v1/workflows",
            &a.api_key,
            manual(
                "bad",
                json!([{"type": "ai_write", "config": {"prompt": "x", "output_field": "domain"}}]),
            ),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);

    // Without an AI key the action fails fast and says so.
    let w = create(&app, &a.api_key, manual("m2", json!([extract()]))).await;
    let id = w["id"].as_i64().unwrap();
    pool(
        &app,
        &[json!({"domain": "acme.io", "industry": "Software"})],
    )
    .await;
    let run = run_now(&app, &a.api_key, id).await;
    assert_eq!(run["status"], "error", "{run}");
    assert!(
        run["error"].as_str().unwrap().contains("AI provider key"),
        "{run}"
    );
}

#[tokio::test]
async fn calls_of_a_capped_workflow_wait_for_each_other_so_servers_overspend_by_one_call_at_most() {
    let stub = Stub::start().await;
    let app = ai_app(&stub).await;
    let a = account_with_key(&app, &stub, Plan::Starter).await;
    let split =
        json!([{"type": "parallel_split", "config": {"branches": [[extract()], [extract()]]}}]);
    let (id, token) = webhook_workflow(&app, &a.api_key, split).await;
    let r = put_budget(&app, &a.api_key, id, json!({"monthly_cap_usd": 1.0})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    answers_after(&stub, 60, Duration::from_millis(40));

    // One server: the two branches' calls take turns, and the cap is met
    // exactly (4 x $0.25), never passed.
    let before = stub.hits(LLM);
    let run = call_in(
        &app,
        &a.api_key,
        id,
        &token,
        json!({"domains": domains(60)}),
    )
    .await;
    assert_eq!(run["status"], "error", "{run}");
    assert!(
        run["error"]
            .as_str()
            .unwrap()
            .contains("Workflow budget reached"),
        "{run}"
    );
    assert_eq!(stub.hits(LLM) - before, 4);
    assert_eq!(stub.max_in_flight(), 1);
    assert_eq!(
        budget(&app, &a.api_key, id).await["month_to_date_spend_usd"],
        1.0
    );

    // Two servers, a run each: one call in flight per server, so spend
    // passes the cap by at most one call per server.
    let r = app
        .post(
            &format!("/v1/workflows/{id}/budget/reset"),
            &a.api_key,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200);
    for _ in 0..2 {
        let r = app
            .call(
                "POST",
                &format!("/v1/workflows/incoming/{token}"),
                None,
                Some(json!({"domains": domains(60)})),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
    let other = app.another_server().await;
    let (x, y) = tokio::join!(
        crate::workflows::runs::run_due(&app.state, 1),
        crate::workflows::runs::run_due(&other.state, 1)
    );
    x.unwrap();
    y.unwrap();
    crate::workflows::runs::drain(&app.state).await.unwrap();
    assert!(stub.max_in_flight() <= 2, "{}", stub.max_in_flight());
    let spend = budget(&app, &a.api_key, id).await["month_to_date_spend_usd"]
        .as_f64()
        .unwrap();
    assert!((1.0..=1.5).contains(&spend), "{spend}");
}
