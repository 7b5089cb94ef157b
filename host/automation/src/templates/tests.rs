//! Templates through the router on either backend: the first-party
//! catalogue (every template installs paused and dry-runs), ownership and
//! 402, the cap, ratings, statistics, suggestions, grants, placeholders
//! before activation, and a third-party pack dropped in and removed at run
//! time.

use std::path::Path;

use serde_json::{Value, json};

use crate::workflows::tests::{app, create, manual, pool};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::{TestAccount, TestApp};
use outreach_plugin_runtime::fixtures::TEST_GUESTS_DIR;

async fn templates(app: &TestApp, key: &str, detail: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/v1/workflows/templates?detail={detail}"), key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["templates"].as_array().unwrap().clone()
}

async fn install(app: &TestApp, key: &str, id: &str) -> outreach_core::testing::TestResponse {
    app.post(
        "/v1/workflows/install-template",
        key,
        json!({"template_id": id}),
    )
    .await
}

/// The first template (in catalogue order) matching `pick`.
fn find(list: &[Value], pick: impl Fn(&Value) -> bool) -> &Value {
    list.iter().find(|t| pick(t)).expect("a matching template")
}

#[tokio::test]
async fn every_first_party_template_installs_paused_and_dry_runs() {
    let app = app().await;
    let ent = app.account(Plan::Enterprise).await;
    pool(
        &app,
        &[json!({"domain": "acme-soft.com", "industry": "Software", "confidence": 0.9})],
    )
    .await;
    let summary = templates(&app, &ent.api_key, "summary").await;
    let full = templates(&app, &ent.api_key, "full").await;
    assert!(summary.len() >= 12, "{} templates", summary.len());
    assert_eq!(summary.len(), full.len());
    let packs: std::collections::HashSet<&str> =
        summary.iter().filter_map(|t| t["pack"].as_str()).collect();
    assert!(packs.len() >= 4, "{packs:?}");
    for t in &summary {
        for field in [
            "id",
            "name",
            "tag",
            "price_cents",
            "price_display",
            "is_free",
            "owned",
            "industries",
        ] {
            assert!(t.get(field).is_some(), "{field} missing in {t}");
        }
        assert!(
            t.get("actions").is_none() && t.get("description").is_none(),
            "{t}"
        );
        assert_eq!(t["is_free"], t["price_cents"] == 0);
        assert_eq!(t["owned"], true, "Enterprise owns every template: {t}");
    }
    let triggers: std::collections::HashSet<&str> = full
        .iter()
        .filter_map(|t| t["trigger_type"].as_str())
        .collect();
    for trigger in [
        "intent_alert",
        "audience_match",
        "watchlist_change",
        "new_domain",
        "schedule",
        "webhook",
        "manual",
        "tracked_keyword_match",
    ] {
        assert!(triggers.contains(trigger), "no template uses {trigger}");
    }
    for t in &full {
        let id = t["id"].as_str().unwrap();
        assert!(
            t["actions"].as_array().is_some_and(|a| !a.is_empty()),
            "{t}"
        );
        let r = install(&app, &ent.api_key, id).await;
        assert_eq!(r.status, 201, "{id}: {:?}", r.body);
        assert_eq!(r.body["is_active"], false, "{id}");
        assert_eq!(r.body["name"], t["name"]);
        assert_eq!(r.body["placeholders"], t["placeholders"], "{id}");
        let wid = r.body["id"].as_i64().unwrap();
        let test = app
            .post(
                &format!("/v1/workflows/{wid}/test"),
                &ent.api_key,
                json!({}),
            )
            .await;
        assert_eq!(test.status, 200, "{id}: {:?}", test.body);
        assert!(
            test.body["test_results"]["actions_that_would_execute"]
                .as_array()
                .is_some_and(|a| !a.is_empty()),
            "{id}: {:?}",
            test.body
        );
    }
    let stats = app
        .call("GET", "/v1/workflows/template-stats", None, None)
        .await;
    assert_eq!(stats.status, 200, "{:?}", stats.body);
    for t in &summary {
        assert_eq!(stats.body["install_counts"][t["id"].as_str().unwrap()], 1);
    }
}

#[tokio::test]
async fn paid_templates_need_a_grant_or_a_perk_and_installs_count_against_the_cap() {
    let app = app().await;
    let starter = app.account(Plan::Starter).await;
    let list = templates(&app, &starter.api_key, "summary").await;
    let paid = find(&list, |t| {
        t["tag"] == "intermediate" && t["price_cents"].as_u64() > Some(0)
    });
    let paid_id = paid["id"].as_str().unwrap();
    assert_eq!(paid["owned"], false);
    let free = find(&list, |t| t["is_free"] == true);
    let free_id = free["id"].as_str().unwrap();
    assert_eq!(free["owned"], true);

    let r = install(&app, &starter.api_key, paid_id).await;
    assert_eq!(r.status, 402, "{:?}", r.body);
    assert!(r.detail().contains(paid_id), "{}", r.detail());
    assert_eq!(
        install(&app, &starter.api_key, "no_such_template")
            .await
            .status,
        404
    );
    let free_plan = app.account(Plan::Free).await;
    assert_eq!(install(&app, &free_plan.api_key, free_id).await.status, 403);
    let bad = app
        .get(
            "/v1/workflows/templates?detail=everything",
            &starter.api_key,
        )
        .await;
    assert_eq!(bad.status, 400);

    // A grant (what `outreach templates grant` writes) makes it owned.
    super::store::grant(&app.state.db, starter.account_id, paid_id, 0)
        .await
        .unwrap();
    let list = templates(&app, &starter.api_key, "summary").await;
    assert_eq!(find(&list, |t| t["id"] == paid_id)["owned"], true);
    assert_eq!(install(&app, &starter.api_key, paid_id).await.status, 201);

    // Pro owns intermediate templates by its perk, not advanced ones.
    let pro = app.account(Plan::Pro).await;
    let list = templates(&app, &pro.api_key, "summary").await;
    assert_eq!(find(&list, |t| t["id"] == paid_id)["owned"], true);
    let advanced = find(&list, |t| {
        t["tag"] == "advanced" && t["price_cents"].as_u64() > Some(0)
    });
    assert_eq!(advanced["owned"], false);
    assert_eq!(
        install(&app, &pro.api_key, advanced["id"].as_str().unwrap())
            .await
            .status,
        402
    );

    // The Starter cap (5) holds installs too: one so far.
    for _ in 0..4 {
        assert_eq!(install(&app, &starter.api_key, free_id).await.status, 201);
    }
    let sixth = install(&app, &starter.api_key, free_id).await;
    assert_eq!(sixth.status, 400, "{:?}", sixth.body);
    assert!(sixth.detail().contains("Plan limit"), "{}", sixth.detail());
    let list = app.get("/v1/workflows", &starter.api_key).await;
    assert_eq!(list.body["count"], 5);
}

#[tokio::test]
async fn an_installed_template_runs_only_once_its_placeholders_are_filled() {
    let app = app().await;
    let a = app.account(Plan::Enterprise).await;
    let full = templates(&app, &a.api_key, "full").await;
    // A manual template with a list placeholder, else any with one.
    let t = full
        .iter()
        .find(|t| {
            t["trigger_type"] == "manual"
                && t["placeholders"]
                    .as_array()
                    .is_some_and(|p| p.iter().any(|p| p["name"] == "list_id"))
        })
        .or_else(|| {
            full.iter()
                .find(|t| t["placeholders"].as_array().is_some_and(|p| !p.is_empty()))
        })
        .expect("a template with placeholders");
    let r = install(&app, &a.api_key, t["id"].as_str().unwrap()).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = r.body["id"].as_i64().unwrap();
    let first = r.body["placeholders"][0].clone();
    let name = first["name"].as_str().unwrap();
    let exec = app
        .post(
            &format!("/v1/workflows/{id}/execute?activate=true"),
            &a.api_key,
            json!({}),
        )
        .await;
    assert_eq!(exec.status, 400, "{:?}", exec.body);
    assert!(exec.detail().contains(name), "{}", exec.detail());
    let put = app
        .call(
            "PUT",
            &format!("/v1/workflows/{id}"),
            Some(&a.api_key),
            Some(json!({"is_active": true})),
        )
        .await;
    assert_eq!(put.status, 400, "{:?}", put.body);
    assert!(put.detail().contains("placeholder"), "{}", put.detail());
    // Saving a new value while paused is fine; it is still a placeholder
    // elsewhere until every one is filled.
    let untouched = app.get(&format!("/v1/workflows/{id}"), &a.api_key).await;
    assert_eq!(untouched.body["is_active"], false);
}

#[tokio::test]
async fn filling_the_placeholders_lets_the_workflow_activate_and_run() {
    let app = app().await;
    let a = app.account(Plan::Enterprise).await;
    let list = app
        .post("/v1/lists", &a.api_key, json!({"name": "From template"}))
        .await;
    assert_eq!(list.status, 201, "{:?}", list.body);
    let list_id = list.body["id"].as_i64().unwrap();
    // A workflow shaped like an installed template: one placeholder.
    let mut body = manual(
        "templated",
        json!([{"type": "add_to_list", "config": {"list_id": "{{placeholder:list_id}}"}}]),
    );
    body["is_active"] = json!(true);
    let refused = app.post("/v1/workflows", &a.api_key, body.clone()).await;
    assert_eq!(refused.status, 400, "{:?}", refused.body);
    assert!(
        refused.detail().contains("actions[0].config.list_id"),
        "{}",
        refused.detail()
    );
    body["is_active"] = json!(false);
    let w = create(&app, &a.api_key, body).await;
    let id = w["id"].as_i64().unwrap();
    let put = app
        .call(
            "PUT",
            &format!("/v1/workflows/{id}"),
            Some(&a.api_key),
            Some(json!({"actions": [{"type": "add_to_list", "config": {"list_id": list_id}}]})),
        )
        .await;
    assert_eq!(put.status, 200, "{:?}", put.body);
    let exec = app
        .post(
            &format!("/v1/workflows/{id}/execute?activate=true"),
            &a.api_key,
            json!({}),
        )
        .await;
    assert_eq!(exec.status, 202, "{:?}", exec.body);
    // A placeholder still refuses a value of the wrong type once filled.
    let wrong = app
        .call(
            "PUT",
            &format!("/v1/workflows/{id}"),
            Some(&a.api_key),
            Some(json!({"actions": [{"type": "add_to_list", "config": {"list_id": "seven"}}]})),
        )
        .await;
    assert_eq!(wrong.status, 400, "{:?}", wrong.body);
}

async fn rate(app: &TestApp, a: &TestAccount, body: Value) -> outreach_core::testing::TestResponse {
    app.post("/v1/workflows/rate-template", &a.api_key, body)
        .await
}

#[tokio::test]
async fn ratings_need_an_install_or_ownership_and_overwrite() {
    let app = app().await;
    let a = app.account(Plan::Starter).await;
    let list = templates(&app, &a.api_key, "summary").await;
    let free_id = find(&list, |t| t["is_free"] == true)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = rate(&app, &a, json!({"template_id": "nope", "rating": 5})).await;
    assert_eq!(r.status, 404);
    let r = rate(&app, &a, json!({"template_id": free_id, "rating": 5})).await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(install(&app, &a.api_key, &free_id).await.status, 201);
    for bad in [json!(0), json!(6), json!("5"), json!(4.5), Value::Null] {
        let r = rate(&app, &a, json!({"template_id": free_id, "rating": bad})).await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
    }
    let long = "x".repeat(2001);
    let r = rate(
        &app,
        &a,
        json!({"template_id": free_id, "rating": 4, "review": long}),
    )
    .await;
    assert_eq!(r.status, 400);
    let r = rate(
        &app,
        &a,
        json!({"template_id": free_id, "template_type": "marketplace", "rating": 4}),
    )
    .await;
    assert_eq!(r.status, 400);
    let r = rate(
        &app,
        &a,
        json!({"template_id": free_id, "rating": 5, "review": "Great"}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["template_type"], "first_party");
    let first = r.body["created_at"].clone();
    app.clock.advance(std::time::Duration::from_secs(60));
    let r = rate(&app, &a, json!({"template_id": free_id, "rating": 2})).await;
    assert_eq!(r.status, 200);
    // Overwriting keeps when the account first rated.
    assert_eq!(r.body["created_at"], first);
    assert_ne!(r.body["updated_at"], first);
    let b = app.account(Plan::Starter).await;
    assert_eq!(install(&app, &b.api_key, &free_id).await.status, 201);
    assert_eq!(
        rate(&app, &b, json!({"template_id": free_id, "rating": 5}))
            .await
            .status,
        200
    );

    let stats = app
        .call("GET", "/v1/workflows/template-stats", None, None)
        .await;
    assert_eq!(stats.status, 200, "{:?}", stats.body);
    assert_eq!(
        stats.body["ratings"][&free_id],
        json!({"avg": 3.5, "count": 2})
    );
    assert_eq!(stats.body["install_counts"][&free_id], 2);
    let mine = app.get("/v1/workflows/my-ratings", &a.api_key).await;
    assert_eq!(mine.status, 200);
    assert_eq!(mine.body["ratings"].as_array().unwrap().len(), 1);
    assert_eq!(mine.body["ratings"][0]["rating"], 2);
    assert_eq!(mine.body["ratings"][0]["review"], "");

    // A paid template owned by a grant may be rated without an install.
    let paid = find(&list, |t| t["price_cents"].as_u64() > Some(0))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        rate(&app, &a, json!({"template_id": paid, "rating": 4}))
            .await
            .status,
        403
    );
    super::store::grant(&app.state.db, a.account_id, &paid, 0)
        .await
        .unwrap();
    assert_eq!(
        rate(&app, &a, json!({"template_id": paid, "rating": 4}))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn suggestions_follow_industries_unused_triggers_and_idle_sequences() {
    let app = app().await;
    let a = app.account(Plan::Pro).await;
    let empty = app.get("/v1/workflows/suggest-templates", &a.api_key).await;
    assert_eq!(empty.status, 200, "{:?}", empty.body);
    let full = templates(&app, &a.api_key, "full").await;
    // An industry some template names.
    let target = find(&full, |t| {
        t["industries"].as_array().is_some_and(|i| !i.is_empty())
    });
    let industry = target["industries"][0].as_str().unwrap().to_owned();
    pool(
        &app,
        &[json!({"domain": "fit-one.com", "industry": industry, "confidence": 0.8})],
    )
    .await;
    let list = app
        .post("/v1/lists", &a.api_key, json!({"name": "L"}))
        .await;
    let list_id = list.body["id"].as_i64().unwrap();
    let added = app
        .post(
            &format!("/v1/lists/{list_id}/items"),
            &a.api_key,
            json!({"items": [{"domain": "fit-one.com"}]}),
        )
        .await;
    assert!(added.status.is_success(), "{:?}", added.body);
    let r = app.get("/v1/workflows/suggest-templates", &a.api_key).await;
    assert_eq!(r.status, 200);
    let items = r.body["templates"].as_array().unwrap();
    assert!(!items.is_empty() && items.len() <= 10);
    let top = &items[0];
    assert!(
        top["industries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i.as_str().unwrap().eq_ignore_ascii_case(&industry)),
        "{top}"
    );
    assert!(
        top["reasons"][0].as_str().unwrap().contains("industries"),
        "{top}"
    );
    let scores: Vec<i64> = items.iter().map(|t| t["score"].as_i64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    // An installed template is no longer suggested.
    let top_id = top["id"].as_str().unwrap();
    assert_eq!(install(&app, &a.api_key, top_id).await.status, 201);
    let after = app.get("/v1/workflows/suggest-templates", &a.api_key).await;
    assert!(
        after.body["templates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["id"] != top_id)
    );
}

fn drop_in(dir: &Path, name: &str) {
    for ext in ["wasm", "toml"] {
        let file = format!("{name}.{ext}");
        std::fs::copy(Path::new(TEST_GUESTS_DIR).join(&file), dir.join(&file))
            .unwrap_or_else(|e| panic!("{file} from {TEST_GUESTS_DIR}: {e}"));
    }
}

#[tokio::test]
async fn a_pack_dropped_in_at_run_time_lists_its_valid_templates_until_removed() {
    let app = crate::workflows::tests::app_with(|config| {
        let dir = config.data_dir.join("plugins");
        std::fs::create_dir_all(&dir).unwrap();
        config.plugins_dir = dir.to_string_lossy().into_owned();
    })
    .await;
    let a = app.account(Plan::Enterprise).await;
    let before = templates(&app, &a.api_key, "summary").await;
    let dir = app.state.config.plugins_dir();
    drop_in(&dir, "pack-thirdparty");
    drop_in(&dir, "pack-trap");
    app.state.plugins.rescan().await;
    let with = templates(&app, &a.api_key, "full").await;
    let ids: Vec<&str> = with.iter().filter_map(|t| t["id"].as_str()).collect();
    assert!(ids.contains(&"general_thirdparty_digest"), "{ids:?}");
    assert!(ids.contains(&"general_thirdparty_list"), "{ids:?}");
    // The template naming an unknown action type is refused, alone; the
    // trapping pack adds nothing and breaks nothing.
    assert!(!ids.contains(&"general_thirdparty_broken"), "{ids:?}");
    assert_eq!(with.len(), before.len() + 2);
    let t = find(&with, |t| t["id"] == "general_thirdparty_digest");
    assert_eq!(t["pack"], "pack-thirdparty");
    assert_eq!(
        install(&app, &a.api_key, "general_thirdparty_digest")
            .await
            .status,
        201
    );

    for name in ["pack-thirdparty", "pack-trap"] {
        for ext in ["wasm", "toml"] {
            std::fs::remove_file(dir.join(format!("{name}.{ext}"))).unwrap();
        }
    }
    app.state.plugins.rescan().await;
    let after = templates(&app, &a.api_key, "summary").await;
    assert_eq!(after.len(), before.len());
    assert_eq!(
        install(&app, &a.api_key, "general_thirdparty_digest")
            .await
            .status,
        404
    );
}
