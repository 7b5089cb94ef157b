//! The AI writer on a real LLM adapter (the OpenAI-compatible kind) talking
//! to a local stub in the chat-completions shape.

use serde_json::json;

use super::draft::read_answer;
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;
use outreach_core::testing::stub::{Canned, Stub};

const PATH: &str = "/v1/sequences/ai-writer";

fn completion(content: &str) -> Canned {
    Canned::json(
        200,
        json!({"model": "writer-model", "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 120, "completion_tokens": 80}}),
    )
}

#[test]
fn answers_are_read_from_json_or_a_subject_line() {
    let fenced = "```json\n{\"subject\": \"Hi {{first_name}}\", \"body_html\": \"<p>At {{company}}</p>\"}\n```";
    assert_eq!(
        read_answer(fenced),
        Some(("Hi {{first_name}}".into(), "<p>At {{company}}</p>".into()))
    );
    let plain = "Subject: Quick idea\n\nHello {{first_name}},\nline two\n\nBest";
    assert_eq!(
        read_answer(plain),
        Some((
            "Quick idea".into(),
            "<p>Hello {{first_name}},<br>line two</p><p>Best</p>".into()
        ))
    );
    assert_eq!(read_answer("I cannot help with that."), None);
}

#[tokio::test]
async fn drafts_on_the_accounts_ai_key_and_leaves_tokens_unresolved() {
    let stub = Stub::start().await;
    let app = TestApp::with_areas(&[outreach_vendors::AREA, crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let body = json!({"purpose": "cold_outreach", "company_name": "Outreach", "tone": "friendly", "cta_type": "schedule_call"});

    // No AI key: the spec's 400.
    let r = app.post(PATH, key, body.clone()).await;
    assert_eq!(
        (r.status.as_u16(), r.detail()),
        (400, "No BYOK provider connected")
    );

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
        .post("/v1/ai/providers", key, json!({"provider": compatible, "api_key": "local-key-123", "validation_model": "writer-model", "endpoint_url": stub.url("/llm")}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    let draft = r#"{"subject": "{{company}} and data pipelines", "body_html": "<p>Hi {{first_name}}, I saw {{domain}}...</p>"}"#;
    stub.set("/llm/v1/chat/completions", completion(draft));
    let r = app.post(PATH, key, body.clone()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["subject"], "{{company}} and data pipelines");
    assert_eq!(
        r.body["body_html"],
        "<p>Hi {{first_name}}, I saw {{domain}}...</p>"
    );
    assert_eq!(
        (r.body["tokens_used"].clone(), r.body["model"].clone()),
        (json!(200), json!("writer-model"))
    );

    // The prompt carries the request's choices.
    let sent = stub.last_body("/llm/v1/chat/completions").unwrap();
    let prompt = sent["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(
        prompt.contains("friendly")
            && prompt.contains("cold outreach")
            && prompt.contains("schedule call")
            && prompt.contains("Outreach"),
        "{prompt}"
    );

    // Enums and unknown fields answer 400 and call nobody.
    for bad in [
        json!({"purpose": "spam"}),
        json!({"purpose": "follow_up", "tone": "angry"}),
        json!({"purpose": "follow_up", "length": "epic"}),
        json!({"purpose": "follow_up", "cta_type": "fax"}),
        json!({"purpose": "follow_up", "colour": "red"}),
        json!({"tone": "casual"}),
    ] {
        assert_eq!(app.post(PATH, key, bad.clone()).await.status, 400, "{bad}");
    }
    // An answer with no draft in it is the vendor's failure.
    stub.set("/llm/v1/chat/completions", completion("Sorry."));
    assert_eq!(app.post(PATH, key, body.clone()).await.status, 502);
    let free = app.account(Plan::Free).await;
    assert_eq!(app.post(PATH, &free.api_key, body).await.status, 403);
}
