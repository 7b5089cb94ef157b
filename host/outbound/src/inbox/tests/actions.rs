//! Bulk actions and suggest-reply through the router, on either backend.

use std::time::Duration;

use serde_json::json;

use super::{HOUR, R, T, THREADS, enrollment, ids, reply, thread};
use crate::testkit::{scalar, text};
use outreach_core::accounts::plans::Plan;
use outreach_core::accounts::service::add_member;
use outreach_core::testing::TestApp;
use outreach_core::testing::stub::{Canned, Stub};

#[tokio::test]
async fn bulk_actions_apply_to_the_accounts_threads_only() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let a = acct.account_id;
    let (_, enrollment_id) = enrollment(&app, &acct).await;
    let t1 = thread(
        &app,
        a,
        T {
            label: Some("not_now"),
            ..T::default()
        },
    )
    .await;
    let t2 = thread(&app, a, T::default()).await;
    let t3 = thread(&app, a, T::default()).await;
    let r1_old = reply(
        &app,
        a,
        t1,
        R {
            received_ago: 30,
            label: Some("not_now"),
            ..R::default()
        },
    )
    .await;
    let r1_new = reply(
        &app,
        a,
        t1,
        R {
            received_ago: 20,
            label: Some("not_now"),
            enrollment_id: Some(enrollment_id),
            ..R::default()
        },
    )
    .await;
    let other = app.account(Plan::Pro).await;
    let foreign = thread(&app, other.account_id, T::default()).await;
    let path = "/v1/inbox/threads/bulk";

    let too_many: Vec<i64> = (1..=501).collect();
    for bad in [
        json!({"thread_ids": [], "action": "reopen"}),
        json!({"thread_ids": too_many, "action": "reopen"}),
        json!({"thread_ids": [t1], "action": "archive"}),
        json!({"thread_ids": [t1]}),
        json!({"thread_ids": [t1], "action": "snooze"}),
        json!({"thread_ids": [t1], "action": "snooze", "snooze_hours": 721}),
        json!({"thread_ids": [t1], "action": "snooze", "snooze_hours": 0}),
        json!({"thread_ids": [t1], "action": "assign"}),
        json!({"thread_ids": [t1], "action": "assign", "assigned_to_user_id": other.user_id}),
        json!({"thread_ids": [t1], "action": "mark_classification"}),
        json!({"thread_ids": [t1], "action": "mark_classification", "classification": "spam"}),
        json!({"thread_ids": [t1], "action": "reopen", "extra": 1}),
    ] {
        let r = app.post(path, key, bad.clone()).await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.body);
    }
    assert_eq!(
        text(
            &app,
            "SELECT status FROM inbox_threads WHERE id = $1",
            &[t1]
        )
        .await
        .as_deref(),
        Some("open")
    );

    let r = app
        .post(
            path,
            key,
            json!({"thread_ids": [t2, t1, foreign, 999_999, t1], "action": "mark_handled"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body, json!({"updated": 2, "thread_ids": [t1, t2]}));
    let handled = app.get(&format!("{THREADS}?status=handled"), key).await;
    assert_eq!(ids(&handled.body["items"]).len(), 2);
    assert_eq!(
        text(
            &app,
            "SELECT status FROM inbox_threads WHERE id = $1",
            &[foreign]
        )
        .await
        .as_deref(),
        Some("open")
    );

    let now = app.state.clock.now_ms();
    let r = app
        .post(
            path,
            key,
            json!({"thread_ids": [t1, t3], "action": "snooze", "snooze_hours": 5}),
        )
        .await;
    assert_eq!(r.body["updated"], 2);
    assert_eq!(
        scalar(
            &app,
            "SELECT snoozed_until FROM inbox_threads WHERE id = $1",
            &[t3]
        )
        .await,
        now + 5 * HOUR
    );
    assert_eq!(
        app.get(&format!("{THREADS}/counts"), key).await.body["by_status"],
        json!({"open": 0, "handled": 1, "snoozed": 2})
    );
    let r = app
        .post(
            path,
            key,
            json!({"thread_ids": [t1, t2, t3], "action": "reopen"}),
        )
        .await;
    assert_eq!(r.body["updated"], 3);
    assert_eq!(scalar(&app, "SELECT COUNT(*) FROM inbox_threads WHERE account_id = $1 AND status = 'open' AND snoozed_until IS NULL", &[a]).await, 3);

    // Assign, then unassign with null.
    let member = add_member(&app.state, a, "rep3@acme-seller.io", "member", None)
        .await
        .unwrap();
    let r = app.post(path, key, json!({"thread_ids": [t1, t2, foreign], "action": "assign", "assigned_to_user_id": member.id})).await;
    assert_eq!(r.body, json!({"updated": 2, "thread_ids": [t1, t2]}));
    assert_eq!(
        app.get(&format!("{THREADS}?assigned_to={}", member.id), key)
            .await
            .body["total"],
        2
    );
    let r = app
        .post(
            path,
            key,
            json!({"thread_ids": [t1], "action": "assign", "assigned_to_user_id": null}),
        )
        .await;
    assert_eq!(r.body["updated"], 1);
    assert_eq!(
        app.get(&format!("{THREADS}?assigned_to=0"), key).await.body["total"],
        2
    );

    // mark_classification stamps the latest reply of each thread.
    let r = app.post(path, key, json!({"thread_ids": [t1, t2], "action": "mark_classification", "classification": "interested"})).await;
    assert_eq!(r.body["updated"], 2);
    assert_eq!(
        text(
            &app,
            "SELECT manually_overridden_to FROM inbox_replies WHERE id = $1",
            &[r1_new]
        )
        .await
        .as_deref(),
        Some("interested")
    );
    assert_eq!(
        text(
            &app,
            "SELECT manually_overridden_to FROM inbox_replies WHERE id = $1",
            &[r1_old]
        )
        .await,
        None
    );
    assert_eq!(
        text(
            &app,
            "SELECT lead_temperature FROM enrollments WHERE id = $1",
            &[enrollment_id]
        )
        .await
        .as_deref(),
        Some("hot")
    );
    let list = app
        .get(&format!("{THREADS}?classification=interested"), key)
        .await;
    assert_eq!(list.body["total"], 2);
    assert_eq!(list.body["items"][0]["last_classification_confidence"], 1.0);
    let free = app.account(Plan::Free).await;
    assert_eq!(
        app.post(
            path,
            &free.api_key,
            json!({"thread_ids": [t1], "action": "reopen"})
        )
        .await
        .status,
        403
    );
    assert_eq!(
        app.post(
            "/v1/inbox/reclassify-bulk",
            &free.api_key,
            json!({"thread_ids": [t1]})
        )
        .await
        .status,
        403
    );
}

fn completion(content: &str) -> Canned {
    Canned::json(
        200,
        json!({"model": "reply-model", "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 300, "completion_tokens": 60}}),
    )
}

#[tokio::test]
async fn suggest_reply_drafts_on_the_accounts_ai_key() {
    let stub = Stub::start().await;
    let app = TestApp::with_areas(&[outreach_vendors::AREA, crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Pro).await;
    let key = &acct.api_key;
    let a = acct.account_id;
    let (step_id, _) = enrollment(&app, &acct).await;
    let id = thread(
        &app,
        a,
        T {
            label: Some("interested"),
            ..T::default()
        },
    )
    .await;
    reply(
        &app,
        a,
        id,
        R {
            received_ago: 30,
            body: "Sounds good, what does it cost?",
            label: Some("interested"),
            step_id: Some(step_id),
            ..R::default()
        },
    )
    .await;
    let bounced = thread(
        &app,
        a,
        T {
            label: Some("bounce"),
            ..T::default()
        },
    )
    .await;
    let unsubscribed = thread(
        &app,
        a,
        T {
            label: Some("unsubscribe"),
            ..T::default()
        },
    )
    .await;
    let path = |id: i64| format!("{THREADS}/{id}/suggest-reply");

    // No AI key: the vendor service's 400 (this request counts against the limit).
    let r = app.post(&path(id), key, json!({})).await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (400, "No BYOK provider connected")
    );
    for (thread, body) in [
        (bounced, json!({})),
        (unsubscribed, json!({})),
        (id, json!({"extra_context": "x".repeat(2001)})),
        (id, json!({"tone": "angry"})),
        (id, json!({"tone": "friendly", "length": "short"})),
    ] {
        let r = app.post(&path(thread), key, body.clone()).await;
        assert_eq!(r.status, 400, "{thread} {body}: {:?}", r.body);
    }

    stub.set("/llm/v1/chat/completions", completion("OK"));
    let compatible = outreach_vendors::vendor_keys::catalogue::providers(
        &app.state,
        outreach_vendors::vendor_keys::catalogue::Family::Ai,
    )
    .into_iter()
    .find(|p| p.supports_endpoint_url == Some(true))
    .unwrap()
    .provider;
    let r = app
        .post("/v1/ai/providers", key, json!({"provider": compatible, "api_key": "local-key-123", "validation_model": "reply-model", "endpoint_url": stub.url("/llm")}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    stub.set("/llm/v1/chat/completions", completion("Hi Jane,\n\nGlad to hear it. Pricing starts at $49 a month; shall we talk on Tuesday?\n"));
    let r = app
        .post(
            &path(id),
            key,
            json!({"extra_context": "Mention the annual discount."}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body["draft"],
        "Hi Jane,\n\nGlad to hear it. Pricing starts at $49 a month; shall we talk on Tuesday?"
    );
    assert_eq!(
        (r.body["model"].clone(), r.body["provider"].clone()),
        (json!("reply-model"), json!(compatible))
    );
    assert_eq!(
        (
            r.body["tone"].clone(),
            r.body["based_on_classification"].clone()
        ),
        (json!("enthusiastic"), json!("interested"))
    );
    assert!(
        r.body["cost_estimate_usd"].is_number() && r.body["latency_ms"].is_u64(),
        "{:?}",
        r.body
    );
    let sent = stub.last_body("/llm/v1/chat/completions").unwrap();
    let prompt = sent["messages"][1]["content"].as_str().unwrap().to_owned();
    for part in [
        "Re: Subject",
        "Sounds good, what does it cost?",
        "Quick question about pipelines",
        "interested",
        "enthusiastic",
        "annual discount",
    ] {
        assert!(prompt.contains(part), "{part} not in {prompt}");
    }

    // An explicit tone, and no body at all.
    stub.set(
        "/llm/v1/chat/completions",
        completion("```\nThanks, Jane. Tuesday?\n```"),
    );
    let r = app.post(&path(id), key, json!({"tone": "concise"})).await;
    assert_eq!(
        (r.body["tone"].clone(), r.body["draft"].clone()),
        (json!("concise"), json!("Thanks, Jane. Tuesday?"))
    );
    let r = app.call("POST", &path(id), Some(key), None).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        scalar(&app, "SELECT COUNT(*) FROM vendor_calls WHERE account_id = $1 AND action_type = 'inbox_suggest_reply' AND success = 1", &[a]).await,
        3
    );

    // 10 per user per minute, counted from the no-key request on.
    for _ in 0..6 {
        assert_eq!(app.post(&path(id), key, json!({})).await.status, 200);
    }
    let r = app.post(&path(id), key, json!({})).await;
    assert_eq!(r.status, 429, "{:?}", r.body);
    assert!(r.detail().starts_with("Rate limit exceeded. Try again in"));
    assert!(r.header("retry-after").is_some());
    app.clock.advance(Duration::from_secs(61));
    assert_eq!(app.post(&path(id), key, json!({})).await.status, 200);

    let other = app.account(Plan::Pro).await;
    assert_eq!(
        app.post(&path(id), &other.api_key, json!({})).await.status,
        404
    );
    let free = app.account(Plan::Free).await;
    assert_eq!(
        app.post(&path(id), &free.api_key, json!({})).await.status,
        403
    );
}

#[test]
fn drafts_are_read_and_tones_default_by_classification() {
    use crate::inbox::suggest::{default_tone, read_draft};
    assert_eq!(
        read_draft("Subject: Re: hi\nThanks!"),
        Some("Thanks!".into())
    );
    assert_eq!(read_draft("```text\nHello\n```"), Some("Hello".into()));
    assert_eq!(read_draft("  \n"), None);
    for (label, tone) in [
        (Some("interested"), "enthusiastic"),
        (Some("not_now"), "friendly"),
        (Some("objection"), "professional"),
        (Some("ooo"), "friendly"),
        (Some("other"), "professional"),
        (None, "professional"),
    ] {
        assert_eq!(default_tone(label), tone);
    }
}
