//! Definitions: the plan gate and cap, every check, versions, rollback,
//! cycles, tenancy.

use serde_json::{Value, json};

use super::*;

fn memory_action() -> Value {
    json!({"type": "cross_run_memory", "config": {"op": "store", "key": "k", "value": "v"}})
}

#[tokio::test]
async fn workflows_are_created_listed_changed_and_deleted_under_the_plan_cap() {
    let app = app().await;
    let free = app.account(Plan::Free).await;
    let r = app.get("/v1/workflows", &free.api_key).await;
    assert_eq!(r.status, 403);
    let a = starter(&app).await;
    let w = create(
        &app,
        &a.api_key,
        json!({"name": " Enrich new leads ", "description": "d", "trigger_type": "manual",
            "actions": [memory_action()], "canvas_data": {"nodes": [{"x": 1}]},
            "conditions": [{"field": "industry", "value": "software"}]}),
    )
    .await;
    assert_eq!(w["name"], "Enrich new leads");
    assert_eq!(w["is_active"], true);
    assert_eq!(w["canvas_data"], json!({"nodes": [{"x": 1}]}));
    assert_eq!(w["conditions"][0]["op"], "equals");
    assert!(w.get("webhook_url").is_none());
    let list = app.get("/v1/workflows", &a.api_key).await;
    assert_eq!(list.body["count"], 1);
    assert_eq!(list.body["limit"], 5);
    assert_eq!(list.body["remaining"], 4);
    for i in 0..4 {
        create(
            &app,
            &a.api_key,
            manual(&format!("w{i}"), json!([memory_action()])),
        )
        .await;
    }
    let sixth = app
        .post(
            "/v1/workflows",
            &a.api_key,
            manual("w6", json!([memory_action()])),
        )
        .await;
    assert_eq!(sixth.status, 400, "{:?}", sixth.body);
    assert!(sixth.detail().contains("Plan limit"), "{}", sixth.detail());
    let ent = app.account(Plan::Enterprise).await;
    let list = app.get("/v1/workflows", &ent.api_key).await;
    assert_eq!(list.body["limit"], Value::Null);
    assert_eq!(list.body["remaining"], Value::Null);

    let id = w["id"].as_i64().unwrap();
    let other = starter(&app).await;
    for (method, path) in [
        ("GET", format!("/v1/workflows/{id}")),
        ("PUT", format!("/v1/workflows/{id}")),
        ("DELETE", format!("/v1/workflows/{id}")),
        ("POST", format!("/v1/workflows/{id}/execute")),
        ("GET", format!("/v1/workflows/{id}/runs")),
        ("GET", format!("/v1/workflows/{id}/versions")),
    ] {
        let r = app
            .call(
                method,
                &path,
                Some(&other.api_key),
                Some(json!({"name": "x"})),
            )
            .await;
        assert_eq!(r.status, 404, "{method} {path}");
    }
    let r = app
        .call(
            "DELETE",
            &format!("/v1/workflows/{id}"),
            Some(&a.api_key),
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(
        app.get(&format!("/v1/workflows/{id}"), &a.api_key)
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn bad_definitions_answer_400_naming_the_field() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let many: Vec<Value> = (0..101).map(|_| memory_action()).collect();
    let conditions: Vec<Value> = (0..51)
        .map(|_| json!({"field": "industry", "op": "equals", "value": "x"}))
        .collect();
    let cases = [
        (manual("", json!([memory_action()])), "name"),
        (manual("x", json!(many)), "at most 100"),
        (
            json!({"name": "x", "trigger_type": "manual", "actions": [memory_action()], "conditions": conditions}),
            "at most 50",
        ),
        (
            manual("x", json!([{"type": "teleport", "config": {}}])),
            "actions[0].type",
        ),
        (
            manual(
                "x",
                json!([{"type": "add_to_list", "config": {"list_id": "seven"}}]),
            ),
            "actions[0].config.list_id",
        ),
        (
            manual(
                "x",
                json!([memory_action(), {"type": "enrich", "config": {"fields": ["dns", "smell"]}}]),
            ),
            "actions[1].config.fields[1]",
        ),
        (
            manual(
                "x",
                json!([{"type": "cross_run_memory", "config": {"op": "store", "key": "k"},
                "retry": {"attempts": 6, "backoff_seconds": 1}}]),
            ),
            "retry.attempts",
        ),
        (
            manual(
                "x",
                json!([{"type": "conditional_branch", "config": {"branches": [
                {"when": {"field": "industry", "value": "x"},
                 "then": [{"type": "add_to_list", "config": {}}]}]}}]),
            ),
            "actions[0].config.branches[0].then[0].config",
        ),
        (
            json!({"name": "x", "trigger_type": "schedule", "trigger_config": {"cron": "61 * * * *"}, "actions": [memory_action()]}),
            "cron",
        ),
        (
            json!({"name": "x", "trigger_type": "schedule", "trigger_config": {"cron": "0 9 * * *", "timezone": "Mars/Base"}, "actions": [memory_action()]}),
            "timezone",
        ),
        (
            json!({"name": "x", "trigger_type": "intent_alert", "actions": [memory_action()]}),
            "trigger_config.alert_id",
        ),
        (
            json!({"name": "x", "trigger_type": "on_full_moon", "actions": [memory_action()]}),
            "trigger_type",
        ),
        (
            json!({"name": "x", "trigger_type": "manual", "actions": [memory_action()],
                "conditions": [{"field": "industry", "op": "resembles", "value": 1}]}),
            "conditions[0].op",
        ),
        (
            json!({"name": "x", "trigger_type": "manual", "actions": [memory_action()],
                "execution_limits": {"max_domains_per_run": 5000}}),
            "max_domains_per_run",
        ),
        (
            json!({"name": "x", "trigger_type": "manual", "actions": []}),
            "actions",
        ),
    ];
    for (body, field) in cases {
        let r = app.post("/v1/workflows", &a.api_key, body.clone()).await;
        assert_eq!(r.status, 400, "{body} -> {:?}", r.body);
        assert!(
            r.detail().contains(field),
            "{field} not in '{}'",
            r.detail()
        );
    }
    assert_eq!(app.get("/v1/workflows", &a.api_key).await.body["count"], 0);
}

#[tokio::test]
async fn trigger_targets_must_be_the_accounts_own() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let b = app.account(Plan::Pro).await;
    let audience = app
        .post(
            "/v1/audiences",
            &b.api_key,
            json!({"name": "theirs", "filters": {}}),
        )
        .await;
    assert_eq!(audience.status, 201, "{:?}", audience.body);
    let theirs = audience.body["id"].as_i64().unwrap();
    let body = |id: i64| {
        json!({"name": "x", "trigger_type": "audience_match", "trigger_config": {"audience_id": id},
            "actions": [memory_action()]})
    };
    let r = app.post("/v1/workflows", &a.api_key, body(theirs)).await;
    assert_eq!(r.status, 404, "{:?}", r.body);
    let r = app.post("/v1/workflows", &b.api_key, body(theirs)).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    // A sub_workflow of another account's workflow is as unknown.
    let bw = r.body["id"].as_i64().unwrap();
    let r = app
        .post(
            "/v1/workflows",
            &a.api_key,
            manual(
                "x",
                json!([{"type": "sub_workflow", "config": {"workflow_id": bw}}]),
            ),
        )
        .await;
    assert_eq!(r.status, 404, "{:?}", r.body);
}

#[tokio::test]
async fn every_put_snapshots_a_version_and_rollback_restores_one() {
    let app = app().await;
    let a = starter(&app).await;
    let w = create(&app, &a.api_key, manual("First", json!([memory_action()]))).await;
    let id = w["id"].as_i64().unwrap();
    let path = format!("/v1/workflows/{id}");
    let versions = app.get(&format!("{path}/versions"), &a.api_key).await;
    assert_eq!(versions.body["versions"], json!([]), "creating adds none");
    let r = app
        .call(
            "PUT",
            &path,
            Some(&a.api_key),
            Some(json!({"name": "Second", "actions": [memory_action(), memory_action()]})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = app
        .call(
            "PUT",
            &path,
            Some(&a.api_key),
            Some(json!({"is_active": false})),
        )
        .await;
    assert_eq!(r.body["name"], "Second");
    let versions = app.get(&format!("{path}/versions"), &a.api_key).await;
    let list = versions.body["versions"].as_array().unwrap().clone();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["version_number"], 2);
    assert_eq!(list[0]["change_summary"], "paused");
    assert_eq!(list[1]["change_summary"], "renamed; actions: 1 -> 2");
    let v1 = list[1]["id"].as_i64().unwrap();
    let snapshot = app.get(&format!("{path}/versions/{v1}"), &a.api_key).await;
    assert_eq!(snapshot.body["name"], "First");
    assert_eq!(snapshot.body["actions"].as_array().unwrap().len(), 1);
    assert_eq!(snapshot.body["is_active"], true);
    let r = app
        .post(
            &format!("{path}/versions/{v1}/rollback"),
            &a.api_key,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["name"], "First");
    assert_eq!(r.body["is_active"], true);
    let versions = app.get(&format!("{path}/versions"), &a.api_key).await;
    assert_eq!(
        versions.body["versions"][0]["change_summary"],
        "Rolled back to v1"
    );
    assert_eq!(versions.body["versions"][0]["version_number"], 3);
    let other = starter(&app).await;
    let r = app
        .get(&format!("{path}/versions/{v1}"), &other.api_key)
        .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn sub_workflow_cycles_are_refused_at_any_depth() {
    let app = app().await;
    let a = starter(&app).await;
    let sub = |id: i64| json!([{"type": "sub_workflow", "config": {"workflow_id": id}}]);
    let c = create(&app, &a.api_key, manual("C", json!([memory_action()]))).await;
    let c = c["id"].as_i64().unwrap();
    let b = create(&app, &a.api_key, manual("B", sub(c))).await["id"]
        .as_i64()
        .unwrap();
    let x = create(&app, &a.api_key, manual("A", sub(b))).await["id"]
        .as_i64()
        .unwrap();
    // C -> A closes A -> B -> C -> A.
    let r = app
        .call(
            "PUT",
            &format!("/v1/workflows/{c}"),
            Some(&a.api_key),
            Some(json!({"actions": sub(x)})),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(r.detail().contains("cycle"), "{}", r.detail());
    // Itself, nested in a branch.
    let r = app
        .call(
            "PUT",
            &format!("/v1/workflows/{c}"),
            Some(&a.api_key),
            Some(json!({"actions": [{"type": "parallel_split", "config": {"branches": [sub(c), [memory_action()]]}}]})),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
}

#[tokio::test]
async fn action_types_list_built_ins_and_components() {
    let app = app().await;
    let a = starter(&app).await;
    let r = app.get("/v1/workflows/action-types", &a.api_key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let types: Vec<(String, String)> = r.body["action_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["type"].as_str().unwrap().to_owned(),
                t["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for built_in in [
        "http_request",
        "enroll_in_sequence",
        "sub_workflow",
        "cross_run_memory",
    ] {
        assert!(
            types.contains(&(built_in.to_owned(), "built_in".to_owned())),
            "{built_in}"
        );
    }
    for component in ["dedup_by_field", "filter_domains", "data_transform"] {
        assert!(
            types.contains(&(component.to_owned(), "plugin".to_owned())),
            "{component}: {types:?}"
        );
    }
}
